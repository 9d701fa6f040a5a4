// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocegen: the command line. The roles are rocegen_requester.c and
 * rocegen_responder.c; the wire conventions both keep are in rocegen.h.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rocegen.h"

static const char rg_help[] =
"Usage: rocegen responder [OPTIONS]\n"
"  or:  rocegen requester -d ADDR [OPTIONS]\n"
"\n"
"Synthetic RoCE v2 (RC) traffic over UDP port 4791 with known ground truth,\n"
"for testing RoCE tracers. Run the two roles in two network namespaces (or\n"
"on two distinct local addresses of one namespace).\n"
"\n"
"Requester: sends RC requests and waits for their answers (closed loop).\n"
"  -d, --dst ADDR            responder address (IPv4 or IPv6), required\n"
"      --src ADDR            local address (default: chosen by routing)\n"
"  -n, --count N             messages to send, over all flows (default 100)\n"
"  -o, --op OP               send|write|read|mix (default send; mix cycles)\n"
"  -f, --flows N             flows (QPs), each with its own UDP source port\n"
"                            and destination QPN (default 1)\n"
"      --sport BASE          source port of flow 0; flow i uses BASE+i\n"
"                            (default 49152)\n"
"      --qpn Q               responder QPN of flow 0; flow i uses Q+i\n"
"                            (default 0x11)\n"
"      --psn START|random    first PSN of every flow, modulo 2^24 (default 0);\n"
"                            random: each flow its own, as RNICs pick them\n"
"      --size BYTES          message size; > MTU gives FIRST/MIDDLE/LAST\n"
"                            packets (default 64; read: DMA length)\n"
"      --retransmit-every N  resend the AckReq packet of every Nth message\n"
"                            once more (same PSN) after a pause\n"
"      --retransmit-pause-us N  that pause (default 200)\n"
"      --interval-us N       gap between new messages (default 0)\n"
"      --window N            outstanding messages per flow (default 1,\n"
"                            0 = unlimited)\n"
"      --ack-timeout-us N    retransmit timer, go-back-N (default 50000)\n"
"      --retry N             timeouts/NAKs per message before the flow is\n"
"                            given up (default 7)\n"
"      --rnr-retry N         RNR NAKs per message before giving up (default 7)\n"
"      --no-recovery         never retransmit: unanswered messages fail\n"
"      --linger-ms N         after the last answer, keep counting late\n"
"                            answers until idle this long (default 20)\n"
"      --tos N               IPv4 TOS / IPv6 traffic class (3 = ECN CE)\n"
"      --timeout SEC         overall run time limit (default 5)\n"
"\n"
"Responder: answers like rdma_rxe, with optional injected faults. Runs until\n"
"SIGINT/SIGTERM (or --timeout), then prints its summary.\n"
"  -b, --bind ADDR           listen on ADDR only (default 0.0.0.0 and ::)\n"
"      --delay-us SPEC       delay every answer (ACK, NAK, read response)\n"
"      --jitter-us N         add 0..N us at random (order kept per flow)\n"
"      --coalesce N          ACK only every Nth AckReq request of a flow,\n"
"                            cumulatively with the latest PSN\n"
"      --coalesce-us N       send a held ACK after this long (default 1000)\n"
"      --nak-every SPEC      answer every Nth AckReq request with a PSN\n"
"                            sequence error NAK carrying its PSN\n"
"      --rnr-every SPEC      answer every Nth AckReq request with an RNR NAK\n"
"      --rnr-timer CODE      RNR NAK timer field, 0-31 (default 4 = 40 us)\n"
"      --drop-every SPEC     silently ignore every Nth AckReq request\n"
"      --cnp                 answer ECN CE-marked requests with a CNP (0x81)\n"
"      --reply-sport BASE    answer the k-th flow from UDP port BASE+k, not\n"
"                            from the request's port (hardware RNICs: each\n"
"                            side of a QP pair picks its own port)\n"
"      --count-only          count requests, never answer\n"
"      --seed N              seed for --jitter-us\n"
"      --timeout SEC         exit after SEC seconds (default 0 = never)\n"
"  SPEC is N (all flows), PORT=N (flows from UDP source port PORT) or\n"
"  qpn:Q=N (requests to QPN Q); repeatable, the last match wins. An every-N\n"
"  SPEC for one flow counts that flow's requests, otherwise all flows'.\n"
"  A PSN is counted once, so a NAKed request's retransmission is accepted.\n"
"  Faults apply in the order drop, RNR, NAK.\n"
"\n"
"Both roles:\n"
"      --port N              UDP port (default 4791)\n"
"      --mtu N               256|512|1024|2048|4096 (default 1024)\n"
"      --qpn-offset N        requester QPN = responder QPN + N (default 0x100)\n"
"      --ctl-port N          control port for the start-of-run handshake\n"
"                            (default 4792, 0 = none; see below)\n"
"      --flow-stats          one summary line per flow before the total\n"
"  -j, --json                summary as JSON objects instead of key=value\n"
"  -v, --verbose             log every packet to stderr\n"
"  -q, --quiet               no informational messages on stderr\n"
"  -h, --help                this help\n"
"      --usage               the two usage lines only\n"
"  -V, --version             print the version (also: rocegen --version)\n"
"\n"
"Wire conventions: answers go to the requester's port 4791 from the UDP\n"
"source port of the request (as rxe does for one QP pair), with destination\n"
"QP = request QPN + qpn-offset. P_Key 0xFFFF, ICRC 4 zero bytes, IPv4 UDP\n"
"checksum 0. AckReq is set on the last packet of each message.\n"
"Before sending, the requester tells the responder on UDP --ctl-port that a\n"
"new run starts on its flows (out of band, like RDMA connection setup), so\n"
"the responder forgets their PSNs and runs can reuse ports, QPNs and PSNs.\n"
"Without an answer it warns and goes on (e.g. when a firewall drops UDP).\n"
"\n"
"Summary (stdout, one line each):\n"
"  rocegen: role=requester op=OP requests= sent= retransmits= retx_injected=\n"
"    retx_timeout= retx_nak= retx_rnr= acks= dup_acks= naks= rnr= read_resp=\n"
"    cnp= completed= failed= timeouts= stray= bad_qpn= send_errors=\n"
"    rtt_min_us= rtt_avg_us= rtt_max_us= elapsed_us= status=ok|incomplete|...\n"
"  rocegen: role=responder requests= msgs= dups= ooo= acks= naks= rnr=\n"
"    read_resp= dropped= cnp= cnp_rx= ignored= flows= send_errors=\n"
"    sport_fallback=\n"
"  (requests = messages, sent/retransmits = request packets; the responder\n"
"  counts packets, acks/naks/rnr/read_resp = packets sent or received)\n"
"\n"
"Exit status: 0 success; 1 usage error; 2 requester run incomplete (some\n"
"message unanswered, failed, or the timeout hit).\n";


