// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rdmaqp: queue pairs and ports of any RDMA device, for hosts whose RNIC
 * does RoCE in hardware (its packets never reach the kernel) as much as
 * for Soft-RoCE. Per QP from RDMA netlink, polled every interval: state,
 * peer, the live send and receive PSNs and from them the packets sent and
 * received (modulo 2^24), the owner. Per port: every counter of sysfs'
 * counters/ and hw_counters/ as a rate. eBPF on ib_core's control path
 * (tools/rdmaqp/rdmaqp.bpf.c) adds what polling cannot see: the creator's
 * pid, comm and cgroup, each modify with the PSNs it set (so counting
 * starts at the first packet), destruction and async events, with kernel
 * timestamps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rdmaqp.h"
#include "rdmaqp.skel.h"
#include "rdmaqp_load.h"
#include "rdmaqp_nl.h"
#include "rdmaqp_poll.h"
#include "rdmaqp_port.h"
#include "rdmaqp_prom.h"
#include "rdmaqp_table.h"
#include "lib/btf_enum.h"
#include "lib/cli.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/maps.h"

#define MAX_DEVS 64
#define MAX_PORTS 256

static struct {
	struct cli_env cli;
	bool events;
	bool force_kprobe;
	bool no_bpf;
	const char *devname;
	unsigned int budget;
} env = { .budget = RDMAQP_BUDGET_DEFAULT };

const char *argp_program_version = "rdmaqp (AgentXDP) " AX_VERSION;
static const char doc[] =
"Show the queue pairs and ports of RDMA devices (any driver: mlx5, irdma,\n"
"bnxt_re, rxe ...): per QP its state, peer, owner and the packets its PSNs\n"
"moved; per port the rate of every hardware counter.\n"
"\n"
"USAGE: rdmaqp [OPTIONS] [interval] [count]\n"
"\n"
"QPs come from RDMA netlink (what `rdma res show qp` shows), polled every\n"
"interval; packets per QP are the send and receive PSN deltas (24 bits,\n"
"wrapping), counted from the PSN the modify to RTR/RTS set when eBPF saw\n"
"it, else from the first sample. eBPF on ib_core adds the owner at\n"
"creation (pid, comm, cgroup) and state changes, destruction and async\n"
"events with kernel timestamps. Port counters come from\n"
"/sys/class/infiniband/DEV/ports/N/{counters,hw_counters}.\n"
"\n"
"Each QP netlink reports costs the kernel a query of the QP (a firmware\n"
"command on mlx5). --budget bounds them: up to N QPs, every QP every\n"
"interval (one dump per device); past N, N QPs an interval, each alone,\n"
"least recently queried first, so a round takes ceil(QPs / N) intervals.\n"
"A QP not queried in an interval shows no packets for it (\"-\", JSON\n"
"null); the next query's counts cover its whole span (SPAN, span_s).\n"
"\n"
"EXAMPLES:\n"
"    rdmaqp 1             # table every second until Ctrl-C\n"
"    rdmaqp -d mlx5_0 5 3 # device mlx5_0, three tables 5 seconds apart\n"
"    rdmaqp -e            # QP created, modified, destroyed, to ERR, async\n"
"    rdmaqp -j 1          # JSON lines: one per QP and one per port";

enum { OPT_KPROBE = 0x2000, OPT_NO_BPF, OPT_BUDGET };

