// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * roceinject: a gray failure made on purpose, for the RoCE v2 packets of
 * one queue pair (or any selection): drop them, mark them ECN CE, corrupt
 * their ICRC or delay them, at tc ingress or egress of one interface,
 * counting each fault per QP. The same seed picks the same packets in
 * every run. It alters traffic: the suite's observers (rocelat, rxedrop,
 * rocediag) are what should see the result.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "roceinject.h"
#include "roceinject.skel.h"
#include "roceinject_load.h"
#include "roceinject_guard.h"
#include "lib/cli.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/maps.h"
#include "lib/netattach.h"
#include "lib/prom.h"
#include "lib/roce_names.h"
#include "lib/roce_proto.h"

#define MAX_ROWS 4096

static const char *const fault_names[FAULT_NR] = {
	[FAULT_DROP] = "drop", [FAULT_CE] = "ecn_ce",
	[FAULT_ICRC] = "icrc", [FAULT_DELAY] = "delay",
	[FAULT_QPN] = "qpn", [FAULT_PKEY] = "pkey", [FAULT_TRUNC] = "truncate",
	[FAULT_DUP] = "duplicate",
};
static const char *const class_names[CLASS_NR] = {
	[CLASS_REQUEST] = "requests", [CLASS_ACK] = "acks", [CLASS_NAK] = "naks",
	[CLASS_READ_RESP] = "read-responses", [CLASS_CNP] = "cnps",
};
static const char *const dir_names[] = { "egress", "ingress" };

static struct inject_opts env = { .opcode = -1, .every = 1, .prob = 1.0 };
static bool seed_set;

const char *argp_program_version = "roceinject (AgentXDP) " AX_VERSION;
static const char doc[] =
"Make a gray failure on purpose: drop, ECN-mark, corrupt or delay chosen\n"
"RoCE v2 packets at tc ingress or egress of one interface.\n"
"\n"
"USAGE: roceinject -i IFACE FAULT... [SELECTOR...] [OPTIONS] [interval] [count]\n"
"\n"
"At least one fault is required. Selectors combine (all must match); none\n"
"selects every RoCE v2 packet on IFACE. Packets outside the selection pass\n"
"untouched. A table of what was injected per queue pair (running totals)\n"
"is printed every interval and at exit. --probability hashes (seed, QPN,\n"
"PSN): the same seed takes the same packets in every run, and a\n"
"retransmission (same PSN) is taken when its first transmission was.\n"
"After --count injections the program stays attached but alters nothing\n"
"more, and says so. --delay sets the packet's earliest departure time and\n"
"puts an fq qdisc on IFACE for the run (egress only). Nothing stays\n"
"attached after exit, also after kill -9 (a watchdog process removes the\n"
"qdisc; a tc filter left on kernels before 6.6 goes at the next run).\n"
"\n"
"EXAMPLES:\n"
"    roceinject -i eth1 --drop -Q 0x12 --class requests --every 10\n"
"                         # every 10th request to QP 0x12 dropped\n"
"    roceinject -i eth1 --delay 2ms -Q 0x12\n"
"                         # QP 0x12's packets leave 2 ms late\n"
"    roceinject -i eth1 --ecn-ce --probability 0.05 --seed 7 -e\n"
"                         # CE on 5% of packets, one line per packet\n"
"    roceinject -i eth1 --direction ingress --corrupt-icrc --count 100\n"
"                         # bad ICRC on the next 100 packets received";

enum {
	OPT_DIRECTION = 0x2000, OPT_DROP, OPT_CE, OPT_ICRC, OPT_DELAY, OPT_SPORT,
	OPT_SRC, OPT_DST, OPT_CLASS, OPT_OPCODE, OPT_PSN, OPT_EVERY, OPT_PROB,
	OPT_SEED, OPT_COUNT, OPT_QPN_TO, OPT_PKEY_TO, OPT_TRUNC, OPT_DUP,
};

