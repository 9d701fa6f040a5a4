// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rdmaqp's Prometheus file (rdmaqp_prom.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rdmaqp_prom.h"

#define P_COUNTER "agentxdp_rdmaqp_port_stats_total"
#define P_GAUGE "agentxdp_rdmaqp_port_resource"
#define P_PAUSE "agentxdp_rdmaqp_pause_frames_total"
#define P_STORM "agentxdp_rdmaqp_pause_storm_events_total"
#define P_TX "agentxdp_rdmaqp_qp_tx_packets_total"
#define P_RX "agentxdp_rdmaqp_qp_rx_packets_total"
#define P_STATE "agentxdp_rdmaqp_qp_state"
#define P_AGE "agentxdp_rdmaqp_qp_query_age_seconds"
#define P_BUDGET "agentxdp_rdmaqp_poll_budget"
#define P_KNOWN "agentxdp_rdmaqp_poll_qps"
#define P_ROUND "agentxdp_rdmaqp_poll_round_intervals"
#define P_QUERIES "agentxdp_rdmaqp_poll_qp_queries_total"

/* every port counter: resources (bnxt_re's active_qps) as gauges, the
 * rest as counters; gauge: the gauge family, else the counter one */
static void port_counters(struct prom_file *pf, const struct rdmaqp_port *ports, int nports,
			  bool gauge)
{
	char port[12];

	for (int i = 0; i < nports; i++) {
		const struct rdmaqp_port *p = &ports[i];

		snprintf(port, sizeof(port), "%u", p->port);
		for (int c = 0; c < p->n; c++) {
			const struct rdmaqp_counter *k = &p->cnt[c];
			const struct rdmaqp_cdesc *d = k->hw ? rdmaqp_counter_desc(p->family, k->name)
							     : NULL;
			struct prom_label l[] = {
				{ "dev", p->dev }, { "port", port }, { "counter", k->name },
				{ "source", k->hw ? "hw_counters" : "counters" },
				{ "class", d ? rdmaqp_cls_names[d->cls] : "" },
			};

			if (!k->valid || (d && d->cls == RQ_CLS_RESOURCE) != gauge)
				continue;
			if (gauge)
				prom_gauge(pf, P_GAUGE, l, 5, k->value);
			else
				prom_counter(pf, P_COUNTER, l, 5, k->value);
		}
	}
}

static bool netdev_listed(const struct rdmaqp_port *ports, int i)
{
	for (int j = 0; j < i; j++)
		if (!strcmp(ports[j].netdev, ports[i].netdev))
			return true;
	return false;
}

/* pause frames per netdev, priority and direction; storms apart */
static void pauses(struct prom_file *pf, const struct rdmaqp_port *ports, int nports,
		   bool storm)
{
	char prio[8];

	for (int i = 0; i < nports; i++) {
		const struct rdmaqp_pfc *p = &ports[i].pfc;

		if (!ports[i].netdev[0] || netdev_listed(ports, i))
			continue;
		for (int c = 0; c < p->n; c++) {
			const struct rdmaqp_pause *k = &p->c[c];
			struct prom_label l[] = { { "netdev", p->ifname }, { "prio", prio },
						  { "direction", k->tx ? "tx" : "rx" } };
			struct prom_label s[] = { { "netdev", p->ifname }, { "counter", k->name } };

			if ((k->prio == RDMAQP_PFC_STORM) != storm)
				continue;
			if (storm) {
				prom_counter(pf, P_STORM, s, 2, k->value);
				continue;
			}
			if (k->prio == RDMAQP_PFC_GLOBAL)
				snprintf(prio, sizeof(prio), "global");
			else
				snprintf(prio, sizeof(prio), "%d", k->prio);
			prom_counter(pf, P_PAUSE, l, 3, k->value);
		}
	}
}

/* what the per-QP families need, for one write */
struct qp_series {
	size_t n;
	char (*key)[24];
	char (*qpn)[12];
	const char **keys;
	double *weight;
	bool *own;
	int *group;
	struct prom_label *lab, *other;
	__u64 *tx, *rx, *base_tx, *base_rx;
};

static int group_of(const struct rdmaqp_prom_in *in, __u32 dev_index)
{
	for (int d = 0; d < in->ndevs; d++)
		if (in->devs[d].index == dev_index)
			return d;
	return -1;
}

