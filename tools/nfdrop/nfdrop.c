// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nfdrop: which netfilter hook, table, chain and rule dropped a packet,
 * without changing the ruleset or loading a module.
 *
 * The kernel side counts NETFILTER_DROP frees (tools/nfdrop/nfdrop.bpf.c). Where
 * fexit is allowed it names the table and base chain itself; where it is
 * not, the kernel stack names the hook, and this file names the chains
 * registered there from the ruleset of the packet's network namespace,
 * marking what it had to infer. --trace-rules adds nftables' own tracing
 * (a temporary helper table) for rule-exact answers.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "nfdrop.h"
#include "nfdrop.skel.h"
#include "nfdrop_hold.h"
#include "nfdrop_load.h"
#include "nfdrop_names.h"
#include "nfdrop_output.h"
#include "nfdrop_row.h"
#include "nfdrop_trace.h"
#include "lib/cli.h"
#include "lib/btf_enum.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/ksyms.h"
#include "lib/loop.h"
#include "lib/maps.h"
#include "lib/netns.h"
#include "lib/pcapng.h"
#include "nfrules.h"
#include "lib/probe.h"
#include "lib/prom.h"
#include "lib/roce_names.h"

#define MAX_KEYS	8192

static const char *const method_names[NFDROP_METHOD_NR] = { "auto", "fexit", "kfree" };

static struct {
	struct cli_env cli;
	struct pcapng_args pcapng;
	bool events;
	bool stack;
	bool all;		/* -A: any packet, not only RoCE v2 */
	bool trace_rules;
	int method;
	int port;
	const char *ifname;
	int ifindex;
	unsigned int netns_inum;
	int family;		/* NFR_PROTO_*, 0: any */
	const char *hook;	/* hook name, NULL: any */
} env = {
	.pcapng.write_doc = "Also write each dropped packet (its first --snaplen bytes) to "
			    "FILE as pcapng, its hook, table, chain, rule and verdict as the "
			    "packet's comment (without -e: as the report that counts it "
			    "names them)",
};

static struct pcapng *pcap;

const char *argp_program_version = "nfdrop (AgentXDP) " AX_VERSION;
static const char doc[] =
"Show which netfilter hook, table, chain and rule dropped packets.\n"
"\n"
"USAGE: nfdrop [OPTIONS] [interval] [count]\n"
"\n"
"Counts netfilter drops of RoCE v2 packets (with -A: of every packet) by\n"
"network namespace, hook, table, chain, rule and verdict (DROP, REJECT, or\n"
"the chain's policy) and prints them every interval and at exit. Where\n"
"the kernel allows fexit, the table and chain come from the kernel;\n"
"elsewhere the kernel stack names the hook and the ruleset of the packet's\n"
"namespace names the chains there. The rule comes\n"
"from the evidence: the packet itself run through the rules of its hook\n"
"(jumps, gotos, verdict maps, sets followed), the rules' own counters (a\n"
"rule whose counter did not move dropped nothing) and REJECT replies. A\n"
"field followed by '?' (in JSON: listed in \"inferred\") is not settled by\n"
"that evidence, and the remaining candidates are listed. The ruleset is\n"
"only read, never changed, unless --trace-rules is given.\n"
"\n"
"EXAMPLES:\n"
"    nfdrop                  # netfilter drops of RoCE v2 until Ctrl-C\n"
"    nfdrop 5                # ... every 5 seconds\n"
"    nfdrop -e               # one line per dropped RoCE packet\n"
"    nfdrop -A --hook input -4   # any packet, IPv4 drops at the input hook\n"
"    nfdrop -N blue --trace-rules   # rule-exact, in netns blue\n"
"    nfdrop -A -j            # every netfilter drop, JSON lines\n"
"    nfdrop -e -w drops.pcapng   # ... and the dropped packets to a file";

enum {
	OPT_ROCE = 0x2000, OPT_FAMILY, OPT_HOOK, OPT_TRACE_RULES, OPT_METHOD,
};

