// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat: how long RDMA requests wait for their ACK or READ RESPONSE, per
 * flow and UDP source port (ECMP path), with retransmits, NAKs, RNR NAKs,
 * CNPs and ECN marks; names the flow that stands out. Passive: XDP on
 * ingress, tc egress for the host's own transmit side, or a capture file
 * run through the very same program source, compiled natively (-r; or
 * the kernel's program through BPF_PROG_TEST_RUN, -r --in-kernel), with
 * the capture's time as the program's clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "rocelat.h"
#include "rocelat_backend.h"
#include "rocelat_load.h"
#include "rocelat_report.h"
#include "rocelat_svg.h"
#include "rocelat_native.h"
#include "capture_set.h"
#include "lib/cli.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/netattach.h"
#include "lib/prom.h"

#define MAX_IFACES		8

static struct {
	struct cli_env cli;
	const char *ifnames[MAX_IFACES];
	int nifs;
	bool flows;
	/* -r FILE (repeatable) and the further arguments after it */
	const char **files;
	int nfiles;
	__u64 unit_ns;
	const char *unit;
	enum netattach_mode mode;
	bool mirror;
	bool no_egress;
	bool decap;
	int mirror_time;
	long timeout_ms;
	long max_flows;
	const char *svg;
	bool in_kernel;		/* -r through BPF_PROG_TEST_RUN, not natively */
} env = {
	.unit_ns = 1000, .unit = "usecs", .timeout_ms = 1000,
	.max_flows = DEFAULT_MAX_FLOWS,
};

static struct netattach ifaces[MAX_IFACES];
static int ncpu;
/* --svg: the samples collected for the picture */
static struct rocelat_svg *svg;
/* -r: the files, checked before anything is loaded or printed */
static struct capture_set *cset;

const char *argp_program_version = "rocelat (AgentXDP) " AX_VERSION;
static const char doc[] =
"Measure RoCE v2 request -> ACK / READ RESPONSE latency passively.\n"
"\n"
"USAGE: rocelat -i IFACE [-i IFACE...] [OPTIONS] [interval] [count]\n"
"       rocelat -r FILE [FILE...] [OPTIONS]\n"
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
"-r FILE runs the same BPF program over a pcap/pcapng file (\"-\" is\n"
"stdin); several files (-r again, or more arguments after -r: a rotated\n"
"recording) are read as one, their packets merged in time order.\n"
"\n"
"Not seen: a hardware RNIC's own RoCE (ConnectX and the like send and\n"
"receive it in the NIC, bypassing the kernel). On such a host run rocelat\n"
"on a mirror (SPAN/ERSPAN) port with --mirror, or on a capture with -r.\n"
"\n"
"EXAMPLES:\n"
"    rocelat -i eth1              # latency histogram until Ctrl-C\n"
"    rocelat -i eth1 -F 5         # + per-flow table every 5 s, slowest first\n"
"    rocelat -i span0 --mirror    # SPAN port: both directions on ingress\n"
"    rocelat -i eth1 -j -F        # JSON lines\n"
"    rocelat -r roce.pcap -F -m   # analyse a capture, in milliseconds\n"
"    rocelat -r mirror.pcap*      # tcpdump -C/-G's rotated files as one\n"
"    rocelat -r roce.pcap --svg lat.svg  # ... and draw it";

enum {
	OPT_SKB = 0x2000, OPT_NATIVE, OPT_MIRROR, OPT_NO_EGRESS, OPT_TIMEOUT,
	OPT_MAX_FLOWS, OPT_DECAP, OPT_MIRROR_TIME, OPT_NANOSECONDS, OPT_SVG,
	OPT_IN_KERNEL,
};

static const struct argp_option opts[] = {
	{ "interface", 'i', "IFACE", 0,
	  "Attach to IFACE (repeatable; of -N's network namespace, else this one)", 0 },
	{ "flows", 'F', NULL, 0, "Per-flow table, worst first, with outlier line", 0 },
	{ "read", 'r', "FILE", 0,
	  "Analyse a pcap/pcapng capture instead of live traffic (repeatable; "
	  "further arguments are more files; all read in time order as one)", 0 },
	{ "milliseconds", 'm', NULL, 0, "Latency in milliseconds", 0 },
	{ "nanoseconds", OPT_NANOSECONDS, NULL, 0,
	  "Latency in nanoseconds (no short option: -N is the network "
	  "namespace in every tool)", 0 },
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
	  "Track at most N flows (responder QPs, whole sets of 16; default 11264, which "
	  "covers 10,000 active QPs, none left out, in 66 MB = 63 MiB of "
	  "kernel memory). Each flow takes about 5.9 KB with its share of the "
	  "pairing maps (the flow-table entry 4,560 bytes of it; measured: "
	  "66 MB at 11264, 28 MB at 4096, 94 MB at 16384). A new flow whose "
	  "three sets of 16 are full takes the place of their least recently "
	  "active flow if that one was idle for --timeout, else it is left "
	  "out, counted (untracked_qps)", 0 },
	{ "in-kernel", OPT_IN_KERNEL, NULL, 0,
	  "With -r: run each packet through the kernel's BPF program "
	  "(BPF_PROG_TEST_RUN: root, and many times slower) instead of its "
	  "native build, which -r runs by default: the same source, the same "
	  "results", 0 },
	{ "svg", OPT_SVG, "FILE", 0,
	  "At exit, draw every latency sample over time into FILE (one SVG): "
	  "a heatmap of all flows, then each flow's samples with p50/p99 per "
	  "time bucket, worst first", 0 },
	{},
};