static const struct argp_option opts[] = {
	{ "device", 'd', "DEVICE", 0, "Only this RDMA device (as `rdma dev` names it)", 0 },
	{ "events", 'e', NULL, 0,
	  "Print QP creation, state changes, destruction and async events as they happen", 0 },
	{ "kprobe", OPT_KPROBE, NULL, 0, "Use kprobes even where fentry is allowed", 0 },
	{ "no-bpf", OPT_NO_BPF, NULL, 0, "Poll netlink and sysfs only: no owners at "
	  "creation, no control-path events", 0 },
	{ "budget", OPT_BUDGET, "N", 0, "Query at most N QPs an interval, in rounds "
	  "(default 256)", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &env.cli;
		break;
	case 'd':
		env.devname = arg;
		break;
	case 'e':
		env.events = true;
		break;
	case OPT_KPROBE:
		env.force_kprobe = true;
		break;
	case OPT_NO_BPF:
		env.no_bpf = true;
		break;
	case OPT_BUDGET: {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || !v || v > 1000000)
			argp_error(state, "--budget: QP queries per interval, 1 to 1000000, not '%s'",
				   arg);
		env.budget = v;
		break;
	}
	case ARGP_KEY_END:
		cli_check_events(state, &env.cli, env.events, false);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

CLI_ARGP(argp, opts, parse_arg, doc);

/* everything one run keeps, handed to the loop's callbacks */
struct run {
	struct mnl_socket *nl;
	struct rdmaqp_bpf *obj;
	struct ring_buffer *rb;
	struct rdmaqp_dev devs[MAX_DEVS];
	int ndevs;
	struct rdmaqp_port ports[MAX_PORTS];
	int nports;
	struct rdmaqp_table qps;
	struct rdmaqp_poll poll;
	__u64 lost;		/* eBPF events lost, at the last poll */
	struct btf_enum_names *states, *types, *events;
	struct prom_cap prom_qps;	/* --prom's per-QP cap */
	const char *no_bpf;	/* why there is no eBPF, NULL with it */
	double last_poll;	/* CLOCK_MONOTONIC seconds */
	double elapsed;		/* of the last interval */
};

/* enum ib_qp_state, enum ib_qp_type: what ib_core's BTF names them, else
 * these (include/rdma/ib_verbs.h) */
static const char *const state_names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

static const char *state_str(const struct run *r, __u8 st, char *buf, int len)
{
	const char *n = r->states ? btf_enum_name(r->states, st) : NULL;

	if (st == RDMAQP_STATE_UNKNOWN)
		n = "-";
	else if (!n && st < sizeof(state_names) / sizeof(state_names[0]))
		n = state_names[st];
	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "%u", st);
	return buf;
}

/* enum ib_qp_type, as RDMA netlink reports it, where no BTF names it */
static const char *const type_names[] = { "SMI", "GSI", "RC", "UC", "UD", "RAW_IPV6",
					  "RAW_ETHERTYPE", "7", "RAW_PACKET", "XRC_INI",
					  "XRC_TGT" };

static const char *type_str(const struct run *r, __u8 t, char *buf, int len)
{
	const char *n = r->types ? btf_enum_name(r->types, t) : NULL;

	if (!n && t < sizeof(type_names) / sizeof(type_names[0]))
		n = type_names[t];
	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "%u", t);
	return buf;
}

static const char *enum_str(const struct btf_enum_names *e, long long v, char *buf, int len)
{
	const char *n = e ? btf_enum_name(e, v) : NULL;

	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "%lld", v);
	return buf;
}

