// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rxedrop: which RoCE packets did the kernel drop, in which function, and
 * for what reason. kfree_skb through tp_btf (raw tracepoint fallback);
 * reasons named from the running kernel's BTF.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rxedrop.h"
#include "rxedrop.skel.h"
#include "rxedrop_load.h"
#include "lib/cli.h"
#include "lib/btf_enum.h"
#include "lib/json.h"
#include "lib/ksyms.h"
#include "lib/loop.h"
#include "lib/maps.h"
#include "lib/pcapng.h"
#include "lib/probe.h"
#include "lib/prom.h"
#include "lib/roce_names.h"

#define MAX_ROWS 4096

static struct {
	struct cli_env cli;
	struct pcapng_args pcapng;
	bool events;
	bool stack;
	int scope;
	const char *ifname;
	int ifindex;
	unsigned int netns_inum;
	int port;
} env = { .scope = SCOPE_ROCE };

static struct pcapng *pcap;

static struct ksyms *ksyms;

const char *argp_program_version = "rxedrop (AgentXDP) " AX_VERSION;
static const char doc[] =
"Show which RoCE v2 packets the kernel drops, where and why.\n"
"\n"
"USAGE: rxedrop [OPTIONS] [interval] [count]\n"
"\n"
"Counts drops by kernel location and drop reason (names from this kernel's\n"
"BTF) and prints them every interval and at exit, most frequent first.\n"
"\n"
"EXAMPLES:\n"
"    rxedrop              # RoCE drops by location and reason until Ctrl-C\n"
"    rxedrop 5            # print every 5 seconds\n"
"    rxedrop -e           # one line per dropped RoCE packet\n"
"    rxedrop -e -s        # ... with the kernel stack\n"
"    rxedrop -U -i eth1   # any UDP dropped on eth1\n"
"    rxedrop -N blue -i veth0  # drops on veth0 of netns blue\n"
"    rxedrop -A -j        # every dropped packet, JSON lines\n"
"    rxedrop -w drops.pcapng   # ... and the dropped packets to a file\n"
"    rxedrop --prom /var/lib/prometheus/node-exporter/rxedrop.prom 15\n"
"                         # metrics for node_exporter every 15 s";

static const struct argp_option opts[] = {
	{ "events", 'e', NULL, 0, "Print one event per dropped packet", 0 },
	{ "stack", 's', NULL, 0, "With -e: add the kernel stack", 0 },
	{ "udp", 'U', NULL, 0, "Any UDP packet, not only RoCE v2", 0 },
	{ "all", 'A', NULL, 0, "Any packet (IP or not)", 0 },
	{ "interface", 'i', "IFACE", 0,
	  "Only drops of packets on IFACE (of -N's network namespace, else this one)", 0 },
	{ "port", 'P', "PORT", 0, "Only packets with PORT as UDP source or destination", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &env.cli;
		state->child_inputs[1] = &env.pcapng;
		break;
	case 'e':
		env.events = true;
		break;
	case 's':
		env.stack = true;
		break;
	case 'U':
		env.scope = SCOPE_UDP;
		break;
	case 'A':
		env.scope = SCOPE_ALL;
		break;
	case 'i':
		env.ifname = arg;
		break;
	case 'P':
		env.port = cli_arg_long(state, arg, 1, 65535, "port");
		break;
	case ARGP_KEY_END:
		cli_check_events(state, &env.cli, env.events, env.stack);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

PCAPNG_CLI_ARGP(argp, opts, parse_arg, doc);

struct row {
	struct drop_key key;
	__u64 count;
};

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static int cmp_keys(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->key.location != y->key.location)
		return x->key.location < y->key.location ? -1 : 1;
	if (x->key.reason != y->key.reason)
		return x->key.reason < y->key.reason ? -1 : 1;
	return x->key.check < y->key.check ? -1 : x->key.check > y->key.check;
}

/*
 * Counts as the programs keep them: they only grow (a drop site's slot on
 * one CPU, or its entry in the drops map), and an interval's rows are the
 * differences to the counts at the interval before. Nothing is reset
 * under the running programs, so no drop falls between a read and a
 * reset. Sorted by key, equal keys summed: one site may have a slot on
 * several CPUs and an entry in the map.
 */
struct counts {
	struct row *rows;
	int n, cap, ncpu;
};

static void counts_add(struct counts *c, const struct drop_key *k, __u64 n)
{
	if (!n)
		return;
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 256;
		struct row *r = realloc(c->rows, cap * sizeof(*r));

		if (!r)
			return;	/* the row is missing from this table only */
		c->rows = r;
		c->cap = cap;
	}
	c->rows[c->n].key = (struct drop_key){ .location = k->location, .reason = k->reason,
					      .check = k->check };
	c->rows[c->n++].count = n;
}

