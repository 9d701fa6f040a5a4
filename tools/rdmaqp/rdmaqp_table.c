// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rdmaqp's per-QP bookkeeping (rdmaqp_table.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rdmaqp_table.h"

/* enum ib_qp_state (include/rdma/ib_verbs.h): RESET 0, INIT 1, RTR 2,
 * RTS 3, SQD 4, SQE 5, ERR 6. The send PSN means something from RTS on,
 * the receive PSN from RTR on: before, a modify may still set them. */
#define QPS_RTR 2
#define QPS_RTS 3
#define QPS_ERR 6

static int key_cmp(const struct rdmaqp_key *a, const struct rdmaqp_key *b)
{
	if (a->dev_index != b->dev_index)
		return a->dev_index < b->dev_index ? -1 : 1;
	return a->qpn < b->qpn ? -1 : a->qpn > b->qpn;
}

/* the index of k's row, or where it would go */
static int row_at(const struct rdmaqp_table *t, const struct rdmaqp_key *k, bool *found)
{
	int lo = 0, hi = t->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2, c = key_cmp(&t->rows[mid].key, k);

		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

struct rdmaqp_row *rdmaqp_row(struct rdmaqp_table *t, const struct rdmaqp_key *k)
{
	struct rdmaqp_row *r;
	bool found;
	int at = row_at(t, k, &found);

	if (found)
		return &t->rows[at];
	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 64;

		r = realloc(t->rows, cap * sizeof(*r));
		if (!r)
			return NULL;
		t->rows = r;
		t->cap = cap;
	}
	memmove(&t->rows[at + 1], &t->rows[at], (t->n - at) * sizeof(*r));
	t->n++;
	r = &t->rows[at];
	memset(r, 0, sizeof(*r));
	r->key = *k;
	r->state = RDMAQP_STATE_UNKNOWN;
	return r;
}

/* one PSN: counting once the state gives it meaning */
static void psn_sample(struct rdmaqp_psn *p, bool has, __u32 psn, bool live)
{
	__u32 d;

	if (!has || !live) {
		/* a PSN the next modify may set anew: a sampled base is void,
		 * one a modify set stays */
		if (p->base == RQ_BASE_SAMPLE)
			p->base = RQ_BASE_NONE;
		return;
	}
	if (p->base == RQ_BASE_NONE) {
		p->base = RQ_BASE_SAMPLE;
		p->prev = psn;
		return;
	}
	d = (psn - p->prev) & RDMAQP_PSN_MASK;
	/* back (go-back-N: the requester resends from the last ACK, rxe's
	 * req.psn returning to comp.psn): nothing sent; what it resends
	 * counts as it advances again */
	if (d & ~(RDMAQP_PSN_MASK >> 1))
		d = 0;
	p->interval += d;
	p->total += d;
	p->prev = psn;
}