static const char *dev_name(const struct run *r, __u32 index)
{
	for (int i = 0; i < r->ndevs; i++)
		if (r->devs[i].index == index)
			return r->devs[i].name;
	return "?";
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *const ev_names[RQ_EV_NR] = {
	[RQ_EV_CREATE] = "create", [RQ_EV_MODIFY] = "modify",
	[RQ_EV_DESTROY] = "destroy", [RQ_EV_ASYNC] = "async",
};

static void event_json(const struct run *r, const struct rdmaqp_event *e)
{
	char b1[32], b2[32];
	struct json_w w;

	json_begin(&w, stdout);
	json_str(&w, "type", "event");
	json_time(&w, cli_ktime_to_epoch(e->ts_ns));
	json_str(&w, "event", ev_names[e->type]);
	json_str(&w, "dev", e->dev);
	json_u64(&w, "dev_index", e->dev_index);
	if (e->qpn || e->type != RQ_EV_ASYNC)
		json_u64(&w, "qpn", e->qpn);
	if (e->type == RQ_EV_ASYNC) {
		json_str(&w, "async", enum_str(r->events, e->event, b1, sizeof(b1)));
		if (!e->qpn)
			json_u64(&w, "port", e->port);
	} else {
		json_str(&w, "qp_type", type_str(r, e->qp_type, b1, sizeof(b1)));
	}
	if (e->type == RQ_EV_MODIFY || e->type == RQ_EV_DESTROY)
		json_str(&w, "old_state", state_str(r, e->old_state, b1, sizeof(b1)));
	if (e->type == RQ_EV_MODIFY) {
		json_str(&w, "new_state", state_str(r, e->new_state, b2, sizeof(b2)));
		json_u64(&w, "attr_mask", e->mask);
		if (e->mask & RDMAQP_ATTR_SQ_PSN)
			json_u64(&w, "sq_psn", e->sq_psn);
		if (e->mask & RDMAQP_ATTR_RQ_PSN)
			json_u64(&w, "rq_psn", e->rq_psn);
		if (e->mask & RDMAQP_ATTR_DEST_QPN)
			json_u64(&w, "dest_qpn", e->dest_qpn);
	}
	if (e->type == RQ_EV_CREATE)
		json_bool(&w, "user", e->user);
	json_u64(&w, "pid", e->pid);
	json_str(&w, "comm", e->type == RQ_EV_CREATE && !e->user ? e->kern_name : e->comm);
	json_u64(&w, "cgroup_id", e->cgroup_id);
	json_str(&w, "source", "ebpf");
	json_end(&w);
}

static void event_text(const struct run *r, const struct rdmaqp_event *e)
{
	char b1[32], b2[32];

	cli_print_ktime(&env.cli, stdout, e->ts_ns);
	printf("%-10s %-8u %-8s ", e->dev, e->qpn, ev_names[e->type]);
	switch (e->type) {
	case RQ_EV_CREATE:
		printf("%s pid=%u comm=%s cgroup=%llu\n", type_str(r, e->qp_type, b1, 32),
		       e->pid, e->user ? e->comm : e->kern_name,
		       (unsigned long long)e->cgroup_id);
		break;
	case RQ_EV_MODIFY:
		printf("%s->%s", state_str(r, e->old_state, b1, 32),
		       state_str(r, e->new_state, b2, 32));
		if (e->mask & RDMAQP_ATTR_SQ_PSN)
			printf(" sq_psn=%u", e->sq_psn);
		if (e->mask & RDMAQP_ATTR_RQ_PSN)
			printf(" rq_psn=%u", e->rq_psn);
		if (e->mask & RDMAQP_ATTR_DEST_QPN)
			printf(" dest_qpn=%u", e->dest_qpn);
		printf(" pid=%u comm=%s\n", e->pid, e->comm);
		break;
	case RQ_EV_DESTROY:
		printf("in %s pid=%u comm=%s\n", state_str(r, e->old_state, b1, 32), e->pid,
		       e->comm);
		break;
	default:
		printf("%s", enum_str(r->events, e->event, b1, 32));
		if (!e->qpn)
			printf(" port=%u", e->port);
		printf("\n");
	}
}

/* a state change the netlink poll saw and no modify explained (a driver
 * moving a QP to ERR itself) */
static void state_event(const struct run *r, const struct rdmaqp_row *q, __u8 old)
{
	char b1[32], b2[32];
	struct json_w w;

	if (!env.cli.json) {
		cli_print_timestamp(&env.cli, stdout);
		printf("%-10s %-8u %-8s %s->%s (seen by polling)\n", dev_name(r, q->key.dev_index),
		       q->key.qpn, "state", state_str(r, old, b1, 32),
		       state_str(r, q->state, b2, 32));
		return;
	}
	json_begin(&w, stdout);
	json_str(&w, "type", "event");
	json_time(&w, cli_now_epoch());
	json_str(&w, "event", "state");
	json_str(&w, "dev", dev_name(r, q->key.dev_index));
	json_u64(&w, "dev_index", q->key.dev_index);
	json_u64(&w, "qpn", q->key.qpn);
	json_str(&w, "old_state", state_str(r, old, b1, sizeof(b1)));
	json_str(&w, "new_state", state_str(r, q->state, b2, sizeof(b2)));
	json_str(&w, "source", "netlink");
	json_end(&w);
}

static bool dev_selected_name(const char *name)
{
	return !env.devname || !strcmp(env.devname, name);
}

static int handle_event(void *ctx, void *data, size_t len)
{
	const struct rdmaqp_event *e = data;
	struct run *r = ctx;

	if (len < sizeof(*e) || e->type >= RQ_EV_NR || !dev_selected_name(e->dev))
		return 0;
	rdmaqp_apply(&r->qps, e);
	if (!env.events)
		return 0;
	if (env.cli.json)
		event_json(r, e);
	else
		event_text(r, e);
	fflush(stdout);
	return 0;
}

static void on_qp(void *ctx, struct rdmaqp_row *row, __u8 old)
{
	struct run *r = ctx;

	if (env.events && old != RDMAQP_STATE_UNKNOWN && old != row->state)
		state_event(r, row, old);
}

static struct rdmaqp_port *port_of(struct run *r, const char *dev, __u32 port)
{
	struct rdmaqp_port *p;

	for (int i = 0; i < r->nports; i++)
		if (r->ports[i].port == port && !strcmp(r->ports[i].dev, dev))
			return &r->ports[i];
	if (r->nports == MAX_PORTS)
		return NULL;
	p = &r->ports[r->nports++];
	memset(p, 0, sizeof(*p));
	snprintf(p->dev, sizeof(p->dev), "%s", dev);
	p->port = port;
	return p;
}

static __u64 events_lost(void *ctx);

/* one poll: events first (the PSNs a modify set), then the QPs within the
 * budget (rdmaqp_poll.c), then each device's ports; 0 or -errno of netlink */
static int poll_all(struct run *r)
{
	__u64 lost = events_lost(r);
	double now;
	int n, e;

	if (r->rb)
		ring_buffer__consume(r->rb);
	n = rdmaqp_nl_devices(r->nl, r->devs, MAX_DEVS);
	if (n < 0)
		return n;
	r->ndevs = n;
	now = mono_now();
	r->elapsed = r->last_poll ? now - r->last_poll : 0;
	r->last_poll = now;
	/* an event lost may be a QP created or destroyed: a dump again */
	r->poll.resync |= lost != r->lost;
	r->lost = lost;
	e = rdmaqp_poll_qps(&r->poll, r->nl, &r->qps, r->devs, r->ndevs, now, on_qp, r);
	if (e)
		return e;
	for (int i = 0; i < r->ndevs; i++) {
		const struct rdmaqp_dev *d = &r->devs[i];

		if (!dev_selected_name(d->name))
			continue;
		for (__u32 p = 1; p <= d->nports; p++) {
			struct rdmaqp_port *pt = port_of(r, d->name, p);

			if (pt)
				rdmaqp_port_read(pt, "/sys");
		}
	}
	return 0;
}

static const char *peer_str(const struct rdmaqp_row *q, char *buf, int len)
{
	if (q->nl.has_rqpn)
		snprintf(buf, len, "%u", q->nl.rqpn);
	else
		snprintf(buf, len, "-");
	return buf;
}

static const char *owner_comm(const struct rdmaqp_row *q)
{
	return q->comm[0] ? q->comm : q->owner_comm;
}

static const char *prio_str(const struct rdmaqp_pause *c, char *buf, int len)
{
	if (c->prio == RDMAQP_PFC_GLOBAL)
		return "global";
	if (c->prio == RDMAQP_PFC_STORM)
		return "storm";
	snprintf(buf, len, "%d", c->prio);
	return buf;
}

/* the port's netdev was listed by an earlier port (rxe-a and a second
 * port on one netdev) */
static bool netdev_seen(const struct run *r, int i)
{
	for (int j = 0; j < i; j++)
		if (!strcmp(r->ports[j].netdev, r->ports[i].netdev))
			return true;
	return false;
}

/* pause frames per priority of each port's netdev, or the one line why
 * there are none */
static void print_pauses(const struct run *r)
{
	char b[8];

	printf("\n%-16s %-6s %-3s %-32s %12s %14s\n", "NETDEV", "PRIO", "DIR", "PAUSE COUNTER",
	       "RATE/s", "TOTAL");
	for (int i = 0; i < r->nports; i++) {
		const struct rdmaqp_port *p = &r->ports[i];

		if (p->netdev[0] && netdev_seen(r, i))
			continue;
		if (!p->pfc.n) {
			printf("%s\n", p->pfc.why);
			continue;
		}
		for (int c = 0; c < p->pfc.n; c++) {
			const struct rdmaqp_pause *k = &p->pfc.c[c];
			double rate = k->has_prev && r->elapsed > 0 && k->value >= k->prev ?
				(k->value - k->prev) / r->elapsed : 0;

			printf("%-16s %-6s %-3s %-32s %12.1f %14llu\n", p->netdev,
			       prio_str(k, b, sizeof(b)), k->tx ? "tx" : "rx", k->name, rate,
			       (unsigned long long)k->value);
		}
	}
}

/* a QP's packets of the interval: counted when it was queried, "-" when
 * the budget left it for a later interval (no zero that is not one) */
static const char *pkts_str(const struct rdmaqp_row *q, __u64 v, char *buf, int len)
{
	if (!q->in_dump)
		return "-";
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

/* the seconds a queried QP's counts cover */
static const char *span_str(const struct rdmaqp_row *q, char *buf, int len)
{
	if (!q->in_dump)
		return "-";
	snprintf(buf, len, "%.1f", q->span);
	return buf;
}

static void print_qps(const struct run *r)
{
	char b1[32], b2[32], b3[16], t[24], x[24], s[16];

	printf("%-10s %-8s %-8s %-4s %-5s %-5s %9s %9s %5s %-7s %s\n", "DEV", "QPN", "PEER", "PORT",
	       "TYPE", "STATE", "TX_PKTS", "RX_PKTS", "SPAN", "PID", "COMM");
	for (int i = 0; i < r->qps.n; i++) {
		const struct rdmaqp_row *q = &r->qps.rows[i];

		if (!q->sampled)
			continue;
		printf("%-10.10s %-8u %-8s %-4u %-5.5s %-5s %9s %9s %5s %-7u %s\n",
		       dev_name(r, q->key.dev_index), q->key.qpn, peer_str(q, b3, sizeof(b3)),
		       q->nl.port, type_str(r, q->nl.type, b1, 32),
		       state_str(r, q->state, b2, 32), pkts_str(q, q->tx.interval, t, sizeof(t)),
		       pkts_str(q, q->rx.interval, x, sizeof(x)), span_str(q, s, sizeof(s)),
		       q->nl.has_pid ? q->nl.pid : q->owner_pid, owner_comm(q));
	}
	if (r->poll.bounded)
		printf("queried %u of %u QPs (--budget %u: each every %u intervals); \"-\": not "
		       "this interval\n", r->poll.queried, r->poll.known, r->poll.budget,
		       r->poll.round);
}

static void print_table(const struct run *r)
{
	cli_print_timestamp_line(&env.cli, stdout);
	print_qps(r);
	printf("\n%-10s %-4s %-32s %12s %14s  %s\n", "DEV", "PORT", "COUNTER", "RATE/s", "TOTAL",
	       "MEANING");
	for (int i = 0; i < r->nports; i++) {
		const struct rdmaqp_port *p = &r->ports[i];

		for (int c = 0; c < p->n; c++) {
			const struct rdmaqp_counter *k = &p->cnt[c];
			const struct rdmaqp_cdesc *d = k->hw ? rdmaqp_counter_desc(p->family, k->name)
							     : NULL;

			if (!k->valid || !k->has_prev || k->value <= k->prev || r->elapsed <= 0)
				continue;
			printf("%-10.10s %-4u %-32.32s %12.1f %14llu  %s\n", p->dev, p->port, k->name,
			       (k->value - k->prev) / r->elapsed, (unsigned long long)k->value,
			       d ? d->meaning : "-");
		}
	}
	print_pauses(r);
	printf("\n");
	fflush(stdout);
}

static const char *const base_names[] = { "none", "sample", "modify" };

static void json_psn(struct json_w *w, const char *key, const struct rdmaqp_psn *p,
		     bool has, __u32 psn, bool queried)
{
	json_obj_open(w, key);
	if (has)
		json_u64(w, "psn", psn);
	else
		json_null(w, "psn");
	if (queried)
		json_u64(w, "pkts", p->interval);
	else
		json_null(w, "pkts");
	json_u64(w, "pkts_total", p->total);
	json_str(w, "counted_from", base_names[p->base]);
	json_obj_close(w);
}

static void json_qp(const struct run *r, const struct rdmaqp_row *q, double now)
{
	char b1[32];
	struct json_w w;

	json_begin(&w, stdout);
	json_str(&w, "type", "qp");
	json_time(&w, now);
	json_str(&w, "dev", dev_name(r, q->key.dev_index));
	json_u64(&w, "dev_index", q->key.dev_index);
	json_u64(&w, "port", q->nl.port);
	json_u64(&w, "qpn", q->key.qpn);
	if (q->nl.has_rqpn)
		json_u64(&w, "peer_qpn", q->nl.rqpn);
	else
		json_null(&w, "peer_qpn");
	json_str(&w, "qp_type", type_str(r, q->nl.type, b1, sizeof(b1)));
	json_str(&w, "state", state_str(r, q->state, b1, sizeof(b1)));
	json_bool(&w, "queried", q->in_dump);
	if (q->in_dump)
		json_f64(&w, "span_s", q->span);
	else
		json_null(&w, "span_s");
	json_f64(&w, "age_s", r->last_poll - q->queried_at);
	json_psn(&w, "tx", &q->tx, q->nl.has_sq_psn, q->nl.sq_psn, q->in_dump);
	json_psn(&w, "rx", &q->rx, q->nl.has_rq_psn, q->nl.rq_psn, q->in_dump);
	if (q->nl.has_pid)
		json_u64(&w, "pid", q->nl.pid);
	else
		json_null(&w, "pid");
	json_str(&w, "comm", owner_comm(q));
	if (q->created) {
		json_obj_open(&w, "created");
		json_time(&w, cli_ktime_to_epoch(q->created_ns));
		json_u64(&w, "pid", q->owner_pid);
		json_str(&w, "comm", q->owner_comm);
		json_u64(&w, "cgroup_id", q->cgroup_id);
		json_obj_close(&w);
	}
	json_end(&w);
}

/* "netdev" and "pause": its counters, or null and "pause_missing" */
static void json_pauses(struct json_w *w, const struct run *r, const struct rdmaqp_port *p)
{
	char b[8];

	if (p->netdev[0])
		json_str(w, "netdev", p->netdev);
	else
		json_null(w, "netdev");
	if (!p->pfc.n) {
		json_null(w, "pause");
		json_str(w, "pause_missing", p->pfc.why);
		return;
	}
	json_arr_open(w, "pause");
	for (int c = 0; c < p->pfc.n; c++) {
		const struct rdmaqp_pause *k = &p->pfc.c[c];
		__u64 d = k->has_prev && k->value >= k->prev ? k->value - k->prev : 0;

		json_obj_open(w, NULL);
		json_str(w, "name", k->name);
		json_str(w, "prio", prio_str(k, b, sizeof(b)));
		json_str(w, "direction", k->tx ? "tx" : "rx");
		json_u64(w, "value", k->value);
		json_u64(w, "delta", d);
		json_f64(w, "rate", r->elapsed > 0 ? d / r->elapsed : 0);
		json_obj_close(w);
	}
	json_arr_close(w);
}

static void json_port(const struct run *r, const struct rdmaqp_port *p, double now)
{
	struct json_w w;

	json_begin(&w, stdout);
	json_str(&w, "type", "port");
	json_time(&w, now);
	json_str(&w, "dev", p->dev);
	json_u64(&w, "port", p->port);
	json_f64(&w, "interval_s", r->elapsed);
	if (p->family)
		json_str(&w, "driver", p->family->name);
	else
		json_null(&w, "driver");
	json_obj_open(&w, "counters");
	for (int c = 0; c < p->n; c++) {
		const struct rdmaqp_counter *k = &p->cnt[c];
		__u64 d = k->has_prev && k->value >= k->prev ? k->value - k->prev : 0;
		const struct rdmaqp_cdesc *cd = k->hw ? rdmaqp_counter_desc(p->family, k->name) : NULL;

		if (!k->valid)
			continue;
		json_obj_open(&w, k->name);
		json_bool(&w, "hw", k->hw);
		if (cd) {
			json_str(&w, "class", rdmaqp_cls_names[cd->cls]);
			json_str(&w, "meaning", cd->meaning);
		}
		json_u64(&w, "value", k->value);
		json_u64(&w, "delta", d);
		json_f64(&w, "rate", r->elapsed > 0 ? d / r->elapsed : 0);
		json_obj_close(&w);
	}
	json_obj_close(&w);
	json_pauses(&w, r, p);
	json_end(&w);
}

/* the poll of the interval: what the budget allowed and what it did */
static void json_poll(const struct run *r, double now)
{
	struct json_w w;

	json_begin(&w, stdout);
	json_str(&w, "type", "poll");
	json_time(&w, now);
	json_u64(&w, "budget", r->poll.budget);
	json_u64(&w, "qps", r->poll.known);
	json_u64(&w, "queried", r->poll.queried);
	json_u64(&w, "dumps", r->poll.dumps);
	json_u64(&w, "round_intervals", r->poll.round);
	json_bool(&w, "bounded", r->poll.bounded);
	json_end(&w);
}

static const char *state_cb(const void *ctx, __u8 st, char *buf, int len)
{
	return state_str(ctx, st, buf, len);
}

static void write_prom(struct run *r)
{
	struct rdmaqp_prom_in in = {
		.path = env.cli.prom_path, .qps = &r->qps, .ports = r->ports,
		.nports = r->nports, .devs = r->devs, .ndevs = r->ndevs,
		.state_name = state_cb, .ctx = r, .bpf = r->obj != NULL, .bpf_off = env.no_bpf,
		.no_bpf = r->no_bpf, .poll = &r->poll, .now = r->last_poll,
	};
	int err = rdmaqp_prom_write(&r->prom_qps, &in);

	if (err)
		cli_prom_err(&env.cli, err);
}

/* --prom alone (no table): a poll when the last is a second old */
static void prom(void *ctx, enum loop_when when)
{
	struct run *r = ctx;

	if (when != LOOP_START && mono_now() - r->last_poll >= 1.0)
		poll_all(r);
	write_prom(r);
}

static void report(void *ctx)
{
	struct run *r = ctx;
	double now = cli_now_epoch();
	int e = poll_all(r);

	if (e) {
		cli_err("RDMA netlink: %s", strerror(-e));
		return;
	}
	if (!env.cli.json) {
		print_table(r);
	} else {
		json_poll(r, now);
		for (int i = 0; i < r->qps.n; i++)
			if (r->qps.rows[i].sampled)
				json_qp(r, &r->qps.rows[i], now);
		for (int i = 0; i < r->nports; i++)
			json_port(r, &r->ports[i], now);
		fflush(stdout);
	}
	if (env.cli.prom_path)
		write_prom(r);
}

/* -e: the poll that finds state changes no modify explained */
static void tick(void *ctx)
{
	struct run *r = ctx;

	if (mono_now() - r->last_poll >= 1.0)
		poll_all(r);
}

static __u64 events_lost(void *ctx)
{
	struct run *r = ctx;
	int ncpu = libbpf_num_possible_cpus();

	return r->obj && ncpu > 0 ? maps_stat(r->obj->maps.stats, RDMAQP_STAT_EVENTS_LOST, ncpu) : 0;
}

/* the devices there are, and -d's among them; dies when there is none */
static void find_devices(struct run *r)
{
	char names[256] = "";
	bool found = false;

	r->nl = rdmaqp_nl_open();
	if (!r->nl)
		cli_die("no RDMA netlink in this kernel (%s): no RDMA device to watch",
			strerror(errno));
	r->ndevs = rdmaqp_nl_devices(r->nl, r->devs, MAX_DEVS);
	if (r->ndevs < 0)
		cli_die("RDMA netlink device dump: %s", strerror(-r->ndevs));
	if (!r->ndevs)
		cli_die("no RDMA device on this host (RDMA netlink lists none)");
	for (int i = 0; i < r->ndevs; i++) {
		found |= !env.devname || !strcmp(env.devname, r->devs[i].name);
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? ", " : "", r->devs[i].name);
	}
	if (!found)
		cli_die("no RDMA device %s (there are: %s)", env.devname, names);
}

/* eBPF on the control path, or polling alone after one line saying why */
static const char *attach_bpf(struct run *r, char *mode, int len)
{
	struct rdmaqp_load_opts lo = { .cli = &env.cli, .force_kprobe = env.force_kprobe };
	struct rdmaqp_hooks hk;
	char err[256];

	static char why[256];

	if (env.no_bpf) {
		r->no_bpf = "--no-bpf";
		return "no eBPF (--no-bpf)";
	}
	r->obj = rdmaqp_load(&lo, &hk, err, sizeof(err));
	if (!r->obj) {
		if (err[0])
			cli_err("no owners at creation, no control-path events: %s", err);
		snprintf(why, sizeof(why), "%s", err[0] ? err : "the hooks did not load");
		r->no_bpf = why;
		return "no eBPF";
	}
	snprintf(mode, len, "eBPF: %d hooks via %s", hk.nhooks - hk.missing,
		 hk.fentry ? "fentry" : "kprobes");
	r->states = btf_enum_load_module(RDMAQP_MODULE, "ib_qp_state", "IB_QPS_");
	r->types = btf_enum_load_module(RDMAQP_MODULE, "ib_qp_type", "IB_QPT_");
	r->events = btf_enum_load_module(RDMAQP_MODULE, "ib_event_type", "IB_EVENT_");
	return mode;
}

static void print_budget(const struct run *r, FILE *f);

static int run(struct run *r, const char *how)
{
	FILE *banner = env.cli.json ? stderr : stdout;	/* stdout: pure JSON lines */

	struct loop lp = { .ctx = r, .report = report, .events_lost = events_lost };

	if (env.cli.prom_path)
		lp.prom = prom;

	if (env.events) {
		lp.report = NULL;
		lp.tick = tick;
	}
	if (r->obj) {
		r->rb = loop_add_events(&lp, r->obj->maps.events, handle_event, r, NULL);
		if (!r->rb)
			return 1;
	}
	/* the first sample: what the first interval counts from */
	if (poll_all(r))
		cli_err("RDMA netlink: first poll failed");
	fprintf(banner, "Tracing RDMA queue pairs of %s (netlink every %ds; %s)... Hit Ctrl-C "
		"to end.\n", env.devname ? env.devname : "every device",
		env.cli.interval ? env.cli.interval : 1, how);
	print_budget(r, banner);
	fflush(banner);
	if (env.events && !env.cli.json) {
		cli_print_time_header(&env.cli, stdout);
		printf("%-10s %-8s %-8s %s\n", "DEV", "QPN", "EVENT", "DETAIL");
		fflush(stdout);
	}
	return loop_run(&lp, &env.cli) ? 1 : 0;
}

/* the banner's second line: the budget and what it means at this count */
static void print_budget(const struct run *r, FILE *f)
{
	const struct rdmaqp_poll *p = &r->poll;

	if (!p->bounded) {
		fprintf(f, "Budget: %u QP queries per interval (--budget); %u QPs: every QP "
			"every interval, one dump per device.\n", p->budget, p->known);
		return;
	}
	fprintf(f, "Budget: %u QP queries per interval (--budget); %u QPs: each queried alone, "
		"a round every %u intervals; ", p->budget, p->known, p->round);
	if (p->bpf)
		fprintf(f, "QPs from one dump at start (%u queries) and eBPF's create and "
			"destroy (a dump again if events are lost).\n", p->queried);
	else
		fprintf(f, "QPs from a dump at start (%u queries) and again (one query per QP) "
			"when a device's QP count changes, at most once a round (no eBPF).\n",
			p->queried);
}

int main(int argc, char **argv)
{
	static struct run r;
	char mode[64];
	const char *how;
	int ret;

	cli_parse(&argp, argc, argv, NULL);
	prom_cap_init(&r.prom_qps, RDMAQP_PROM_QPS);
	cli_setup(&env.cli, env.no_bpf ? 0 : CLI_CAP_BPF | CLI_CAP_PERFMON);
	find_devices(&r);
	how = attach_bpf(&r, mode, sizeof(mode));
	r.poll.budget = env.budget;
	r.poll.bpf = r.obj != NULL;
	r.poll.only_dev = env.devname;
	ret = run(&r, how);
	rdmaqp_bpf__destroy(r.obj);
	rdmaqp_nl_close(r.nl);
	rdmaqp_table_free(&r.qps);
	rdmaqp_poll_free(&r.poll);
	for (int i = 0; i < r.nports; i++)
		rdmaqp_port_free(&r.ports[i]);
	btf_enum_free(r.states);
	btf_enum_free(r.types);
	btf_enum_free(r.events);
	prom_cap_free(&r.prom_qps);
	return ret;
}
