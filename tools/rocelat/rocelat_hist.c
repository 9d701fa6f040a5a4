/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocelat's per-flow log-linear histogram in user space: where each of
 * the 560 buckets of struct rl_llhist (rocelat.h) begins and ends, and
 * its nearest-rank quantiles, each its bucket's midpoint, which lies
 * within 2.94% of every value the bucket holds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "rocelat_hist.h"
#include "lib/hist.h"

struct rocelat_ll_read {
	__u64 serial;		/* the flow the entry held then */
	struct rl_llhist ll;
};

void rocelat_ll_bounds(__u32 b, __u64 *lo, __u64 *hi)
{
	__u32 e, s, m, w;

	if (b < RL_LL_EXACT) {
		*lo = *hi = b;
		return;
	}
	if (b >= RL_LL_BUCKETS - 1) {
		*lo = 1ULL << (RL_LL_MAX_LOG2 + 1);
		*hi = ~0ULL;
		return;
	}
	b -= RL_LL_EXACT;
	e = b / RL_LL_PER_LOG2 + RL_LL_MIN_LOG2;
	s = b % RL_LL_PER_LOG2;
	/* rocelat_ll_sub() backwards: m = 0, 1 alone, then pairs from 2 */
	m = s < 2 ? s : 2 * s - 2;
	w = s < 2 ? 1 : 2;
	*lo = (__u64)(RL_LL_EXACT + m) << (e - RL_LL_MIN_LOG2);
	*hi = *lo + ((__u64)w << (e - RL_LL_MIN_LOG2)) - 1;
}

void rocelat_ll_add_into(struct rl_llhist *dst, const struct rl_llhist *src)
{
	for (int i = 0; i < RL_LL_BUCKETS; i++)
		dst->b[i] += src->b[i];
}

double rocelat_ll_quantile(const struct rl_llhist *h, double q, __u64 min,
			   __u64 max)
{
	return hist_ll_quantile(h->b, RL_LL_BUCKETS, rocelat_ll_bounds, q, min, max);
}

static int ll_reads_grow(struct rocelat_ll_reads *r, __u32 idx)
{
	struct rocelat_ll_read **at;
	__u32 n = r->n ? r->n : 64;

	while (n <= idx)
		n *= 2;
	at = realloc(r->at, n * sizeof(*at));
	if (!at)
		return -ENOMEM;
	memset(at + r->n, 0, (n - r->n) * sizeof(*at));
	r->at = at;
	r->n = n;
	return 0;
}

int rocelat_ll_since(struct rocelat_ll_reads *r, __u32 idx,
		     const struct pending_flow *pf, struct rl_llhist *h)
{
	struct rocelat_ll_read *last;

	*h = pf->ll;
	if (idx >= r->n && ll_reads_grow(r, idx))
		return -ENOMEM;
	last = r->at[idx];
	if (!last) {
		last = calloc(1, sizeof(*last));
		if (!last)
			return -ENOMEM;
		r->at[idx] = last;
	} else if (last->serial == pf->serial) {
		/* counts wrap at 2^32: the difference is right below it */
		for (int i = 0; i < RL_LL_BUCKETS; i++)
			h->b[i] -= last->ll.b[i];
	}
	last->serial = pf->serial;
	last->ll = pf->ll;
	return 0;
}

void rocelat_ll_reads_free(struct rocelat_ll_reads *r)
{
	for (__u32 i = 0; i < r->n; i++)
		free(r->at[i]);
	free(r->at);
	r->at = NULL;
	r->n = 0;
}
