// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocediag's rdmaqp source: RDMA netlink's QPs (state, PSNs) and each
 * port's hw_counters and pause frames, polled at every report, for the
 * QPs no other source sees: a hardware RNIC's (its RoCE never reaches the
 * kernel), or rdma_rxe's when rxeqp is off (--no-rxe). A QP rocelat or
 * rxeqp already has an entry for (by its QPN pair) is left to them.
 * Entries of family 0: no addresses; the device and QPN name the QP.
 * Where rxeqp is not up, rdmaqp's hooks on ib_core add the QPs' fatal
 * async events (QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR), and the PSNs each
 * modify set, from which counting starts.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include <libmnl/libmnl.h>
#include "rocediag.h"
#include "rdmaqp.h"
#include "rdmaqp.skel.h"
#include "rdmaqp_load.h"
#include "rdmaqp_nl.h"
#include "rdmaqp_prom.h"
#include "rdmaqp_port.h"
#include "rdmaqp_table.h"

#define MAX_DEVS 64
#define MAX_PORTS 256
#define MAX_CHANGES 1024
#define MAX_FATAL 256
#define QPS_ERR 6	/* enum ib_qp_state: IB_QPS_ERR */
#define QPS_RTS 3
#define QPT_RC 2	/* enum ib_qp_type */
#define QPT_UC 3

