// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocediag's verbs source: verbslat's hooks on the RDMA drivers' post and
 * poll entry points, for the kernel QPs (NVMe over Fabrics, NFS over
 * RDMA, iSER, SMB Direct) of any RNIC verbslat knows: on a hardware
 * RNIC's host the one latency and error view of a QP (its RoCE never
 * reaches the kernel), beside rocelat's wire latency where the host sees
 * its RoCE. Per interval, each QP's work requests completed per opcode
 * with their p50/p99, its error completions by status, and its send WRs
 * outstanding with the oldest's age, into the entry of its QP pair (found
 * by the QPN pair RDMA netlink names, as rdmaqp's and rocelat's entries
 * carry it), else an entry of its own as rdmaqp's (family 0, the device
 * and QPN).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <libmnl/libmnl.h>
#include "rocediag.h"
#include "verbslat.h"
#include "verbslat.skel.h"
#include "verbslat_load.h"
#include "rdmaqp_nl.h"
#include "lib/btf_enum.h"
#include "lib/hist.h"
#include "lib/maps.h"
#include "lib/probe.h"

#define MAX_DEVS 64
#define MAX_ROWS 4096		/* verbslat's stats map */
#define MAX_VQPS 4096
#define MAX_PEERS 4096
/* WRs outstanding kept (signaled and unsignaled, each): a quarter of
 * verbslat's own, for an agent that runs always (a hash map's entries
 * are allocated at load) */
#define MAX_WRS 65536
#define WC_WR_FLUSH_ERR 5	/* enum ib_wc_status (include/rdma/ib_verbs.h) */

/* one QP's interval, gathered from the three maps */
struct vqp {
	__u32 dev_index, qpn;
	struct diag_verbs v;
	struct llhist *sq;	/* its successful send WRs, all opcodes */
	__u64 sq_max;
	__u64 oldest;		/* post time of the oldest send WR outstanding */
	bool dup_op;		/* more opcodes than diag_verbs holds */
};

/* what RDMA netlink said of a QP's peer, kept a read after the QP is
 * gone: its flushes at destroy are read after that */
struct peer {
	__u32 dev_index, qpn, rqpn;
	unsigned int gen;
};

static struct {
	struct verbslat_bpf *obj;
	struct mnl_socket *nl;
	struct btf_enum_names *status, *opcode;
	struct rdmaqp_dev devs[MAX_DEVS];
	int ndevs;
	struct vl_stat_key *keys;
	struct vl_stat *row;
	struct vqp *qps;
	int nq;
	struct peer *peers;
	int npeers;
	unsigned int gen;
	__u64 last_addr;	/* vqp_at()'s last answer, this read's */
	struct vqp *last;
} v;

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static const char *dev_name(__u32 index)
{
	for (int i = 0; i < v.ndevs; i++)
		if (v.devs[i].index == index)
			return v.devs[i].name;
	return "?";
}

static struct vqp *vqp_of(__u32 dev_index, __u32 qpn)
{
	struct vqp *q;

	for (int i = 0; i < v.nq; i++)
		if (v.qps[i].dev_index == dev_index && v.qps[i].qpn == qpn)
			return &v.qps[i];
	if (v.nq == MAX_VQPS)
		return NULL;
	q = &v.qps[v.nq++];
	memset(q, 0, sizeof(*q));
	q->dev_index = dev_index;
	q->qpn = qpn;
	q->v.qpn = qpn;
	snprintf(q->v.dev, sizeof(q->v.dev), "%s", dev_name(dev_index));
	return q;
}

static void name_of(struct btf_enum_names *e, unsigned int val, char *buf, size_t len)
{
	const char *n = e ? btf_enum_name(e, val) : NULL;

	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "%u", val);
}

