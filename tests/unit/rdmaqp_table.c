// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tools/rdmaqp/rdmaqp_table.c as rdmaqp's budgeted polling uses it: rows
 * kept in key order whatever order QPs come in (the binary search a poll
 * of 10,000 QPs needs), a QP's packets over two queries several
 * intervals apart counted once, in the second query, across the 24-bit
 * wrap; a QP netlink says is gone dropped with its packets kept in its
 * device's gone totals; a modify event giving the port a single query
 * needs and the time its counts start from.
 */
#include <string.h>
#include <linux/types.h>
#include "rdmaqp.h"
#include "rdmaqp_table.h"
#include "tap.h"

static struct rdmaqp_nlqp qp(__u32 dev, __u32 qpn, __u32 sq_psn, __u32 rq_psn)
{
	struct rdmaqp_nlqp q = { .dev_index = dev, .lqpn = qpn, .port = 1, .sq_psn = sq_psn,
				 .rq_psn = rq_psn, .type = 2, .state = 3, .has_sq_psn = true,
				 .has_rq_psn = true, .has_rqpn = true, .kern_name = "k" };

	return q;
}

static bool ordered(const struct rdmaqp_table *t)
{
	for (int i = 1; i < t->n; i++) {
		const struct rdmaqp_key *a = &t->rows[i - 1].key, *b = &t->rows[i].key;

		if (a->dev_index > b->dev_index ||
		    (a->dev_index == b->dev_index && a->qpn >= b->qpn))
			return false;
	}
	return true;
}

int main(void)
{
	struct rdmaqp_table t = {};
	struct rdmaqp_row *r;
	struct rdmaqp_nlqp q;
	struct rdmaqp_key k;
	__u8 old;
	int made = 0;

	/* 500 QPs on two devices, numbers in a scrambled order */
	for (__u32 i = 0; i < 500; i++) {
		q = qp(1 + (i * 7) % 2, 17 + (i * 211) % 500, 100, 100);
		made += rdmaqp_sample(&t, &q, &old) != NULL;
	}
	tap_eq(made, 500, "500 samples made rows");
	tap_eq(t.n, 500, "500 rows, one a QP");
	tap_ok(ordered(&t), "rows in key order");
	k = (struct rdmaqp_key){ 2, 17 + (1 * 211) % 500 };
	r = rdmaqp_row(&t, &k);
	tap_ok(r && r->key.qpn == k.qpn && t.n == 500, "a known QP found, no new row");

	/* a QP queried again after several intervals, its send PSN across
	 * the 24-bit wrap: all its packets in this query */
	q = qp(5, 40, 0xfffff0, 7);
	rdmaqp_sample(&t, &q, &old);
	rdmaqp_table_begin(&t);
	q = qp(5, 40, 0x10, 9);
	r = rdmaqp_sample(&t, &q, &old);
	tap_eq(r->tx.interval, 0x20, "send PSN 0xfffff0 -> 0x10: 32 packets");
	tap_eq(r->rx.interval, 2, "receive PSN 7 -> 9: 2 packets");
	tap_ok(r->in_dump, "queried in this poll");
	rdmaqp_table_begin(&t);
	k = (struct rdmaqp_key){ 5, 40 };
	r = rdmaqp_row(&t, &k);
	tap_ok(!r->in_dump && r->tx.total == 0x20, "next poll: not queried, total kept");

	/* gone (ENOENT): its packets are its device's */
	rdmaqp_table_drop(&t, &k);
	tap_eq(t.n, 500, "dropped");
	tap_ok(ordered(&t), "still in key order");
	tap_eq(rdmaqp_gone_of(&t, 5)->tx, 0x20, "its packets in device 5's gone totals");

	/* eBPF: created (type, start), then moved to INIT on port 2 and RTS
	 * with a PSN (counting and its span start there) */
	struct rdmaqp_event e = { .type = RQ_EV_CREATE, .dev_index = 3, .qpn = 900,
				  .qp_type = 1, .ts_ns = 5000000000ull };

	r = rdmaqp_apply(&t, &e);
	tap_ok(r && r->nl.type == 1 && r->since == 5.0 && !r->sampled,
	       "create: the row, its type, its start, not sampled");
	e = (struct rdmaqp_event){ .type = RQ_EV_MODIFY, .dev_index = 3, .qpn = 900,
				   .mask = RDMAQP_ATTR_STATE | RDMAQP_ATTR_PORT, .port = 2,
				   .new_state = 1, .ts_ns = 6000000000ull };
	r = rdmaqp_apply(&t, &e);
	tap_ok(r->nl.port == 2 && r->since == 5.0, "INIT on port 2: the port a query needs");
	e = (struct rdmaqp_event){ .type = RQ_EV_MODIFY, .dev_index = 3, .qpn = 900,
				   .mask = RDMAQP_ATTR_STATE | RDMAQP_ATTR_SQ_PSN, .sq_psn = 50,
				   .new_state = 3, .ts_ns = 7500000000ull };
	r = rdmaqp_apply(&t, &e);
	tap_ok(r->since == 7.5 && r->tx.base == RQ_BASE_MODIFY && r->tx.prev == 50,
	       "RTS with PSN 50: counting from it, since its time");
	q = qp(3, 900, 60, 0);
	r = rdmaqp_sample(&t, &q, &old);
	tap_eq(r->tx.interval, 10, "first query: the 10 packets since the modify");
	rdmaqp_table_free(&t);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