static int qp_prepare(struct qp_series *s, struct prom_cap *cap, const struct rdmaqp_prom_in *in)
{
	size_t n = in->qps->n, nd = in->ndevs ? in->ndevs : 1;
	char (*key)[24] = calloc(n + 1, sizeof(*key));

	s->key = key;
	s->qpn = calloc(n + 1, sizeof(*s->qpn));
	s->keys = calloc(n + 1, sizeof(*s->keys));
	s->weight = calloc(n + 1, sizeof(*s->weight));
	s->own = calloc(n + 1, sizeof(*s->own));
	s->group = calloc(n + 1, sizeof(*s->group));
	s->lab = calloc(2 * (n + 1), sizeof(*s->lab));
	s->other = calloc(2 * nd, sizeof(*s->other));
	s->tx = calloc(n + 1, sizeof(*s->tx));
	s->rx = calloc(n + 1, sizeof(*s->rx));
	s->base_tx = calloc(nd, sizeof(*s->base_tx));
	s->base_rx = calloc(nd, sizeof(*s->base_rx));
	if (!key || !s->qpn || !s->keys || !s->weight || !s->own || !s->group || !s->lab ||
	    !s->other || !s->tx || !s->rx || !s->base_tx || !s->base_rx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct rdmaqp_row *q = &in->qps->rows[i];
		int g = group_of(in, q->key.dev_index);

		/* sampled rows only: a QP netlink has listed */
		if (q->sampled) {
			s->group[s->n] = g;
			snprintf(key[s->n], sizeof(key[0]), "%u/%u", q->key.dev_index, q->key.qpn);
			snprintf(s->qpn[s->n], sizeof(s->qpn[0]), "%u", q->key.qpn);
			s->keys[s->n] = key[s->n];
			s->weight[s->n] = q->tx.total + q->rx.total;
			s->tx[s->n] = q->tx.total;
			s->rx[s->n] = q->rx.total;
			s->lab[2 * s->n] = (struct prom_label){ "dev", g >= 0 ? in->devs[g].name : "?" };
			s->lab[2 * s->n + 1] = (struct prom_label){ "qpn", s->qpn[s->n] };
			s->n++;
		}
	}
	prom_cap_select(cap, s->n, s->keys, s->weight, s->own);
	for (int d = 0; d < in->ndevs; d++) {
		struct rdmaqp_gone *gone = rdmaqp_gone_of(in->qps, in->devs[d].index);

		s->other[2 * d] = (struct prom_label){ "dev", in->devs[d].name };
		s->other[2 * d + 1] = (struct prom_label){ "qpn", PROM_OTHER };
		s->base_tx[d] = gone ? gone->tx : 0;
		s->base_rx[d] = gone ? gone->rx : 0;
	}
	return 0;
}

static void qp_free(struct qp_series *s)
{
	free(s->key);
	free(s->keys);
	free(s->qpn);
	free(s->weight);
	free(s->own);
	free(s->group);
	free(s->lab);
	free(s->other);
	free(s->tx);
	free(s->rx);
	free(s->base_tx);
	free(s->base_rx);
}

/* the per-QP families: packets both ways, capped and folded per device,
 * then the state of those on their own */
static void qp_families(struct prom_file *pf, const struct qp_series *s,
			const struct rdmaqp_prom_in *in)
{
	struct prom_fold f = {
		.n = s->n, .nlabels = 2, .labels = s->lab, .own = s->own, .group = s->group,
		.ngroups = in->ndevs, .other = s->other,
	};
	char st[32];

	prom_family(pf, P_TX, PROM_COUNTER, "Packets a QP sent: its send PSN's advance "
		    "(24-bit) up to its last query, see rdmaqp(8)");
	f.values = s->tx;
	f.base = s->base_tx;
	prom_counters_fold(pf, P_TX, &f);
	prom_family(pf, P_RX, PROM_COUNTER, "Packets a QP received: its receive PSN's advance "
		    "(24-bit) up to its last query, see rdmaqp(8)");
	f.values = s->rx;
	f.base = s->base_rx;
	prom_counters_fold(pf, P_RX, &f);
	prom_family(pf, P_STATE, PROM_GAUGE,
		    "QP state as enum ib_qp_state: 0 RESET, 1 INIT, 2 RTR, 3 RTS, 4 SQD, 5 SQE, "
		    "6 ERR (QPs with series of their own)");
	for (size_t i = 0, j = 0; i < (size_t)in->qps->n; i++) {
		const struct rdmaqp_row *q = &in->qps->rows[i];

		if (!q->sampled)
			continue;
		if (s->own[j]) {
			struct prom_label l[] = { s->lab[2 * j], s->lab[2 * j + 1],
						  { "state", in->state_name(in->ctx, q->state, st,
									    sizeof(st)) } };

			prom_gauge(pf, P_STATE, l, 3,
				   q->state == RDMAQP_STATE_UNKNOWN ? -1 : q->state);
		}
		j++;
	}
	prom_family(pf, P_AGE, PROM_GAUGE, "Seconds since a QP's PSNs and state were read "
		    "(past --budget QPs are read in rounds; QPs with series of their own)");
	for (size_t i = 0, j = 0; i < (size_t)in->qps->n; i++) {
		const struct rdmaqp_row *q = &in->qps->rows[i];

		if (!q->sampled)
			continue;
		if (s->own[j])
			prom_gauge(pf, P_AGE, &s->lab[2 * j], 2, in->now - q->queried_at);
		j++;
	}
}

