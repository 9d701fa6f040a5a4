// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocediag: why is this RoCE traffic slow or stuck? rocelat's, rxedrop's,
 * nfdrop's and rxeqp's BPF sides in one process, their evidence joined by
 * queue pair, one verdict per QP with what it rests on (tools/rocediag/diag.h
 * has the rules).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rocediag.h"
#include "lib/cli.h"
#include "lib/netattach.h"
#include "lib/pcapng.h"

static struct rocediag_cfg cfg = { .timeout_ms = 1000 };
static struct pcapng_args pcapng = {
	.write_doc = "Also write each dropped RoCE packet (its first --snaplen bytes) "
		     "to FILE as pcapng, the drop's location and reason as the "
		     "packet's comment",
};

const char *argp_program_version = "rocediag (AgentXDP) " AX_VERSION;
static const char doc[] =
"Say per RoCE v2 queue pair why its traffic is slow or stuck, from\n"
"rocelat's latency, rxedrop's drops, nfdrop's rules and rxeqp's QP state.\n"
"\n"
"USAGE: rocediag [-i IFACE...] [OPTIONS] [interval] [count]\n"
"\n"
"Attaches what the kernel allows: rocelat's XDP and tc egress programs on\n"
"each -i interface, rxedrop's and nfdrop's kfree_skb programs, and, where\n"
"rdma_rxe is loaded, rxeqp's hooks. Every interval (or once at exit), one\n"
"line per QP active in it, worst first: requester/QPN -> responder/QPN,\n"
"the UDP source port of its requests (ECMP path), the verdict and its\n"
"evidence; below it where this host dropped its packets, the netfilter\n"
"rule that did, and what rdma_rxe saw. A source the kernel lacks is named\n"
"on a 'cannot see' line and no verdict rests on it. Not seen at all: a\n"
"hardware RNIC's own RoCE (ConnectX and the like send and receive it in\n"
"the NIC, bypassing the kernel): mirror it to a collector running\n"
"rocediag --mirror (latency alone) or rocelat --mirror.\n"
"\n"
"VERDICTS (worst first):\n"
"%s"
"\n"
"EXAMPLES:\n"
"    rocediag -i eth1 5        # verdicts every 5 s\n"
"    rocediag -i eth1 -j 1 10  # JSON lines, 10 intervals of 1 s\n"
"    rocediag -i eth1 -p 10    # many QPs: those not OK, a line per peer\n"
"    rocediag 5                # drops and rdma_rxe only: no latency\n"
"    rocediag -i eth1 -w drops.pcapng 5   # ... and the dropped packets";

enum { OPT_SKB = 0x2000, OPT_TIMEOUT, OPT_NO_RXE, OPT_NO_RULES, OPT_MIRROR,
       OPT_PROBLEMS = 'p' };