/* one row of verbslat's stats (QP, opcode, status) into its QP */
static void add_row(const struct vl_stat_key *k, const struct vl_stat *s)
{
	struct vqp *q = vqp_of(k->dev_index, k->qpn);
	struct diag_verbs *d;

	if (!q || !s->count)
		return;
	d = &q->v;
	if (k->opcode != VL_OP_RECV)
		d->sq_done += s->count;
	if (k->status) {
		char n[32];
		int e;

		/* the rows of one status, one per opcode, summed */
		d->errors += s->count;
		d->flushes += k->status == WC_WR_FLUSH_ERR ? s->count : 0;
		name_of(v.status, k->status, n, sizeof(n));
		for (e = 0; e < d->nerrs && strcmp(n, d->err[e].status); e++)
			;
		if (e == d->nerrs && d->nerrs < DIAG_VB_ERRS)
			snprintf(d->err[d->nerrs++].status, sizeof(d->err[0].status), "%s", n);
		if (e < d->nerrs)
			d->err[e].count += s->count;
		return;
	}
	if (d->nops < DIAG_VB_OPS) {
		struct diag_vb_op *o = &d->op[d->nops++];

		if (k->opcode == VL_OP_RECV)
			snprintf(o->opcode, sizeof(o->opcode), "RECV");
		else
			name_of(v.opcode, k->opcode, o->opcode, sizeof(o->opcode));
		o->count = s->count;
		o->unsignaled = s->unsignaled;
		o->p50_ns = llhist_quantile(s->lat.b, 0.50, 0, s->max_ns);
		o->p99_ns = llhist_quantile(s->lat.b, 0.99, 0, s->max_ns);
	} else {
		q->dup_op = true;
	}
	if (k->opcode == VL_OP_RECV)
		return;
	if (!q->sq)
		q->sq = calloc(1, sizeof(*q->sq));
	if (!q->sq)
		return;
	for (int b = 0; b < LLH_BUCKETS; b++)
		q->sq->b[b] += s->lat.b[b];
	d->sq_samples += s->count;
	if (s->max_ns > q->sq_max)
		q->sq_max = s->max_ns;
}

/*
 * The interval's rows, each read and deleted at once (lookup-and-delete,
 * 5.14): an increment between a read and a delete would be lost, and
 * rocediag reads every interval. Before 5.14 a read and a delete.
 */
static void take_rows(void)
{
	int fd = bpf_map__fd(v.obj->maps.stats);
	int n = maps_keys(v.obj->maps.stats, v.keys, MAX_ROWS);

	for (int i = 0; i < n; i++) {
		if (bpf_map_lookup_and_delete_elem(fd, &v.keys[i], v.row)) {
			if (errno == ENOENT || bpf_map_lookup_elem(fd, &v.keys[i], v.row))
				continue;
			bpf_map_delete_elem(fd, &v.keys[i]);
		}
		add_row(&v.keys[i], v.row);
	}
}

/* the QP of an outstanding WR, by its struct ib_qp address (the last
 * one asked for kept: a QP's WRs come in runs); NULL for a QP gone or
 * not tracked */
static struct vqp *vqp_at(__u64 addr)
{
	struct vl_qp q;
	struct vqp *w;

	if (v.last && addr == v.last_addr)
		return v.last;
	if (bpf_map_lookup_elem(bpf_map__fd(v.obj->maps.qps), &addr, &q) || !q.tracked)
		return NULL;
	w = vqp_of(q.dev_index, q.qpn);
	v.last_addr = addr;
	v.last = w;
	return w;
}

/* a WR outstanding: a receive, a signaled send WR (pending), or an
 * unsignaled one, which is owed no completion of its own (an idle QP
 * may keep its last ones for ever): only a signaled one's age counts */
static void outstanding(__u64 addr, __u64 ts, bool recv, bool signaled)
{
	struct vqp *q = vqp_at(addr);

	if (!q)
		return;
	if (recv) {
		q->v.rq_posted++;
		return;
	}
	q->v.sq_outstanding++;
	if (signaled && (!q->oldest || ts < q->oldest))
		q->oldest = ts;
}

static int pending_cb(const void *key, const void *val, void *ctx)
{
	const struct vl_wr_key *k = key;

	outstanding(k->qp, ((const struct vl_wr *)val)->ts_ns, k->dir, true);
	return 0;
}

