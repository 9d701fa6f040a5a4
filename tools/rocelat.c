// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat: how long RDMA requests wait for their ACK or READ RESPONSE, per
 * flow and UDP source port (ECMP path), with retransmits, NAKs, RNR NAKs,
 * CNPs and ECN marks; names the flow that stands out. Passive: XDP on
 * ingress, tc egress for the host's own transmit side, or a capture file
 * run through the very same program (BPF_PROG_TEST_RUN, capture time as
 * the program's clock).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rocelat.h"
#include "rocelat.skel.h"
#include "lib/capture.h"
#include "lib/cli.h"
#include "lib/hist.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/maps.h"
#include "lib/prom.h"
#include "lib/roce_names.h"

#define MAX_IFACES		8
#define OUTLIER_MIN_SAMPLES	5
#define OUTLIER_RATIO		2.0
#define OUTLIER_MIN_GAP_NS	50000ULL	/* ignore sub-50us differences */
/* libbpf 1.1's uapi header predates tcx (6.6); the kernel's number */
#define AX_BPF_TCX_EGRESS	47
/* our clsact filter, so a leftover of a killed run can be recognised */
#define TC_HANDLE		0x52CE
#define TC_PRIO			0xC7
#define TC_PROG_NAME		"rocelat_tc"

enum xdp_mode { MODE_AUTO, MODE_SKB, MODE_NATIVE };

static struct {
	const char *ifnames[MAX_IFACES];
	int nifs;
	bool flows;
	const char *pcap;
	__u64 unit_ns;
	const char *unit;
	enum xdp_mode mode;
	bool mirror;
	bool no_egress;
	bool decap;
	int mirror_time;
	long timeout_ms;
	long max_flows;
} env = {
	.unit_ns = 1000, .unit = "usecs", .timeout_ms = 1000,
	.max_flows = DEFAULT_MAX_FLOWS,
};

struct iface {
	const char *name;
	int ifindex;
	struct bpf_link *xdp_link;	/* default mode: libbpf's link */
	int xdp_link_fd;		/* forced mode: raw link fd */
	const char *xdp_mode_name;
	int tcx_fd;			/* tcx link (6.6+) */
	bool tc_attached;		/* clsact filter (older kernels) */
	bool tc_hook_created;
};

static struct iface ifaces[MAX_IFACES];
static int ncpu;

const char *argp_program_version = "rocelat (AgentXDP) 0.1";
static const char doc[] =
"Measure RoCE v2 request -> ACK / READ RESPONSE latency passively.\n"
"\n"
"USAGE: rocelat -i IFACE [-i IFACE...] [OPTIONS] [interval] [count]\n"
"       rocelat -r FILE [OPTIONS]\n"
"\n"
"XDP sees each interface's ingress, tc egress its transmit side (tcx link on\n"
"6.6+, else a clsact filter removed at exit; a run killed with SIGKILL on an\n"
"older kernel leaves that filter, and the next run removes it). An existing\n"
"XDP program is never replaced. Every packet passes untouched.\n"
"\n"
"Latency runs from a request that asks for an answer (AckReq, READ,\n"
"atomic) to the ACK that covers its PSN (cumulative), a NAK's implied ACK,\n"
"or its READ RESPONSE / ATOMIC ACK. Answers are paired with requests by\n"
"queue pair, never by UDP source port (each side of a QP pair may send\n"
"from its own); a flow is requester, responder and responder QP, shown with\n"
"its source port (ECMP path). p50/p90/p99 are within 3%. Answers to\n"
"retransmitted requests are not timed (Karn). On a host that answers\n"
"requests, request in -> answer out is reported apart as local turnaround.\n"
"-r FILE runs the same BPF program over a pcap/pcapng file.\n"
"\n"
"EXAMPLES:\n"
"    rocelat -i eth1              # latency histogram until Ctrl-C\n"
"    rocelat -i eth1 -F 5         # + per-flow table every 5 s, slowest first\n"
"    rocelat -i span0 --mirror    # SPAN port: both directions on ingress\n"
"    rocelat -i eth1 -j -F        # JSON lines\n"
"    rocelat -r roce.pcap -F -m   # analyse a capture, in milliseconds";

enum {
	OPT_SKB = 0x2000, OPT_NATIVE, OPT_MIRROR, OPT_NO_EGRESS, OPT_TIMEOUT,
	OPT_MAX_FLOWS, OPT_DECAP, OPT_MIRROR_TIME,
};

static const struct argp_option opts[] = {
	{ "interface", 'i', "IFACE", 0, "Attach to IFACE (repeatable)", 0 },
	{ "flows", 'F', NULL, 0, "Per-flow table, worst first, with outlier line", 0 },
	{ "read", 'r', "FILE", 0, "Analyse a pcap/pcapng capture instead of live traffic", 0 },
	{ "milliseconds", 'm', NULL, 0, "Latency in milliseconds", 0 },
	{ "nanoseconds", 'N', NULL, 0, "Latency in nanoseconds", 0 },
	{ "skb-mode", OPT_SKB, NULL, 0, "Generic (skb) XDP: works on any device", 0 },
	{ "native-mode", OPT_NATIVE, NULL, 0, "Native (driver) XDP only", 0 },
	{ "mirror", OPT_MIRROR, NULL, 0,
	  "SPAN/mirror port: both directions arrive as ingress (XDP only); "
	  "implies --decap", 0 },
	{ "decap", OPT_DECAP, NULL, 0,
	  "Read RoCE inside GRE, ERSPAN II/III, VXLAN and Geneve (always with -r)", 0 },
	{ "mirror-time", OPT_MIRROR_TIME, "auto|switch|arrival", 0,
	  "Time mirrored flows by the switch's ERSPAN III timestamps or by "
	  "arrival (default auto: the switch's where present)", 0 },
	{ "no-egress", OPT_NO_EGRESS, NULL, 0, "Do not attach tc egress", 0 },
	{ "timeout", OPT_TIMEOUT, "MS", 0,
	  "A request unanswered this long is a timeout (default 1000)", 0 },
	{ "max-flows", OPT_MAX_FLOWS, "N", 0,
	  "Track at most N flows (responder QPs; default 4096, about 10 KiB "
	  "of kernel memory each); more are evicted and counted", 0 },
	{},
};

static bool unit_set;

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	long v;

	switch (key) {
	case 'i':
		if (env.nifs >= MAX_IFACES)
			argp_failure(state, 1, 0, "at most %d interfaces", MAX_IFACES);
		for (int i = 0; i < env.nifs; i++)
			if (!strcmp(env.ifnames[i], arg))
				argp_failure(state, 1, 0, "interface %s given twice", arg);
		env.ifnames[env.nifs++] = arg;
		break;
	case 'F':
		env.flows = true;
		break;
	case 'r':
		if (!*arg)
			argp_failure(state, 1, 0, "empty capture file name");
		env.pcap = arg;
		break;
	case 'm':
	case 'N':
		if (unit_set)
			argp_failure(state, 1, 0, "-m and -N are mutually exclusive");
		unit_set = true;
		env.unit_ns = key == 'm' ? 1000000 : 1;
		env.unit = key == 'm' ? "msecs" : "nsecs";
		break;
	case OPT_SKB:
	case OPT_NATIVE:
		if (env.mode != MODE_AUTO)
			argp_failure(state, 1, 0,
				     "--skb-mode and --native-mode are mutually exclusive");
		env.mode = key == OPT_SKB ? MODE_SKB : MODE_NATIVE;
		break;
	case OPT_MIRROR:
		env.mirror = true;
		break;
	case OPT_NO_EGRESS:
		env.no_egress = true;
		break;
	case OPT_DECAP:
		env.decap = true;
		break;
	case OPT_MIRROR_TIME:
		if (!strcmp(arg, "auto"))
			env.mirror_time = MIRROR_TIME_AUTO;
		else if (!strcmp(arg, "switch"))
			env.mirror_time = MIRROR_TIME_SWITCH;
		else if (!strcmp(arg, "arrival"))
			env.mirror_time = MIRROR_TIME_ARRIVAL;
		else
			argp_failure(state, 1, 0, "invalid --mirror-time: %s (auto, switch or arrival)", arg);
		break;
	case OPT_TIMEOUT:
		if (!cli_parse_long(arg, 1, 3600000, &v))
			argp_failure(state, 1, 0, "invalid timeout: %s (1-3600000 ms)", arg);
		env.timeout_ms = v;
		break;
	case OPT_MAX_FLOWS:
		if (!cli_parse_long(arg, 16, 1000000, &v))
			argp_failure(state, 1, 0, "invalid --max-flows: %s (16-1000000)", arg);
		env.max_flows = v;
		break;
	case ARGP_KEY_END:
		if (env.pcap) {
			if (env.nifs)
				argp_failure(state, 1, 0, "-r FILE and -i IFACE are mutually exclusive");
			if (env.mode != MODE_AUTO || env.mirror || env.no_egress)
				argp_failure(state, 1, 0,
					     "--skb-mode/--native-mode/--mirror/--no-egress "
					     "apply to live tracing, not -r");
			env.decap = true;	/* captures of mirror sessions */
			if (cli.interval)
				argp_failure(state, 1, 0,
					     "interval and count apply to live tracing, not -r");
		} else if (!env.nifs) {
			argp_failure(state, 1, 0, "no interface: give -i IFACE (or -r FILE)");
		}
		if (env.mirror)
			env.decap = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

CLI_ARGP(argp, opts, parse_arg, doc);

/* ---- reading the maps ------------------------------------------------ */

static const char *const counter_names[RL_NR] = {
	[RL_ROCE_PKTS] = "roce_packets",
	[RL_PARSE_ERRORS] = "parse_errors",
	[RL_REQUESTS] = "requests",
	[RL_TRACKED] = "tracked",
	[RL_ACKS] = "acks",
	[RL_READ_RESP] = "read_responses",
	[RL_SAMPLES] = "samples",
	[RL_TURN_SAMPLES] = "turnaround_samples",
	[RL_RETRANSMITS] = "retransmits",
	[RL_KARN_DISCARDED] = "karn_discarded",
	[RL_NAK_SEQ] = "nak_psn_seq_err",
	[RL_NAK_INVALID_REQ] = "nak_invalid_req",
	[RL_NAK_REMOTE_ACCESS] = "nak_remote_access",
	[RL_NAK_REMOTE_OP] = "nak_remote_op",
	[RL_NAK_INVALID_RD] = "nak_invalid_rd",
	[RL_NAK_OTHER] = "nak_other",
	[RL_RNR_NAKS] = "rnr_naks",
	[RL_CNPS] = "cnps",
	[RL_ECN_CE] = "ecn_ce",
	[RL_EVICTED] = "evicted",
	[RL_TIMEOUTS] = "timeouts",
	[RL_UNMATCHED] = "unmatched_answers",
	[RL_RESP_MISSING] = "responses_missing",
	[RL_FATAL_ENDED] = "fatal_ended",
	[RL_LEARNED] = "qps_paired",
	[RL_CM_REQS] = "cm_requests",
	[RL_CM_PAIRED] = "cm_paired",
	[RL_AMBIGUOUS] = "ambiguous_answers",
	[RL_DUPLICATES] = "duplicates",
	[RL_FLOW_RESETS] = "flow_resets",
	[RL_FLOWS] = "flows_started",
	[RL_PAIR_FULL] = "pair_candidates_dropped",
	[RL_RESERVED_OP] = "reserved_opcodes",
	[RL_TUN_NOT_ROCE] = "tunnel_not_roce",
	[RL_TUN_UNKNOWN] = "tunnel_unknown",
	[RL_TRUNCATED] = "truncated",
	[RL_NO_SWITCH_TIME] = "no_switch_time",
	[RL_OTHER_TRANSPORT] = "other_transport",
};

static const char *const counter_help[RL_NR] = {
	[RL_ROCE_PKTS] = "Packets to the RoCE port with a BTH",
	[RL_PARSE_ERRORS] = "Truncated or inconsistent headers",
	[RL_REQUESTS] = "RC/XRC request packets",
	[RL_TRACKED] = "Requests waiting for an answer (AckReq, READ, atomic)",
	[RL_ACKS] = "ACKNOWLEDGE and ATOMIC ACKNOWLEDGE packets (ACK, NAK, RNR NAK)",
	[RL_READ_RESP] = "READ RESPONSE packets",
	[RL_SAMPLES] = "Latency samples (round trips and local turnarounds)",
	[RL_TURN_SAMPLES] = "Latency samples of requests this host answered (request in, answer out)",
	[RL_RETRANSMITS] = "Request packets with a PSN seen before",
	[RL_KARN_DISCARDED] = "Answers to retransmitted requests, not timed (Karn)",
	[RL_NAK_SEQ] = "NAK: PSN sequence error",
	[RL_NAK_INVALID_REQ] = "NAK: invalid request",
	[RL_NAK_REMOTE_ACCESS] = "NAK: remote access error",
	[RL_NAK_REMOTE_OP] = "NAK: remote operational error",
	[RL_NAK_INVALID_RD] = "NAK: invalid RD request",
	[RL_NAK_OTHER] = "NAK with a reserved code or syndrome",
	[RL_RNR_NAKS] = "RNR NAKs",
	[RL_CNPS] = "Congestion notification packets",
	[RL_ECN_CE] = "RoCE packets marked ECN CE",
	[RL_EVICTED] = "Pending requests pushed out by newer ones",
	[RL_TIMEOUTS] = "Pending requests unanswered for --timeout",
	[RL_UNMATCHED] = "Answers that completed no pending request",
	[RL_RESP_MISSING] = "READs and atomics passed by a later answer without their response",
	[RL_FATAL_ENDED] = "Requests ended without an answer by a fatal NAK",
	[RL_LEARNED] = "Requester QPs paired with their responder QP by an answer's PSN",
	[RL_CM_REQS] = "RDMA CM connection requests (REQ) seen",
	[RL_CM_PAIRED] = "QP pairs learned from an RDMA CM REQ and its REP",
	[RL_AMBIGUOUS] = "Answers that could belong to several QPs (not paired)",
	[RL_DUPLICATES] = "Requests seen twice within microseconds (one sighting)",
	[RL_FLOW_RESETS] = "QPs whose PSNs restarted far behind (a new connection)",
	[RL_FLOWS] = "Flows (responder QPs) started",
	[RL_PAIR_FULL] = "Responder QPs dropped as pairing candidates (over 16 per address pair)",
	[RL_RESERVED_OP] = "Packets with a reserved RC/XRC opcode",
	[RL_TUN_NOT_ROCE] = "Decapsulated mirror or tunnel frames whose inner frame is not RoCE",
	[RL_TUN_UNKNOWN] = "Tunnel headers not followed (unknown ERSPAN version, GRE routing, ...)",
	[RL_TRUNCATED] = "RoCE frames cut short (mirror truncation) whose headers were read",
	[RL_NO_SWITCH_TIME] = "Frames of a switch-timed flow without a switch timestamp (not timed)",
	[RL_OTHER_TRANSPORT] = "UC, UD and RD packets (counted, not timed)",
};

static void read_counters(struct rocelat_bpf *obj, struct rocelat_counters *out)
{
	struct rocelat_counters *v = calloc(ncpu, sizeof(*v));
	__u32 zero = 0;

	memset(out, 0, sizeof(*out));
	if (!v)
		return;
	if (!bpf_map_lookup_elem(bpf_map__fd(obj->maps.counters), &zero, v)) {
		for (int c = 0; c < ncpu; c++) {
			for (int i = 0; i < RL_NR; i++)
				out->c[i] += v[c].c[i];
			hist_add_into(out->hist.slots, v[c].hist.slots, HIST_SLOTS);
			hist_add_into(out->turn_hist.slots, v[c].turn_hist.slots, HIST_SLOTS);
		}
	}
	free(v);
}

/*
 * Requests unanswered for --timeout on flows that went quiet are counted
 * by rocelat_sweep, run here before each report (offline: at the capture's
 * latest time, which clock_ns holds).
 */
static void sweep_timeouts(struct rocelat_bpf *obj)
{
	unsigned char frame[64] = {};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
		    .data_size_in = sizeof(frame), .repeat = 1);

	if (bpf_prog_test_run_opts(bpf_program__fd(obj->progs.rocelat_sweep), &o))
		cli_err("timeout sweep failed: %s", strerror(errno));
}

struct flow_row {
	struct roce_qp_key key;		/* qpn: the responder's */
	__u32 req_qpn;
	bool paired;
	bool switch_clock;
	__u16 sport;
	__u8 tun_kind, tun_family;
	__u32 tun_id;
	__u8 tun_saddr[16];
	struct roce_flow_stats st;
	double p50, p90, p99;		/* ns, from the log-linear histogram */
	double mean_ns;
};

static struct flow_row *rows;
static int max_rows;
/* flows live in the pending map, requests waiting in their rings */
static __u64 live_flows, live_pending;

static bool row_turn(const struct flow_row *r)
{
	return r->st.kind == FLOW_KIND_TURN;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct flow_row *x = a, *y = b;
	__u64 bx = x->st.retransmits + x->st.naks + x->st.rnr_naks;
	__u64 by = y->st.retransmits + y->st.naks + y->st.rnr_naks;

	/* round trips first; the median first: one stray sample must not
	 * put a flow on top */
	if (row_turn(x) != row_turn(y))
		return row_turn(x) ? 1 : -1;
	if (x->p50 != y->p50)
		return x->p50 < y->p50 ? 1 : -1;
	if (x->mean_ns != y->mean_ns)
		return x->mean_ns < y->mean_ns ? 1 : -1;
	if (bx != by)
		return bx < by ? 1 : -1;
	return 0;
}

static void flow_row_fill(struct flow_row *r)
{
	const struct roce_flow_stats *s = &r->st;

	r->p50 = llhist_quantile(s->ll.b, 0.50, s->min, s->max);
	r->p90 = llhist_quantile(s->ll.b, 0.90, s->min, s->max);
	r->p99 = llhist_quantile(s->ll.b, 0.99, s->min, s->max);
	r->mean_ns = s->samples ? (double)s->sum / s->samples : 0;
}

/*
 * The flows of this interval, worst first, from the pending map (a flow's
 * statistics live in its entry). With clear (per interval) the BPF side
 * first starts a new interval (stats_epoch) in the other buffer of each
 * entry, then the one just ended is read. Also counts the live flows and
 * requests.
 */
struct flows_read {
	__u32 epoch;
	int n;
};

/* one entry of the pending map: counted, and a row when its interval
 * (epoch) has something to show */
static int collect_flow(const void *key, const void *val, void *ctx)
{
	const struct pending_flow *pf = val;
	const struct roce_flow_stats *st;
	struct flows_read *fr = ctx;
	struct flow_row *r;

	live_flows++;
	for (int i = 0; i < PENDING_RING; i++)
		live_pending += !!(pf->ring[i].flags & SLOT_VALID);
	st = pending_flow_stats(pf, fr->epoch);
	if (!st || fr->n >= max_rows || !(st->samples || st->retransmits ||
	    st->naks || st->rnr_naks || st->cnps || st->ecn_ce ||
	    st->timeouts || st->resp_missing))
		return 0;
	r = &rows[fr->n++];
	r->key = *(const struct roce_qp_key *)key;
	r->req_qpn = pf->req_qpn;
	r->paired = pf->flags & FLOW_PAIRED;
	r->switch_clock = pf->flags & FLOW_SWITCH_CLOCK;
	r->sport = pf->sport;
	r->tun_kind = pf->tun_kind;
	r->tun_family = pf->tun_family;
	r->tun_id = pf->tun_id;
	memcpy(r->tun_saddr, pf->tun_saddr, 16);
	r->st = *st;
	flow_row_fill(r);
	return 0;
}

static int collect_flows(struct rocelat_bpf *obj, bool clear)
{
	struct flows_read fr = { .epoch = obj->bss->stats_epoch };

	if (clear) {
		/* the next interval fills the other buffer from now on; a
		 * program that read the old epoch just before finishes within
		 * microseconds (BPF programs are not preempted): let it */
		obj->bss->stats_epoch = fr.epoch + 1;
		usleep(2000);
	}
	live_flows = live_pending = 0;
	maps_for_each(obj->maps.pending, collect_flow, &fr);
	qsort(rows, fr.n, sizeof(rows[0]), cmp_rows);
	return fr.n;
}

/* percentiles over all flows' samples of one kind */
struct overall {
	__u64 samples, min, max;
	double p50, p90, p99;
};

static void overall_of(int n, bool turn, struct overall *o)
{
	static struct llhist sum;

	memset(&sum, 0, sizeof(sum));
	memset(o, 0, sizeof(*o));
	o->min = ~0ULL;
	for (int i = 0; i < n; i++) {
		const struct roce_flow_stats *s = &rows[i].st;

		if (row_turn(&rows[i]) != turn || !s->samples)
			continue;
		llhist_add_into(sum.b, s->ll.b);
		o->samples += s->samples;
		o->min = s->min < o->min ? s->min : o->min;
		o->max = s->max > o->max ? s->max : o->max;
	}
	if (!o->samples) {
		o->min = 0;
		return;
	}
	o->p50 = llhist_quantile(sum.b, 0.50, o->min, o->max);
	o->p90 = llhist_quantile(sum.b, 0.90, o->min, o->max);
	o->p99 = llhist_quantile(sum.b, 0.99, o->min, o->max);
}

/* the interface of a live answer; none for a capture */
static const char *ifname_of(__u32 ifindex, char *buf)
{
	if (env.pcap)
		return NULL;
	if (!ifindex || !if_indextoname(ifindex, buf))
		return "-";
	return buf;
}

/* a flow's median, and its row, for ranking the peers */
struct med_rank {
	double p50;
	int row;
};

static int cmp_med(const void *a, const void *b)
{
	const struct med_rank *x = a, *y = b;

	return x->p50 < y->p50 ? -1 : x->p50 > y->p50;
}

/* median of sorted s[0..m-1] without element k */
static double median_without(const struct med_rank *s, int m, int k)
{
	int n = m - 1;
#define AT(j) (s[(j) < k ? (j) : (j) + 1].p50)
	return n % 2 ? AT(n / 2) : (AT(n / 2 - 1) + AT(n / 2)) / 2;
#undef AT
}

/*
 * The gray failure: a round-trip flow whose median is at least
 * OUTLIER_RATIO times the median of its peers' (round-trip flows with
 * enough samples; a local turnaround is another quantity and never
 * compared). Returns its row or -1; ratio and the peers' median (ns)
 * through the pointers. O(n log n): the medians are sorted once.
 */
static int find_outlier(int n, double *ratio_out, double *median_out, int *peers_out)
{
	struct med_rank *s = calloc(n ? n : 1, sizeof(*s));
	double best_ratio = 0, best_med = 0;
	int best = -1, m = 0;

	if (!s)
		return -1;
	for (int i = 0; i < n; i++)
		if (rows[i].st.samples >= OUTLIER_MIN_SAMPLES && !row_turn(&rows[i]))
			s[m++] = (struct med_rank){ rows[i].p50, i };
	qsort(s, m, sizeof(*s), cmp_med);
	for (int k = 0; m >= 2 && k < m; k++) {
		double med = median_without(s, m, k);

		if (med <= 0)
			med = 1;	/* 1 ns */
		if (s[k].p50 / med > best_ratio &&
		    s[k].p50 - med >= OUTLIER_MIN_GAP_NS) {
			best_ratio = s[k].p50 / med;
			best_med = med;
			best = s[k].row;
		}
	}
	free(s);
	if (best < 0 || best_ratio < OUTLIER_RATIO)
		return -1;
	*ratio_out = best_ratio;
	*median_out = best_med;
	*peers_out = m - 1;
	return best;
}

static void flow_pkt_info(const struct flow_row *r, struct pkt_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->family = r->key.family;
	memcpy(pi->saddr, r->key.req, 16);
	memcpy(pi->daddr, r->key.resp, 16);
	pi->ip_proto = 17;
	pi->sport = r->sport;
	pi->dport = cli.roce_port;
}

static const char *short_unit(void)
{
	return env.unit_ns == 1 ? "ns" : env.unit_ns == 1000 ? "us" : "ms";
}

/* a latency in ns in the chosen unit, for the table's 6 columns */
static void fmt_unit(double ns, char *buf, size_t len)
{
	double v = ns / env.unit_ns;

	snprintf(buf, len, v < 100 && env.unit_ns > 1 ? "%.1f" : "%.0f", v);
}

static void fmt_lat(double ns, char *buf, size_t len)
{
	if (ns >= 1e6)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else
		snprintf(buf, len, "%.0f ns", ns);
}

static void print_outlier_text(int o, double ratio, double med, int peers)
{
	const struct flow_row *r = &rows[o];
	char a[ADDR_STRLEN], b[ADDR_STRLEN], ifn[IF_NAMESIZE], m1[32], m2[32];
	const char *via = ifname_of(r->st.ifindex, ifn);

	fmt_lat(r->p50, m1, sizeof(m1));
	fmt_lat(med, m2, sizeof(m2));
	printf("OUTLIER: %s -> %s qpn 0x%x sport %u%s%s: median %s, %.1fx the "
	       "median of %d other flow%s (%s)\n",
	       pkt_addr_str(r->key.family, r->key.req, a, sizeof(a)),
	       pkt_addr_str(r->key.family, r->key.resp, b, sizeof(b)),
	       r->key.qpn, r->sport, via ? " via " : "", via ? via : "",
	       m1, ratio, peers, peers == 1 ? "" : "s", m2);
}

static void print_flow_table(int from, int to, int wa, int wb)
{
	char a[ADDR_STRLEN], b[ADDR_STRLEN], p50[16], p99[16], max[16];

	printf("%-*s %-*s %6s %5s %7s %4s%-2s %4s%-2s %4s%-2s %4s %3s %3s %3s\n",
	       wa, "REQUESTER", wb, "RESPONDER", "QPN", "SPORT", "SAMPLES",
	       "P50", short_unit(), "P99", short_unit(), "MAX", short_unit(),
	       "RETX", "NAK", "RNR", "CNP");
	for (int i = from; i < to; i++) {
		const struct flow_row *r = &rows[i];

		fmt_unit(r->p50, p50, sizeof(p50));
		fmt_unit(r->p99, p99, sizeof(p99));
		fmt_unit((double)r->st.max, max, sizeof(max));
		printf("%-*s %-*s %#6x %5u %7llu %6s %6s %6s %4llu %3llu %3llu %3llu\n",
		       wa, pkt_addr_str(r->key.family, r->key.req, a, sizeof(a)),
		       wb, pkt_addr_str(r->key.family, r->key.resp, b, sizeof(b)),
		       r->key.qpn, r->sport, (unsigned long long)r->st.samples,
		       p50, p99, max,
		       (unsigned long long)r->st.retransmits,
		       (unsigned long long)r->st.naks,
		       (unsigned long long)r->st.rnr_naks,
		       (unsigned long long)r->st.cnps);
	}
}

static void print_flows_text(int n)
{
	char a[ADDR_STRLEN], b[ADDR_STRLEN];
	int wa = 9, wb = 9, nrtt = 0;
	double ratio, med;
	int peers, o;

	for (int i = 0; i < n; i++) {
		int la = strlen(pkt_addr_str(rows[i].key.family, rows[i].key.req, a, sizeof(a)));
		int lb = strlen(pkt_addr_str(rows[i].key.family, rows[i].key.resp, b, sizeof(b)));

		wa = la > wa ? la : wa;
		wb = lb > wb ? lb : wb;
		nrtt += !row_turn(&rows[i]);
	}
	/* rows are sorted round trips first */
	if (nrtt)
		print_flow_table(0, nrtt, wa, wb);
	if (nrtt < n) {
		printf("%sLocal turnaround (requests this host answered, request in -> answer out):\n",
		       nrtt ? "\n" : "");
		print_flow_table(nrtt, n, wa, wb);
	}
	o = find_outlier(n, &ratio, &med, &peers);
	if (o >= 0)
		print_outlier_text(o, ratio, med, peers);
}

static void json_unit_f(struct json_w *w, const char *key, double ns)
{
	json_f64(w, key, ns / env.unit_ns);
}

static const char *tun_kind_name(__u8 kind)
{
	static const char *const names[PKT_TUN_KINDS] = {
		[PKT_TUN_NONE] = "none", [PKT_TUN_GRE] = "gre",
		[PKT_TUN_ERSPAN1] = "erspan1", [PKT_TUN_ERSPAN2] = "erspan2",
		[PKT_TUN_ERSPAN3] = "erspan3", [PKT_TUN_VXLAN] = "vxlan",
		[PKT_TUN_GENEVE] = "geneve",
	};

	return kind < PKT_TUN_KINDS && names[kind] ? names[kind] : "unknown";
}

static void json_flow_key(struct json_w *w, const struct flow_row *r)
{
	struct pkt_info pi;
	char ifn[IF_NAMESIZE];
	const char *via = ifname_of(r->st.ifindex, ifn);

	flow_pkt_info(r, &pi);
	pkt_json_fields(w, &pi, false);
	json_u64(w, "dqpn", r->key.qpn);
	if (r->paired)
		json_u64(w, "req_qpn", r->req_qpn);
	json_u64(w, "psn", r->st.last_psn);
	json_str(w, "kind", row_turn(r) ? "turnaround" : "rtt");
	json_str(w, "clock", r->switch_clock ? "switch" : "arrival");
	if (via)
		json_str(w, "ifname", via);
	if (r->tun_kind) {
		char a[ADDR_STRLEN];

		json_obj_open(w, "session");
		json_str(w, "kind", tun_kind_name(r->tun_kind));
		json_str(w, "src", pkt_addr_str(r->tun_family, r->tun_saddr, a, sizeof(a)));
		json_u64(w, "id", r->tun_id);
		json_obj_close(w);
	}
}

static void print_flows_json(int n, double now)
{
	struct json_w w;
	double ratio, med;
	int peers, o;

	for (int i = 0; i < n; i++) {
		const struct flow_row *r = &rows[i];

		json_begin(&w, stdout);
		json_str(&w, "type", "flow");
		json_f64(&w, "time", now);
		json_flow_key(&w, r);
		json_str(&w, "unit", short_unit());
		json_u64(&w, "samples", r->st.samples);
		json_unit_f(&w, "mean", r->mean_ns);
		json_unit_f(&w, "median", r->p50);
		json_unit_f(&w, "p50", r->p50);
		json_unit_f(&w, "p90", r->p90);
		json_unit_f(&w, "p99", r->p99);
		json_unit_f(&w, "min", (double)r->st.min);
		json_unit_f(&w, "max", (double)r->st.max);
		json_u64(&w, "retransmits", r->st.retransmits);
		json_u64(&w, "naks", r->st.naks);
		for (int c = 0; c < ROCE_NAK_CODES; c++)
			json_u64(&w, counter_names[RL_NAK_SEQ + c], r->st.nak[c]);
		json_u64(&w, "rnr_naks", r->st.rnr_naks);
		json_u64(&w, "rnr_timer", r->st.rnr_timer);
		json_u64(&w, "cnps", r->st.cnps);
		json_u64(&w, "ecn_ce", r->st.ecn_ce);
		json_u64(&w, "timeouts", r->st.timeouts);
		json_u64(&w, "responses_missing", r->st.resp_missing);
		json_key(&w, "buckets");
		hist_json_buckets(w.f, r->st.hist.slots, HIST_SLOTS);
		json_end(&w);
	}
	o = find_outlier(n, &ratio, &med, &peers);
	if (o < 0)
		return;
	json_begin(&w, stdout);
	json_str(&w, "type", "outlier");
	json_f64(&w, "time", now);
	json_flow_key(&w, &rows[o]);
	json_str(&w, "unit", short_unit());
	json_unit_f(&w, "median", rows[o].p50);
	json_unit_f(&w, "mean", rows[o].mean_ns);
	json_unit_f(&w, "peer_median", med);
	json_u64(&w, "peers", peers);
	json_f64(&w, "ratio", ratio);
	json_end(&w);
}

/* ---- Prometheus text file (--prom), through lib/prom ----------------- */

/* counters and the log2 histogram are cumulative (never reset); the
 * quantiles are those of the latest report's round trips */
static void write_prom(struct rocelat_bpf *obj, const struct overall *rtt)
{
	static const double qs[] = { 0.5, 0.9, 0.99 };
	struct rocelat_counters tot;
	struct prom_file pf;
	char name[96], qv[16];
	int err;

	if (!cli.prom_path)
		return;
	read_counters(obj, &tot);
	if (prom_open(&pf, cli.prom_path)) {
		err = -errno;
		goto fail;
	}
	for (int i = 0; i < RL_NR; i++) {
		snprintf(name, sizeof(name), "agentxdp_rocelat_%s_total", counter_names[i]);
		prom_family(&pf, name, PROM_COUNTER, counter_help[i]);
		prom_counter(&pf, name, NULL, 0, tot.c[i]);
	}
	prom_family(&pf, "agentxdp_rocelat_pending_requests", PROM_GAUGE,
		    "Requests waiting for an answer now");
	prom_gauge(&pf, "agentxdp_rocelat_pending_requests", NULL, 0, live_pending);
	prom_family(&pf, "agentxdp_rocelat_flows", PROM_GAUGE,
		    "Flows (responder QPs) tracked now");
	prom_gauge(&pf, "agentxdp_rocelat_flows", NULL, 0, live_flows);
	prom_family(&pf, "agentxdp_rocelat_latency_seconds", PROM_HISTOGRAM,
		    "Request to ACK / READ RESPONSE round-trip latency");
	prom_hist_log2(&pf, "agentxdp_rocelat_latency_seconds", NULL, 0,
		       tot.hist.slots, HIST_SLOTS, env.unit_ns * 1e-9, -1);
	prom_family(&pf, "agentxdp_rocelat_latency_quantile_seconds", PROM_GAUGE,
		    "Round-trip latency quantiles of the latest interval (within 3%; 1 is the maximum)");
	for (int i = 0; i <= 3 && rtt && rtt->samples; i++) {
		struct prom_label l = { "quantile", qv };

		snprintf(qv, sizeof(qv), "%g", i < 3 ? qs[i] : 1.0);
		prom_gauge(&pf, "agentxdp_rocelat_latency_quantile_seconds", &l, 1,
			   (i == 0 ? rtt->p50 : i == 1 ? rtt->p90 : i == 2 ? rtt->p99 :
			    (double)rtt->max) * 1e-9);
	}
	err = prom_commit(&pf);
	if (!err)
		return;
fail:
	cli_prom_err(err);
}

/* ---- one report ------------------------------------------------------ */

/* --prom without an interval: the file is rewritten, nothing printed */
static void prom_tick(struct rocelat_bpf *obj)
{
	struct overall rtt;

	sweep_timeouts(obj);
	overall_of(collect_flows(obj, false), false, &rtt);
	write_prom(obj, &rtt);
}

static struct rocelat_counters prev_total;

static void print_overall_text(const char *what, const struct overall *o)
{
	char p50[32], p90[32], p99[32], max[32];

	if (!o->samples)
		return;
	fmt_lat(o->p50, p50, sizeof(p50));
	fmt_lat(o->p90, p90, sizeof(p90));
	fmt_lat(o->p99, p99, sizeof(p99));
	fmt_lat((double)o->max, max, sizeof(max));
	printf("%s: %llu samples, p50 %s, p90 %s, p99 %s, max %s\n", what,
	       (unsigned long long)o->samples, p50, p90, p99, max);
}

static void json_overall(const char *type, double now, const struct rocelat_counters *d,
			 const __u64 *slots, const struct overall *o)
{
	struct json_w w;

	json_begin(&w, stdout);
	json_str(&w, "type", type);
	json_f64(&w, "time", now);
	json_str(&w, "unit", short_unit());
	json_u64(&w, "samples", hist_total(slots, HIST_SLOTS));
	json_unit_f(&w, "p50", o->p50);
	json_unit_f(&w, "p90", o->p90);
	json_unit_f(&w, "p99", o->p99);
	json_unit_f(&w, "max", (double)o->max);
	json_key(&w, "buckets");
	hist_json_buckets(w.f, slots, HIST_SLOTS);
	json_end(&w);
}

static void print_counters_text(const struct rocelat_counters *d, __u64 evicted)
{
	int col = 0;
	char item[64];

	for (int i = 0; i <= RL_NR + 2; i++) {
		int len;

		if (i < RL_NR)
			len = snprintf(item, sizeof(item), "%s=%llu", counter_names[i],
				       (unsigned long long)d->c[i]);
		else if (i == RL_NR)
			len = snprintf(item, sizeof(item), "pending=%llu",
				       (unsigned long long)live_pending);
		else if (i == RL_NR + 1)
			len = snprintf(item, sizeof(item), "flows=%llu",
				       (unsigned long long)live_flows);
		else
			len = snprintf(item, sizeof(item), "flows_evicted=%llu",
				       (unsigned long long)evicted);
		if (col && col + 1 + len > 79) {
			printf("\n");
			col = 0;
		}
		col += printf("%s%s", col ? " " : "", item);
	}
	printf("\n\n");
}

/* wall time live; the latest packet's time for a capture */
static double report_time(struct rocelat_bpf *obj)
{
	return env.pcap ? (double)obj->bss->clock_ns / 1e9 : (double)time(NULL);
}

static void report(struct rocelat_bpf *obj, bool interval)
{
	struct rocelat_counters tot, d;
	struct overall rtt, turn;
	double now = report_time(obj);
	__u64 evicted;
	int nflows;
	struct json_w w;

	sweep_timeouts(obj);
	read_counters(obj, &tot);
	for (int i = 0; i < RL_NR; i++)
		d.c[i] = tot.c[i] - prev_total.c[i];
	for (int i = 0; i < HIST_SLOTS; i++) {
		d.hist.slots[i] = tot.hist.slots[i] - prev_total.hist.slots[i];
		d.turn_hist.slots[i] = tot.turn_hist.slots[i] - prev_total.turn_hist.slots[i];
	}
	prev_total = tot;
	nflows = collect_flows(obj, interval);
	evicted = tot.c[RL_FLOWS] > live_flows ? tot.c[RL_FLOWS] - live_flows : 0;
	overall_of(nflows, false, &rtt);
	overall_of(nflows, true, &turn);
	write_prom(obj, &rtt);

	if (cli.json) {
		json_overall("hist", now, &d, d.hist.slots, &rtt);
		if (turn.samples)
			json_overall("turnaround_hist", now, &d, d.turn_hist.slots, &turn);
		if (env.flows)
			print_flows_json(nflows, now);
		json_begin(&w, stdout);
		json_str(&w, "type", "counters");
		json_f64(&w, "time", now);
		for (int i = 0; i < RL_NR; i++)
			json_u64(&w, counter_names[i], d.c[i]);
		json_u64(&w, "pending", live_pending);
		json_u64(&w, "flows", live_flows);
		json_u64(&w, "flows_evicted", evicted);
		json_end(&w);
		return;
	}
	cli_print_timestamp(stdout);
	if (cli.timestamp)
		printf("\n");
	if (hist_total(d.hist.slots, HIST_SLOTS)) {
		hist_print_log2(stdout, d.hist.slots, HIST_SLOTS, env.unit);
		print_overall_text("round trip", &rtt);
	} else {
		printf("no latency samples\n");
	}
	if (hist_total(d.turn_hist.slots, HIST_SLOTS)) {
		printf("\nlocal turnaround (this host answered):\n");
		hist_print_log2(stdout, d.turn_hist.slots, HIST_SLOTS, env.unit);
		print_overall_text("turnaround", &turn);
	}
	printf("\n");
	if (env.flows) {
		if (nflows)
			print_flows_text(nflows);
		else
			printf("no flows\n");
		printf("\n");
	}
	print_counters_text(&d, evicted);
	fflush(stdout);
}

/* ---- live: attach and detach ---------------------------------------- */

static const char *xdp_mode_str(__u8 mode)
{
	switch (mode) {
	case XDP_ATTACHED_DRV: return "native";
	case XDP_ATTACHED_SKB: return "generic";
	case XDP_ATTACHED_HW: return "offload";
	case XDP_ATTACHED_MULTI: return "multiple modes";
	default: return "unknown";
	}
}

/* true (and a one-line error) when some XDP program is already there */
static bool xdp_occupied(struct iface *f)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(f->ifindex, 0, &q) || q.attach_mode == XDP_ATTACHED_NONE)
		return false;
	cli_err("%s already has an XDP program (id %u, %s mode): not replacing it; "
		"detach it first or use another interface", f->name,
		q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id,
		xdp_mode_str(q.attach_mode));
	return true;
}