static int read_map_row(const void *key, const void *val, void *ctx)
{
	struct counts *c = ctx;

	counts_add(c, key, maps_percpu_sum(val, c->ncpu));
	return 0;
}

/* a slot's value per CPU, each CPU's its own drop site */
static int read_slot_row(const void *key, const void *val, void *ctx)
{
	struct counts *c = ctx;
	const struct drop_slot *sl = val;

	for (int cpu = 0; cpu < c->ncpu; cpu++)
		counts_add(c, &sl[cpu].key, sl[cpu].count);
	return 0;
}

static void counts_read(struct rxedrop_bpf *obj, struct counts *c)
{
	int j = 0;

	c->n = 0;
	maps_for_each(obj->maps.drops, read_map_row, c);
	maps_for_each(obj->maps.drop_slots, read_slot_row, c);
	qsort(c->rows, c->n, sizeof(*c->rows), cmp_keys);
	for (int i = 0; i < c->n; i++) {
		if (j && !cmp_keys(&c->rows[j - 1], &c->rows[i]))
			c->rows[j - 1].count += c->rows[i].count;
		else
			c->rows[j++] = c->rows[i];
	}
	c->n = j;
}

/* what a drop site counted at the last interval */
static __u64 counts_of(const struct counts *c, const struct row *r)
{
	const struct row *p = bsearch(r, c->rows, c->n, sizeof(*r), cmp_keys);

	return p ? p->count : 0;
}

/* the drops since the last interval, most first; with next_interval the
 * counts read now become the next interval's start */
static int read_rows(struct rxedrop_bpf *obj, int ncpu, struct row *rows,
		     bool next_interval)
{
	static struct counts now, last;
	struct counts t;
	int n = 0;

	now.ncpu = ncpu;
	counts_read(obj, &now);
	for (int i = 0; i < now.n && n < MAX_ROWS; i++) {
		__u64 d = now.rows[i].count - counts_of(&last, &now.rows[i]);

		if (d) {
			rows[n].key = now.rows[i].key;
			rows[n++].count = d;
		}
	}
	if (next_interval) {
		t = last;
		last = now;
		now = t;
	}
	qsort(rows, n, sizeof(*rows), cmp_rows);
	return n;
}

/*
 * --prom: counters must not go down while we run, but the table starts
 * from zero every interval, so what the table took is kept here as running
 * totals by function (no offset: one series per drop site, not per
 * instruction) and reason; a write adds what the interval has so far.
 */
#define PROM_SERIES 64
#define PROM_DROPS "agentxdp_rxedrop_drops_total"
#define PROM_LOST "agentxdp_rxedrop_events_lost_total"
#define PROM_RXE "agentxdp_rxedrop_rxe_consumed_total"

static const char *const prom_labels[] = { "location", "reason" };
static struct prom_totals totals;

