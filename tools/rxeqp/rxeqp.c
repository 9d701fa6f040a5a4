// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rxeqp: a per queue pair view inside Soft-RoCE (rdma_rxe). rxe counts per
 * port only (rdma statistic); this counts per QP: packets, requests,
 * retransmissions, timers, NAKs, duplicates, completion errors, state
 * changes, and the time from a request leaving to its ACK arriving.
 * fentry on rdma_rxe's functions (module BTF), kprobes where fentry is not
 * allowed; see tools/rxeqp/rxeqp.bpf.c for the hooks.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rxeqp.h"
#include "rxeqp.skel.h"
#include "rxeqp_delta.h"
#include "rxeqp_host.h"
#include "rxeqp_load.h"
#include "lib/btf_enum.h"
#include "lib/cli.h"
#include "lib/hist.h"
#include "lib/json.h"
#include "lib/maps.h"
#include "lib/probe.h"
#include "lib/loop.h"
#include "lib/prom.h"
#include "lib/roce_names.h"

#define MODULE "rdma_rxe"

enum sort_key { SORT_TROUBLE, SORT_PKTS, SORT_BYTES, SORT_LAT, SORT_QP, SORT_NR };
static const char *const sort_names[SORT_NR] = { "trouble", "pkts", "bytes", "lat", "qp" };

static struct {
	struct cli_env cli;
	bool events;
	bool hist;
	bool force_kprobe;
	bool noclear;
	bool no_latency;
	const char *ifname;
	int ifindex;
	long qpn;
	bool qpn_set;
	long rows;
	enum sort_key sort;
} env;

const char *argp_program_version = "rxeqp (AgentXDP) " AX_VERSION;
static const char doc[] =
"Show Soft-RoCE (rdma_rxe) activity per queue pair, worst first.\n"
"\n"
"USAGE: rxeqp [OPTIONS] [interval] [count]\n"
"\n"
"A top-like table every interval (or once at exit without one): packets,\n"
"retransmitted requests, retransmit timer firings, RNR and PSN sequence\n"
"error NAKs, duplicate requests, completion errors and flushes,\n"
"request-to-ACK latency, state (* when destroyed since the last table)\n"
"and the peer of each QP.\n"
"Counts in the table are per interval; JSON and Prometheus output carry\n"
"running totals.\n"
"\n"
"EXAMPLES:\n"
"    rxeqp 1              # table every second until Ctrl-C\n"
"    rxeqp 5 3            # three tables, 5 seconds apart\n"
"    rxeqp -e             # state changes, errors, retries as they happen\n"
"    rxeqp -i eth1 -H     # QPs of the rxe device on eth1, with histograms\n"
"    rxeqp -j -Q 0x11     # JSON lines for QP number 0x11 only";

enum { OPT_KPROBE = 0x2000, OPT_NOCLEAR, OPT_NO_LATENCY };