enum {
	O_SPORT = 256, O_QPN, O_PSN, O_SIZE, O_RETX_EVERY, O_RETX_PAUSE,
	O_INTERVAL, O_WINDOW, O_ACK_TIMEOUT, O_RETRY, O_RNR_RETRY,
	O_NO_RECOVERY, O_LINGER, O_TOS, O_TIMEOUT, O_DELAY, O_JITTER,
	O_COALESCE, O_COALESCE_US, O_NAK_EVERY, O_RNR_EVERY, O_RNR_TIMER,
	O_DROP_EVERY, O_CNP, O_COUNT_ONLY, O_SEED, O_PORT, O_MTU,
	O_QPN_OFFSET, O_FLOW_STATS, O_CTL_PORT, O_REPLY_SPORT, O_SRC, O_USAGE,
};

/* options: which role may use each (r = requester, s = responder) */
static const struct {
	struct option lo;
	char roles[3];
} opts[] = {
	{ { "dst", required_argument, NULL, 'd' }, "r" },
	/* no -s: the suite keeps it for kernel stacks (tools/lib/cli.h) */
	{ { "src", required_argument, NULL, O_SRC }, "r" },
	{ { "count", required_argument, NULL, 'n' }, "r" },
	{ { "op", required_argument, NULL, 'o' }, "r" },
	{ { "flows", required_argument, NULL, 'f' }, "r" },
	{ { "sport", required_argument, NULL, O_SPORT }, "r" },
	{ { "qpn", required_argument, NULL, O_QPN }, "r" },
	{ { "psn", required_argument, NULL, O_PSN }, "r" },
	{ { "size", required_argument, NULL, O_SIZE }, "r" },
	{ { "retransmit-every", required_argument, NULL, O_RETX_EVERY }, "r" },
	{ { "retransmit-pause-us", required_argument, NULL, O_RETX_PAUSE }, "r" },
	{ { "interval-us", required_argument, NULL, O_INTERVAL }, "r" },
	{ { "window", required_argument, NULL, O_WINDOW }, "r" },
	{ { "ack-timeout-us", required_argument, NULL, O_ACK_TIMEOUT }, "r" },
	{ { "retry", required_argument, NULL, O_RETRY }, "r" },
	{ { "rnr-retry", required_argument, NULL, O_RNR_RETRY }, "r" },
	{ { "no-recovery", no_argument, NULL, O_NO_RECOVERY }, "r" },
	{ { "linger-ms", required_argument, NULL, O_LINGER }, "r" },
	{ { "tos", required_argument, NULL, O_TOS }, "r" },
	{ { "bind", required_argument, NULL, 'b' }, "s" },
	{ { "delay-us", required_argument, NULL, O_DELAY }, "s" },
	{ { "jitter-us", required_argument, NULL, O_JITTER }, "s" },
	{ { "coalesce", required_argument, NULL, O_COALESCE }, "s" },
	{ { "coalesce-us", required_argument, NULL, O_COALESCE_US }, "s" },
	{ { "nak-every", required_argument, NULL, O_NAK_EVERY }, "s" },
	{ { "rnr-every", required_argument, NULL, O_RNR_EVERY }, "s" },
	{ { "rnr-timer", required_argument, NULL, O_RNR_TIMER }, "s" },
	{ { "drop-every", required_argument, NULL, O_DROP_EVERY }, "s" },
	{ { "cnp", no_argument, NULL, O_CNP }, "s" },
	{ { "reply-sport", required_argument, NULL, O_REPLY_SPORT }, "s" },
	{ { "count-only", no_argument, NULL, O_COUNT_ONLY }, "s" },
	{ { "seed", required_argument, NULL, O_SEED }, "s" },
	{ { "timeout", required_argument, NULL, O_TIMEOUT }, "rs" },
	{ { "port", required_argument, NULL, O_PORT }, "rs" },
	{ { "mtu", required_argument, NULL, O_MTU }, "rs" },
	{ { "qpn-offset", required_argument, NULL, O_QPN_OFFSET }, "rs" },
	{ { "ctl-port", required_argument, NULL, O_CTL_PORT }, "rs" },
	{ { "flow-stats", no_argument, NULL, O_FLOW_STATS }, "rs" },
	{ { "json", no_argument, NULL, 'j' }, "rs" },
	{ { "verbose", no_argument, NULL, 'v' }, "rs" },
	{ { "quiet", no_argument, NULL, 'q' }, "rs" },
	{ { "help", no_argument, NULL, 'h' }, "rs" },
	{ { "usage", no_argument, NULL, O_USAGE }, "rs" },
	{ { "version", no_argument, NULL, 'V' }, "rs" },
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static const char *rg_opt_name(int val)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (opts[i].lo.val == val)
			return opts[i].lo.name;
	return "?";
}