/* r into the totals: by function (no offset) and reason */
static void totals_add(const struct row *r, bool once)
{
	char loc[128], reason[64];
	const char *v[2] = { loc, reason };

	ksyms_format(ksyms, r->key.location, loc, sizeof(loc), false);
	rxedrop_reason_str(r->key.reason, r->key.check, reason, sizeof(reason));
	prom_totals_add(&totals, v, r->count, once);
}

static void write_prom(struct rxedrop_bpf *obj, int ncpu)
{
	static struct row rows[MAX_ROWS];
	struct prom_file pf;
	int n, err;

	/* the totals so far plus the interval's drops so far */
	n = read_rows(obj, ncpu, rows, false);
	for (int i = 0; i < n; i++)
		totals_add(&rows[i], true);
	err = prom_open(&pf, env.cli.prom_path);
	if (err) {
		prom_totals_write(NULL, &totals, PROM_DROPS);
		cli_prom_err(&env.cli, err);
		return;
	}
	prom_family(&pf, PROM_DROPS, PROM_COUNTER,
		    "Packets the kernel dropped (kfree_skb), by function and drop "
		    "reason (names from the running kernel's BTF).");
	prom_totals_write(&pf, &totals, PROM_DROPS);
	prom_family(&pf, PROM_LOST, PROM_COUNTER,
		    "Drop events lost to a full ring buffer (-e); the counts "
		    "above are complete regardless.");
	prom_counter(&pf, PROM_LOST, NULL, 0,
		     maps_stat(obj->maps.stats, STAT_EVENTS_LOST, ncpu));
	prom_family(&pf, PROM_RXE, PROM_COUNTER,
		    "Packets rdma_rxe freed with kfree_skb after its queue pair took "
		    "them in (rxe_responder or rxe_receiver, rxe_completer): consumed, not drops, so "
		    "not in the drops above.");
	prom_counter(&pf, PROM_RXE, NULL, 0,
		     maps_stat(obj->maps.stats, STAT_RXE_CONSUMED, ncpu));
	err = prom_commit(&pf);
	if (err)
		cli_prom_err(&env.cli, err);
}

/* drops of sites and reasons the drops map had no room for (its size) */
static void warn_counts_lost(struct rxedrop_bpf *obj, int ncpu)
{
	static __u64 seen;
	__u64 lost = maps_stat(obj->maps.stats, STAT_COUNTS_LOST, ncpu);

	if (lost > seen)
		fprintf(stderr, "rxedrop: warning: %llu drops not counted: more "
			"than %u drop sites and reasons\n",
			(unsigned long long)(lost - seen),
			bpf_map__max_entries(obj->maps.drops));
	seen = lost;
}

static void print_counts(struct rxedrop_bpf *obj, int ncpu, __u64 *lost_seen)
{
	static struct row rows[MAX_ROWS];
	char sym[128], reason[64];
	__u64 lost = maps_stat(obj->maps.stats, STAT_EVENTS_LOST, ncpu);
	int n = read_rows(obj, ncpu, rows, true);
	struct json_w w;
	double now = cli_now_epoch();

	for (int i = 0; env.cli.prom_path && i < n; i++)
		totals_add(&rows[i], false);
	if (env.cli.json) {
		for (int i = 0; i < n; i++) {
			json_begin(&w, stdout);
			json_str(&w, "type", "drop_count");
			json_time(&w, now);
			json_str(&w, "location", ksyms_format(ksyms, rows[i].key.location,
					sym, sizeof(sym), false));
			json_str(&w, "reason", drop_reason_name(rows[i].key.reason,
					reason, sizeof(reason)));
			json_u64(&w, "reason_code", rows[i].key.reason);
			if (rows[i].key.check != RXE_CHECK_NONE)
				json_str(&w, "rxe_check", rxedrop_check_name(rows[i].key.check));
			json_u64(&w, "count", rows[i].count);
			json_end(&w);
		}
		return;
	}
	cli_print_timestamp_line(&env.cli, stdout);
	printf("%-36s %-28s %10s\n", "LOCATION", "REASON", "COUNT");
	for (int i = 0; i < n; i++)
		printf("%-36s %-28s %10llu\n",
		       ksyms_format(ksyms, rows[i].key.location, sym, sizeof(sym), true),
		       rxedrop_reason_str(rows[i].key.reason, rows[i].key.check, reason, sizeof(reason)),
		       (unsigned long long)rows[i].count);
	if (lost > *lost_seen)
		cli_warn_events_lost(&env.cli, lost - *lost_seen);
	*lost_seen = lost;
	warn_counts_lost(obj, ncpu);
	printf("\n");
	fflush(stdout);
}