static const struct argp_option opts[] = {
	{ "events", 'e', NULL, 0, "Print state changes, errors, NAKs, timers and retries as they happen", 0 },
	{ "interface", 'i', "IFACE", 0,
	  "Only QPs of the rxe device on network interface IFACE (of -N's network namespace, else this one)", 0 },
	{ "qpn", 'Q', "QPN", 0, "Only QPs with this number (decimal or 0x hex)", 0 },
	{ "hist", 'H', NULL, 0, "Print each QP's request-to-ACK latency histogram", 0 },
	{ "sort", 'S', "KEY", 0, "Table order: trouble (default), pkts, bytes, lat, qp", 0 },
	{ "rows", 'n', "N", 0, "At most N QPs in the table", 0 },
	{ "noclear", OPT_NOCLEAR, NULL, 0, "Do not clear the terminal between tables", 0 },
	{ "kprobe", OPT_KPROBE, NULL, 0, "Use kprobes even where fentry works", 0 },
	{ "no-latency", OPT_NO_LATENCY, NULL, 0,
	  "Do not time requests (two map operations less per ACKed request)", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char *end;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &env.cli;
		break;
	case 'e':
		env.events = true;
		break;
	case 'i':
		env.ifname = arg;
		break;
	case 'Q':
		errno = 0;
		env.qpn = strtol(arg, &end, 0);
		if (errno || *end || !*arg || env.qpn < 0 || env.qpn > 0xffffff)
			argp_failure(state, 1, 0, "invalid QP number: %s", arg);
		env.qpn_set = true;
		break;
	case 'H':
		env.hist = true;
		break;
	case 'S':
		env.sort = cli_arg_choice(state, arg, sort_names, SORT_NR, "sort key");
		break;
	case 'n':
		env.rows = cli_arg_long(state, arg, 1, RXEQP_MAX_QPS, "row count");
		break;
	case OPT_NOCLEAR:
		env.noclear = true;
		break;
	case OPT_KPROBE:
		env.force_kprobe = true;
		break;
	case OPT_NO_LATENCY:
		env.no_latency = true;
		break;
	case ARGP_KEY_END:
		cli_check_events(state, &env.cli, env.events, false);
		if (env.events && env.hist)
			argp_failure(state, 1, 0, "-H applies to the table, not -e");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

CLI_ARGP(argp, opts, parse_arg, doc);

/* JSON/Prometheus names of enum qp_counter, in order */
static const char *const counter_names[QC_NR] = {
	[QC_TX_PKTS] = "tx_pkts",
	[QC_TX_BYTES] = "tx_bytes",
	[QC_RX_PKTS] = "rx_pkts",
	[QC_RX_BYTES] = "rx_bytes",
	[QC_TX_REQ_PKTS] = "tx_req_pkts",
	[QC_TX_REQS] = "tx_reqs",
	[QC_TX_RESP_PKTS] = "tx_resp_pkts",
	[QC_TX_ACKS] = "tx_acks",
	[QC_RX_REQ_PKTS] = "rx_req_pkts",
	[QC_RX_RESP_PKTS] = "rx_resp_pkts",
	[QC_RX_ACKS] = "rx_acks",
	[QC_RETX_PKTS] = "retx_pkts",
	[QC_RETRIES] = "retries",
	[QC_RETX_TIMER] = "retx_timer",
	[QC_RNR_TIMER] = "rnr_timer",
	[QC_RNR_SENT] = "rnr_nak_sent",
	[QC_RNR_RCVD] = "rnr_nak_rcvd",
	[QC_SEQERR_SENT] = "seq_err_nak_sent",
	[QC_SEQERR_RCVD] = "seq_err_nak_rcvd",
	[QC_NAK_SENT] = "other_nak_sent",
	[QC_NAK_RCVD] = "other_nak_rcvd",
	[QC_DUP_REQS] = "dup_reqs",
	[QC_CQES] = "cqes",
	[QC_CQE_ERRS] = "cqe_errs",
	[QC_CQE_FLUSH] = "cqe_flushes",
	[QC_LAT_SAMPLES] = "lat_samples",
	[QC_LAT_SUM_NS] = "lat_sum_ns",
	[QC_LAT_AMBIGUOUS] = "lat_ambiguous",
	[QC_STATE_CHANGES] = "state_changes",
};

static const char *const event_names[EV_NR] = {
	[EV_STATE] = "state",
	[EV_RETX_TIMER] = "retx_timer",
	[EV_RNR_TIMER] = "rnr_timer",
	[EV_RETRY] = "retry",
	[EV_NAK_SENT] = "nak_sent",
	[EV_NAK_RCVD] = "nak_rcvd",
	[EV_CQE_ERR] = "cqe_err",
	[EV_DESTROY] = "destroy",
};

/* enum names from the module's BTF (ib_core's enums, as rxe sees them) */
static struct btf_enum_names *qp_states, *qp_types, *wc_status;

static const char *enum_str(const struct btf_enum_names *e, long long v,
			    char *buf, int len)
{
	const char *n = btf_enum_name(e, v);

	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "%lld", v);
	return buf;
}

static const char *state_str(__u8 st, char *buf, int len)
{
	if (st == QP_STATE_UNKNOWN)
		return snprintf(buf, len, "?"), buf;
	return enum_str(qp_states, st, buf, len);
}

/* ---- the table: one row per QP, deltas against the previous report ---- */

/* the QPs as last read (tools/rxeqp/rxeqp_delta.c) */
static struct rxeqp_delta qps;
static struct rxeqp_bpf *obj;
static int ncpu;

static const char *ifname_of(__u32 ifindex, char *buf)
{
	if (!ifindex || !if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex);
	return buf;
}

static __u64 read_stat(__u32 idx)
{
	return maps_stat(obj->maps.stats, idx, ncpu);
}

/* what went wrong in this interval, weighted: errors, then NAKs and
 * timers, then retransmitted packets and duplicates */
static __u64 trouble(const struct rxeqp_qp *r)
{
	const __u64 *d = r->d;

	return 1000 * (d[QC_CQE_ERRS] + (r->cur.state == QP_STATE_ERR &&
					 d[QC_STATE_CHANGES])) +
	       10 * (d[QC_RETX_TIMER] + d[QC_RNR_TIMER] + d[QC_RNR_SENT] +
		     d[QC_RNR_RCVD] + d[QC_SEQERR_SENT] + d[QC_SEQERR_RCVD] +
		     d[QC_NAK_SENT] + d[QC_NAK_RCVD] + d[QC_CQE_FLUSH]) +
	       d[QC_RETX_PKTS] + d[QC_DUP_REQS];
}

static __u64 sort_value(const struct rxeqp_qp *r)
{
	switch (env.sort) {
	case SORT_PKTS:
		return r->d[QC_TX_PKTS] + r->d[QC_RX_PKTS];
	case SORT_BYTES:
		return r->d[QC_TX_BYTES] + r->d[QC_RX_BYTES];
	case SORT_LAT:
		return hist_quantile(r->hd, HIST_SLOTS, 0.5);
	case SORT_QP:
		return 0;
	case SORT_TROUBLE:
	default:
		return trouble(r);
	}
}

static int cmp_display(const void *a, const void *b)
{
	const struct rxeqp_qp *x = *(struct rxeqp_qp *const *)a, *y = *(struct rxeqp_qp *const *)b;
	__u64 vx = sort_value(x), vy = sort_value(y);

	if (vx != vy)
		return vx < vy ? 1 : -1;
	vx = x->d[QC_TX_PKTS] + x->d[QC_RX_PKTS];
	vy = y->d[QC_TX_PKTS] + y->d[QC_RX_PKTS];
	if (vx != vy)
		return vx < vy ? 1 : -1;
	return rxeqp_key_cmp(&x->key, &y->key);
}

/* a count in at most w characters: 123456 -> "123k" */
static const char *num(__u64 v, int w, char *buf, int len)
{
	static const char sfx[] = "kMGTP";
	double f = v;
	int i = -1;
	__u64 lim = 1;

	for (int j = 0; j < w && lim < (__u64)1e18; j++)
		lim *= 10;
	if (v < lim) {
		snprintf(buf, len, "%llu", (unsigned long long)v);
		return buf;
	}
	while (f >= 1000 && i < 4) {
		f /= 1000;
		i++;
	}
	snprintf(buf, len, f < 10 && w >= 4 ? "%.1f%c" : "%.0f%c", f, sfx[i]);
	return buf;
}

static const char *qp_name(const struct rxeqp_qp *r, char *buf, int len)
{
	char ifn[IF_NAMESIZE];

	snprintf(buf, len, "%s/0x%x", r->cur.dev[0] ? r->cur.dev : ifname_of(r->key.ifindex, ifn),
		 r->key.qpn);
	return buf;
}

static const char *peer_str(const struct qp_stats *s, char *buf, int len)
{
	char a[ADDR_STRLEN];

	if (!s->family && !s->dqpn)
		return snprintf(buf, len, "-"), buf;
	snprintf(buf, len, "%s/0x%x", pkt_addr_str(s->family, s->daddr, a, sizeof(a)), s->dqpn);
	return buf;
}

/* the state, with a * when the QP was destroyed since the last table */
static const char *state_col(const struct qp_stats *s, char *buf, int len)
{
	char st[16];

	snprintf(buf, len, "%s%s", state_str(s->state, st, sizeof(st)), s->destroyed ? "*" : "");
	return buf;
}

static void print_table(const char *mode)
{
	struct rxeqp_qp **view = calloc(qps.n ? qps.n : 1, sizeof(*view));
	char qp[40], st[16], peer[80], b[11][24];
	int n = 0, active = 0, gone = 0;

	if (!view)
		return;
	for (int i = 0; i < qps.n; i++) {
		view[n++] = &qps.qp[i];
		if (qps.qp[i].d[QC_TX_PKTS] || qps.qp[i].d[QC_RX_PKTS])
			active++;
		gone += qps.qp[i].cur.destroyed;
	}
	qsort(view, n, sizeof(*view), cmp_display);
	if (env.rows && n > env.rows)
		n = env.rows;
	if (!env.noclear && isatty(STDOUT_FILENO))
		printf("\033[H\033[2J");
	cli_print_timestamp(&env.cli, stdout);
	printf("rxeqp: %d QPs, %d active, %d destroyed (*), %s, counts per %d s\n", qps.n,
	       active, gone, mode, env.cli.interval);
	printf("%-12s %-5s %6s %6s %4s %3s %3s %3s %3s %3s %6s %s\n", "QP", "STATE",
	       "TX_PKT", "RX_PKT", "RETX", "TMO", "RNR", "SEQ", "DUP", "ERR", "P50us",
	       "PEER");
	for (int i = 0; i < n; i++) {
		const struct rxeqp_qp *r = view[i];
		const __u64 *d = r->d;
		__u64 p50 = hist_total(r->hd, HIST_SLOTS) ?
			    hist_quantile(r->hd, HIST_SLOTS, 0.5) : 0;

		printf("%-12s %-5s %6s %6s %4s %3s %3s %3s %3s %3s %6s %s\n",
		       qp_name(r, qp, sizeof(qp)),
		       state_col(&r->cur, st, sizeof(st)),
		       num(d[QC_TX_PKTS], 6, b[0], 24), num(d[QC_RX_PKTS], 6, b[1], 24),
		       num(d[QC_RETX_PKTS], 4, b[2], 24), num(d[QC_RETX_TIMER], 3, b[3], 24),
		       num(d[QC_RNR_SENT] + d[QC_RNR_RCVD], 3, b[4], 24),
		       num(d[QC_SEQERR_SENT] + d[QC_SEQERR_RCVD], 3, b[5], 24),
		       num(d[QC_DUP_REQS], 3, b[6], 24),
		       num(d[QC_CQE_ERRS] + d[QC_CQE_FLUSH], 3, b[7], 24),
		       p50 ? num(p50, 6, b[8], 24) : "-",
		       peer_str(&r->cur, peer, sizeof(peer)));
	}
	if (env.hist) {
		for (int i = 0; i < n; i++) {
			if (!hist_total(view[i]->hd, HIST_SLOTS))
				continue;
			printf("\n%s request -> ACK latency:\n", qp_name(view[i], qp, sizeof(qp)));
			hist_print_log2(stdout, view[i]->hd, HIST_SLOTS, "usecs");
		}
	}
	if (read_stat(RXEQP_STAT_QPS_FULL))
		printf("WARNING: more than %d QPs: some are not tracked\n", RXEQP_MAX_QPS);
	printf("\n");
	fflush(stdout);
	free(view);
}

static const char *qp_type_str(__u8 t, char *buf, int len)
{
	return enum_str(qp_types, t, buf, len);
}

/* the correlation key: device, addresses, UDP ports, QPNs */
static void json_qp_key(struct json_w *w, const struct qp_key *k, const struct qp_stats *s)
{
	char ifn[IF_NAMESIZE], a[ADDR_STRLEN], buf[32];

	json_str(w, "dev", s && s->dev[0] ? s->dev : "");
	json_str(w, "ifname", ifname_of(k->ifindex, ifn));
	json_u64(w, "ifindex", k->ifindex);
	json_u64(w, "qpn", k->qpn);
	if (!s)
		return;
	json_str(w, "qp_type", qp_type_str(s->qp_type, buf, sizeof(buf)));
	json_u64(w, "family", s->family);
	json_str(w, "saddr", pkt_addr_str(s->family, s->saddr, a, sizeof(a)));
	json_str(w, "daddr", pkt_addr_str(s->family, s->daddr, a, sizeof(a)));
	json_u64(w, "sport", s->sport);
	json_u64(w, "dport", env.cli.roce_port);
	json_u64(w, "dqpn", s->dqpn);
}

static void print_json(void)
{
	double now;
	struct timespec ts;
	char st[16];
	struct json_w w;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = ts.tv_sec + ts.tv_nsec / 1e9;
	for (int i = 0; i < qps.n; i++) {
		const struct rxeqp_qp *r = &qps.qp[i];
		const struct qp_stats *s = &r->cur;
		__u64 n = hist_total(r->hcur.slots, HIST_SLOTS);

		json_begin(&w, stdout);
		json_str(&w, "type", "qp");
		json_time(&w, now);
		json_qp_key(&w, &r->key, s);
		json_str(&w, "state", state_str(s->state, st, sizeof(st)));
		json_f64(&w, "state_time", s->state_ns ? cli_ktime_to_epoch(s->state_ns) : 0);
		json_bool(&w, "destroyed", s->destroyed);
		json_u64(&w, "tx_psn", s->tx_psn);
		json_u64(&w, "rx_psn", s->rx_psn);
		for (int c = 0; c < QC_NR; c++)
			json_u64(&w, counter_names[c], s->cnt[c]);
		json_obj_open(&w, "lat_us");
		json_u64(&w, "count", n);
		json_u64(&w, "p50", n ? hist_quantile(r->hcur.slots, HIST_SLOTS, 0.5) : 0);
		json_u64(&w, "p99", n ? hist_quantile(r->hcur.slots, HIST_SLOTS, 0.99) : 0);
		json_key(&w, "hist");
		hist_json_buckets(stdout, r->hcur.slots, HIST_SLOTS);
		json_obj_close(&w);
		json_end(&w);
	}
	fflush(stdout);
}

/* Prometheus: running totals per QP (the BPF counters never go back while
 * a QP lives). The first PROM_QPS QPs (lib/prom.h's sticky cap) get series
 * of their own; the others, and every QP once destroyed, are summed per
 * device as qpn="other", which therefore only grows. */
#define PROM_QPS 64
static struct prom_cap prom_qps;

/* the labels of each row and of each device's "other", per write; static:
 * RXEQP_MAX_QPS rows are ~600 KiB */
static struct {
	char key[RXEQP_MAX_QPS][48], ifn[RXEQP_MAX_QPS][IF_NAMESIZE];
	char qpn[RXEQP_MAX_QPS][12], dqpn[RXEQP_MAX_QPS][12];
	char da[RXEQP_MAX_QPS][ADDR_STRLEN];
	const char *keys[RXEQP_MAX_QPS];
	double weight[RXEQP_MAX_QPS];
	bool own[RXEQP_MAX_QPS];
	struct prom_label lab[RXEQP_MAX_QPS][5], other[RXEQP_DELTA_MAX_DEVS][5];
	__u64 vals[RXEQP_MAX_QPS], base[RXEQP_DELTA_MAX_DEVS];
	int group[RXEQP_MAX_QPS];
	char oifn[RXEQP_DELTA_MAX_DEVS][IF_NAMESIZE];
} pr;

/* the labels, and which QPs have series of their own */
static void prom_prepare(void)
{
	static const char *const lnames[] = { "dev", "ifname", "qpn", "daddr", "dqpn" };

	for (int i = 0; i < qps.n; i++) {
		const struct qp_stats *s = &qps.qp[i].cur;

		snprintf(pr.key[i], sizeof(pr.key[i]), "%u/%u", qps.qp[i].key.ifindex,
			 qps.qp[i].key.qpn);
		pr.keys[i] = pr.key[i];
		pr.weight[i] = s->cnt[QC_TX_PKTS] + s->cnt[QC_RX_PKTS];
		ifname_of(qps.qp[i].key.ifindex, pr.ifn[i]);
		snprintf(pr.qpn[i], sizeof(pr.qpn[i]), "%u", qps.qp[i].key.qpn);
		snprintf(pr.dqpn[i], sizeof(pr.dqpn[i]), "%u", s->dqpn);
		pkt_addr_str(s->family, s->daddr, pr.da[i], sizeof(pr.da[i]));
		pr.lab[i][0] = (struct prom_label){ lnames[0], s->dev };
		pr.lab[i][1] = (struct prom_label){ lnames[1], pr.ifn[i] };
		pr.lab[i][2] = (struct prom_label){ lnames[2], pr.qpn[i] };
		pr.lab[i][3] = (struct prom_label){ lnames[3], pr.da[i] };
		pr.lab[i][4] = (struct prom_label){ lnames[4], pr.dqpn[i] };
	}
	prom_cap_select(&prom_qps, qps.n, pr.keys, pr.weight, pr.own);
	for (int i = 0; i < qps.n; i++) {
		/* every device with a QP not on its own gets its "other" series */
		struct rxeqp_dev_total *t = pr.own[i] ? NULL :
			rxeqp_delta_dev(&qps, qps.qp[i].key.ifindex, qps.qp[i].cur.dev);

		pr.group[i] = t ? t - qps.dev : -1;
	}
	for (int d = 0; d < qps.ndevs; d++) {
		pr.other[d][0] = (struct prom_label){ lnames[0], qps.dev[d].dev };
		pr.other[d][1] = (struct prom_label){ lnames[1],
			ifname_of(qps.dev[d].ifindex, pr.oifn[d]) };
		pr.other[d][2] = (struct prom_label){ lnames[2], PROM_OTHER };
		pr.other[d][3] = (struct prom_label){ lnames[3], "" };
		pr.other[d][4] = (struct prom_label){ lnames[4], "" };
	}
}

static void write_prom(void)
{
	const bool *own = pr.own;
	struct prom_fold fold = {
		.n = qps.n, .nlabels = 5, .labels = &pr.lab[0][0], .values = pr.vals,
		.own = pr.own, .group = pr.group, .other = &pr.other[0][0],
		.base = pr.base,
	};
	struct prom_file pf;
	char name[96], st[16];
	int err;

	err = prom_open(&pf, env.cli.prom_path);
	if (err) {
		cli_prom_err(&env.cli, err);
		return;
	}
	prom_prepare();
	fold.ngroups = qps.ndevs;
	for (int c = 0; c < QC_NR; c++) {
		/* the histogram's _sum, in seconds as Prometheus wants them */
		if (c == QC_LAT_SUM_NS)
			continue;
		snprintf(name, sizeof(name), "agentxdp_rxeqp_%s_total", counter_names[c]);
		prom_family(&pf, name, PROM_COUNTER, "rdma_rxe per-QP counter, see rxeqp(8)");
		for (int i = 0; i < qps.n; i++)
			pr.vals[i] = qps.qp[i].cur.cnt[c];
		for (int d = 0; d < qps.ndevs; d++)
			pr.base[d] = qps.dev[d].cnt[c];
		prom_counters_fold(&pf, name, &fold);
	}
	prom_family(&pf, "agentxdp_rxeqp_state", PROM_GAUGE,
		    "QP state as enum ib_qp_state: 0 RESET, 1 INIT, 2 RTR, 3 RTS, 6 ERR");
	for (int i = 0; i < qps.n; i++) {
		const struct qp_stats *s = &qps.qp[i].cur;
		struct prom_label l[3] = {
			{ "dev", s->dev }, { "qpn", pr.qpn[i] },
			{ "state", state_str(s->state, st, sizeof(st)) },
		};

		if (own[i])
			prom_gauge(&pf, "agentxdp_rxeqp_state", l, 3,
				   s->state == QP_STATE_UNKNOWN ? -1 : s->state);
	}
	prom_family(&pf, "agentxdp_rxeqp_request_ack_seconds", PROM_HISTOGRAM,
		    "Time from a request leaving a QP to its ACK or first response arriving");
	for (int i = 0; i < qps.n; i++) {
		const struct qp_stats *s = &qps.qp[i].cur;
		struct prom_label l[3] = { { "dev", s->dev }, { "qpn", pr.qpn[i] },
					   { "dqpn", pr.dqpn[i] } };

		if (own[i])
			prom_hist_log2(&pf, "agentxdp_rxeqp_request_ack_seconds", l, 3,
				       qps.qp[i].hcur.slots, HIST_SLOTS, 1e-6,
				       s->cnt[QC_LAT_SUM_NS] / 1e3);
	}
	err = prom_commit(&pf);
	if (err)
		cli_prom_err(&env.cli, err);
}

/* the main loop's callbacks; ctx is the mode name for the table */
static void report(void *ctx)
{
	rxeqp_delta_read(&qps);
	if (env.cli.json)
		print_json();
	else
		print_table(ctx);
	if (env.cli.prom_path)
		write_prom();
}

static void prom(void *ctx, enum loop_when when)
{
	rxeqp_delta_read(&qps);
	write_prom();
}

static __u64 events_lost(void *ctx)
{
	return read_stat(RXEQP_STAT_EVENTS_LOST);
}

/* with -e: forget destroyed QPs, as the table does, or the map fills */
static void forget_destroyed(void *ctx)
{
	static time_t last;

	if (!last)
		last = time(NULL);
	if (time(NULL) - last >= 2) {
		rxeqp_delta_read(&qps);
		last = time(NULL);
	}
}

/* ---- events ---- */

static int handle_event(void *ctx, void *data, size_t len)
{
	const struct qp_event *e = data;
	struct qp_stats st, *s = NULL;
	char qp[40], peer[80], a[16], b[16], syn[40];
	const char *what = e->type < EV_NR ? event_names[e->type] : "?";
	struct json_w w;

	if (len < sizeof(*e))
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(obj->maps.qps), &e->key, &st))
		s = &st;
	if (env.cli.json) {
		json_begin(&w, stdout);
		json_str(&w, "type", "event");
		json_str(&w, "event", what);
		json_time(&w, cli_ktime_to_epoch(e->ts_ns));
		json_qp_key(&w, &e->key, s);
		switch (e->type) {
		case EV_STATE:
			json_str(&w, "old_state", state_str(e->old_state, a, sizeof(a)));
			json_str(&w, "new_state", state_str(e->new_state, b, sizeof(b)));
			json_str(&w, "cause", e->cause == EV_CAUSE_ERROR ? "rxe" : "modify");
			break;
		case EV_RETX_TIMER:
		case EV_RNR_TIMER:
			json_u64(&w, "psn", e->psn);
			json_u64(&w, "acked_psn", e->psn2);
			json_u64(&w, "retries_left", e->status);
			break;
		case EV_RETRY:
			json_u64(&w, "psn", e->psn);
			json_u64(&w, "next_psn", e->psn2);
			break;
		case EV_NAK_SENT:
		case EV_NAK_RCVD:
			json_u64(&w, "psn", e->psn);
			json_str(&w, "syndrome", roce_syndrome_name(e->cause, syn, sizeof(syn)));
			json_u64(&w, "syndrome_code", e->cause);
			break;
		case EV_CQE_ERR:
			json_str(&w, "status", enum_str(wc_status, e->status, syn, sizeof(syn)));
			json_u64(&w, "status_code", e->status);
			json_u64(&w, "wc_opcode", e->opcode);
			json_u64(&w, "tx_psn", e->psn);
			json_u64(&w, "rx_psn", e->psn2);
			break;
		default:
			break;
		}
		if (e->type != EV_STATE)	/* the QP's state when it happened */
			json_str(&w, "state", state_str(e->new_state, a, sizeof(a)));
		json_end(&w);
		return 0;
	}
	cli_print_ktime(&env.cli, stdout, e->ts_ns);
	if (s) {
		struct rxeqp_qp r = { .key = e->key, .cur = *s };

		qp_name(&r, qp, sizeof(qp));
		peer_str(s, peer, sizeof(peer));
	} else {
		snprintf(qp, sizeof(qp), "if%u/0x%x", e->key.ifindex, e->key.qpn);
		snprintf(peer, sizeof(peer), "-");
	}
	printf("%-12s %-10s ", qp, what);
	switch (e->type) {
	case EV_STATE:
		printf("%s -> %s (%s)", state_str(e->old_state, a, sizeof(a)),
		       state_str(e->new_state, b, sizeof(b)),
		       e->cause == EV_CAUSE_ERROR ? "by rxe" : "modify_qp");
		break;
	case EV_RETX_TIMER:
	case EV_RNR_TIMER:
		printf("psn 0x%x acked 0x%x retries left %u%s", e->psn, e->psn2, e->status,
		       e->status == 7 ? " (7: forever)" : "");
		break;
	case EV_RETRY:
		printf("resend from psn 0x%x (next new 0x%x)", e->psn, e->psn2);
		break;
	case EV_NAK_SENT:
	case EV_NAK_RCVD:
		printf("%s psn 0x%x", roce_syndrome_name(e->cause, syn, sizeof(syn)), e->psn);
		break;
	case EV_CQE_ERR:
		printf("%s", enum_str(wc_status, e->status, syn, sizeof(syn)));
		break;
	default:
		break;
	}
	printf("  peer %s\n", peer);
	fflush(stdout);
	return 0;
}