struct rg_args {
	bool is_req;
	struct req_opts rq;
	struct rsp_opts rs;
};

static struct common_opts *rg_common(struct rg_args *a)
{
	return a->is_req ? &a->rq.c : &a->rs.c;
}

static void rg_defaults(struct rg_args *a)
{
	struct common_opts *c = rg_common(a);

	a->rq.count = 100;
	a->rq.op = MOP_SEND;
	a->rq.flows = 1;
	a->rq.sport = 49152;
	a->rq.qpn = 0x11;
	a->rq.size = 64;
	a->rq.retransmit_pause_us = 200;
	a->rq.window = 1;
	a->rq.ack_timeout_us = 50000;
	a->rq.retry = 7;
	a->rq.rnr_retry = 7;
	a->rq.linger_ms = 20;
	a->rq.tos = -1;
	a->rs.coalesce = 1;
	a->rs.coalesce_us = 1000;
	a->rs.rnr_timer = 4;
	c->port = ROCE_V2_PORT;
	c->ctl_port = ROCE_V2_PORT + 1;
	c->mtu = 1024;
	c->qpn_offset = 0x100;
}

static int rg_parse_op(const char *arg)
{
	int op = cli_choice(arg, rg_op_names, 3);

	if (op >= 0)
		return op;
	if (!strcmp(arg, "mix"))
		return -1;
	cli_die("unknown op '%s': want send, write, read or mix", arg);
}