static int attach_xdp(struct rocelat_bpf *obj, struct iface *f)
{
	int fd = bpf_program__fd(obj->progs.rocelat_xdp), err;
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char what[64];

	if (xdp_occupied(f))
		return -EBUSY;
	if (env.mode == MODE_AUTO) {
		f->xdp_link = bpf_program__attach_xdp(obj->progs.rocelat_xdp, f->ifindex);
		err = f->xdp_link ? 0 : -errno;
	} else {
		LIBBPF_OPTS(bpf_link_create_opts, lo,
			    .flags = env.mode == MODE_SKB ? XDP_FLAGS_SKB_MODE
							  : XDP_FLAGS_DRV_MODE);

		f->xdp_link_fd = bpf_link_create(fd, f->ifindex, BPF_XDP, &lo);
		err = f->xdp_link_fd < 0 ? f->xdp_link_fd : 0;
	}
	if (err) {
		if ((err == -EBUSY || err == -EEXIST) && xdp_occupied(f))
			return err;
		if (env.mode == MODE_NATIVE && (err == -EOPNOTSUPP || err == -EINVAL)) {
			cli_err("native XDP is not supported on %s: try --skb-mode", f->name);
			return err;
		}
		if (err == -EOPNOTSUPP || err == -EINVAL) {
			cli_err("cannot attach XDP to %s: %s; try --skb-mode%s", f->name,
				strerror(-err), env.mode == MODE_SKB ? " without a bond/team port" : "");
			return err;
		}
		snprintf(what, sizeof(what), "attach XDP to %s", f->name);
		cli_bpf_err(what, err);
		return err;
	}
	if (!bpf_xdp_query(f->ifindex, 0, &q))
		f->xdp_mode_name = xdp_mode_str(q.attach_mode);
	else
		f->xdp_mode_name = "unknown";
	return 0;
}