/* ---- attaching ---- */

/* one hook: the first of funcs that exists is attached, fentry or kprobe */
/* tables or events until the end; 0 or 1 */
static int run(char *mode)
{
	struct loop lp = { .ctx = mode, .prom = prom, .report = report,
			   .events_lost = events_lost };

	if (env.events) {
		if (!env.cli.json) {
			if (env.cli.timestamp)
				printf("%-8s ", "TIME");
			printf("%-12s %-10s %s\n", "QP", "EVENT", "DETAIL");
			fflush(stdout);
		}
		lp.report = NULL;
		lp.tick = forget_destroyed;
		if (!loop_add_events(&lp, obj->maps.events, handle_event, NULL, NULL))
			return 1;
	}
	return loop_run(&lp, &env.cli) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct rxeqp_hooks hk;
	char mode[32];
	int ret = 1;

	cli_parse(&argp, argc, argv, NULL);
	cli_setup(&env.cli, CLI_CAP_BPF | CLI_CAP_PERFMON);
	/* -N: the interface names of QPs (and -i) are that namespace's */
	cli_netns_enter(&env.cli);
	if (env.ifname)
		env.ifindex = cli_ifindex(&env.cli, env.ifname);
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		cli_die("cannot count CPUs");

	{
		struct rxeqp_load_opts lo = {
			.cli = &env.cli,
			.ifindex = env.ifindex, .netns = env.ifindex ? cli_netns_inum(&env.cli) : 0,
			.qpn = env.qpn, .qpn_set = env.qpn_set,
			.events = env.events, .latency = !env.no_latency,
			.force_kprobe = env.force_kprobe,
		};
		char err[256];

		obj = rxeqp_load(&lo, &hk, err, sizeof(err));
		if (!obj) {
			/* rxe's structures are read through its BTF (CO-RE):
			 * without it, advice that fits what the host has */
			if (!probe_module_loaded(MODULE)) {
				struct rxeqp_host h;
				char adv[400];

				rxeqp_host_probe(&h);
				cli_die("%s", rxeqp_host_advice(&h, adv, sizeof(adv)));
			}
			if (err[0])
				cli_die("%s", err);
			return 1;
		}
	}
	qp_states = btf_enum_load_module(MODULE, "ib_qp_state", "IB_QPS_");
	qp_types = btf_enum_load_module(MODULE, "ib_qp_type", "IB_QPT_");
	wc_status = btf_enum_load_module(MODULE, "ib_wc_status", "IB_WC_");
	prom_cap_init(&prom_qps, PROM_QPS);
	if (rxeqp_delta_init(&qps, obj->maps.qps, obj->maps.lat_hists)) {
		cli_err("out of memory");
		goto cleanup;
	}
	snprintf(mode, sizeof(mode), "%s", hk.fentry ? "fentry" : "kprobe");
	/* on stderr with -j, so stdout stays pure JSON lines */
	fprintf(env.cli.json ? stderr : stdout,
		"Tracing rdma_rxe queue pairs (%d hooks via %s%s)... Hit Ctrl-C to end.\n",
		hk.nhooks - hk.missing, mode, hk.missing ? ", some missing" : "");
	fflush(stdout);
	ret = run(mode);

cleanup:
	rxeqp_bpf__destroy(obj);
	rxeqp_delta_free(&qps);
	prom_cap_free(&prom_qps);
	btf_enum_free(qp_states);
	btf_enum_free(qp_types);
	btf_enum_free(wc_status);
	return ret;
}