static int unsig_cb(const void *key, const void *val, void *ctx)
{
	outstanding(((const struct vl_unsig_key *)key)->qp, ((const struct vl_wr *)val)->ts_ns,
		    false, false);
	return 0;
}

/* ---- the QP's peer (RDMA netlink), its entry ---- */

static void on_nlqp(void *ctx, const struct rdmaqp_nlqp *n)
{
	struct peer *p = NULL;

	if (!n->has_rqpn)
		return;
	for (int i = 0; i < v.npeers && !p; i++)
		if (v.peers[i].dev_index == n->dev_index && v.peers[i].qpn == n->lqpn)
			p = &v.peers[i];
	if (!p && v.npeers < MAX_PEERS)
		p = &v.peers[v.npeers++];
	if (p)
		*p = (struct peer){ n->dev_index, n->lqpn, n->rqpn, v.gen };
}

/* the peers of the devices' QPs now; those of the QPs gone since the
 * dump before last forgotten */
static void read_peers(void)
{
	v.gen++;
	for (int i = 0; i < v.ndevs; i++)
		rdmaqp_nl_qps(v.nl, v.devs[i].index, on_nlqp, NULL);
	for (int i = 0; i < v.npeers; i++)
		if (v.gen - v.peers[i].gen > 1)
			v.peers[i--] = v.peers[--v.npeers];
}

static __u32 peer_of(__u32 dev_index, __u32 qpn)
{
	for (int i = 0; i < v.npeers; i++)
		if (v.peers[i].dev_index == dev_index && v.peers[i].qpn == qpn)
			return v.peers[i].rqpn;
	return DIAG_QPN_UNKNOWN;
}

/*
 * The entry of the QP's pair: one whose QPNs are the QP and its peer
 * (either way round: rdmaqp's or rocelat's, rxeqp's, the other side's
 * QP on this host), else rdmaqp's of the same device and QPN, else a new
 * one as rdmaqp makes them.
 */
static struct diag_qp *entry_of(struct diag_table *t, const struct vqp *w)
{
	__u32 rqpn = peer_of(w->dev_index, w->qpn);
	__u8 dev[16] = {}, none[16] = {};
	struct diag_qp *q;

	memcpy(dev, &w->dev_index, sizeof(w->dev_index));
	for (int i = 0; rqpn != DIAG_QPN_UNKNOWN && i < t->n; i++) {
		q = &t->qp[i];
		if ((q->req_qpn == w->qpn && q->resp_qpn == rqpn) ||
		    (q->resp_qpn == w->qpn && q->req_qpn == rqpn))
			return q;
	}
	for (int i = 0; i < t->n; i++) {
		q = &t->qp[i];
		if (!q->family && !memcmp(q->req, dev, sizeof(dev)) && q->req_qpn == w->qpn)
			return q;
	}
	q = diag_by_request(t, 0, dev, none, rqpn);
	if (q)
		q->req_qpn = w->qpn;
	return q;
}

/* a QP with work this interval (completions, or send WRs waiting) into t */
static void read_qp(struct diag_table *t, struct vqp *w, __u64 now)
{
	struct diag_qp *q;

	if (!w->v.sq_done && !w->v.nops && !w->v.errors && !w->v.sq_outstanding)
		return;
	if (w->sq && w->v.sq_samples) {
		w->v.sq_p50_ns = llhist_quantile(w->sq->b, 0.50, 0, w->sq_max);
		w->v.sq_p99_ns = llhist_quantile(w->sq->b, 0.99, 0, w->sq_max);
	}
	if (w->oldest)
		w->v.sq_oldest_s = now > w->oldest ? (now - w->oldest) / 1e9 : 0;
	q = entry_of(t, w);
	if (!q || q->nvb == DIAG_VB_SIDES)
		return;
	q->vb[q->nvb++] = w->v;
}