/* ids of BPF programs some process holds open (from /proc fdinfo) */
static bool prog_held_by_process(__u32 prog_id)
{
	DIR *proc = opendir("/proc"), *fds;
	struct dirent *p, *d;
	char path[1100], line[128], link[64];
	bool held = false;

	if (!proc)
		return true;	/* cannot tell: assume held, touch nothing */
	while (!held && (p = readdir(proc))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while (!held && (d = readdir(fds))) {
			ssize_t n;
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%s/fd/%s", p->d_name, d->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = 0;
			if (strcmp(link, "anon_inode:bpf-prog"))
				continue;
			snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", p->d_name, d->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			while (fgets(line, sizeof(line), f)) {
				unsigned int id;

				if (sscanf(line, "prog_id: %u", &id) == 1 && id == prog_id)
					held = true;
			}
			fclose(f);
		}
		closedir(fds);
	}
	closedir(proc);
	return held;
}

/*
 * A clsact filter of ours whose program no process holds any more is the
 * leftover of a run killed by SIGKILL (kernels before 6.6, no tcx): our
 * handle and priority, our program name, and no owner. Remove it.
 */
static void remove_leftover_tc(struct iface *f, struct bpf_tc_hook *hook)
{
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = TC_HANDLE, .priority = TC_PRIO);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int pfd;

	if (bpf_tc_query(hook, &q) || !q.prog_id)
		return;
	pfd = bpf_prog_get_fd_by_id(q.prog_id);
	if (pfd < 0)
		return;
	if (bpf_obj_get_info_by_fd(pfd, &info, &len) ||
	    strcmp(info.name, TC_PROG_NAME)) {
		close(pfd);
		return;
	}
	close(pfd);
	if (prog_held_by_process(q.prog_id))
		return;
	{
		LIBBPF_OPTS(bpf_tc_opts, d, .handle = TC_HANDLE, .priority = TC_PRIO);

		if (!bpf_tc_detach(hook, &d))
			cli_err("removed a leftover tc egress filter of a killed rocelat "
				"run on %s (prog id %u)", f->name, q.prog_id);
	}
}

