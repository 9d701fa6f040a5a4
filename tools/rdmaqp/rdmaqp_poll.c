// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rdmaqp's polling of the QPs within a budget (rdmaqp_poll.h) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "rdmaqp_poll.h"

/* enum ib_qp_type: the QPs whose restrack id carries the port */
#define QPT_SMI 0
#define QPT_GSI 1

struct sample_ctx {
	struct rdmaqp_poll *p;
	struct rdmaqp_table *t;
	double now;
	rdmaqp_poll_fn fn;
	void *ctx;
};

static void on_sample(void *ctx, const struct rdmaqp_nlqp *q)
{
	struct sample_ctx *c = ctx;
	struct rdmaqp_row *row;
	__u8 old;

	row = rdmaqp_sample(c->t, q, &old);
	c->p->queried++;
	if (!row)
		return;
	row->span = row->since ? c->now - row->since : 0;
	row->since = c->now;
	row->queried_at = c->now;
	c->fn(c->ctx, row, old);
}

static bool selected(const struct rdmaqp_poll *p, const struct rdmaqp_dev *d)
{
	return !p->only_dev || !strcmp(p->only_dev, d->name);
}

static struct rdmaqp_poll_dev *dev_state(struct rdmaqp_poll *p, __u32 index)
{
	for (int i = 0; i < p->ndev; i++)
		if (p->dev[i].index == index)
			return &p->dev[i];
	if (p->ndev == RDMAQP_POLL_DEVS)
		return NULL;
	p->dev[p->ndev] = (struct rdmaqp_poll_dev){ .index = index };
	return &p->dev[p->ndev++];
}

static __u64 count_of(const struct rdmaqp_qpcount *c, int n, __u32 index)
{
	for (int i = 0; i < n; i++)
		if (c[i].dev_index == index)
			return c[i].qps;
	return 0;
}

/* a dump of device d: every QP of it queried, the rows not in it gone */
static int dump_dev(struct sample_ctx *c, struct mnl_socket *nl, const struct rdmaqp_dev *d,
		    __u64 count)
{
	struct rdmaqp_poll_dev *st = dev_state(c->p, d->index);
	int e = rdmaqp_nl_qps(nl, d->index, on_sample, c);

	if (e)
		return e;
	rdmaqp_table_forget(c->t, d->index);
	c->p->dumps++;
	if (st) {
		st->count = count;
		st->dumped = true;
		st->lost = false;
	}
	return 0;
}

struct cand {
	double at;
	int i;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->i - y->i;
}

static int grow(struct rdmaqp_poll *p, size_t n)
{
	void *a, *b, *o;

	if (n <= p->cap)
		return 0;
	a = realloc(p->req, n * sizeof(*p->req));
	if (a)
		p->req = a;
	b = realloc(p->err, n * sizeof(*p->err));
	if (b)
		p->err = b;
	o = realloc(p->order, n * sizeof(struct cand));
	if (o)
		p->order = o;
	if (!a || !b || !o)
		return -ENOMEM;
	p->cap = n;
	return 0;
}

static bool row_selected(const struct rdmaqp_poll *p, const struct rdmaqp_row *r,
			 const struct rdmaqp_dev *devs, int ndevs)
{
	for (int i = 0; i < ndevs; i++)
		if (devs[i].index == r->key.dev_index)
			return selected(p, &devs[i]);
	return false;
}

/* the QPs a round queries into p->order; known and round set */
static int candidates(struct rdmaqp_poll *p, const struct rdmaqp_table *t,
		      const struct rdmaqp_dev *devs, int ndevs)
{
	struct cand *o;
	unsigned int n = 0;

	if (grow(p, t->n))
		return -ENOMEM;
	o = p->order;
	for (int i = 0; i < t->n; i++) {
		const struct rdmaqp_row *r = &t->rows[i];

		/* a QP has a port from its move to INIT on: before, no query */
		if (!r->destroyed && r->nl.port && row_selected(p, r, devs, ndevs))
			o[n++] = (struct cand){ r->queried_at, i };
	}
	p->known = n;
	p->round = (n + p->budget - 1) / p->budget;
	return 0;
}

/* the budget's QPs, least recently queried first (never queried: first),
 * each alone; a QP gone is dropped, one on another port forgotten there */