/* what the main loop's callbacks work on */
struct rxedrop_run {
	struct rxedrop_bpf *obj;
	int ncpu;
	__u64 lost_seen;
};

static void report(void *ctx)
{
	struct rxedrop_run *r = ctx;

	print_counts(r->obj, r->ncpu, &r->lost_seen);
	if (env.cli.prom_path)
		write_prom(r->obj, r->ncpu);
}

static void prom(void *ctx, enum loop_when when)
{
	struct rxedrop_run *r = ctx;

	write_prom(r->obj, r->ncpu);
}

static __u64 events_lost(void *ctx)
{
	struct rxedrop_run *r = ctx;

	return maps_stat(r->obj->maps.stats, STAT_EVENTS_LOST, r->ncpu);
}

static const struct bpf_map *stacks;

/* an event's columns (an IPv4 address:port fits 21), the RoCE header last */
#define EVENT_FMT "%-10s %-21s %-21s %-16s "
#define EVENT_LOC_W 28

static void print_event_header(void)
{
	cli_print_time_header(&env.cli, stdout);
	printf(EVENT_FMT "%-*s %s\n", "IFACE", "SOURCE", "DESTINATION", "REASON",
	       EVENT_LOC_W, "LOCATION", "ROCE");
	fflush(stdout);
}

static int handle_event(void *ctx, void *data, size_t len)
{
	const struct drop_event *e = data;
	const struct pkt_info *pi = &e->pkt;
	char sym[128], reason[64], op[32], sa[PKT_END_STRLEN], da[PKT_END_STRLEN];
	bool roce = e->verdict == PKT_ROCE;
	double t = cli_ktime_to_epoch(e->ts_ns);
	struct json_w w;

	ksyms_format(ksyms, e->location, sym, sizeof(sym), true);
	if (pcap)
		rxedrop_write_packet(pcap, e, len, sym, t);
	if (!env.events)
		return 0;	/* -w alone: the table shows the counts */
	if (env.cli.json) {
		drop_reason_name(e->reason, reason, sizeof(reason));
		json_begin(&w, stdout);
		json_str(&w, "type", "drop");
		json_time(&w, t);
		json_str(&w, "ifname", e->ifname);
		json_u64(&w, "ifindex", e->ifindex);
		pkt_json_fields(&w, pi, roce);
		json_str(&w, "location", sym);
		json_str(&w, "reason", reason);
		json_u64(&w, "reason_code", e->reason);
		if (e->check != RXE_CHECK_NONE)
			json_str(&w, "rxe_check", rxedrop_check_name(e->check));
		if (env.stack)
			maps_print_stack(ksyms, stacks, e->stack_id, &w);
		json_end(&w);
		return 0;
	}
	rxedrop_reason_str(e->reason, e->check, reason, sizeof(reason));
	cli_print_ktime(&env.cli, stdout, e->ts_ns);
	printf(EVENT_FMT, e->ifname[0] ? e->ifname : "-", pkt_end_str(pi, true, sa, sizeof(sa)),
	       pkt_end_str(pi, false, da, sizeof(da)), reason);
	if (roce)
		printf("%-*s %s qp=0x%x psn=%u", EVENT_LOC_W, sym,
		       roce_opcode_name(pi->opcode, op, sizeof(op)), pi->dqpn, pi->psn);
	else
		printf("%s", sym);
	printf("\n");
	if (env.stack)
		maps_print_stack(ksyms, stacks, e->stack_id, NULL);
	fflush(stdout);
	return 0;
}