static int attach_tc(struct rocelat_bpf *obj, struct iface *f)
{
	int fd = bpf_program__fd(obj->progs.rocelat_tc), err;
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex,
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, to, .prog_fd = fd, .handle = TC_HANDLE,
		    .priority = TC_PRIO);
	char what[64];

	/* tcx (6.6+): a link, gone with the process even after SIGKILL.
	 * libbpf 1.1 has no wrapper, but bpf_link_create passes an attach
	 * type it does not know straight to the kernel. */
	if (!getenv("ROCELAT_FORCE_CLSACT")) {
		f->tcx_fd = bpf_link_create(fd, f->ifindex, AX_BPF_TCX_EGRESS, NULL);
		if (f->tcx_fd >= 0)
			return 0;
		if (f->tcx_fd != -EINVAL && f->tcx_fd != -EOPNOTSUPP) {
			snprintf(what, sizeof(what), "attach tc egress (tcx) to %s", f->name);
			cli_bpf_err(what, f->tcx_fd);
			return f->tcx_fd;
		}
	}
	f->tcx_fd = -1;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		snprintf(what, sizeof(what), "create clsact qdisc on %s", f->name);
		cli_bpf_err(what, err);
		return err;
	}
	f->tc_hook_created = !err;
	remove_leftover_tc(f, &hook);
	err = bpf_tc_attach(&hook, &to);
	if (err) {
		if (err == -EEXIST)
			cli_err("%s: tc egress filter handle 0x%x prio 0x%x is in use "
				"(another rocelat running?); or use --no-egress",
				f->name, TC_HANDLE, TC_PRIO);
		else {
			snprintf(what, sizeof(what), "attach tc egress to %s", f->name);
			cli_bpf_err(what, err);
		}
		return err;
	}
	f->tc_attached = true;
	return 0;
}