static const char *const states[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

struct change {
	struct rdmaqp_key key;
	__u8 from;
};

/* enum ib_event_type (include/rdma/ib_verbs.h): a QP's fatal events */
static const char *const fatal_names[] = { [1] = "QP_FATAL", [2] = "QP_REQ_ERR",
					   [3] = "QP_ACCESS_ERR" };

struct fatal {
	struct rdmaqp_key key;
	__u32 event;
};

static struct {
	struct mnl_socket *nl;
	struct rdmaqp_dev devs[MAX_DEVS];
	int ndevs;
	struct rdmaqp_port ports[MAX_PORTS];
	int nports;
	struct rdmaqp_table qps;
	struct change changes[MAX_CHANGES];
	int nchanges;
	struct rdmaqp_bpf *obj;
	struct fatal fatal[MAX_FATAL];	/* since the last read */
	int nfatal;
} r;

/* rdmaqp's events: the PSNs modifies set (counting starts there), and
 * the QPs' fatal async events until the next read */
static int on_event(void *ctx, void *data, size_t len)
{
	const struct rdmaqp_event *e = data;

	if (len < sizeof(*e) || e->type >= RQ_EV_NR)
		return 0;
	rdmaqp_apply(&r.qps, e);
	if (e->type == RQ_EV_ASYNC && e->qpn && e->event < 4 && fatal_names[e->event] &&
	    r.nfatal < MAX_FATAL)
		r.fatal[r.nfatal++] = (struct fatal){ { e->dev_index, e->qpn }, e->event };
	return 0;
}

static const char *fatal_of(const struct rdmaqp_key *k)
{
	for (int i = 0; i < r.nfatal; i++)
		if (!memcmp(&r.fatal[i].key, k, sizeof(*k)))
			return fatal_names[r.fatal[i].event];
	return NULL;
}

static const char *state_str(__u8 st)
{
	return st < sizeof(states) / sizeof(states[0]) ? states[st] : "?";
}

static struct rdmaqp_port *port_of(const char *dev, __u32 port)
{
	struct rdmaqp_port *p;

	for (int i = 0; i < r.nports; i++)
		if (r.ports[i].port == port && !strcmp(r.ports[i].dev, dev))
			return &r.ports[i];
	if (r.nports == MAX_PORTS)
		return NULL;
	p = &r.ports[r.nports++];
	memset(p, 0, sizeof(*p));
	snprintf(p->dev, sizeof(p->dev), "%s", dev);
	p->port = port;
	return p;
}

static void on_qp(void *ctx, const struct rdmaqp_nlqp *q)
{
	struct rdmaqp_row *row;
	__u8 old;

	row = rdmaqp_sample(&r.qps, q, &old);
	if (row && old != RDMAQP_STATE_UNKNOWN && old != row->state &&
	    r.nchanges < MAX_CHANGES)
		r.changes[r.nchanges++] = (struct change){ row->key, old };
}

static const struct change *change_of(const struct rdmaqp_key *k)
{
	for (int i = 0; i < r.nchanges; i++)
		if (!memcmp(&r.changes[i].key, k, sizeof(*k)))
			return &r.changes[i];
	return NULL;
}

static void cat(char *buf, size_t len, const char *name, unsigned long long d)
{
	size_t o = strlen(buf);

	if (o < len)
		snprintf(buf + o, len - o, "%s%s +%llu", o ? ", " : "", name, d);
}

/* the port's counters of class cls that rose in the interval (and, for
 * congestion, its netdev's pause frames) */
static void port_rises(const struct rdmaqp_port *p, enum rdmaqp_cls cls, char *buf, size_t len)
{
	__u64 pauses = 0;

	buf[0] = 0;
	for (int c = 0; p && c < p->n; c++) {
		const struct rdmaqp_counter *k = &p->cnt[c];
		const struct rdmaqp_cdesc *d = k->hw ? rdmaqp_counter_desc(p->family, k->name) : NULL;

		if (d && d->cls == cls && k->valid && k->has_prev && k->value > k->prev)
			cat(buf, len, k->name, k->value - k->prev);
	}
	for (int c = 0; p && cls == RQ_CLS_CONGESTION && c < p->pfc.n; c++) {
		const struct rdmaqp_pause *k = &p->pfc.c[c];

		if (k->has_prev && k->value > k->prev)
			pauses += k->value - k->prev;
	}
	if (pauses) {
		char name[48];

		snprintf(name, sizeof(name), "%s pause frames", p->pfc.ifname);
		cat(buf, len, name, pauses);
	}
}

/* an entry another source made for the QP pair (either side) */
static bool seen_elsewhere(const struct diag_table *t, __u32 qpn, __u32 peer)
{
	for (int i = 0; i < t->n; i++) {
		const struct diag_qp *q = &t->qp[i];

		if (q->rq_seen && !q->family)
			continue;
		if ((q->req_qpn == qpn && q->resp_qpn == peer) ||
		    (q->resp_qpn == qpn && q->req_qpn == peer))
			return true;
	}
	return false;
}

/* the entry of the QP's other side on this host, else a new one */
static struct diag_qp *entry_of(struct diag_table *t, const struct rdmaqp_row *row)
{
	__u8 dev[16] = {}, none[16] = {};
	struct diag_qp *q;

	for (int i = 0; i < t->n; i++) {
		q = &t->qp[i];
		if (q->rq_seen && !q->family && q->req_qpn == row->nl.rqpn &&
		    q->resp_qpn == row->key.qpn)
			return q;
	}
	memcpy(dev, &row->key.dev_index, sizeof(row->key.dev_index));
	q = diag_by_request(t, 0, dev, none, row->nl.rqpn);
	if (q)
		q->req_qpn = row->key.qpn;
	return q;
}

static void read_row(struct diag_table *t, const struct rdmaqp_dev *d,
		     const struct rdmaqp_row *row)
{
	const struct change *ch = change_of(&row->key);
	const char *fatal = fatal_of(&row->key);
	struct rdmaqp_port *p = port_of(d->name, row->nl.port);
	bool active = row->tx.interval || row->rx.interval, err = row->state == QPS_ERR;
	char loss[160], cong[160];
	struct diag_qp *q;

	if ((row->nl.type != QPT_RC && row->nl.type != QPT_UC) || !row->nl.has_rqpn)
		return;
	if (!(active || ch || err || fatal) || seen_elsewhere(t, row->key.qpn, row->nl.rqpn))
		return;
	q = entry_of(t, row);
	if (!q)
		return;
	port_rises(p, RQ_CLS_LOSS, loss, sizeof(loss));
	port_rises(p, RQ_CLS_CONGESTION, cong, sizeof(cong));
	if (!q->rq_seen || err) {
		/* the first side, or the one in ERR, names the entry */
		snprintf(q->rq_dev, sizeof(q->rq_dev), "%.31s", d->name);
		q->rq_port = row->nl.port;
		snprintf(q->rq_state, sizeof(q->rq_state), "%s", state_str(row->state));
		q->rq_sq_psn = row->nl.sq_psn;
		snprintf(q->rq_loss, sizeof(q->rq_loss), "%s", loss);
		snprintf(q->rq_cong, sizeof(q->rq_cong), "%s", cong);
	}
	q->rq_seen = true;
	q->rq_err |= err;
	if (fatal && !q->rq_fatal[0])
		snprintf(q->rq_fatal, sizeof(q->rq_fatal), "%s", fatal);
	q->rq_frozen |= row->state == QPS_RTS && row->tx.total && !row->tx.interval && loss[0];
	q->rq_tx += row->tx.interval;
	q->rq_rx += row->rx.interval;
	if (ch && (!q->rq_change[0] || err))
		snprintf(q->rq_change, sizeof(q->rq_change), "%s -> %s", state_str(ch->from),
			 state_str(row->state));
}

void rocediag_rdma_read(struct diag_table *t, bool rxe_up)
{
	int n;

	if (!r.nl)
		return;
	n = rdmaqp_nl_devices(r.nl, r.devs, MAX_DEVS);
	if (n < 0)
		return;
	r.ndevs = n;
	r.nchanges = 0;
	rdmaqp_table_begin(&r.qps);
	for (int i = 0; i < r.ndevs; i++) {
		const struct rdmaqp_dev *d = &r.devs[i];
		struct rdmaqp_port *p1 = NULL;

		for (__u32 p = 1; p <= d->nports; p++) {
			struct rdmaqp_port *pt = port_of(d->name, p);

			if (pt)
				rdmaqp_port_read(pt, "/sys");
			p1 = p1 ? p1 : pt;
		}
		/* rxeqp has rdma_rxe's QPs, with more than netlink says */
		if (rxe_up && p1 && p1->family && !strcmp(p1->family->name, "rxe"))
			continue;
		if (rdmaqp_nl_qps(r.nl, d->index, on_qp, NULL))
			continue;
		rdmaqp_table_forget(&r.qps, d->index);
		for (int j = 0; t && j < r.qps.n; j++)
			if (r.qps.rows[j].key.dev_index == d->index && r.qps.rows[j].in_dump)
				read_row(t, d, &r.qps.rows[j]);
	}
	r.nfatal = 0;
}

/* rdmaqp's hooks (not where rxeqp is up: its rdma_rxe QPs are its own);
 * without them, netlink alone, which sees ERR but not the event */
static void open_bpf(const struct rocediag_cfg *cfg, const struct diag_sources *src,
		     struct loop *lp)
{
	struct rdmaqp_load_opts lo = { .cli = &cfg->cli };
	struct rdmaqp_hooks hk;
	char err[256] = "";

	if (src->rxe)
		return;
	r.obj = rdmaqp_load(&lo, &hk, err, sizeof(err));
	if (!r.obj) {
		if (cfg->cli.verbose && err[0])
			cli_err("RDMA async events: %s", err);
		return;
	}
	if (!loop_add_events(lp, r.obj->maps.events, on_event, NULL, NULL)) {
		rdmaqp_bpf__destroy(r.obj);
		r.obj = NULL;
	}
}

void rocediag_rdma_open(const struct rocediag_cfg *cfg, struct diag_sources *src,
			struct loop *lp)
{
	/* a collector's own QPs are not the mirrored traffic's */
	if (cfg->mirror) {
		snprintf(src->no_rdma, sizeof(src->no_rdma),
			 "RDMA ports and QPs: not on a collector (--mirror)");
		return;
	}
	r.nl = rdmaqp_nl_open();
	if (!r.nl) {
		/* no RDMA subsystem in this kernel: nothing hidden from view */
		src->rdma_absent = errno == EPROTONOSUPPORT;
		if (!src->rdma_absent)
			snprintf(src->no_rdma, sizeof(src->no_rdma),
				 "RDMA ports and QPs: RDMA netlink: %s", strerror(errno));
		return;
	}
	r.ndevs = rdmaqp_nl_devices(r.nl, r.devs, MAX_DEVS);
	if (r.ndevs <= 0) {
		/* no RDMA device: nothing hidden from view */
		src->rdma_absent = r.ndevs == 0;
		if (r.ndevs < 0)
			snprintf(src->no_rdma, sizeof(src->no_rdma),
				 "RDMA ports and QPs: RDMA netlink: %s", strerror(-r.ndevs));
		rdmaqp_nl_close(r.nl);
		r.nl = NULL;
		return;
	}
	src->rdma = true;
	open_bpf(cfg, src, lp);
	/* the first reading: what the first interval counts from */
	rocediag_rdma_read(NULL, false);
}

void rocediag_rdma_prom(struct prom_file *pf)
{
	if (r.nl && r.nports)
		rdmaqp_prom_ports(pf, r.ports, r.nports);
}

void rocediag_rdma_close(void)
{
	rdmaqp_bpf__destroy(r.obj);
	rdmaqp_nl_close(r.nl);
	rdmaqp_table_free(&r.qps);
	for (int i = 0; i < r.nports; i++)
		rdmaqp_port_free(&r.ports[i]);
	memset(&r, 0, sizeof(r));
}