/* a requester option; false when ch is none */
static bool rg_requester_opt(struct req_opts *o, int ch, const char *arg)
{
	switch (ch) {
	case 'd': o->dst = arg; break;
	case O_SRC: o->src = arg; break;
	case 'n': o->count = rg_opt_u64("--count", arg, 0, UINT32_MAX); break;
	case 'o': o->op = rg_parse_op(arg); break;
	case 'f': o->flows = (uint32_t)rg_opt_u64("--flows", arg, 1, 16384); break;
	case O_SPORT: o->sport = (uint16_t)rg_opt_u64("--sport", arg, 1, 65535); break;
	case O_QPN: o->qpn = (uint32_t)rg_opt_u64("--qpn", arg, 0, ROCE_QPN_MASK); break;
	case O_PSN:
		if (!strcmp(arg, "random"))
			o->psn_random = true;
		else
			o->psn = (uint32_t)rg_opt_u64("--psn", arg, 0, ROCE_PSN_MASK);
		break;
	case O_SIZE: o->size = (uint32_t)rg_opt_u64("--size", arg, 0, MAX_MSG_SIZE); break;
	case O_RETX_EVERY:
		o->retransmit_every = rg_opt_u64("--retransmit-every", arg, 0, UINT32_MAX);
		break;
	case O_RETX_PAUSE:
		o->retransmit_pause_us = rg_opt_u64("--retransmit-pause-us", arg, 0, 60000000);
		break;
	case O_INTERVAL: o->interval_us = rg_opt_u64("--interval-us", arg, 0, 60000000); break;
	case O_WINDOW: o->window = (uint32_t)rg_opt_u64("--window", arg, 0, 1u << 20); break;
	case O_ACK_TIMEOUT:
		o->ack_timeout_us = rg_opt_u64("--ack-timeout-us", arg, 1, 60000000);
		break;
	case O_RETRY: o->retry = (uint32_t)rg_opt_u64("--retry", arg, 0, 1000000); break;
	case O_RNR_RETRY:
		o->rnr_retry = (uint32_t)rg_opt_u64("--rnr-retry", arg, 0, 1000000);
		break;
	case O_NO_RECOVERY: o->no_recovery = true; break;
	case O_LINGER: o->linger_ms = rg_opt_u64("--linger-ms", arg, 0, 60000); break;
	case O_TOS: o->tos = (int)rg_opt_u64("--tos", arg, 0, 255); break;
	case O_FLOW_STATS: o->flow_stats = true; break;
	default: return false;
	}
	return true;
}