static void detach_all(void)
{
	for (int i = 0; i < env.nifs; i++) {
		struct iface *f = &ifaces[i];
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex,
			    .attach_point = BPF_TC_EGRESS);

		if (f->tc_attached) {
			LIBBPF_OPTS(bpf_tc_opts, d, .handle = TC_HANDLE, .priority = TC_PRIO);

			bpf_tc_detach(&hook, &d);
			if (f->tc_hook_created) {
				hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
				bpf_tc_hook_destroy(&hook);
			}
			f->tc_attached = false;
		}
		if (f->tcx_fd >= 0)
			close(f->tcx_fd);
		f->tcx_fd = -1;
		if (f->xdp_link_fd >= 0)
			close(f->xdp_link_fd);
		f->xdp_link_fd = -1;
		bpf_link__destroy(f->xdp_link);
		f->xdp_link = NULL;
	}
}

static void warn_mirror(struct iface *f)
{
	struct ifreq ifr = {};
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", f->name);
	if (!ioctl(s, SIOCGIFFLAGS, &ifr) && !(ifr.ifr_flags & IFF_PROMISC))
		cli_err("note: %s is not promiscuous; a SPAN port usually needs "
			"'ip link set %s promisc on'", f->name, f->name);
	close(s);
}

/* the main loop's callbacks (ctx: the skeleton): a table per interval,
 * or one of the whole run at exit */