static void read_comm(struct rdmaqp_row *r)
{
	char path[64];
	FILE *f;

	if (!r->nl.has_pid) {
		snprintf(r->comm, sizeof(r->comm), "[%.13s]", r->nl.kern_name);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%u/comm", r->nl.pid);
	f = fopen(path, "r");
	r->comm[0] = 0;
	if (f) {
		if (fgets(r->comm, sizeof(r->comm), f))
			r->comm[strcspn(r->comm, "\n")] = 0;
		fclose(f);
	}
}

struct rdmaqp_row *rdmaqp_sample(struct rdmaqp_table *t, const struct rdmaqp_nlqp *q,
				 __u8 *old_state)
{
	struct rdmaqp_key k = { .dev_index = q->dev_index, .qpn = q->lqpn };
	struct rdmaqp_row *r = rdmaqp_row(t, &k);
	bool new_owner;
	__u8 st = q->state;

	if (!r)
		return NULL;
	new_owner = !r->sampled || r->nl.pid != q->pid || r->nl.has_pid != q->has_pid;
	*old_state = r->state;
	r->nl = *q;
	r->sampled = true;
	r->in_dump = true;
	if (new_owner)
		read_comm(r);
	psn_sample(&r->tx, q->has_sq_psn, q->sq_psn, st != RDMAQP_STATE_UNKNOWN && st >= QPS_RTS);
	psn_sample(&r->rx, q->has_rq_psn, q->rq_psn, st != RDMAQP_STATE_UNKNOWN && st >= QPS_RTR);
	r->state = st;
	return r;
}

static void psn_set(struct rdmaqp_psn *p, __u32 psn)
{
	p->base = RQ_BASE_MODIFY;
	p->prev = psn & RDMAQP_PSN_MASK;
}

/* a row's packets into its device's gone totals */
static void add_gone(struct rdmaqp_table *t, const struct rdmaqp_row *r)
{
	struct rdmaqp_gone *g = rdmaqp_gone_of(t, r->key.dev_index);

	if (g) {
		g->tx += r->tx.total;
		g->rx += r->rx.total;
	}
}

struct rdmaqp_row *rdmaqp_apply(struct rdmaqp_table *t, const struct rdmaqp_event *e)
{
	struct rdmaqp_key k = { .dev_index = e->dev_index, .qpn = e->qpn };
	struct rdmaqp_row *r;

	if (e->type == RQ_EV_ASYNC && !e->qpn)
		return NULL;
	r = rdmaqp_row(t, &k);
	if (!r)
		return NULL;
	switch (e->type) {
	case RQ_EV_CREATE:
		/* a new QP may reuse a destroyed one's number */
		add_gone(t, r);
		memset(&r->tx, 0, sizeof(r->tx));
		memset(&r->rx, 0, sizeof(r->rx));
		r->destroyed = false;
		r->created = true;
		r->owner_pid = e->pid;
		r->nl.type = e->qp_type;	/* until a query says */
		r->cgroup_id = e->cgroup_id;
		r->created_ns = e->ts_ns;
		r->since = e->ts_ns / 1e9;	/* bpf_ktime_get_ns: CLOCK_MONOTONIC */
		memcpy(r->owner_comm, e->user ? e->comm : e->kern_name, RDMAQP_COMM);
		r->state = 0;
		break;
	case RQ_EV_MODIFY:
		if (e->mask & RDMAQP_ATTR_SQ_PSN)
			psn_set(&r->tx, e->sq_psn);
		if (e->mask & RDMAQP_ATTR_RQ_PSN)
			psn_set(&r->rx, e->rq_psn);
		if (e->mask & (RDMAQP_ATTR_SQ_PSN | RDMAQP_ATTR_RQ_PSN))
			r->since = e->ts_ns / 1e9;
		/* a QP is queried alone on its port (rdmaqp_poll.c) */
		if ((e->mask & RDMAQP_ATTR_PORT) && e->port)
			r->nl.port = e->port;
		if (e->mask & RDMAQP_ATTR_STATE)
			r->state = e->new_state;
		break;
	case RQ_EV_DESTROY:
		r->destroyed = true;
		break;
	default:
		break;
	}
	return r;
}

struct rdmaqp_gone *rdmaqp_gone_of(struct rdmaqp_table *t, __u32 dev_index)
{
	for (int i = 0; i < t->ngone; i++)
		if (t->gone[i].dev_index == dev_index)
			return &t->gone[i];
	if (t->ngone == RDMAQP_GONE_DEVS)
		return NULL;
	t->gone[t->ngone] = (struct rdmaqp_gone){ .dev_index = dev_index };
	return &t->gone[t->ngone++];
}

void rdmaqp_table_begin(struct rdmaqp_table *t)
{
	for (int i = 0; i < t->n; i++) {
		t->rows[i].tx.interval = 0;
		t->rows[i].rx.interval = 0;
		t->rows[i].in_dump = false;
	}
}

void rdmaqp_table_forget(struct rdmaqp_table *t, __u32 dev_index)
{
	int j = 0;

	for (int i = 0; i < t->n; i++) {
		struct rdmaqp_row *r = &t->rows[i];

		/* created since the dump (not sampled yet) stays */
		if (r->key.dev_index == dev_index && !r->in_dump && (r->sampled || r->destroyed)) {
			add_gone(t, r);
			continue;
		}
		t->rows[j++] = *r;
	}
	t->n = j;
}

void rdmaqp_table_drop(struct rdmaqp_table *t, const struct rdmaqp_key *k)
{
	bool found;
	int at = row_at(t, k, &found);

	if (!found)
		return;
	add_gone(t, &t->rows[at]);
	memmove(&t->rows[at], &t->rows[at + 1], (t->n - at - 1) * sizeof(t->rows[0]));
	t->n--;
}

void rdmaqp_table_free(struct rdmaqp_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