void rocediag_verbs_read(struct diag_table *t)
{
	__u64 now;
	int n;

	if (!v.obj)
		return;
	v.nq = 0;
	v.last = NULL;
	n = rdmaqp_nl_devices(v.nl, v.devs, MAX_DEVS);
	v.ndevs = n > 0 ? n : 0;
	take_rows();
	maps_for_each(v.obj->maps.pending, pending_cb, NULL);
	maps_for_each(v.obj->maps.unsig, unsig_cb, NULL);
	now = now_ns();
	/* the QPs' peers, when there is a QP to find an entry for */
	if (v.nq)
		read_peers();
	for (int i = 0; i < v.nq; i++) {
		read_qp(t, &v.qps[i], now);
		free(v.qps[i].sq);
	}
}

/* ---- open, close ---- */

/* a driver verbslat knows is loaded */
static bool known_driver(void)
{
	for (int d = 0; d < VL_NDRIVERS; d++)
		if (probe_module_loaded(verbslat_driver_module(d)))
			return true;
	return false;
}

void rocediag_verbs_open(const struct rocediag_cfg *cfg, struct diag_sources *src)
{
	struct verbslat_load_opts lo = { .cli = &cfg->cli, .max_wrs = MAX_WRS };
	struct verbslat_hooks hk;
	char err[140] = "";

	src->wr_timeout_s = cfg->timeout_ms / 1e3;
	if (cfg->mirror) {
		snprintf(src->no_verbs, sizeof(src->no_verbs),
			 "work requests: not on a collector (--mirror)");
		return;
	}
	/* no RDMA device, or no driver of one verbslat knows: nothing it
	 * could trace (the second named: a device it cannot see into) */
	src->verbs_absent = !src->rdma || !known_driver();
	if (src->verbs_absent) {
		if (src->rdma)
			snprintf(src->no_verbs, sizeof(src->no_verbs), "work requests: no RDMA "
				 "driver verbslat knows is loaded (rdma_rxe, mlx5_ib, irdma, bnxt_re)");
		return;
	}
	lo.err = err;
	lo.errlen = sizeof(err);
	v.obj = verbslat_load(&lo, &hk);
	v.nl = v.obj ? rdmaqp_nl_open() : NULL;
	v.keys = calloc(MAX_ROWS, sizeof(*v.keys));
	v.row = calloc(1, sizeof(*v.row));
	v.qps = calloc(MAX_VQPS, sizeof(*v.qps));
	v.peers = calloc(MAX_PEERS, sizeof(*v.peers));
	if (!v.obj || !v.nl || !v.keys || !v.row || !v.qps || !v.peers) {
		snprintf(src->no_verbs, sizeof(src->no_verbs), "work requests: %s",
			 err[0] ? err : v.obj ? "RDMA netlink or memory" :
			 "verbslat's programs did not load");
		rocediag_verbs_close();
		return;
	}
	v.status = btf_enum_load_module("ib_core", "ib_wc_status", NULL);
	v.opcode = btf_enum_load_module("ib_core", "ib_wr_opcode", "IB_WR_");
	for (int d = 0; d < VL_NDRIVERS; d++)
		if (hk.driver[d])
			snprintf(src->verbs_hook + strlen(src->verbs_hook),
				 sizeof(src->verbs_hook) - strlen(src->verbs_hook), "%s%s",
				 src->verbs_hook[0] ? ", " : "", verbslat_driver_module(d));
	snprintf(src->verbs_hook + strlen(src->verbs_hook),
		 sizeof(src->verbs_hook) - strlen(src->verbs_hook), " via %s",
		 hk.fentry ? "fentry" : "kprobes");
	src->verbs = true;
}

void rocediag_verbs_close(void)
{
	verbslat_bpf__destroy(v.obj);
	rdmaqp_nl_close(v.nl);
	btf_enum_free(v.status);
	btf_enum_free(v.opcode);
	free(v.keys);
	free(v.row);
	free(v.qps);
	free(v.peers);
	memset(&v, 0, sizeof(v));
}
