// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rxeqp's per-QP bookkeeping in user space, for rxeqp's table and
 * rocediag's verdicts alike: the qps map read whole each interval, the
 * growth of each QP's counters since the reading before, and destroyed
 * QPs taken out of the maps once one reading has reported them (the BPF
 * side only marks them, or the map would keep every QP ever made).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rxeqp_delta.h"
#include "lib/maps.h"

int rxeqp_key_cmp(const void *a, const void *b)
{
	const struct qp_key *x = a, *y = b;

	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	return x->qpn < y->qpn ? -1 : x->qpn > y->qpn;
}

int rxeqp_delta_init(struct rxeqp_delta *dt, const struct bpf_map *qps,
		     const struct bpf_map *hists)
{
	memset(dt, 0, sizeof(*dt));
	dt->qps = qps;
	dt->hists = hists;
	dt->qp = calloc(RXEQP_MAX_QPS, sizeof(*dt->qp));
	return dt->qp ? 0 : -ENOMEM;
}

void rxeqp_delta_free(struct rxeqp_delta *dt)
{
	free(dt->qp);
	memset(dt, 0, sizeof(*dt));
}

struct rxeqp_qp *rxeqp_delta_find(const struct rxeqp_delta *dt, const struct qp_key *k)
{
	return bsearch(k, dt->qp, dt->n, sizeof(*dt->qp), rxeqp_key_cmp);
}

struct rxeqp_dev_total *rxeqp_delta_dev(struct rxeqp_delta *dt, __u32 ifindex,
					const char *dev)
{
	struct rxeqp_dev_total *t;

	for (int i = 0; i < dt->ndevs; i++)
		if (dt->dev[i].ifindex == ifindex)
			return &dt->dev[i];
	if (dt->ndevs == RXEQP_DELTA_MAX_DEVS)
		return NULL;
	t = &dt->dev[dt->ndevs++];
	t->ifindex = ifindex;
	snprintf(t->dev, sizeof(t->dev), "%s", dev);
	return t;
}

/*
 * The QPs the last reading saw destroyed: their counters into their
 * device's total, their rows dropped, and their entries deleted, unless
 * the BPF side has restarted the entry meanwhile for a new QP with the
 * same number (rxeqp.bpf.c zeroes it at the new QP's first state change):
 * that one is read as new.
 */
static void retire_destroyed(struct rxeqp_delta *dt)
{
	int fd = bpf_map__fd(dt->qps), n = 0;
	struct qp_stats now;

	for (int i = 0; i < dt->n; i++) {
		const struct rxeqp_qp *q = &dt->qp[i];
		struct rxeqp_dev_total *t;

		if (!q->cur.destroyed) {
			dt->qp[n++] = *q;
			continue;
		}
		t = rxeqp_delta_dev(dt, q->key.ifindex, q->cur.dev);
		for (int c = 0; t && c < QC_NR; c++)
			t->cnt[c] += q->cur.cnt[c];
		dt->retired++;
		if (!bpf_map_lookup_elem(fd, &q->key, &now) && !now.destroyed)
			continue;
		bpf_map_delete_elem(fd, &q->key);
		if (dt->hists)
			bpf_map_delete_elem(bpf_map__fd(dt->hists), &q->key);
	}
	dt->n = n;
}

struct read_ctx {
	struct rxeqp_delta *dt;
	int added;		/* rows new at this reading, after the n known */
};

/* one entry of the qps map into its row */
static int read_qp(const void *k, const void *v, void *ctx)
{
	struct read_ctx *rc = ctx;
	struct rxeqp_delta *dt = rc->dt;
	const struct qp_key *key = k;
	const struct qp_stats *st = v;
	struct rxeqp_qp *q = rxeqp_delta_find(dt, key);

	if (!q) {
		if (dt->n + rc->added >= RXEQP_MAX_QPS)
			return 0;
		q = &dt->qp[dt->n + rc->added++];
		memset(q, 0, sizeof(*q));
		q->key = *key;
		q->is_new = true;
	} else {
		q->is_new = false;
	}
	/* the BPF side only adds to a live QP's counters: one below its
	 * baseline is a new QP's, in the entry of a destroyed one */
	for (int c = 0; c < QC_NR; c++) {
		if (st->cnt[c] < q->prev[c]) {
			memset(q->prev, 0, sizeof(q->prev));
			memset(q->hprev, 0, sizeof(q->hprev));
			break;
		}
	}
	q->cur = *st;
	if (!dt->hists || bpf_map_lookup_elem(bpf_map__fd(dt->hists), key, &q->hcur))
		memset(&q->hcur, 0, sizeof(q->hcur));
	q->seen = true;
	return 0;
}

int rxeqp_delta_read(struct rxeqp_delta *dt)
{
	struct read_ctx rc = { .dt = dt };
	int n = 0, err;

	retire_destroyed(dt);
	for (int i = 0; i < dt->n; i++)
		dt->qp[i].seen = false;
	err = maps_for_each(dt->qps, read_qp, &rc);
	if (err < 0) {
		/* nothing read: nothing grew, and every row stays */
		for (int i = 0; i < dt->n; i++) {
			memset(dt->qp[i].d, 0, sizeof(dt->qp[i].d));
			memset(dt->qp[i].hd, 0, sizeof(dt->qp[i].hd));
		}
		return err;
	}
	dt->n += rc.added;
	/* rows whose entry went (deleted by someone else) */
	for (int i = 0; i < dt->n; i++)
		if (dt->qp[i].seen)
			dt->qp[n++] = dt->qp[i];
	dt->n = n;
	qsort(dt->qp, dt->n, sizeof(*dt->qp), rxeqp_key_cmp);
	for (int i = 0; i < dt->n; i++) {
		struct rxeqp_qp *q = &dt->qp[i];

		for (int c = 0; c < QC_NR; c++) {
			q->d[c] = q->cur.cnt[c] - q->prev[c];
			q->prev[c] = q->cur.cnt[c];
		}
		for (int s = 0; s < HIST_SLOTS; s++) {
			q->hd[s] = q->hcur.slots[s] - q->hprev[s];
			q->hprev[s] = q->hcur.slots[s];
		}
	}
	return dt->n;
}