/* the banner, then tables or events until the end; 0 or 1 */
static int run(struct rxedrop_bpf *obj, int ncpu, bool use_tp_btf, bool reasons)
{
	struct rxedrop_run r = { .obj = obj, .ncpu = ncpu };
	struct loop lp = { .ctx = &r, .prom = prom, .report = report,
			   .events_lost = events_lost };
	const char *checks = rxedrop_checks_hooked(obj);

	/* on stderr with -j, so stdout stays pure JSON lines */
	fprintf(env.cli.json ? stderr : stdout,
		"Tracing %s drops (kfree_skb via %s%s)... Hit Ctrl-C to end.\n",
		       env.scope == SCOPE_ROCE ? "RoCE v2" :
		       env.scope == SCOPE_UDP ? "UDP" : "all packet",
		use_tp_btf ? "tp_btf" : "raw_tp",
		reasons ? "" : "; drop reasons unavailable: this kernel's "
			       "kfree_skb has none (5.17+), counted by location");
	/* where the checks are not hooked, rxe_rcv's drops stay unnamed */
	if (checks)
		fprintf(env.cli.json ? stderr : stdout,
			"rdma_rxe's receive checks named (%s on rxe_rcv, rxe_pool_get_index, "
			"check_keys, rxe_icrc_check; header and QP state by elimination)\n",
			checks);
	fflush(stdout);
	if (env.events && !env.cli.json)
		print_event_header();
	if (env.events)
		lp.report = NULL;
	if (env.events || pcap) {
		if (!loop_add_events(&lp, obj->maps.events, handle_event, NULL, NULL))
			return 1;
	}
	return loop_run(&lp, &env.cli) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct rxedrop_bpf *obj;
	int ncpu, ret = 1;
	bool use_tp_btf, reasons;

	cli_parse(&argp, argc, argv, NULL);
	cli_setup(&env.cli, CLI_CAP_BPF | CLI_CAP_PERFMON);
	if (env.pcapng.path)
		pcap = pcapng_open_or_die(env.pcapng.path, argp_program_version,
					  env.pcapng.snaplen);
	prom_totals_init(&totals, prom_labels, 2, PROM_SERIES);
	/* an index names a device only within its namespace */
	if (env.cli.netns || env.ifname)
		env.netns_inum = cli_netns_inum(&env.cli);
	if (env.ifname)
		env.ifindex = cli_ifindex(&env.cli, env.ifname);
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		cli_die("cannot count CPUs");
	/* before 5.17 neither the enum nor the tracepoint's argument exist:
	 * the banner says so, and the reason column shows "-" */
	reasons = rxedrop_has_reason();
	if (drop_reasons_load() && reasons)
		cli_err("no BTF for enum skb_drop_reason: reasons print as numbers");
	ksyms = ksyms_load();
	if (!ksyms)
		cli_die("%s", ksyms_strerror(errno));

	{
		struct rxedrop_load_opts lo = {
			.cli = &env.cli, .scope = env.scope, .ifindex = env.ifindex,
			.netns_inum = env.netns_inum, .port = env.port,
			.events = env.events || pcap, .stack = env.stack, .ksyms = ksyms,
			.snaplen = pcap ? env.pcapng.snaplen : 0,
		};

		obj = rxedrop_load(&lo, &use_tp_btf);
	}
	if (obj) {
		stacks = obj->maps.stacks;
		ret = run(obj, ncpu, use_tp_btf, reasons);
	}
	rxedrop_bpf__destroy(obj);
	if (pcapng_close(pcap) && ret == 0)
		ret = 1;	/* pcapng_close() said why */
	ksyms_free(ksyms);
	prom_totals_free(&totals);
	return ret;
}