static bool unit_set;

/* what the options mean together, once all are read */
static void parse_end(struct argp_state *state)
{
	if (env.nfiles) {
		if (env.nifs)
			argp_failure(state, 1, 0, "-r FILE and -i IFACE are mutually exclusive");
		if (env.cli.netns)
			argp_failure(state, 1, 0, "-N applies to live tracing, not -r");
		if (env.mode != NETATTACH_AUTO || env.mirror || env.no_egress)
			argp_failure(state, 1, 0,
				     "--skb-mode/--native-mode/--mirror/--no-egress "
				     "apply to live tracing, not -r");
		env.decap = true;	/* captures of mirror sessions */
		if (env.cli.interval)
			argp_failure(state, 1, 0,
				     "interval and count apply to live tracing, not -r");
	} else if (!env.nifs) {
		argp_failure(state, 1, 0, "no interface: give -i IFACE (or -r FILE)");
	}
	if (env.in_kernel && !env.nfiles)
		argp_failure(state, 1, 0, "--in-kernel applies to -r, not to live tracing");
	if (env.mirror)
		env.decap = true;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	long v;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &env.cli;
		break;
	case 'i':
		cli_arg_iface(state, arg, env.ifnames, &env.nifs, MAX_IFACES);
		break;
	case 'F':
		env.flows = true;
		break;
	case 'r':
		if (!env.files && !(env.files = calloc(state->argc, sizeof(*env.files))))
			argp_failure(state, 1, 0, "out of memory");
		if (!*arg)
			argp_failure(state, 1, 0, "empty capture file name");
		env.files[env.nfiles++] = arg;
		break;
	case ARGP_KEY_ARG:
		/* after -r, more files; else the CLI core's [interval] [count] */
		if (!env.nfiles)
			return ARGP_ERR_UNKNOWN;
		if (!*arg)
			argp_failure(state, 1, 0, "empty capture file name");
		/* "rocelat -r f.pcap 5" means an interval, not a file "5" */
		if (arg[strspn(arg, "0123456789")] == '\0' && access(arg, F_OK))
			argp_failure(state, 1, 0, "%s: no such capture file; an interval "
				     "and count apply to live tracing, not -r", arg);
		env.files[env.nfiles++] = arg;
		break;
	case 'm':
	case OPT_NANOSECONDS:
		if (unit_set)
			argp_failure(state, 1, 0, "-m and --nanoseconds are mutually exclusive");
		unit_set = true;
		env.unit_ns = key == 'm' ? 1000000 : 1;
		env.unit = key == 'm' ? "msecs" : "nsecs";
		break;
	case OPT_SKB:
	case OPT_NATIVE:
		if (env.mode != NETATTACH_AUTO)
			argp_failure(state, 1, 0,
				     "--skb-mode and --native-mode are mutually exclusive");
		env.mode = key == OPT_SKB ? NETATTACH_SKB : NETATTACH_NATIVE;
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
	case OPT_IN_KERNEL:
		env.in_kernel = true;
		break;
	case OPT_SVG:
		if (!*arg)
			argp_failure(state, 1, 0, "empty --svg file name");
		env.svg = arg;
		break;
	case ARGP_KEY_END:
		parse_end(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

CLI_ARGP(argp, opts, parse_arg, doc);

/* ---- live: attach and detach ---------------------------------------- */

/* the main loop's callbacks (ctx: the backend): a table per interval,
 * or one of the whole run at exit */
static void live_report(void *ctx)
{
	rocelat_report(ctx, env.cli.interval);
}

/* --prom at start (nothing read yet) and without an interval */
static void live_prom(void *ctx, enum loop_when when)
{
	if (when == LOOP_START)
		rocelat_report_prom_start(ctx);
	else
		rocelat_report_prom(ctx);
}

static int run_live(struct rocelat_kernel *k)
{
	struct loop lp = { .ctx = rocelat_kernel_backend(k), .report = live_report,
			   .prom = live_prom };
	bool egress = !env.mirror && !env.no_egress;

	if (svg)
		loop_add(&lp, rocelat_svg_rb(svg), -1, NULL);

	for (int i = 0; i < env.nifs; i++) {
		struct netattach *f = &ifaces[i];

		if (rocelat_attach(k, f, env.mode, egress, ROCELAT_BY_ROCELAT))
			return 1;
		if (env.mirror)
			netattach_warn_promisc(f);
	}
	{
		/* with -j stdout stays pure JSON lines: the banner goes to stderr */
		FILE *out = env.cli.json ? stderr : stdout;

		fprintf(out, "Tracing RoCE v2 latency on");
		for (int i = 0; i < env.nifs; i++) {
			char d[64];

			fprintf(out, "%s %s (%s)", i ? "," : "", ifaces[i].name,
				netattach_describe(&ifaces[i], d, sizeof(d)));
		}
		fprintf(out, "... Hit Ctrl-C to end.\n");
		/* the one place RoCE passes by unseen: say so, never look idle
		 * (the text banner's; -j's stderr stays the banner alone) */
		if (!env.mirror && !env.cli.json)
			fprintf(out, "not seen: a hardware RNIC's own RoCE, which bypasses the "
				"kernel:\n    mirror it to a port (--mirror) or capture it (-r)\n");
		fflush(out);
	}
	return loop_run(&lp, &env.cli) ? 1 : 0;
}

/* ---- offline: a capture through the program, either build ----------- */

/*
 * Reading a long capture to a terminal: packets, their bytes and how far
 * into the files (by the readers' positions in them), on stderr, about once
 * a second.
 */
struct progress {
	bool on, shown;
	time_t last;
};

static void progress_start(struct progress *p)
{
	memset(p, 0, sizeof(*p));
	p->on = isatty(STDERR_FILENO);
	p->last = time(NULL);
}

static void progress_step(struct progress *p, unsigned long long packets)
{
	double frac;
	time_t now;

	if (!p->on || packets % 4096)
		return;
	now = time(NULL);
	if (now == p->last)
		return;
	p->last = now;
	frac = capture_set_fraction(cset);
	fprintf(stderr, "\rrocelat: %llu packets, %.1f MB read", packets,
		capture_set_bytes(cset) / 1e6);
	if (frac >= 0)
		fprintf(stderr, " (%.0f%%)", frac > 0.99 ? 99 : 100 * frac);
	p->shown = true;
}

static void progress_end(struct progress *p, unsigned long long packets)
{
	if (p->shown)
		fprintf(stderr, "\rrocelat: %llu packets, %.1f MB read (100%%)\n",
			packets, capture_set_bytes(cset) / 1e6);
}

/* what the run read: for sizing a collector, packets and bytes a second */
struct offline_stats {
	unsigned long long packets, short_frames, failed_runs;
	unsigned long long untimed;	/* frames without a time: skipped */
	unsigned long long out_of_order; /* frames earlier than one before */
	unsigned long long ts_max;
	double seconds;
};

/* what the recording's times left unmeasured, one line each */
static void offline_warnings(const struct offline_stats *st, FILE *f)
{
	if (st->untimed)
		fprintf(f, "WARNING: %llu frames without a time (stamped 0, as "
			"pcapng simple packet blocks are) skipped, as if not "
			"recorded\n", st->untimed);
	if (st->out_of_order)
		fprintf(f, "WARNING: %llu frames earlier than a frame before "
			"them: the recording is not in time order, and what is "
			"paired across them may be wrong (sort it: reordercap "
			"IN OUT)\n", st->out_of_order);
}

static void offline_summary(const struct offline_stats *st, const char *err)
{
	int files = capture_set_files(cset);
	double bytes = (double)capture_set_bytes(cset);
	double pps = st->seconds > 0 ? st->packets / st->seconds : 0;
	double mbps = st->seconds > 0 ? bytes / 1e6 / st->seconds : 0;

	if (env.cli.json) {
		struct json_w w;

		json_begin(&w, stdout);
		json_str(&w, "type", "capture");
		if (files == 1)
			json_str(&w, "file", env.files[0]);
		json_u64(&w, "files", files);
		json_u64(&w, "packets", st->packets);
		json_u64(&w, "bytes", (__u64)bytes);
		json_fixed(&w, "read_seconds", st->seconds, 6);
		json_fixed(&w, "packets_per_s", pps, 0);
		json_fixed(&w, "mb_per_s", mbps, 3);
		json_u64(&w, "short_frames", st->short_frames);
		json_u64(&w, "no_time_frames", st->untimed);
		json_u64(&w, "out_of_order_frames", st->out_of_order);
		json_u64(&w, "failed_runs", st->failed_runs);
		json_bool(&w, "complete", !err[0]);
		if (err[0])
			json_str(&w, "error", err);
		json_end(&w);
		offline_warnings(st, stderr);
		return;
	}
	printf("read %llu packets from ", st->packets);
	if (files == 1)
		printf("%s", env.files[0]);
	else
		printf("%d files", files);
	printf(": %.1f MB in %.2f s, %.0f packets/s, %.1f MB/s%s\n", bytes / 1e6,
	       st->seconds, pps, mbps, err[0] ? " (incomplete)" : "");
	if (st->short_frames)
		printf("%llu frames shorter than an Ethernet header skipped\n",
		       st->short_frames);
	offline_warnings(st, stdout);
}

static double offline_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int run_offline(struct rocelat_backend *be)
{
	int rc;
	/* a sweep costs a walk of the flow table: a few per --timeout */
	unsigned long long sweep_every = (unsigned long long)env.timeout_ms * 250000ULL;
	unsigned long long next_sweep = 0, ts;
	struct offline_stats st = {};
	int err_run;
	const unsigned char *frame;
	char err[512] = "";
	struct progress prog;
	unsigned int len;
	double t0;

	progress_start(&prog);
	t0 = offline_now();
	while ((rc = capture_set_next(cset, &frame, &len, &ts)) == 1) {
		st.packets++;
		progress_step(&prog, st.packets);
		if (len < 14) {		/* BPF_PROG_TEST_RUN needs an Ethernet header */
			st.short_frames++;
			continue;
		}
		/* time 0: libpcap's for a pcapng block that has none */
		if (!ts) {
			st.untimed++;
			continue;
		}
		if (ts < st.ts_max)
			st.out_of_order++;
		else
			st.ts_max = ts;
		be->set_clock(be, ts);
		if (ts >= next_sweep) {
			/* timeouts on the capture's clock, as it goes: a
			 * request older than --timeout at this frame's time is
			 * one, whatever comes later (a new connection reusing
			 * the QPNs, the end of the file) */
			be->sweep(be);
			next_sweep = ts + sweep_every;
		}
		if ((err_run = be->packet(be, frame, len)) && !st.failed_runs++)
			cli_err("%s: packet %llu: test run failed: %s",
				capture_set_path(cset), st.packets, strerror(-err_run));
		if (svg)
			rocelat_svg_poll(svg);
	}
	st.seconds = offline_now() - t0;
	if (rc < 0)
		snprintf(err, sizeof(err), "%s", capture_set_error(cset));
	progress_end(&prog, st.packets);

	rocelat_report(be, false);
	offline_summary(&st, err);
	fflush(stdout);
	if (err[0]) {
		cli_err("%s (after %llu packets; the report covers those)",
			err, st.packets);
		return 1;
	}
	return st.failed_runs ? 1 : 0;
}

/* -r without --in-kernel: the program's native build, no kernel asked */
static bool run_native(void)
{
	return env.nfiles && !env.in_kernel;
}

/* -r's program: its native build; NULL after a one-line error */
static struct rocelat_backend *open_native(void)
{
	struct rocelat_native_cfg c = {
		.roce_port = env.cli.roce_port, .unit_ns = env.unit_ns,
		.timeout_ns = (__u64)env.timeout_ms * 1000000ULL,
		.decap = env.decap, .mirror_time = env.mirror_time,
		.max_flows = env.max_flows, .samples = !!env.svg,
	};
	struct rocelat_backend *be = rocelat_native_open(&c);

	if (!be)
		cli_err("out of memory for %ld flows", env.max_flows);
	return be;
}

/* the program loaded into the kernel: live, or -r --in-kernel; NULL after
 * a one-line error */
static struct rocelat_kernel *open_kernel(void)
{
	return rocelat_load(&(struct rocelat_load_opts){
		.cli = &env.cli, .unit_ns = env.unit_ns, .timeout_ms = env.timeout_ms,
		.max_flows = env.max_flows, .offline = env.nfiles > 0,
		.decap = env.decap, .mirror_time = env.mirror_time,
		.no_egress = env.mirror || env.no_egress,
		.samples_bytes = env.svg ? ROCELAT_SVG_RING_BYTES : 0 });
}

/*
 * --prom's sources: a capture, or ingress and egress. Written only once
 * attached (an attach that fails ends the run), so up is what was asked;
 * egress is down only by an option. A hardware RNIC's own RoCE is no
 * source at all: the banner says so.
 */
static int report_sources(const struct prom_source **out)
{
	static struct prom_source src[2];

	if (env.nfiles) {
		src[0] = (struct prom_source){ "capture", true, false, NULL, false };
		*out = src;
		return 1;
	}
	src[0] = (struct prom_source){ "ingress", true, false, NULL, false };
	src[1] = (struct prom_source){ "egress", !env.mirror && !env.no_egress,
				       env.mirror || env.no_egress,
				       env.mirror ? "egress: --mirror (both directions "
				       "arrive on ingress)" : "egress: --no-egress",
				       false };
	*out = src;
	return 2;
}

int main(int argc, char **argv)
{
	struct rocelat_report_cfg rcfg = {};
	struct rocelat_kernel *kern = NULL;	/* live and --in-kernel */
	struct rocelat_backend *be = NULL;	/* the program, either build */
	int ret = 1;

	cli_parse(&argp, argc, argv, NULL);
	if (env.nfiles) {
		/* every file checked before anything is loaded or printed */
		char err[512];

		cset = capture_set_open(env.files, env.nfiles, err, sizeof(err));
		if (!cset)
			cli_die("%s", err);
	}
	/* the native build needs no privilege */
	cli_setup(&env.cli, run_native() ? 0 : CLI_CAP_BPF | CLI_CAP_PERFMON | CLI_CAP_NET_ADMIN);
	/* -N: XDP and tc attach (netlink) work in the caller's namespace */
	cli_netns_enter(&env.cli);
	for (int i = 0; i < env.nifs; i++)
		netattach_init(&ifaces[i], env.ifnames[i], cli_ifindex(&env.cli, env.ifnames[i]));
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		cli_die("cannot count CPUs");
	rcfg.cli = &env.cli;
	rcfg.flows = env.flows;
	rcfg.offline = env.nfiles > 0;
	rcfg.unit_ns = env.unit_ns;
	rcfg.unit = env.unit;
	rcfg.ncpu = ncpu;
	rcfg.max_flows = env.max_flows;
	rcfg.wait_n = ROCELAT_WAIT_N(env.max_flows);
	rcfg.nsources = report_sources(&rcfg.sources);
	if (rocelat_report_init(&rcfg, env.max_flows)) {
		cli_err("out of memory for %ld flow rows", env.max_flows);
		goto cleanup;
	}

	/* the one choice of build: the report, --svg and the runs below
	 * drive either alike */
	if (run_native())
		be = open_native();
	else if ((kern = open_kernel()))
		be = rocelat_kernel_backend(kern);
	if (!be)
		goto cleanup;
	if (env.svg) {
		struct rocelat_svg_cfg scfg = {
			.path = env.svg, .offline = env.nfiles > 0,
			.source = env.nfiles ? env.files[0] : env.ifnames[0],
			.unit_ns = env.unit_ns,
		};

		svg = rocelat_svg_new(be, &scfg);
		if (!svg)
			goto cleanup;
	}
	ret = env.nfiles ? run_offline(be) : run_live(kern);
	if (rocelat_svg_finish(svg))
		ret = 1;

cleanup:
	for (int i = 0; i < env.nifs; i++)
		netattach_detach(&ifaces[i]);
	rocelat_backend_close(be);
	rocelat_report_free();
	capture_set_close(cset);
	return ret;
}