static const struct argp_option opts[] = {
	{ "interface", 'i', "IFACE", 0, "The interface to inject on (required)", 0 },
	{ "direction", OPT_DIRECTION, "DIR", 0, "egress (default) or ingress", 0 },
	{ "events", 'e', NULL, 0, "Print one event per injected packet", 0 },
	{ NULL, 0, NULL, 0, "Faults:", 1 },
	{ "drop", OPT_DROP, NULL, 0, "Drop the packet (alone: no other fault)", 1 },
	{ "ecn-ce", OPT_CE, NULL, 0, "Mark it ECN CE (IPv4 checksum updated; IPv6)", 1 },
	{ "corrupt-icrc", OPT_ICRC, NULL, 0,
	  "Invert its ICRC (the last 4 bytes; a UDP checksum in use stays right)", 1 },
	{ "delay", OPT_DELAY, "D", 0,
	  "Delay it by D (ns, us, ms or s, e.g. 2ms); egress only, adds an fq qdisc", 1 },
	{ "rewrite-qpn", OPT_QPN_TO, "QPN", 0,
	  "Rewrite its destination QPN (a receiver's unknown-QP check)", 1 },
	{ "rewrite-pkey", OPT_PKEY_TO, "PKEY", 0,
	  "Rewrite its P_Key (a receiver's P_Key check)", 1 },
	{ "truncate", OPT_TRUNC, "LEN", 0,
	  "Cut its UDP payload (the BTH on) to LEN bytes, IPv4 (a receiver's length "
	  "or ICRC check)", 1 },
	{ "duplicate", OPT_DUP, NULL, 0,
	  "Send a copy of it first (egress only; after the other faults)", 1 },
	{ NULL, 0, NULL, 0, "Selectors:", 2 },
	{ "qpn", 'Q', "QPN", 0, "Destination QP number (decimal or 0x hex)", 2 },
	{ "sport", OPT_SPORT, "PORT", 0, "UDP source port", 2 },
	{ "src", OPT_SRC, "ADDR", 0, "IP source address", 2 },
	{ "dst", OPT_DST, "ADDR", 0, "IP destination address", 2 },
	{ "class", OPT_CLASS, "LIST", 0,
	  "Opcode classes, comma-separated: requests, acks, naks, read-responses, cnps", 2 },
	{ "opcode", OPT_OPCODE, "OP", 0, "BTH opcode (0-255, e.g. 0x04 RC SEND ONLY)", 2 },
	{ "psn", OPT_PSN, "A[-B]", 0, "PSN A, or A to B (wraps at 2^24 when A > B)", 2 },
	{ "every", OPT_EVERY, "N", 0, "Every Nth selected packet of each QP", 2 },
	{ "probability", OPT_PROB, "P", 0, "A seeded fraction P (0 < P <= 1) of them", 2 },
	{ "seed", OPT_SEED, "S", 0, "Seed of --probability (default 0)", 2 },
	{ "count", OPT_COUNT, "N", 0, "At most N packets in all, then inject no more", 2 },
	{},
};

static __u64 inject_arg_u64(struct argp_state *state, const char *arg, __u64 min,
			    __u64 max, const char *what)
{
	uint64_t v;

	if (cli_parse_u64(arg, min, max, &v))
		argp_failure(state, 1, 0, "invalid %s: %s", what, arg);
	return v;
}

/* "2ms", "500us", "1.5s", "100ns" */
static __u64 inject_parse_delay(struct argp_state *state, const char *arg)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	for (size_t i = 0; !errno && end != arg && v > 0 && i < 4; i++)
		if (!strcmp(end, units[i].unit) && v * units[i].ns <= 10e9)
			return (__u64)(v * units[i].ns + 0.5);
	argp_failure(state, 1, 0, "invalid delay: %s (a time up to 10s with ns, us, ms or s)", arg);
	return 0;
}