static int query_round(struct sample_ctx *c, struct mnl_socket *nl, const struct rdmaqp_dev *devs,
		       int ndevs)
{
	struct rdmaqp_poll *p = c->p;
	struct rdmaqp_table *t = c->t;
	struct cand *o;
	unsigned int k;
	int e = candidates(p, t, devs, ndevs);

	if (e)
		return e;
	o = p->order;
	qsort(o, p->known, sizeof(*o), cand_cmp);
	k = p->known < p->budget ? p->known : p->budget;
	for (unsigned int j = 0; j < k; j++) {
		const struct rdmaqp_row *r = &t->rows[o[j].i];
		bool gsi = r->nl.type == QPT_SMI || r->nl.type == QPT_GSI;

		p->req[j] = (struct rdmaqp_qpreq){ .dev_index = r->key.dev_index,
						   .port = r->nl.port,
						   .id = r->key.qpn | (gsi ? r->nl.port << 24 : 0) };
	}
	e = rdmaqp_nl_qp_get(nl, p->req, p->err, k, on_sample, c);
	if (e)
		return e;
	for (unsigned int j = 0; j < k; j++) {
		struct rdmaqp_key key = { p->req[j].dev_index, p->req[j].id & 0xffffff };
		struct rdmaqp_poll_dev *st;
		struct rdmaqp_row *r;

		if (!p->err[j])
			continue;
		st = dev_state(p, key.dev_index);
		if (st)
			st->lost = true;
		if (p->err[j] == -ENOENT) {
			rdmaqp_table_drop(t, &key);
			continue;
		}
		/* -EAGAIN: on another port now; -ETIMEDOUT: no answer */
		r = rdmaqp_row(t, &key);
		if (r && p->err[j] == -EAGAIN)
			r->nl.port = 0;
		if (r)
			r->queried_at = c->now;
	}
	return 0;
}

/* rows eBPF saw destroyed: gone, with their packets */
static void drop_destroyed(struct rdmaqp_table *t)
{
	for (int i = t->n - 1; i >= 0; i--)
		if (t->rows[i].destroyed) {
			struct rdmaqp_key k = t->rows[i].key;

			rdmaqp_table_drop(t, &k);
		}
}

/* past the budget: the devices that need a dump (new; or, at most once a
 * round, eBPF lost events, or without eBPF a count changed or a QP went),
 * else the round's single queries */
static int poll_bounded(struct sample_ctx *c, struct mnl_socket *nl, const struct rdmaqp_dev *devs,
			int ndevs, const struct rdmaqp_qpcount *cnt, int ncnt)
{
	struct rdmaqp_poll *p = c->p;
	bool due = p->since_dump >= p->round;
	int e;

	p->bounded = true;
	if (p->bpf)
		drop_destroyed(c->t);
	for (int i = 0; i < ndevs; i++) {
		const struct rdmaqp_dev *d = &devs[i];
		struct rdmaqp_poll_dev *st = dev_state(p, d->index);
		__u64 n = count_of(cnt, ncnt, d->index);
		bool changed = st && (n != st->count || st->lost);

		if (!selected(p, d) || !st)
			continue;
		if (st->dumped && !(due && (p->resync || (!p->bpf && changed))))
			continue;
		e = dump_dev(c, nl, d, n);
		if (e)
			return e;
	}
	if (p->dumps) {
		p->since_dump = 0;
		p->resync = false;
		return candidates(p, c->t, devs, ndevs);
	}
	p->since_dump++;
	return query_round(c, nl, devs, ndevs);
}

int rdmaqp_poll_qps(struct rdmaqp_poll *p, struct mnl_socket *nl, struct rdmaqp_table *t,
		    const struct rdmaqp_dev *devs, int ndevs, double now, rdmaqp_poll_fn fn,
		    void *ctx)
{
	struct sample_ctx c = { .p = p, .t = t, .now = now, .fn = fn, .ctx = ctx };
	struct rdmaqp_qpcount cnt[RDMAQP_POLL_DEVS];
	__u64 total = 0;
	int ncnt, e;

	rdmaqp_table_begin(t);
	p->queried = p->dumps = 0;
	ncnt = rdmaqp_nl_counts(nl, cnt, RDMAQP_POLL_DEVS);
	if (ncnt < 0)
		return ncnt;
	for (int i = 0; i < ndevs; i++)
		if (selected(p, &devs[i]))
			total += count_of(cnt, ncnt, devs[i].index);
	if (p->budget && total > p->budget) {
		e = poll_bounded(&c, nl, devs, ndevs, cnt, ncnt);
	} else {
		/* within the budget: a dump of each device, every QP queried */
		p->bounded = false;
		e = 0;
		for (int i = 0; i < ndevs && !e; i++)
			if (selected(p, &devs[i]))
				e = dump_dev(&c, nl, &devs[i], count_of(cnt, ncnt, devs[i].index));
		p->since_dump = 0;
		p->known = p->queried;
		p->round = 1;
	}
	p->queries_total += p->queried;
	return e;
}

void rdmaqp_poll_free(struct rdmaqp_poll *p)
{
	free(p->req);
	free(p->err);
	free(p->order);
	p->req = NULL;
	p->err = NULL;
	p->order = NULL;
	p->cap = 0;
}