/* the budget, and what the last poll did with it */
static void poll_families(struct prom_file *pf, const struct rdmaqp_poll *p)
{
	prom_family(pf, P_BUDGET, PROM_GAUGE, "QP queries (one each in the kernel: "
		    "ib_query_qp, a firmware command on mlx5) rdmaqp makes per interval at most");
	prom_gauge(pf, P_BUDGET, NULL, 0, p->budget);
	prom_family(pf, P_KNOWN, PROM_GAUGE, "QPs rdmaqp polls (the selected devices')");
	prom_gauge(pf, P_KNOWN, NULL, 0, p->known);
	prom_family(pf, P_ROUND, PROM_GAUGE, "Intervals a round of queries of every QP takes "
		    "(1 within the budget)");
	prom_gauge(pf, P_ROUND, NULL, 0, p->round);
	prom_family(pf, P_QUERIES, PROM_COUNTER, "QP queries rdmaqp made (dump entries and "
		    "single queries)");
	prom_counter(pf, P_QUERIES, NULL, 0, p->queries_total);
}

static void sources(struct prom_file *pf, const struct rdmaqp_prom_in *in)
{
	const char *why = NULL;
	bool pfc = false;

	for (int i = 0; i < in->nports; i++) {
		pfc |= in->ports[i].pfc.n > 0;
		if (!in->ports[i].pfc.n && !why)
			why = in->ports[i].pfc.why;
	}
	struct prom_source src[] = {
		{ .name = "netlink", .up = true },
		{ .name = "ebpf", .up = in->bpf, .off_by_option = in->bpf_off,
		  .reason = in->no_bpf },
		{ .name = "pause", .up = pfc, .reason = why, .absent = !pfc },
	};

	prom_sources(pf, "agentxdp_rdmaqp", src, 3);
}

void rdmaqp_prom_ports(struct prom_file *pf, const struct rdmaqp_port *ports, int nports)
{
	prom_family(pf, P_COUNTER, PROM_COUNTER, "A port counter of sysfs' hw_counters/ or "
		    "counters/, named as the driver names it; class from rdmaqp's driver tables");
	port_counters(pf, ports, nports, false);
	prom_family(pf, P_GAUGE, PROM_GAUGE, "A port's hw_counters/ resource count (objects in "
		    "use, high watermarks)");
	port_counters(pf, ports, nports, true);
	prom_family(pf, P_PAUSE, PROM_COUNTER, "Pause frames of an RDMA port's netdev per "
		    "priority (PFC) or global, received (rx) or sent (tx), from ethtool -S");
	pauses(pf, ports, nports, false);
	prom_family(pf, P_STORM, PROM_COUNTER, "Pause storm events of a netdev (mlx5)");
	pauses(pf, ports, nports, true);
}

int rdmaqp_prom_write(struct prom_cap *cap, const struct rdmaqp_prom_in *in)
{
	struct qp_series s = {};
	struct prom_file pf;
	int err = prom_open(&pf, in->path);

	if (err)
		return err;
	if (qp_prepare(&s, cap, in)) {
		qp_free(&s);
		prom_abort(&pf);
		return -ENOMEM;
	}
	rdmaqp_prom_ports(&pf, in->ports, in->nports);
	qp_families(&pf, &s, in);
	if (in->poll)
		poll_families(&pf, in->poll);
	sources(&pf, in);
	qp_free(&s);
	return prom_commit(&pf);
}