/* a responder option; false when ch is none */
static bool rg_responder_opt(struct rsp_opts *o, int ch, const char *arg)
{
	switch (ch) {
	case 'b': o->bind_addr = arg; break;
	case O_DELAY: rg_knob_parse(&o->delay_us, "--delay-us", arg, 60000000); break;
	case O_JITTER: o->jitter_us = rg_opt_u64("--jitter-us", arg, 0, 60000000); break;
	case O_COALESCE:
		o->coalesce = (uint32_t)rg_opt_u64("--coalesce", arg, 1, 1u << 20);
		break;
	case O_COALESCE_US:
		o->coalesce_us = rg_opt_u64("--coalesce-us", arg, 1, 60000000);
		break;
	case O_NAK_EVERY: rg_knob_parse(&o->nak_every, "--nak-every", arg, UINT32_MAX); break;
	case O_RNR_EVERY: rg_knob_parse(&o->rnr_every, "--rnr-every", arg, UINT32_MAX); break;
	case O_DROP_EVERY:
		rg_knob_parse(&o->drop_every, "--drop-every", arg, UINT32_MAX);
		break;
	case O_RNR_TIMER:
		o->rnr_timer = (unsigned int)rg_opt_u64("--rnr-timer", arg, 0, 31);
		break;
	case O_CNP: o->cnp = true; break;
	case O_REPLY_SPORT:
		o->reply_sport = (uint16_t)rg_opt_u64("--reply-sport", arg, 1, 65535 - 1024);
		break;
	case O_COUNT_ONLY: o->count_only = true; break;
	case O_SEED: o->seed = rg_opt_u64("--seed", arg, 0, UINT64_MAX); break;
	case O_FLOW_STATS: o->flow_stats = true; break;
	default: return false;
	}
	return true;
}

/* an option both roles have; false when ch is none */
static bool rg_common_opt(struct common_opts *c, int ch, const char *arg)
{
	switch (ch) {
	case 'j': c->json = true; break;
	case 'v': c->verbose++; break;
	case 'q': c->quiet = true; break;
	case O_TIMEOUT:
		c->timeout_s = rg_opt_seconds("--timeout", arg);
		c->timeout_set = true;
		break;
	case O_PORT: c->port = (uint16_t)rg_opt_u64("--port", arg, 1, 65535); break;
	case O_MTU:
		c->mtu = (uint32_t)rg_opt_u64("--mtu", arg, 256, 4096);
		if (c->mtu & (c->mtu - 1))
			cli_die("--mtu must be 256, 512, 1024, 2048 or 4096, got '%s'",
				arg);
		break;
	case O_QPN_OFFSET:
		c->qpn_offset = (uint32_t)rg_opt_u64("--qpn-offset", arg, 0, ROCE_QPN_MASK);
		break;
	case O_CTL_PORT:
		c->ctl_port = (uint16_t)rg_opt_u64("--ctl-port", arg, 0, 65535);
		break;
	default: return false;
	}
	return true;
}

/* the options of the other role (or of none) that name starts, as "--a or
 * --b" into buf; how many */
static int rg_prefix_matches(const char *name, size_t len, char role, bool mine,
			     char *buf, size_t size)
{
	int n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NOPTS; i++) {
		if (strncmp(opts[i].lo.name, name, len) ||
		    !!strchr(opts[i].roles, role) != mine)
			continue;
		if (strlen(opts[i].lo.name) == len)
			return snprintf(buf, size, "--%s", opts[i].lo.name), 1;
		snprintf(buf + strlen(buf), size - strlen(buf), "%s--%s",
			 n ? ", " : "", opts[i].lo.name);
		n++;
	}
	return n;
}

/* getopt's complaints (ch ':' or '?') as one line, exit 1: an ambiguous
 * prefix with its candidates, the other role's option named as such */
static void rg_bad_option(int ch, char **argv, char role)
{
	const char *bad = argv[optind - 1];
	char cand[512];
	size_t len;

	if (ch == ':')
		cli_die("option '%s' needs a value (see rocegen --help)", bad);
	if (optopt && bad && bad[0] == '-' && bad[1] != '-')
		cli_die("unknown option '-%c' (see rocegen --help)", optopt);
	if (!bad || strncmp(bad, "--", 2))
		cli_die("unknown option '%s' (see rocegen --help)", bad ? bad : "?");
	len = strcspn(bad + 2, "=");
	if (rg_prefix_matches(bad + 2, len, role, true, cand, sizeof(cand)) > 1)
		cli_die("option '--%.*s' is ambiguous: %s", (int)len, bad + 2, cand);
	if (rg_prefix_matches(bad + 2, len, role, false, cand, sizeof(cand)) == 1)
		cli_die("%s is a %s option", cand, role == 'r' ? "responder" : "requester");
	cli_die("unknown option '%s' (see rocegen --help)", bad);
}