static void live_report(void *ctx)
{
	report(ctx, cli.interval);
}

/* --prom at start (nothing read yet) and without an interval */
static void live_prom(void *ctx, enum loop_when when)
{
	if (when == LOOP_START)
		write_prom(ctx, NULL);
	else
		prom_tick(ctx);
}

static int run_live(struct rocelat_bpf *obj)
{
	struct loop lp = { .ctx = obj, .report = live_report, .prom = live_prom };
	bool egress = !env.mirror && !env.no_egress;

	for (int i = 0; i < env.nifs; i++) {
		struct iface *f = &ifaces[i];

		if (attach_xdp(obj, f))
			return 1;
		if (egress && attach_tc(obj, f))
			return 1;
		if (env.mirror)
			warn_mirror(f);
	}
	{
		/* with -j stdout stays pure JSON lines: the banner goes to stderr */
		FILE *out = cli.json ? stderr : stdout;

		fprintf(out, "Tracing RoCE v2 latency on");
		for (int i = 0; i < env.nifs; i++)
			fprintf(out, "%s %s (XDP %s%s)", i ? "," : "", ifaces[i].name,
				ifaces[i].xdp_mode_name,
				!egress ? "" : ifaces[i].tcx_fd >= 0 ? ", tcx egress" :
				", tc egress");
		fprintf(out, "... Hit Ctrl-C to end.\n");
		fflush(out);
	}
	return loop_run(&lp) ? 1 : 0;
}