static const struct argp_option opts[] = {
	{ "events", 'e', NULL, 0, "Print one event per dropped packet", 0 },
	{ "stack", 's', NULL, 0, "With -e: add the kernel stack", 0 },
	{ "interface", 'i', "IFACE", 0,
	  "Only packets on IFACE (in or out) of the namespace of -N, else this one", 0 },
	{ "port", 'P', "PORT", 0,
	  "Only UDP packets with PORT as source or destination (with -A: of any UDP)", 0 },
	{ "all", 'A', NULL, 0, "Any packet, not only RoCE v2", 0 },
	{ "roce", OPT_ROCE, NULL, 0,
	  "Only RoCE v2, UDP to the RoCE port (the default; undoes -A)", 0 },
	{ NULL, '4', NULL, 0, "Only the ip family (IPv4 hooks)", 0 },
	{ NULL, '6', NULL, 0, "Only the ip6 family (IPv6 hooks)", 0 },
	{ "family", OPT_FAMILY, "FAMILY", 0,
	  "Only hooks of FAMILY: ip, ip6, inet (both), arp, bridge, netdev", 0 },
	{ "hook", OPT_HOOK, "HOOK", 0,
	  "Only HOOK: prerouting, input, forward, output, postrouting, ingress, egress", 0 },
	{ "trace-rules", OPT_TRACE_RULES, NULL, 0,
	  "Rule-exact answers from nftables tracing: adds a helper table "
	  NFDROP_TRACE_TABLE_PREFIX "<pid> (RoCE v2 only, or -P's port with -A) to the namespace "
	  "of -N (else this one) while running; removes it, and any left by a "
	  "killed run, on exit", 0 },
	{ "method", OPT_METHOD, "auto|fexit|kfree", 0,
	  "fexit on nft_do_chain/ipt_do_table, or kfree_skb + stack (default auto)", 0 },
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
	case 'i':
		env.ifname = arg;
		break;
	case 'P':
		env.port = cli_arg_long(state, arg, 1, 65535, "port");
		break;
	case OPT_ROCE:
		env.all = false;
		break;
	case 'A':
		env.all = true;
		break;
	case '4':
	case '6':
	case OPT_FAMILY: {
		int fam = key == '4' ? NFR_PROTO_IPV4 : key == '6' ? NFR_PROTO_IPV6 :
			  nfr_family_by_name(arg);

		if (fam < 0)
			argp_failure(state, 1, 0, "unknown family '%s' (ip, ip6, inet, "
				     "arp, bridge, netdev)", arg);
		if (env.family && env.family != fam)
			argp_failure(state, 1, 0, "only one family filter");
		env.family = fam;
		break;
	}
	case OPT_HOOK:
		if (!nfr_hook_name_valid(arg))
			argp_failure(state, 1, 0, "unknown hook '%s' (prerouting, input, "
				     "forward, output, postrouting, ingress, egress)", arg);
		env.hook = arg;
		break;
	case OPT_TRACE_RULES:
		env.trace_rules = true;
		break;
	case OPT_METHOD:
		env.method = cli_choice(arg, method_names, NFDROP_METHOD_NR);
		if (env.method < 0)
			argp_failure(state, 1, 0, "unknown method '%s' (auto, fexit, kfree)", arg);
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

static struct ksyms *ksyms;
static struct nfdrop_bpf *obj;
static struct nfdrop_ctx nfc;	/* what the names, output and evidence parts share */
static struct nfdrop_attached att;	/* for the banner */
static int ncpu;

/*
 * Keys seen in this interval, named with the ruleset read when they
 * appeared. A row is not small (5 KB: candidates, evidence) and counts
 * are kept per packet signature: at most MAX_SEEN keys are named early,
 * the rest at report time; a hash finds them (a flood of signatures
 * would make a linear search quadratic).
 */
#define MAX_SEEN	256
#define SEEN_SLOTS	1024	/* a power of two, over 2 x MAX_SEEN */

struct seen_key {
	struct nfd_key key;
	struct nfdrop_row *names;
};
static struct seen_key seen[MAX_SEEN];
static int nseen;
static short seen_slot[SEEN_SLOTS];	/* index + 1, 0 empty */

/* the slot of k: where it is, or the empty one where it would go */
static unsigned int seen_find(const struct nfd_key *k)
{
	return hash_slot(seen_slot, SEEN_SLOTS, seen, sizeof(seen[0]), k, sizeof(*k));
}

static void seen_reset(void)
{
	nseen = 0;
	memset(seen_slot, 0, sizeof(seen_slot));
}

static void scan_new_keys(void)
{
	static struct nfd_key keys[MAX_KEYS];
	int n = maps_keys(obj->maps.drops, keys, MAX_KEYS);

	for (int i = 0; i < n && nseen < MAX_SEEN; i++) {
		const struct nfd_key k = keys[i];
		unsigned int slot = seen_find(&k);

		if (seen_slot[slot])
			continue;
		if (!seen[nseen].names && !(seen[nseen].names = malloc(sizeof(struct nfdrop_row))))
			return;
		seen[nseen].key = k;
		nfdrop_rules_for(&nfc, k.netns, NFDROP_RS_FRESH);
		nfdrop_names(&nfc, &k, NFDROP_RS_CACHED, seen[nseen].names);
		seen_slot[slot] = ++nseen;
	}
}

/* the row named when k was first seen, NULL when it was not */
static struct nfdrop_row *seen_names(const struct nfd_key *k)
{
	unsigned int slot = seen_find(k);

	return seen_slot[slot] ? seen[seen_slot[slot] - 1].names : NULL;
}

/* rule-exact counts from the trace, taken out of a row into new rows */
static bool traced_row(const struct nfdrop_row *r)
{
	return nfdrop_trace_covers(r->netns) && r->engine != NFR_ENGINE_LEGACY;
}

static int split_by_trace(const struct nfd_key *k, struct nfdrop_row *r, struct nfdrop_row *out,
			  int max)
{
	struct nfdrop_ns_rules *nr;

	if (!traced_row(r))
		return 0;
	nr = nfdrop_rules_for(&nfc, r->netns, NFDROP_RS_CACHED);
	return nfdrop_trace_split(k, r, nr ? &nr->rs : NULL, out, max);
}

/* the trace's losses of a report: packets of traced rows no trace drop
 * was given to, and the trace's own counts */
static struct {
	struct nfdrop_trace_stats st;
	unsigned long long untraced;
} tr_report;

/* a row's packets the trace left: with trace messages lost they may be
 * any rule's, so nothing about them is certain */
static void untraced_rest(struct nfdrop_row *r)
{
	if (!traced_row(r) || !r->packets)
		return;
	tr_report.untraced += r->packets;
	if (!tr_report.st.overruns)
		return;
	r->inferred |= NFDROP_INF_RULE | NFDROP_INF_VERDICT;
	if (r->source != NFDROP_SRC_FEXIT)
		r->inferred |= NFDROP_INF_TABLE | NFDROP_INF_CHAIN;
	r->note = "trace messages were lost: these packets are untraced";
}

static bool row_filtered(const struct nfdrop_row *r)
{
	if (env.family) {
		if (env.family == NFR_PROTO_INET) {
			if (r->pf != NFR_PROTO_IPV4 && r->pf != NFR_PROTO_IPV6)
				return true;
		} else if (r->pf != env.family) {
			return true;
		}
	}
	return env.hook && strcasecmp(env.hook, r->hook);
}

/* the same candidates listed: rows that list different ones stay apart,
 * so that every row lists all that remain for its packets */
static bool same_cands(const struct nfdrop_row *a, const struct nfdrop_row *b)
{
	if (a->ncands != b->ncands)
		return false;
	for (int i = 0; i < a->ncands; i++) {
		const struct nfdrop_cand *x = &a->cands[i], *y = &b->cands[i];

		if (x->engine != y->engine || x->family != y->family ||
		    strcmp(x->table, y->table) || strcmp(x->chain, y->chain) ||
		    x->nrules != y->nrules || x->policy_cand != y->policy_cand)
			return false;
		for (int j = 0; j < x->nrules && j < NFDROP_MAX_HITS; j++)
			if (x->rules[j].handle != y->rules[j].handle ||
			    strcmp(x->rules[j].chain, y->rules[j].chain))
				return false;
	}
	return true;
}

static bool same_row(const struct nfdrop_row *a, const struct nfdrop_row *b)
{
	return a->netns == b->netns && a->pf == b->pf && !strcmp(a->hook, b->hook) &&
	       a->engine == b->engine && a->table_family == b->table_family &&
	       !strcmp(a->table, b->table) && !strcmp(a->chain, b->chain) &&
	       !strcmp(a->rule_chain, b->rule_chain) && a->handle == b->handle &&
	       a->verdict == b->verdict && a->inferred == b->inferred &&
	       a->source == b->source &&
	       (!(a->inferred & NFDROP_INF_RULE) || same_cands(a, b));
}

/* ---- Prometheus text exposition (--prom) ---- */

/*
 * Counters must not go down while we run, but reports drain the BPF map:
 * what was drained is kept here as running totals, one series per
 * namespace, hook, table, chain, rule and verdict (bounded by the
 * rulesets; a cap sums any excess into "other").
 */
#define PROM_DROPS "agentxdp_nfdrop_drops_total"
#define PROM_LOST "agentxdp_nfdrop_events_lost_total"
#define PROM_NLABELS 9

static struct prom_totals totals;
static const char *const prom_names[PROM_NLABELS] = {
	"netns", "hook_family", "hook", "table_family", "table", "chain",
	"rule_handle", "verdict", "inferred",
};

static void prom_add(const struct nfdrop_row *r)
{
	char v[PROM_NLABELS][256];
	const char *vp[PROM_NLABELS];

	if (!env.cli.prom_path)
		return;
	snprintf(v[0], sizeof(v[0]), "%s", r->netns_name);
	snprintf(v[1], sizeof(v[1]), "%s", r->pf ? nfdrop_family_str(r->pf) : "");
	snprintf(v[2], sizeof(v[2]), "%s", r->hook);
	snprintf(v[3], sizeof(v[3]), "%s", r->chain_known && r->engine == NFR_ENGINE_NFT ?
		 nfdrop_family_str(r->table_family) : "");
	snprintf(v[4], sizeof(v[4]), "%s", r->chain_known ? r->table : "");
	snprintf(v[5], sizeof(v[5]), "%s", r->chain_known ? r->chain : "");
	if (r->rule_known)
		snprintf(v[6], sizeof(v[6]), "%llu", r->handle);
	else
		v[6][0] = 0;
	snprintf(v[7], sizeof(v[7]), "%s", nfdrop_verdict_names[r->verdict]);
	snprintf(v[8], sizeof(v[8]), "%s", r->inferred ? "true" : "false");
	for (int i = 0; i < PROM_NLABELS; i++)
		vp[i] = v[i];
	prom_totals_add(&totals, vp, r->packets, false);
}

static __u64 read_stat(__u32 idx);

static void write_prom(void)
{
	struct prom_file pf;
	int err;

	if (!env.cli.prom_path)
		return;
	err = prom_open(&pf, env.cli.prom_path);
	if (err) {
		cli_prom_err(&env.cli, err);
		return;
	}
	prom_family(&pf, PROM_DROPS, PROM_COUNTER,
		    "Packets netfilter dropped, by network namespace, hook, table, "
		    "chain, rule handle and verdict (DROP, REJECT, POLICY); "
		    "inferred=\"true\" where a field was inferred from the ruleset.");
	prom_totals_write(&pf, &totals, PROM_DROPS);
	prom_family(&pf, PROM_LOST, PROM_COUNTER,
		    "Drop events lost to a full ring buffer (-e); the counts "
		    "above are complete regardless.");
	prom_counter(&pf, PROM_LOST, NULL, 0, read_stat(NFD_STAT_EVENTS_LOST));
	err = prom_commit(&pf);
	if (err)
		cli_prom_err(&env.cli, err);
}

/* ---- counts ---- */

static __u64 read_stat(__u32 idx)
{
	return maps_stat(obj->maps.stats, idx, ncpu);
}

static int cmp_rows(const void *a, const void *b)
{
	const struct nfdrop_row *x = a, *y = b;

	return x->packets < y->packets ? 1 : x->packets > y->packets ? -1 : 0;
}

static struct nfdrop_row *rows;
static int nrows, caprows;

static struct nfdrop_row *row_add(void)
{
	if (nrows == caprows) {
		int cap = caprows ? caprows * 2 : 64;
		struct nfdrop_row *n = realloc(rows, cap * sizeof(*n));

		if (!n)
			return NULL;
		rows = n;
		caprows = cap;
	}
	return &rows[nrows++];
}

/* the index of the row r went into, -1 when none (no packets, filtered) */
static int merge_row(const struct nfdrop_row *r)
{
	struct nfdrop_row *d;

	if (!r->packets || row_filtered(r))
		return -1;
	prom_add(r);
	for (int i = 0; i < nrows; i++)
		if (same_row(&rows[i], r)) {
			rows[i].packets += r->packets;
			rows[i].rejected += r->rejected;
			rows[i].ct_states |= r->ct_states;
			return i;
		}
	d = row_add();
	if (!d)
		return -1;
	*d = *r;
	return nrows - 1;
}

/* -w: the row the packets of a key went into: one, none, or several
 * (the trace split them) */
static int settle_merge(int row, int merged)
{
	if (merged < 0 || row == merged)
		return row;
	return row == NFDROP_HOLD_FILTERED ? merged : NFDROP_HOLD_SPLIT;
}

/* drain the map into rows (kept until the next report) */
static void collect_rows(void)
{
	static struct nfd_key keys[MAX_KEYS];
	static unsigned long long pk[MAX_KEYS], rjk[MAX_KEYS];
	static struct nfdrop_row named, split[8];	/* 5 KB each: not on the stack */
	int n;

	nfdrop_trace_drain();
	n = nfdrop_drain(obj, keys, pk, rjk, MAX_KEYS);
	nfdrop_trace_drain();	/* the trace of drops the drain just counted */
	nfdrop_trace_stats(&tr_report.st);
	tr_report.untraced = 0;
	for (int i = 0; i < n; i++) {
		struct nfdrop_row *r;
		int row = NFDROP_HOLD_FILTERED;

		if (!pk[i])
			continue;
		/* a key is drained once: its seen row is settled in place */
		r = seen_names(&keys[i]);
		if (!r) {
			r = &named;
			nfdrop_names(&nfc, &keys[i], NFDROP_RS_CACHED, r);
		}
		nfdrop_settle(&nfc, r, pk[i], rjk[i]);
		for (int s = split_by_trace(&keys[i], r, split, 8); s > 0; s--)
			row = settle_merge(row, merge_row(&split[s - 1]));
		untraced_rest(r);
		row = settle_merge(row, merge_row(r));
		if (pcap && !env.events)
			nfdrop_hold_settle(&keys[i], row);
	}
	ev_counters_advance();
	nfdrop_trace_expire();
}

/* what --trace-rules could not attribute in this report */
static void json_trace_stats(double now)
{
	struct json_w w;

	json_begin(&w, stdout);
	json_str(&w, "type", "nf_trace_stats");
	json_time(&w, now);
	json_u64(&w, "trace_overruns", tr_report.st.overruns);
	json_u64(&w, "trace_overruns_total", tr_report.st.overruns_total);
	json_u64(&w, "packets_untraced", tr_report.untraced);
	json_u64(&w, "trace_drops_untied", tr_report.st.untied);
	json_str(&w, "tracing", nfdrop_trace_stopped() ? "stopped" : "on");
	json_end(&w);
}

static void print_counts(__u64 *lost_seen)
{
	struct json_w w;
	double now = cli_now_epoch();
	__u64 lost;

	collect_rows();
	ev_check_rows(rows, nrows);
	/* the rows are final: the packets they count go to the file */
	if (pcap)
		nfdrop_hold_write(rows, nrows);
	seen_reset();
	qsort(rows, nrows, sizeof(*rows), cmp_rows);
	write_prom();
	lost = read_stat(NFD_STAT_EVENTS_LOST);

	if (env.cli.json) {
		for (int i = 0; i < nrows; i++) {
			json_begin(&w, stdout);
			json_str(&w, "type", "nf_drop_count");
			json_time(&w, now);
			nfdrop_json_row_fields(&w, &nfc, &rows[i]);
			json_u64(&w, "packets", rows[i].packets);
			json_u64(&w, "rejected", rows[i].rejected);
			json_end(&w);
		}
		if (nfdrop_trace_fd() >= 0)
			json_trace_stats(now);
		nrows = 0;
		return;
	}
	cli_print_timestamp_line(&env.cli, stdout);
	printf("%-10s %-15s %-16s %-16s %-7s %9s\n", "NETNS", "HOOK", "TABLE",
	       "CHAIN", "VERDICT", "COUNT");
	for (int i = 0; i < nrows; i++)
		nfdrop_text_row(&rows[i]);
	if (tr_report.st.overruns)
		printf("WARNING: trace messages lost (the trace socket overran %llu times): "
		       "%llu packets untraced\n", tr_report.st.overruns, tr_report.untraced);
	if (tr_report.st.untied)
		printf("WARNING: %llu traced drops could not be tied to a counted packet\n",
		       tr_report.st.untied);
	if (nfdrop_trace_stopped())
		printf("WARNING: tracing stopped: the --trace-rules table was deleted\n");
	if (lost > *lost_seen)
		cli_warn_events_lost(&env.cli, lost - *lost_seen);
	*lost_seen = lost;
	printf("\n");
	fflush(stdout);
	nrows = 0;
}

/* ---- events ---- */

/* -w: the packet, its row as -j names it in the comment */
static void write_packet(const struct nfd_event *e, const struct pkt_cap *cap,
			 const struct nfdrop_row *r, double t)
{
	static const struct pkt_cap none;
	char comment[1024];

	nfdrop_row_comment(r, NULL, comment, sizeof(comment));
	pcapng_write_cap(pcap, e->rec.ifname, cap ? cap : &none, t, comment);
}

/* -w without -e: a packet no report settled, with what the kernel and the
 * ruleset name without the counters, and why in words */
static bool write_unsettled(const struct nfd_event *e, const struct pkt_cap *cap,
			    const char *why)
{
	static struct nfdrop_row r;	/* 5 KB: not on the stack */
	char comment[1024];

	nfdrop_names(&nfc, &e->key, NFDROP_RS_CACHED, &r);
	if (row_filtered(&r))
		return false;
	nfdrop_row_comment(&r, why, comment, sizeof(comment));
	pcapng_write_cap(pcap, e->rec.ifname, cap, cli_ktime_to_epoch(e->ts_ns), comment);
	return true;
}

static void print_event(const struct nfd_event *e, const struct pkt_cap *cap)
{
	const struct pkt_info *pi = &e->rec.pkt;
	bool roce = e->rec.verdict == PKT_ROCE;
	char sa[ADDR_STRLEN], da[ADDR_STRLEN], op[32], where[400], hook[32];
	char verdict[16];
	double t = cli_ktime_to_epoch(e->ts_ns);
	static struct nfdrop_row resolved, split[1];	/* 5 KB each: not on the stack */
	const struct nfdrop_row *r = &resolved;
	struct json_w w;

	nfdrop_trace_drain();
	nfdrop_resolve(&nfc, &e->key, 1, e->rec.rejected, NFDROP_RS_TTL, &resolved);
	if (split_by_trace(&e->key, &resolved, split, 1) == 1)
		r = &split[0];
	if (row_filtered(r))
		return;
	if (pcap)
		write_packet(e, cap, r, t);
	if (env.cli.json) {
		json_begin(&w, stdout);
		json_str(&w, "type", "nf_drop");
		json_time(&w, t);
		json_str(&w, "ifname", e->rec.ifname);
		json_u64(&w, "ifindex", e->rec.ifindex);
		pkt_json_fields(&w, pi, roce);
		nfdrop_json_row_fields(&w, &nfc, r);
		json_bool(&w, "rejected", e->rec.rejected);
		if (env.stack)
			maps_print_stack(ksyms, obj->maps.stacks, e->rec.stack_id, &w);
		json_end(&w);
		return;
	}
	cli_print_ktime(&env.cli, stdout, e->ts_ns);
	pkt_addr_str(pi->family, pi->saddr, sa, sizeof(sa));
	pkt_addr_str(pi->family, pi->daddr, da, sizeof(da));
	snprintf(hook, sizeof(hook), "%s %s", r->pf ? nfdrop_family_str(r->pf) : "?",
		 r->hook[0] ? r->hook : "?");
	if (!r->chain_known)
		snprintf(where, sizeof(where), "?");
	else
		snprintf(where, sizeof(where), "%s%s%s%s/%s%s",
			 r->engine == NFR_ENGINE_NFT ? nfdrop_family_str(r->table_family) : "",
			 r->engine == NFR_ENGINE_NFT ? " " : "", r->table,
			 r->inferred & NFDROP_INF_TABLE ? "?" : "", r->chain,
			 r->inferred & NFDROP_INF_CHAIN ? "?" : "");
	if (r->rule_known && !(r->inferred & NFDROP_INF_RULE)) {
		size_t o = strlen(where);

		snprintf(where + o, sizeof(where) - o, " #%llu", r->handle);
	}
	snprintf(verdict, sizeof(verdict), "%s%s", nfdrop_verdict_names[r->verdict],
		 r->verdict != NFDROP_V_UNKNOWN && (r->inferred & NFDROP_INF_VERDICT) ? "?" : "");
	printf("%-10s %-15s %-12s %-22s %-7s", r->netns_name,
	       e->rec.ifname[0] ? e->rec.ifname : "-", hook, where, verdict);
	if (pi->family) {
		printf(" %s", sa);
		if (pi->sport || pi->dport)
			printf(":%u", pi->sport);
		printf(" -> %s", da);
		if (pi->sport || pi->dport)
			printf(":%u", pi->dport);
	}
	if (roce)
		printf(" %s qp=0x%x psn=%u", roce_opcode_name(pi->opcode, op, sizeof(op)),
		       pi->dqpn, pi->psn);
	printf("\n");
	if (r->rule_known && !(r->inferred & NFDROP_INF_RULE))
		printf("    rule: %s\n", r->rule_text);
	if (env.stack)
		maps_print_stack(ksyms, obj->maps.stacks, e->rec.stack_id, NULL);
	fflush(stdout);
	return;
}


/*
 * Events wait for the counters: a batch read from the ring buffer is
 * printed after a counter snapshot of its namespaces, and the window
 * starts at the snapshot taken before the previous batch was read (see
 * ev_counters_pre()), so every event's rule counter moved inside it.
 */
#define EVENT_BATCH	4096
#define EVENT_SPACING_MS 100	/* at most ten snapshot pairs a second */

static struct nfd_event *pending;
static struct pkt_cap *pending_cap;	/* -w: the packets' bytes */
static int npending;

/* batch_end: the batch is read; else the queue is full mid-batch, and
 * the window must not move on yet */
static void flush_events(bool batch_end)
{
	for (int i = 0; i < npending; i++) {
		bool dup = false;

		for (int j = 0; j < i && !dup; j++)
			dup = pending[j].key.netns == pending[i].key.netns;
		if (!dup)
			ev_counters_post(pending[i].key.netns);
	}
	for (int i = 0; i < npending; i++)
		print_event(&pending[i], pending_cap ? &pending_cap[i] : NULL);
	npending = 0;
	if (batch_end)
		ev_counters_advance();
}

static int handle_event(void *ctx, void *data, size_t len)
{
	const struct nfd_event_cap *ec = data;
	const struct pkt_cap *cap = pcap && len >= sizeof(*ec) ? &ec->cap : NULL;

	if (!pending && !(pending = calloc(EVENT_BATCH, sizeof(*pending)))) {
		print_event(data, cap);	/* without counters, but not lost */
		return 0;
	}
	if (pcap && !pending_cap && !(pending_cap = calloc(EVENT_BATCH, sizeof(*pending_cap)))) {
		print_event(data, cap);
		return 0;
	}
	if (npending == EVENT_BATCH)
		flush_events(false);
	if (pending_cap)
		memcpy(&pending_cap[npending], cap ? cap : &(struct pkt_cap){}, sizeof(*cap));
	memcpy(&pending[npending++], data, sizeof(*pending));
	return 0;
}

/*
 * -w without -e: the table stays as it is (its counter windows are the
 * reports'), and each packet is held until the report that counts it
 * settles its row (nfdrop_hold.h): its comment then names what that
 * report names.
 */
static int handle_packet_only(void *ctx, void *data, size_t len)
{
	const struct nfd_event_cap *ec = data;

	if (len >= sizeof(*ec))
		nfdrop_hold_add(&ec->e, &ec->cap);
	return 0;
}

/* before a batch is read: the snapshot that starts the next window */
static void read_batch_prep(struct timespec *last)
{
	struct timespec now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - last->tv_sec) * 1000 + (now.tv_nsec - last->tv_nsec) / 1000000;
	if (ms >= 0 && ms < EVENT_SPACING_MS)
		usleep((EVENT_SPACING_MS - ms) * 1000);
	ev_counters_pre_all();
	clock_gettime(CLOCK_MONOTONIC, last);
}