static void inject_parse_addr(struct argp_state *state, const char *arg, __u8 *addr,
			      bool *set)
{
	__u8 family = strchr(arg, ':') ? 6 : 4;

	if (inet_pton(family == 4 ? AF_INET : AF_INET6, arg, addr) != 1)
		argp_failure(state, 1, 0, "invalid address: %s", arg);
	if (env.family && env.family != family)
		argp_failure(state, 1, 0, "--src and --dst of different families: %s", arg);
	env.family = family;
	*set = true;
}

/* every comma-separated item a class: none empty ("requests,,acks") */
static void inject_parse_classes(struct argp_state *state, const char *arg)
{
	char *list = strdup(arg), *rest = list, *tok;
	int c;

	if (!list)
		argp_failure(state, 1, ENOMEM, "--class");
	while ((tok = strsep(&rest, ","))) {
		c = cli_choice(tok, class_names, CLASS_NR);
		if (c < 0)
			argp_failure(state, 1, 0, "invalid class: '%s' in %s (requests, "
				     "acks, naks, read-responses, cnps)", tok, arg);
		env.classes |= 1U << c;
	}
	free(list);
}

static void inject_parse_psn(struct argp_state *state, const char *arg)
{
	char lo[32];
	const char *dash = strchr(arg, '-');
	uint64_t a, b;

	snprintf(lo, sizeof(lo), "%.*s", dash ? (int)(dash - arg) : (int)strlen(arg), arg);
	if (cli_parse_u64(lo, 0, ROCE_PSN_MASK, &a) ||
	    (dash && cli_parse_u64(dash + 1, 0, ROCE_PSN_MASK, &b)))
		argp_failure(state, 1, 0, "invalid PSN: %s (0-16777215, or A-B)", arg);
	env.psn_set = true;
	env.psn_lo = a;
	env.psn_hi = dash ? b : a;
}

static void inject_check(struct argp_state *state)
{
	if (!env.ifname)
		argp_failure(state, 1, 0, "no interface: give -i IFACE");
	if (!env.faults)
		argp_failure(state, 1, 0, "no fault named: give at least one of --drop, "
			     "--ecn-ce, --corrupt-icrc, --delay, --rewrite-qpn, --rewrite-pkey, "
			     "--truncate, --duplicate");
	if ((env.faults & (1U << FAULT_DROP)) && env.faults != 1U << FAULT_DROP)
		argp_failure(state, 1, 0, "--drop cannot be combined with another fault");
	if ((env.faults & (1U << FAULT_DUP)) && env.ingress)
		argp_failure(state, 1, 0, "--duplicate works on egress only (an ingress "
			     "copy would come back through the hook later, not at once)");
	if ((env.faults & (1U << FAULT_DELAY)) && env.ingress)
		argp_failure(state, 1, 0, "--delay works on egress only (the fq qdisc "
			     "holds departing packets)");
	if (seed_set && env.prob >= 1.0)
		argp_failure(state, 1, 0, "--seed applies to --probability");
	cli_check_events(state, &env.cli, env.events, false);
}

