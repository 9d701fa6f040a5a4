// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tools/rxeqp/rxeqp_delta.c on the maps of rxeqp's skeleton (loaded, no program:
 * rdma_rxe need not be there), filled the way rxeqp.bpf.c fills them: every
 * destroyed QP retired after one reading, more than a batch of them (the
 * copy it replaced scanned 256 keys), their totals kept per device, growth
 * per reading, a restarted entry read as a new QP. Needs root.
 */
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rxeqp.h"
#include "rxeqp.skel.h"
#include "rxeqp_delta.h"
#include "lib/maps.h"
#include "tap.h"

#define NDEAD	300	/* destroyed QPs on rxe0 */
#define NLIVE	10	/* live QPs on rxe1 */
#define IF_DEAD	7
#define IF_LIVE	8

static int qfd, hfd;

static void put(__u32 ifindex, __u32 qpn, const char *dev, __u64 tx, __u64 retries,
		bool destroyed)
{
	struct qp_key k = { .ifindex = ifindex, .qpn = qpn };
	struct qp_stats st = { .destroyed = destroyed, .state = QP_STATE_ERR };

	snprintf(st.dev, sizeof(st.dev), "%s", dev);
	st.cnt[QC_TX_PKTS] = tx;
	st.cnt[QC_RETRIES] = retries;
	bpf_map_update_elem(qfd, &k, &st, BPF_ANY);
}

static int count(const void *k, const void *v, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

static int entries(const struct bpf_map *m)
{
	int n = 0;

	maps_for_each(m, count, &n);
	return n;
}

static const struct rxeqp_qp *qp_of(const struct rxeqp_delta *dt, __u32 ifindex, __u32 qpn)
{
	struct qp_key k = { .ifindex = ifindex, .qpn = qpn };

	return rxeqp_delta_find(dt, &k);
}

/* NDEAD destroyed and NLIVE live QPs: one reading has them all, the next
 * only the live ones, and the dead ones' counts are their device's */
static void check_retire(struct rxeqp_bpf *obj, struct rxeqp_delta *dt)
{
	struct qp_key k = { .ifindex = IF_LIVE, .qpn = 0x11 };
	struct hist h = { .slots = { [3] = 4 } };
	struct rxeqp_dev_total *t;
	const struct rxeqp_qp *q;
	__u64 tx_dead = 0;
	int dead_seen = 0;

	for (__u32 i = 0; i < NDEAD; i++) {
		put(IF_DEAD, 0x11 + i, "rxe0", i + 1, 0, true);
		tx_dead += i + 1;
		/* a histogram too: retired with its QP */
		k.ifindex = IF_DEAD;
		k.qpn = 0x11 + i;
		bpf_map_update_elem(hfd, &k, &h, BPF_ANY);
	}
	for (__u32 i = 0; i < NLIVE; i++)
		put(IF_LIVE, 0x11 + i, "rxe1", 100, 5, false);
	tap_eq(rxeqp_delta_read(dt), NDEAD + NLIVE, "first reading: every QP");
	for (int i = 0; i < dt->n; i++)
		dead_seen += dt->qp[i].cur.destroyed && dt->qp[i].is_new &&
			     dt->qp[i].d[QC_TX_PKTS] == dt->qp[i].key.qpn - 0x10;
	tap_eq(dead_seen, NDEAD, "each destroyed QP reported once, its counts as growth");
	q = qp_of(dt, IF_DEAD, 0x11);
	tap_ok(q && q->hd[3] == 4, "its histogram read");

	tap_eq(rxeqp_delta_read(dt), NLIVE, "second reading: the live QPs only");
	tap_eq(entries(obj->maps.qps), NLIVE, "all %d destroyed QPs out of the qps map", NDEAD);
	tap_eq(entries(obj->maps.lat_hists), 0, "and out of the lat_hists map");
	tap_eq(dt->retired, NDEAD, "%d QPs retired", NDEAD);
	t = rxeqp_delta_dev(dt, IF_DEAD, "");
	tap_ok(t && !strcmp(t->dev, "rxe0") && t->cnt[QC_TX_PKTS] == tx_dead,
	       "their packets summed for their device (%llu)", (unsigned long long)tx_dead);
	q = qp_of(dt, IF_LIVE, 0x11);
	tap_ok(q && !q->is_new && q->d[QC_TX_PKTS] == 0, "a live QP that did nothing grew by 0");
}

/* growth, and an entry restarted under the reader for a new QP */
static void check_growth(struct rxeqp_delta *dt)
{
	const struct rxeqp_dev_total *t;
	const struct rxeqp_qp *q;

	put(IF_LIVE, 0x11, "rxe1", 150, 7, false);
	/* a new QP in 0x12's entry: more packets than the old one, fewer
	 * retries; every counter restarts, not only tx/rx */
	put(IF_LIVE, 0x12, "rxe1", 120, 0, false);
	rxeqp_delta_read(dt);
	q = qp_of(dt, IF_LIVE, 0x11);
	tap_ok(q && q->d[QC_TX_PKTS] == 50 && q->d[QC_RETRIES] == 2,
	       "growth since the reading before");
	q = qp_of(dt, IF_LIVE, 0x12);
	tap_ok(q && q->d[QC_TX_PKTS] == 120 && q->d[QC_RETRIES] == 0,
	       "a restarted entry counts from zero (retries %llu)",
	       q ? (unsigned long long)q->d[QC_RETRIES] : 0ULL);

	/* 0x13 destroyed, read so; then its number taken by a new QP
	 * before the next reading retires it */
	put(IF_LIVE, 0x13, "rxe1", 130, 5, true);
	rxeqp_delta_read(dt);
	put(IF_LIVE, 0x13, "rxe1", 3, 0, false);
	rxeqp_delta_read(dt);
	q = qp_of(dt, IF_LIVE, 0x13);
	tap_ok(q && q->is_new && q->d[QC_TX_PKTS] == 3 && !q->cur.destroyed,
	       "a new QP in a destroyed one's entry is kept, and new");
	t = rxeqp_delta_dev(dt, IF_LIVE, "");
	tap_eq(t ? t->cnt[QC_TX_PKTS] : 0, 130, "the destroyed one's packets are its device's");
}

int main(void)
{
	struct rxeqp_delta dt;
	struct rxeqp_bpf *obj;
	int err;

	if (geteuid()) {
		tap_skip("needs root", "rxeqp_delta on real maps");
		return tap_done();
	}
	obj = rxeqp_bpf__open();
	tap_ok(obj != NULL, "open rxeqp's skeleton");
	if (!obj)
		return tap_done();
	maps_load_only(obj->obj, NULL);
	err = rxeqp_bpf__load(obj);
	tap_eq(err, 0, "load its maps");
	if (err || rxeqp_delta_init(&dt, obj->maps.qps, obj->maps.lat_hists))
		goto out;
	qfd = bpf_map__fd(obj->maps.qps);
	hfd = bpf_map__fd(obj->maps.lat_hists);
	check_retire(obj, &dt);
	check_growth(&dt);
	rxeqp_delta_free(&dt);
out:
	rxeqp_bpf__destroy(obj);
	return tap_done();
}