/* ---- set-up ---- */

/* the main loop's callbacks and sources */
struct nfdrop_run {
	struct ring_buffer *rb;
	__u64 lost_seen;
};

static void on_report(void *ctx)
{
	struct nfdrop_run *r = ctx;

	print_counts(&r->lost_seen);
}

static void on_tick(void *ctx)
{
	scan_new_keys();
}

/*
 * -e: the file's counts from the kernel's map, not from the events (a
 * full ring buffer loses events, never counts). The map is drained into
 * rows of their own, named as a report would name them; --trace-rules
 * drops are left to the events. The drain takes no counter snapshots,
 * and none is left between two batches of events (flush_events() ends
 * each window), so these rows, which span many batches, weigh no
 * counters.
 */
static void prom_collect(void)
{
	static struct nfd_key keys[MAX_KEYS];
	static unsigned long long pk[MAX_KEYS], rjk[MAX_KEYS];
	static struct nfdrop_row r;	/* 5 KB: not on the stack */
	int n = nfdrop_drain_counts(obj, keys, pk, rjk, MAX_KEYS);

	for (int i = 0; i < n; i++) {
		if (!pk[i])
			continue;
		nfdrop_resolve(&nfc, &keys[i], pk[i], rjk[i], NFDROP_RS_TTL, &r);
		if (!row_filtered(&r))
			prom_add(&r);
	}
}