/* ---- offline: a capture through BPF_PROG_TEST_RUN ------------------- */

/*
 * Reading a long capture to a terminal: packets, bytes and how far into
 * the file, on stderr, about once a second. The byte count is the frames'
 * plus 16 bytes of pcap record header each, so the percentage is an
 * estimate (pcapng records are larger).
 */
struct progress {
	bool on, shown;
	double file_bytes, bytes;
	time_t last;
};

static void progress_start(struct progress *p, const char *path)
{
	struct stat st;

	memset(p, 0, sizeof(*p));
	p->on = isatty(STDERR_FILENO) && !stat(path, &st);
	p->file_bytes = p->on ? (double)st.st_size : 0;
	p->last = time(NULL);
}

static void progress_step(struct progress *p, unsigned long long packets,
			  unsigned int len)
{
	time_t now;
	double pct;

	p->bytes += len + 16;
	if (!p->on || packets % 4096)
		return;
	now = time(NULL);
	if (now == p->last)
		return;
	p->last = now;
	pct = p->file_bytes > 0 ? 100 * p->bytes / p->file_bytes : 0;
	fprintf(stderr, "\rrocelat: %llu packets, %.1f MB read (%.0f%%)",
		packets, p->bytes / 1e6, pct > 99 ? 99 : pct);
	p->shown = true;
}

