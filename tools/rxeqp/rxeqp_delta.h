/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rxeqp's QPs read from its maps once an interval (tools/rxeqp/rxeqp_delta.c):
 * each QP's counters and latency histogram as read, what they grew by
 * since the reading before, and destroyed QPs retired after the one
 * reading that reports them. Shared by rxeqp and rocediag.
 */
#ifndef AGENTXDP_RXEQP_DELTA_H
#define AGENTXDP_RXEQP_DELTA_H
#include <stdbool.h>
#include <linux/types.h>
#include "rxeqp.h"

/* the devices whose retired QPs are summed; more are not summed */
#define RXEQP_DELTA_MAX_DEVS 64

struct bpf_map;

/* one QP of the qps map */
struct rxeqp_qp {
	struct qp_key key;
	struct qp_stats cur;		/* as last read */
	__u64 d[QC_NR];			/* grown by since the reading before */
	struct hist hcur;		/* latency histogram as last read (zero without) */
	__u64 hd[HIST_SLOTS];
	bool is_new;			/* first reading since it appeared */
	/* the baseline of d and hd */
	__u64 prev[QC_NR];
	__u64 hprev[HIST_SLOTS];
	bool seen;
};

/* the totals of a device's retired QPs: its counters summed over QPs
 * never go back when one of its QPs goes away */
struct rxeqp_dev_total {
	__u32 ifindex;
	char dev[RXEQP_DEVNAME];
	__u64 cnt[QC_NR];
};

struct rxeqp_delta {
	const struct bpf_map *qps, *hists;	/* hists NULL: no histograms */
	struct rxeqp_qp *qp;			/* n of them, ordered by key */
	int n;
	struct rxeqp_dev_total dev[RXEQP_DELTA_MAX_DEVS];
	int ndevs;
	__u64 retired;				/* QPs retired so far */
};

/* rxeqp's qps map and (NULL: none) its lat_hists map; 0 or -ENOMEM */
int rxeqp_delta_init(struct rxeqp_delta *dt, const struct bpf_map *qps,
		     const struct bpf_map *hists);
void rxeqp_delta_free(struct rxeqp_delta *dt);
/*
 * One reading: the QPs destroyed at the reading before are retired (out
 * of both maps, their counters into their device's total), unless a new
 * QP took the number meanwhile; then every entry of the map is read, and
 * d and hd are what each QP grew by. A counter below its baseline means
 * the BPF side restarted the entry for a new QP with the number of a
 * destroyed one: the baseline starts again from zero. Returns the number
 * of QPs, or -errno when the map cannot be read.
 */
int rxeqp_delta_read(struct rxeqp_delta *dt);
/* the QP of key k as last read, or NULL */
struct rxeqp_qp *rxeqp_delta_find(const struct rxeqp_delta *dt, const struct qp_key *k);
/* the retired totals of device ifindex (added, named dev, when new); NULL
 * when RXEQP_DELTA_MAX_DEVS devices have one */
struct rxeqp_dev_total *rxeqp_delta_dev(struct rxeqp_delta *dt, __u32 ifindex,
					const char *dev);
/* the order of struct qp_key: ifindex, then QPN */
int rxeqp_key_cmp(const void *a, const void *b);

#endif