static void on_prom(void *ctx, enum loop_when when)
{
	/* without an interval the table waits for the end, the file does not */
	if (env.events)
		prom_collect();
	else if (when == LOOP_PERIOD)
		collect_rows();
	write_prom();
}

static __u64 on_events_lost(void *ctx)
{
	return read_stat(NFD_STAT_EVENTS_LOST);
}

static int on_trace(void *ctx, bool readable)
{
	nfdrop_trace_drain();
	return 0;
}

static int on_events(void *ctx, bool readable)
{
	static struct timespec last_batch;
	struct nfdrop_run *r = ctx;
	int err;

	if (readable)
		read_batch_prep(&last_batch);
	err = ring_buffer__consume(r->rb);
	flush_events(true);
	if (err < 0 && err != -EINTR) {
		cli_bpf_err("read ring buffer", err);
		return err;
	}
	return 0;
}

static void on_trace_table(bool restored)
{
	nfdrop_trace_table_line(restored, env.cli.json);
}

static void cleanup_trace_atexit(void)
{
	nfdrop_trace_remove();
}

/* -N and -i: the namespace to watch and the interface index within it */
static void resolve_targets(void)
{
	/* an ifindex means something only within its namespace: the name
	 * is looked up in -N's (or ours) and only drops there count */
	if (env.cli.netns || env.ifname)
		env.netns_inum = cli_netns_inum(&env.cli);
	if (env.ifname)
		env.ifindex = cli_ifindex(&env.cli, env.ifname);
}