static void progress_end(struct progress *p, unsigned long long packets)
{
	if (p->shown)
		fprintf(stderr, "\rrocelat: %llu packets, %.1f MB read (100%%)\n",
			packets, p->bytes / 1e6);
}

static int run_offline(struct rocelat_bpf *obj)
{
	/* the tc entry point: an XDP test run swaps the XDP dispatcher and
	 * waits for an RCU grace period per packet (~0.4 ms here), a tc one
	 * does not; the handler is the same */
	int prog_fd = bpf_program__fd(obj->progs.rocelat_tc), rc;
	unsigned long long packets = 0, short_frames = 0, failed_runs = 0, ts;
	const unsigned char *frame;
	char err[256];
	struct progress prog;
	struct capture *c;
	unsigned int len;

	c = capture_open(env.pcap, err, sizeof(err));
	if (!c) {
		cli_err("%s: %s", env.pcap, err);
		return 1;
	}
	err[0] = 0;
	progress_start(&prog, env.pcap);
	while ((rc = capture_next(c, &frame, &len, &ts)) == 1) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
			    .data_size_in = len, .repeat = 1);

		packets++;
		progress_step(&prog, packets, len);
		if (len < 14) {		/* BPF_PROG_TEST_RUN needs an Ethernet header */
			short_frames++;
			continue;
		}
		obj->bss->clock_ns = ts;
		if (bpf_prog_test_run_opts(prog_fd, &o) && !failed_runs++)
			cli_err("%s: packet %llu: test run failed: %s", env.pcap,
				packets, strerror(errno));
	}
	if (rc < 0)
		snprintf(err, sizeof(err), "%s", capture_error(c));
	capture_close(c);
	progress_end(&prog, packets);

	report(obj, false);
	if (cli.json) {
		struct json_w w;

		json_begin(&w, stdout);
		json_str(&w, "type", "capture");
		json_str(&w, "file", env.pcap);
		json_u64(&w, "packets", packets);
		json_u64(&w, "short_frames", short_frames);
		json_u64(&w, "failed_runs", failed_runs);
		json_bool(&w, "complete", !err[0]);
		if (err[0])
			json_str(&w, "error", err);
		json_end(&w);
	} else {
		printf("read %llu packets from %s%s\n", packets, env.pcap,
		       err[0] ? " (incomplete)" : "");
		if (short_frames)
			printf("%llu frames shorter than an Ethernet header skipped\n",
			       short_frames);
	}
	fflush(stdout);
	if (err[0]) {
		cli_err("%s: %s (after %llu packets; the report covers those)",
			env.pcap, err, packets);
		return 1;
	}
	return failed_runs ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct rocelat_bpf *obj = NULL;
	int err, ret = 1;

	cli_parse(&argp, argc, argv, NULL);
	if (env.pcap && access(env.pcap, R_OK))
		cli_die("%s: %s", env.pcap, strerror(errno));
	cli_setup();
	for (int i = 0; i < env.nifs; i++) {
		ifaces[i].name = env.ifnames[i];
		ifaces[i].ifindex = cli_ifindex(env.ifnames[i]);
		ifaces[i].xdp_link_fd = -1;
		ifaces[i].tcx_fd = -1;
	}
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		cli_die("cannot count CPUs");

	obj = rocelat_bpf__open();
	if (!obj) {
		cli_bpf_err("open BPF object", -errno);
		return 1;
	}
	obj->rodata->targ_roce_port = cli.roce_port;
	obj->rodata->targ_unit_ns = env.unit_ns;
	obj->rodata->targ_timeout_ns = (__u64)env.timeout_ms * 1000000ULL;
	obj->rodata->targ_offline = env.pcap != NULL;
	obj->rodata->targ_decap = env.decap;
	obj->rodata->targ_mirror_time = env.mirror_time;
	if (env.pcap)
		bpf_program__set_autoload(obj->progs.rocelat_xdp, false);
	else if (env.mirror || env.no_egress)
		bpf_program__set_autoload(obj->progs.rocelat_tc, false);
	bpf_map__set_max_entries(obj->maps.pending, env.max_flows);
	bpf_map__set_max_entries(obj->maps.cands, env.max_flows);
	bpf_map__set_max_entries(obj->maps.pairs, 2 * env.max_flows);
	max_rows = env.max_flows;
	rows = calloc(max_rows, sizeof(*rows));
	if (!rows) {
		cli_err("out of memory for %d flow rows", max_rows);
		goto cleanup;
	}

	err = rocelat_bpf__load(obj);
	if (err) {
		cli_bpf_err("load BPF programs", err);
		goto cleanup;
	}
	ret = env.pcap ? run_offline(obj) : run_live(obj);

cleanup:
	detach_all();
	rocelat_bpf__destroy(obj);
	free(rows);
	return ret;
}