static const struct argp_option opts[] = {
	{ "interface", 'i', "IFACE", 0,
	  "Time RoCE on IFACE (repeatable; of -N's network namespace, else this one)", 0 },
	{ "skb-mode", OPT_SKB, NULL, 0, "Generic (skb) XDP: works on any device", 0 },
	{ "timeout", OPT_TIMEOUT, "MS", 0,
	  "A request unanswered this long is a timeout (default 1000)", 0 },
	{ "no-rxe", OPT_NO_RXE, NULL, 0, "Leave rdma_rxe's QP state out", 0 },
	{ "no-rules", OPT_NO_RULES, NULL, 0, "Do not name netfilter rules", 0 },
	{ "mirror", OPT_MIRROR, NULL, 0,
	  "A collector on a mirror (SPAN/ERSPAN) port: both directions arrive as "
	  "ingress, tunnels read (as rocelat --mirror); verdicts from latency, "
	  "retransmits, NAKs and CNPs alone: drops, rules and rdma_rxe are this "
	  "host's, not the mirrored traffic's", 0 },
	{ "problems", OPT_PROBLEMS, NULL, 0,
	  "Only the QPs that are not OK, and one line per pair of peers", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &cfg.cli;
		state->child_inputs[1] = &pcapng;
		break;
	case 'i':
		cli_arg_iface(state, arg, cfg.ifnames, &cfg.nifs, ROCEDIAG_MAX_IFACES);
		break;
	case OPT_SKB:
		cfg.xdp_mode = NETATTACH_SKB;
		break;
	case OPT_TIMEOUT:
		cfg.timeout_ms = cli_arg_long(state, arg, 1, 3600000, "timeout");
		break;
	case OPT_NO_RXE:
		cfg.no_rxe = true;
		break;
	case OPT_NO_RULES:
		cfg.no_rules = true;
		break;
	case OPT_PROBLEMS:
		cfg.problems = true;
		break;
	case OPT_MIRROR:
		cfg.mirror = true;
		break;
	case ARGP_KEY_END:
		if (cfg.mirror && !cfg.nifs)
			argp_failure(state, 1, 0, "--mirror needs the mirror port: -i IFACE");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static char *help_filter(int key, const char *text, void *input)
{
	char *out;

	if (key != ARGP_KEY_HELP_PRE_DOC || !text || !strstr(text, "%s"))
		return (char *)text;
	/* the verdict rules, from the code that applies them */
	if (asprintf(&out, text, diag_verdict_rules) < 0)
		return (char *)text;
	return out;
}

static const struct argp_child children[] = {
	{ &cli_argp, 0, "Common options:", 0 },
	{ &pcapng_argp, 0, NULL, 0 },	/* -w, --snaplen */
	{},
};
static const struct argp argp = {
	.options = opts, .parser = parse_arg, .doc = doc,
	.children = children, .help_filter = help_filter,
};

/* the main loop's callbacks */
struct run {
	struct diag_table t;
	struct diag_sources src;
};

static void report(void *ctx)
{
	struct run *r = ctx;
	double len = rocediag_sources_read(&r->t);
	struct timespec now;

	/* what earlier intervals saw dropped, until the QP answers or is gone */
	clock_gettime(CLOCK_REALTIME, &now);
	diag_carry(&r->t, now.tv_sec + now.tv_nsec / 1e9);
	diag_verdicts(&r->t, &r->src, len);
	rocediag_prom(&r->t, &r->src, &cfg);
	rocediag_print(&r->t, &r->src, &cfg);
}

/* --prom alone: the last interval's verdicts (none yet at start) */
static void prom(void *ctx, enum loop_when when)
{
	struct run *r = ctx;

	rocediag_prom(&r->t, &r->src, &cfg);
}

static void banner(const struct diag_sources *src)
{
	FILE *out = cfg.cli.json ? stderr : stdout;

	fprintf(out, "Tracing RoCE v2 queue pairs (%s%s%s%s%s%s%s%s%s%s%s)... Hit Ctrl-C to end.\n",
		src->lat ? "latency" : "", src->lat_hook[0] ? " (" : "", src->lat_hook,
		src->lat ? (src->lat_hook[0] ? "), " : ", ") : "", src->drops ? "drops, " : "",
		src->rules ? "netfilter rules, " : "", src->rxe ? "rdma_rxe" : "no rdma_rxe",
		src->rdma ? ", RDMA netlink QPs and port counters" : "",
		src->verbs ? ", kernel QPs' work requests (" : "", src->verbs_hook,
		src->verbs ? ")" : "");
	/* once: the sources do not change while it runs (JSON's summaries
	 * carry them, each record whole) */
	if (!cfg.cli.json)
		rocediag_print_missing(out, src);
	/* where RoCE passes by unseen, whatever the sources: never look
	 * idle (a mirror port does show it); text only, as the lines above */
	if (!cfg.mirror && !cfg.cli.json)
		fprintf(out, "not seen: a hardware RNIC's own RoCE, which bypasses the "
			"kernel:\n    mirror it to rocelat --mirror\n");
	fflush(out);
}

int main(int argc, char **argv)
{
	static struct run r;
	struct loop lp = { .ctx = &r, .report = report, .prom = prom };
	int ret = 1;

	cli_parse(&argp, argc, argv, NULL);
	cfg.snaplen = pcapng.snaplen;
	cli_setup(&cfg.cli, CLI_CAP_BPF | CLI_CAP_PERFMON | CLI_CAP_NET_ADMIN);
	if (pcapng.path)
		cfg.pcap = pcapng_open_or_die(pcapng.path, argp_program_version, cfg.snaplen);
	/* -N: XDP and tc attach (netlink) work in the caller's namespace;
	 * drops and rules count only there (rocediag_sources.c) */
	cli_netns_enter(&cfg.cli);
	/* the verdicts are an interval's: without one there is nothing to
	 * write until the end */
	if (cfg.cli.prom_path && !cfg.cli.interval)
		cli_err("note: without an interval the --prom file has the verdicts only "
			"at exit; give an interval (rocediag --prom FILE 10)");
	if (diag_table_init(&r.t, ROCEDIAG_MAX_QPS))
		cli_die("out of memory");
	if (!rocediag_sources_open(&cfg, &r.src, &lp)) {
		banner(&r.src);
		ret = loop_run(&lp, &cfg.cli) ? 1 : 0;
	}
	rocediag_sources_close();
	if (pcapng_close(cfg.pcap) && ret == 0)
		ret = 1;	/* pcapng_close() said why */
	rocediag_output_free();
	diag_table_free(&r.t);
	return ret;
}