static void print_banner(void)
{
	char method[160];

	nfdrop_method_str(&att, method, sizeof(method));
	/* with -j the banner goes to stderr: stdout stays pure JSON lines */
	fprintf(env.cli.json ? stderr : stdout,
		"Tracing netfilter drops%s (%s%s)... Hit Ctrl-C to end.\n",
		env.all ? "" : " of RoCE v2", method,
		env.trace_rules ? ", nftables trace" : "");
	if (!env.cli.json && !env.events)
		printf("'?' marks what the evidence does not settle (candidates listed).\n");
	if (!env.cli.json && env.events)
		cli_print_time_header(&env.cli, stdout);
	if (!env.cli.json && env.events)
		printf("%-10s %-15s %-12s %-22s %-7s %s\n", "NETNS", "IFACE", "HOOK",
		       "TABLE/CHAIN #RULE", "VERDICT", "PACKET");
	fflush(stdout);
}

/* tables or events until the end; 0 or 1 */
static int run(void)
{
	struct nfdrop_run r = {};
	struct loop lp = { .ctx = &r, .prom = on_prom, .report = on_report,
			   .tick = on_tick, .tick_ms = 200, .events_lost = on_events_lost };
	int err;

	if (nfdrop_trace_fd() >= 0)
		loop_add(&lp, NULL, nfdrop_trace_fd(), on_trace);
	if (env.events) {
		lp.report = NULL;
		lp.tick = NULL;
		lp.tick_ms = 0;
		r.rb = loop_add_events(&lp, obj->maps.events, handle_event, NULL, on_events);
		if (!r.rb)
			return 1;
	} else if (pcap &&
		   !loop_add_events(&lp, obj->maps.events, handle_packet_only, NULL, NULL)) {
		return 1;
	}
	err = loop_run(&lp, &env.cli);
	if (!err && env.cli.verbose)
		cli_err("BPF counters: %llu drops counted, %llu fexit drop verdicts, "
			"%llu without nf_hook_slow on the stack",
			(unsigned long long)read_stat(NFD_STAT_DROPS),
			(unsigned long long)read_stat(NFD_STAT_FEXIT_DROPS),
			(unsigned long long)read_stat(NFD_STAT_NO_HOOK));
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	int ret = 1;

	cli_parse(&argp, argc, argv, NULL);
	cli_setup(&env.cli, CLI_CAP_BPF | CLI_CAP_PERFMON | CLI_CAP_NET_ADMIN);
	if (env.pcapng.path)
		pcap = pcapng_open_or_die(env.pcapng.path, argp_program_version,
					  env.pcapng.snaplen);
	nfdrop_hold_init(pcap, write_unsettled);
	resolve_targets();
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		cli_die("cannot count CPUs");
	/* before 5.17 there are no reasons (the loader says which code the
	 * BPF side gives nf_hook_slow's frees) */
	if (drop_reasons_load() && nfdrop_has_reason())
		cli_die("no BTF for enum skb_drop_reason: this kernel is not supported");
	ksyms = ksyms_load();
	if (!ksyms)
		cli_die("%s", ksyms_strerror(errno));
	nfdrop_ctx_init(&nfc, ksyms, &env.cli);
	prom_totals_init(&totals, prom_names, PROM_NLABELS, 0);
	{
		struct nfdrop_load_opts lo = {
			.all = env.all, .port = env.port, .ifindex = env.ifindex,
			.netns_inum = env.netns_inum, .events = env.events || pcap,
			.stack = env.stack, .method = env.method,
			.snaplen = pcap ? env.pcapng.snaplen : 0,
		};

		obj = nfdrop_load(&lo, &att, &nfc);
		if (!obj)
			goto cleanup;
	}
	if (env.trace_rules) {
		atexit(cleanup_trace_atexit);
		unsigned int inum = env.netns_inum ? env.netns_inum : netns_self();

		nfdrop_trace_setup(inum, env.cli.netns, env.all ? 0 : env.cli.roce_port, env.port,
				   on_trace_table);
		/* the helper table moved the ruleset's generation: the window
		 * starts after it, else the first report sees a change */
		ev_counters_start(inum);
	}
	print_banner();
	ret = run();
	if (pcap) {
		/* after the last report: what none of them counted */
		nfdrop_hold_flush();
		if (nfdrop_hold_unsettled())
			cli_err("%llu packets written to %s before a report settled their rows "
				"(their comments say why)", nfdrop_hold_unsettled(), env.pcapng.path);
	}

cleanup:
	nfdrop_trace_close();
	nfdrop_bpf__destroy(obj);
	if (pcapng_close(pcap) && ret == 0)
		ret = 1;	/* pcapng_close() said why */
	ksyms_free(ksyms);
	prom_totals_free(&totals);
	nfdrop_strs_free();	/* after the last row */
	return ret;
}