static error_t parse_fault(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case OPT_DROP:
		env.faults |= 1U << FAULT_DROP;
		break;
	case OPT_CE:
		env.faults |= 1U << FAULT_CE;
		break;
	case OPT_ICRC:
		env.faults |= 1U << FAULT_ICRC;
		break;
	case OPT_DELAY:
		env.faults |= 1U << FAULT_DELAY;
		env.delay_ns = inject_parse_delay(state, arg);
		break;
	case OPT_QPN_TO:
		env.faults |= 1U << FAULT_QPN;
		env.new_qpn = inject_arg_u64(state, arg, 0, ROCE_QPN_MASK, "QP number");
		break;
	case OPT_PKEY_TO:
		env.faults |= 1U << FAULT_PKEY;
		env.new_pkey = inject_arg_u64(state, arg, 0, 0xFFFF, "P_Key");
		break;
	case OPT_DUP:
		env.faults |= 1U << FAULT_DUP;
		break;
	case OPT_TRUNC:
		env.faults |= 1U << FAULT_TRUNC;
		env.trunc_len = inject_arg_u64(state, arg, 0, 65000, "payload length");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char *end;
	int d;

	if (parse_fault(key, arg, state) == 0)
		return 0;
	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &env.cli;
		break;
	case 'i':
		env.ifname = arg;
		break;
	case OPT_DIRECTION:
		d = cli_choice(arg, dir_names, 2);
		if (d < 0)
			argp_failure(state, 1, 0, "invalid direction: %s (ingress or egress)", arg);
		env.ingress = d;
		break;
	case 'e':
		env.events = true;
		break;
	case 'Q':
		env.qpn = inject_arg_u64(state, arg, 0, ROCE_QPN_MASK, "QP number");
		env.qpn_set = true;
		break;
	case OPT_SPORT:
		env.sport = inject_arg_u64(state, arg, 1, 65535, "port");
		break;
	case OPT_SRC:
		inject_parse_addr(state, arg, env.saddr, &env.saddr_set);
		break;
	case OPT_DST:
		inject_parse_addr(state, arg, env.daddr, &env.daddr_set);
		break;
	case OPT_CLASS:
		inject_parse_classes(state, arg);
		break;
	case OPT_OPCODE:
		env.opcode = inject_arg_u64(state, arg, 0, 255, "opcode");
		break;
	case OPT_PSN:
		inject_parse_psn(state, arg);
		break;
	case OPT_EVERY:
		env.every = inject_arg_u64(state, arg, 1, 1ULL << 32, "--every");
		break;
	case OPT_PROB:
		errno = 0;
		env.prob = strtod(arg, &end);
		if (errno || end == arg || *end || !(env.prob > 0 && env.prob <= 1))
			argp_failure(state, 1, 0, "invalid probability: %s (0 < P <= 1)", arg);
		break;
	case OPT_SEED:
		env.seed = inject_arg_u64(state, arg, 0, UINT64_MAX, "seed");
		seed_set = true;
		break;
	case OPT_COUNT:
		env.count = inject_arg_u64(state, arg, 1, UINT64_MAX, "--count");
		break;
	case ARGP_KEY_END:
		inject_check(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

CLI_ARGP(argp, opts, parse_arg, doc);

/* ---- the per-QP table, JSON and --prom ---- */

struct row {
	struct inject_key key;
	struct inject_qp qp;
};

struct rows {
	struct row *r;
	int n;
};

static int read_row(const void *key, const void *val, void *ctx)
{
	struct rows *rs = ctx;

	if (rs->n >= MAX_ROWS)
		return 1;
	memcpy(&rs->r[rs->n].key, key, sizeof(struct inject_key));
	memcpy(&rs->r[rs->n++].qp, val, sizeof(struct inject_qp));
	return 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->qp.injected != y->qp.injected)
		return x->qp.injected < y->qp.injected ? 1 : -1;
	return x->key.dqpn < y->key.dqpn ? -1 : x->key.dqpn > y->key.dqpn;
}

static int read_rows(struct roceinject_bpf *obj, struct row *rows)
{
	struct rows rs = { .r = rows };

	maps_for_each(obj->maps.qps, read_row, &rs);
	qsort(rows, rs.n, sizeof(*rows), cmp_rows);
	return rs.n;
}

/* what the main loop's callbacks work on */
struct inject_run {
	struct roceinject_bpf *obj;
	int ncpu;
	bool limit_said;
	struct row rows[MAX_ROWS];
};

static void json_row(const struct row *r, double now)
{
	char sa[ADDR_STRLEN], da[ADDR_STRLEN];
	struct json_w w;

	json_begin(&w, stdout);
	json_str(&w, "type", "qp");
	json_time(&w, now);
	json_u64(&w, "family", r->key.family);
	json_str(&w, "saddr", pkt_addr_str(r->key.family, r->key.saddr, sa, sizeof(sa)));
	json_str(&w, "daddr", pkt_addr_str(r->key.family, r->key.daddr, da, sizeof(da)));
	json_u64(&w, "sport", r->key.sport);
	json_u64(&w, "dqpn", r->key.dqpn);
	json_u64(&w, "matched", r->qp.matched);
	json_u64(&w, "injected", r->qp.injected);
	for (int f = 0; f < FAULT_NR; f++)
		json_u64(&w, fault_names[f], r->qp.faults[f]);
	json_end(&w);
}

static void json_summary(struct inject_run *run, double now)
{
	static const char *const names[STAT_NR] = {
		"roce", "matched", "injected", "limited", "events_lost", "qps_full",
	};
	struct json_w w;

	json_begin(&w, stdout);
	json_str(&w, "type", "summary");
	json_time(&w, now);
	for (int s = 0; s < STAT_NR; s++)
		json_u64(&w, names[s], roceinject_stat(run->obj, s, run->ncpu));
	json_end(&w);
}

static void print_table(struct inject_run *run)
{
	int n = read_rows(run->obj, run->rows);
	char sa[ADDR_STRLEN], da[ADDR_STRLEN];
	double now = cli_now_epoch();

	if (env.cli.json) {
		for (int i = 0; i < n; i++)
			json_row(&run->rows[i], now);
		json_summary(run, now);
		return;
	}
	cli_print_timestamp(&env.cli, stdout);
	printf("%-16s %-16s %5s %8s %9s %9s %8s %8s %8s %8s %8s %8s %8s %8s\n", "SADDR", "DADDR",
	       "SPORT", "QPN", "MATCHED", "INJECTED", "DROP", "ECN_CE", "ICRC", "DELAY",
	       "NEW_QPN", "NEW_PKEY", "TRUNC", "DUP");
	for (int i = 0; i < n; i++) {
		const struct row *r = &run->rows[i];

		printf("%-16s %-16s %5u %#8x %9llu %9llu %8llu %8llu %8llu %8llu %8llu %8llu %8llu %8llu\n",
		       pkt_addr_str(r->key.family, r->key.saddr, sa, sizeof(sa)),
		       pkt_addr_str(r->key.family, r->key.daddr, da, sizeof(da)),
		       r->key.sport, r->key.dqpn, (unsigned long long)r->qp.matched,
		       (unsigned long long)r->qp.injected,
		       (unsigned long long)r->qp.faults[FAULT_DROP],
		       (unsigned long long)r->qp.faults[FAULT_CE],
		       (unsigned long long)r->qp.faults[FAULT_ICRC],
		       (unsigned long long)r->qp.faults[FAULT_DELAY],
		       (unsigned long long)r->qp.faults[FAULT_QPN],
		       (unsigned long long)r->qp.faults[FAULT_PKEY],
		       (unsigned long long)r->qp.faults[FAULT_TRUNC],
		       (unsigned long long)r->qp.faults[FAULT_DUP]);
	}
	printf("\n");
	fflush(stdout);
}

#define PROM_INJECTED "agentxdp_roceinject_injected_total"
#define PROM_MATCHED "agentxdp_roceinject_matched_total"

static void prom_rows(struct prom_file *pf, const struct row *rows, int n)
{
	char sa[ADDR_STRLEN], da[ADDR_STRLEN], sp[8], qp[16];
	struct prom_label l[5] = {
		{ "saddr", sa }, { "daddr", da }, { "sport", sp }, { "dqpn", qp }, { "fault", NULL },
	};

	prom_family(pf, PROM_MATCHED, PROM_COUNTER,
		    "RoCE packets of a queue pair the selectors took (before --every, "
		    "--probability and --count).");
	for (int i = 0; i < n; i++) {
		pkt_addr_str(rows[i].key.family, rows[i].key.saddr, sa, sizeof(sa));
		pkt_addr_str(rows[i].key.family, rows[i].key.daddr, da, sizeof(da));
		snprintf(sp, sizeof(sp), "%u", rows[i].key.sport);
		snprintf(qp, sizeof(qp), "0x%x", rows[i].key.dqpn);
		prom_counter(pf, PROM_MATCHED, l, 4, rows[i].qp.matched);
	}
	prom_family(pf, PROM_INJECTED, PROM_COUNTER,
		    "RoCE packets of a queue pair roceinject altered, by fault.");
	for (int i = 0; i < n; i++) {
		pkt_addr_str(rows[i].key.family, rows[i].key.saddr, sa, sizeof(sa));
		pkt_addr_str(rows[i].key.family, rows[i].key.daddr, da, sizeof(da));
		snprintf(sp, sizeof(sp), "%u", rows[i].key.sport);
		snprintf(qp, sizeof(qp), "0x%x", rows[i].key.dqpn);
		for (int f = 0; f < FAULT_NR; f++) {
			if (!(env.faults & (1U << f)))
				continue;
			l[4].value = fault_names[f];
			prom_counter(pf, PROM_INJECTED, l, 5, rows[i].qp.faults[f]);
		}
	}
}

static void write_prom(struct inject_run *run)
{
	struct prom_file pf;
	int n = read_rows(run->obj, run->rows), err;

	err = prom_open(&pf, env.cli.prom_path);
	if (err) {
		cli_prom_err(&env.cli, err);
		return;
	}
	prom_rows(&pf, run->rows, n);
	prom_family(&pf, "agentxdp_roceinject_limited_total", PROM_COUNTER,
		    "Selected packets left alone because --count was reached.");
	prom_counter(&pf, "agentxdp_roceinject_limited_total", NULL, 0,
		     maps_stat(run->obj->maps.stats, STAT_LIMITED, run->ncpu));
	err = prom_commit(&pf);
	if (err)
		cli_prom_err(&env.cli, err);
}

static void report(void *ctx)
{
	struct inject_run *run = ctx;

	print_table(run);
	if (env.cli.prom_path)
		write_prom(run);
}

static void prom(void *ctx, enum loop_when when)
{
	write_prom(ctx);
}

/* --count reached: said once, on stderr */
static void tick(void *ctx)
{
	struct inject_run *run = ctx;

	if (!env.count || run->limit_said ||
	    maps_stat(run->obj->maps.stats, STAT_INJECTED, run->ncpu) < env.count)
		return;
	run->limit_said = true;
	fprintf(stderr, "roceinject: --count %llu reached: injecting no more "
		"(every packet passes untouched)\n", (unsigned long long)env.count);
}

static __u64 events_lost(void *ctx)
{
	struct inject_run *run = ctx;

	return maps_stat(run->obj->maps.stats, STAT_EVENTS_LOST, run->ncpu);
}

static const char *faults_str(__u32 faults, char *buf, int len)
{
	int o = 0;

	buf[0] = 0;
	for (int f = 0; f < FAULT_NR && o < len; f++)
		if (faults & (1U << f))
			o += snprintf(buf + o, len - o, "%s%s", o ? "," : "", fault_names[f]);
	return buf[0] ? buf : "none";
}

static int handle_event(void *ctx, void *data, size_t len)
{
	const struct inject_event *e = data;
	const struct pkt_info *pi = &e->pkt;
	char op[32], sa[ADDR_STRLEN], da[ADDR_STRLEN], fs[64];
	struct json_w w;

	faults_str(e->faults, fs, sizeof(fs));
	if (env.cli.json) {
		json_begin(&w, stdout);
		json_str(&w, "type", "inject");
		json_time(&w, cli_ktime_to_epoch(e->ts_ns));
		json_str(&w, "ifname", env.ifname);
		pkt_json_fields(&w, pi, true);
		json_str(&w, "faults", fs);
		json_end(&w);
		return 0;
	}
	cli_print_ktime(&env.cli, stdout, e->ts_ns);
	printf("%s:%u -> %s:%u %s qp=0x%x psn=%u %s\n",
	       pkt_addr_str(pi->family, pi->saddr, sa, sizeof(sa)), pi->sport,
	       pkt_addr_str(pi->family, pi->daddr, da, sizeof(da)), pi->dport,
	       roce_opcode_name(pi->opcode, op, sizeof(op)), pi->dqpn, pi->psn, fs);
	fflush(stdout);
	return 0;
}

/* what the selectors say, for the banner */
static void banner_selection(FILE *f)
{
	char a[ADDR_STRLEN];
	int any = 0;

	fprintf(f, " of ");
	if (env.qpn_set)
		any += fprintf(f, "QP 0x%x ", env.qpn);
	if (env.sport)
		any += fprintf(f, "UDP sport %u ", env.sport);
	if (env.saddr_set)
		any += fprintf(f, "from %s ", pkt_addr_str(env.family, env.saddr, a, sizeof(a)));
	if (env.daddr_set)
		any += fprintf(f, "to %s ", pkt_addr_str(env.family, env.daddr, a, sizeof(a)));
	for (int c = 0; c < CLASS_NR; c++)
		if (env.classes & (1U << c))
			any += fprintf(f, "%s ", class_names[c]);
	if (env.opcode >= 0)
		any += fprintf(f, "opcode 0x%02x ", env.opcode);
	if (env.psn_set)
		any += fprintf(f, "PSN %u-%u ", env.psn_lo, env.psn_hi);
	if (!any)
		fprintf(f, "every RoCE v2 packet ");
	if (env.every > 1)
		fprintf(f, "(every %lluth of each QP) ", (unsigned long long)env.every);
	if (env.prob < 1)
		fprintf(f, "(probability %g, seed %llu) ", env.prob, (unsigned long long)env.seed);
	if (env.count)
		fprintf(f, "(at most %llu) ", (unsigned long long)env.count);
}

static void banner(const struct netattach *na)
{
	FILE *f = env.cli.json ? stderr : stdout;
	char how[64], fs[64];

	fprintf(f, "Injecting %s", faults_str(env.faults, fs, sizeof(fs)));
	if (env.faults & (1U << FAULT_DELAY))
		fprintf(f, " %.3f ms", env.delay_ns / 1e6);
	if (env.faults & (1U << FAULT_QPN))
		fprintf(f, " (QPN to 0x%x)", env.new_qpn);
	if (env.faults & (1U << FAULT_PKEY))
		fprintf(f, " (P_Key to 0x%04x)", env.new_pkey);
	if (env.faults & (1U << FAULT_TRUNC))
		fprintf(f, " (UDP payload to %u bytes, IPv4)", env.trunc_len);
	banner_selection(f);
	fprintf(f, "on %s (%s)... Hit Ctrl-C to end.\n", env.ifname,
		netattach_describe(na, how, sizeof(how)));
	fflush(f);
}

static int run(struct inject_run *r, const struct netattach *na)
{
	struct loop lp = { .ctx = r, .prom = prom, .report = report, .tick = tick,
			   .events_lost = events_lost };

	banner(na);
	if (env.events) {
		lp.report = NULL;
		if (!loop_add_events(&lp, r->obj->maps.events, handle_event, NULL, NULL))
			return 1;
	}
	return loop_run(&lp, &env.cli) ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct inject_run r;
	struct netattach na;
	struct inject_guard guard;
	int ret = 1;

	cli_parse(&argp, argc, argv, NULL);
	cli_setup(&env.cli, CLI_CAP_BPF | CLI_CAP_PERFMON | CLI_CAP_NET_ADMIN);
	/* -N: the whole run in that namespace (the watchdog's netlink too) */
	cli_netns_enter(&env.cli);
	r.ncpu = libbpf_num_possible_cpus();
	if (r.ncpu <= 0)
		cli_die("cannot count CPUs");
	/* the watchdog first, so that it holds none of our BPF programs */
	if (inject_guard_start(&guard, &env.cli, env.ifname, env.faults & (1U << FAULT_DELAY)))
		return 1;
	r.obj = roceinject_load(&env, &na);
	if (r.obj) {
		inject_guard_attached(&guard, &na, &inject_tc_id);
		ret = run(&r, &na);
		netattach_detach(&na);
	}
	roceinject_bpf__destroy(r.obj);
	inject_guard_end(&guard);
	return ret;
}
