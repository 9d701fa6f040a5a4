/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocelat's per-flow log-linear histogram (struct rl_llhist, rocelat.h)
 * read in user space: a bucket's bounds, nearest-rank quantiles, sums of
 * flows. rocelat's report and rocediag read flows' percentiles with it.
 */
#ifndef AGENTXDP_ROCELAT_HIST_H
#define AGENTXDP_ROCELAT_HIST_H

#include <linux/types.h>
#include "rocelat.h"

/* bucket b's bounds in ns, inclusive (the top bucket's hi: ~0) */
void rocelat_ll_bounds(__u32 b, __u64 *lo, __u64 *hi);
void rocelat_ll_add_into(struct rl_llhist *dst, const struct rl_llhist *src);
/* the nearest-rank q quantile: its bucket's midpoint, kept within
 * [min, max] (the samples' own); 0 without samples */
double rocelat_ll_quantile(const struct rl_llhist *h, double q, __u64 min,
			   __u64 max);

/*
 * A flow's histogram of one reporting interval: what its entry's
 * cumulative one (pending_flow.ll) gained since the previous read of that
 * entry, from user space's copy of each entry as last read (allocated on
 * an entry's first read: 2,248 bytes an entry that held a flow).
 */
struct rocelat_ll_read;

struct rocelat_ll_reads {
	__u32 n;			/* entries in at */
	struct rocelat_ll_read **at;	/* by flow-table entry */
};

/* *h: flow pf's samples since entry idx was last read (all of them when
 * it held another flow then, or was not read yet); the read remembered.
 * 0, or -ENOMEM (then *h holds all of them) */
int rocelat_ll_since(struct rocelat_ll_reads *r, __u32 idx,
		     const struct pending_flow *pf, struct rl_llhist *h);
void rocelat_ll_reads_free(struct rocelat_ll_reads *r);

#endif