/* one option of the role; refuses the other role's */
static void rg_option(struct rg_args *a, int ch, const char *arg)
{
	char role = a->is_req ? 'r' : 's';
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (opts[i].lo.val == ch && !strchr(opts[i].roles, role))
			cli_die("--%s is a %s option", rg_opt_name(ch),
				a->is_req ? "responder" : "requester");
	if (rg_common_opt(rg_common(a), ch, arg))
		return;
	if (a->is_req ? rg_requester_opt(&a->rq, ch, arg) :
			rg_responder_opt(&a->rs, ch, arg))
		return;
	cli_die("unhandled option --%s", rg_opt_name(ch));
}

/* -h/--help, --usage and -V/--version, before or after the role: print
 * and exit 0 */
static void rg_help_or_version(int ch)
{
	/* named as the program runs (make install APP_PREFIX=) */
	char *named = cli_as_named(rg_help, "rocegen");
	const char *help = named ? named : rg_help;

	if (ch == 'V')
		printf("%s (AgentXDP) %s\n", program_invocation_short_name, AX_VERSION);
	else if (ch == O_USAGE)
		printf("%.*s", (int)(strstr(help, "\n\n") + 1 - help), help);
	else
		fputs(help, stdout);
	free(named);
	exit(0);
}

static void rg_parse(struct rg_args *a, int argc, char **argv)
{
	struct option lo[NOPTS + 1];
	size_t i;
	int ch;

	char role = a->is_req ? 'r' : 's';
	size_t n = 0;

	/* the role's own options only: getopt takes any prefix unique among
	 * them (--coun is --count for the requester, --count-only for the
	 * responder) */
	memset(lo, 0, sizeof(lo));
	for (i = 0; i < NOPTS; i++)
		if (strchr(opts[i].roles, role))
			lo[n++] = opts[i].lo;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:d:n:o:f:b:jvqhV", lo, NULL)) != -1) {
		if (ch == ':' || ch == '?')
			rg_bad_option(ch, argv, role);
		if (ch == 'h' || ch == 'V' || ch == O_USAGE)
			rg_help_or_version(ch);
		rg_option(a, ch, optarg);
	}
	if (optind < argc)
		cli_die("unexpected argument '%s' (see rocegen --help)", argv[optind]);
}

/* the requester's checks of its options as a whole */
static void rg_check_requester(struct req_opts *o)
{
	if (!o->dst)
		cli_die("requester needs -d/--dst ADDR (see rocegen --help)");
	if (!o->c.timeout_set)
		o->c.timeout_s = 5;
	if (o->c.timeout_s <= 0)
		cli_die("--timeout must be > 0 for the requester");
	if ((uint32_t)o->sport + o->flows - 1 > 65535)
		cli_die("--sport %u with --flows %u runs past port 65535",
			o->sport, o->flows);
}

int main(int argc, char **argv)
{
	static struct rg_args a;
	struct common_opts *c;

	if (argc < 2)
		cli_die("missing role: requester or responder (see rocegen --help)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		rg_help_or_version('h');
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version"))
		rg_help_or_version('V');
	if (!strcmp(argv[1], "--usage"))
		rg_help_or_version(O_USAGE);
	if (!strcmp(argv[1], "requester"))
		a.is_req = true;
	else if (strcmp(argv[1], "responder"))
		cli_die("unknown role '%s': want requester or responder (see rocegen --help)",
			argv[1]);
	rg_defaults(&a);
	rg_parse(&a, argc - 1, argv + 1);
	c = rg_common(&a);
	if (c->ctl_port && c->ctl_port == c->port)
		cli_die("--ctl-port must differ from --port");
	if (!a.is_req)
		return rg_run_responder(&a.rs);
	rg_check_requester(&a.rq);
	return rg_run_requester(&a.rq);
}
