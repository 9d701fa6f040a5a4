// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat's report: the program's maps read through its backend
 * (rocelat_backend.h: counters, the flow map's statistics of the interval
 * just ended), percentiles, the outlier, and the text, JSON and Prometheus
 * outputs of one report.
 */
#include <errno.h>
#include <math.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rocelat.h"
#include "rocelat_backend.h"
#include "rocelat_prom.h"
#include "rocelat_hist.h"
#include "rocelat_report.h"
#include "lib/cli.h"
#include "lib/hist.h"
#include "lib/json.h"
#include "lib/roce_names.h"

#define OUTLIER_MIN_SAMPLES	5
#define OUTLIER_RATIO		2.0
#define OUTLIER_MIN_GAP_NS	50000ULL	/* ignore sub-50us differences */

static struct rocelat_report_cfg cfg;

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
	[RL_HELD] = "answers_held",
	[RL_UNTIMED] = "untimed",
	[RL_UNHELD] = "answers_unheld",
	[RL_REORDERED] = "reordered",
	[RL_WAIT_FULL] = "wait_index_full",
	[RL_PAIRED_PORT] = "qps_paired_by_port",
	[RL_PAIRED_PSN] = "qps_paired_by_psn",
	[RL_UNTRACKED] = "untracked_qps",
	[RL_UNTRACKED_REQS] = "untracked_requests",
	[RL_UNTRACKED_LOST] = "untracked_uncounted",
};

static void read_counters(struct rocelat_backend *be, struct rocelat_counters *out)
{
	struct rocelat_counters *v = calloc(cfg.ncpu, sizeof(*v));
	int ncpu;

	memset(out, 0, sizeof(*out));
	if (!v)
		return;
	ncpu = be->counters(be, v);
	for (int c = 0; c < ncpu; c++) {
		for (int i = 0; i < RL_NR; i++)
			out->c[i] += v[c].c[i];
		hist_add_into(out->hist.slots, v[c].hist.slots, HIST_SLOTS);
		hist_add_into(out->turn_hist.slots, v[c].turn_hist.slots, HIST_SLOTS);
	}
	free(v);
}

struct flow_row {
	struct roce_flow_id key;	/* qpn: the responder's */
	__u32 req_qpn;
	bool paired;
	bool switch_clock;
	__u16 sport;
	__u8 tun_kind, tun_family;
	__u32 tun_id;
	__u8 tun_saddr[16];
	struct roce_flow_stats st;
	struct rl_llhist ll;		/* the interval's (rocelat_ll_since()) */
	double p50, p90, p99;		/* ns, from the log-linear histogram */
	double mean_ns;
};

static struct flow_row *rows;
static int max_rows;
/* each flow-table entry as last read, for an interval's histograms */
static struct rocelat_ll_reads ll_reads;
/* flows live in the flow table, requests waiting in their rings */
static __u64 live_flows, live_pending;

static bool row_turn(const struct flow_row *r)
{
	return r->st.kind == FLOW_KIND_TURN;
}

/*
 * How badly a flow fares, for "worst first": 2 when nothing came back
 * (no sample, but retransmits, timeouts or missing READ responses: a
 * black hole, whose median is no number at all), 1 when requests time
 * out, 0 else.
 */
static int row_trouble(const struct flow_row *r)
{
	const struct roce_flow_stats *s = &r->st;

	if (!s->samples && (s->retransmits || s->timeouts || s->resp_missing))
		return 2;
	return s->timeouts || s->resp_missing ? 1 : 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct flow_row *x = a, *y = b;
	__u64 bx = x->st.retransmits + x->st.naks + x->st.rnr_naks;
	__u64 by = y->st.retransmits + y->st.naks + y->st.rnr_naks;
	__u64 tx = x->st.timeouts + x->st.resp_missing;
	__u64 ty = y->st.timeouts + y->st.resp_missing;
	int hx = row_trouble(x), hy = row_trouble(y);

	/* round trips first; then flows that lose requests, most lost
	 * first; then the median first: one stray sample must not put a
	 * flow on top */
	if (row_turn(x) != row_turn(y))
		return row_turn(x) ? 1 : -1;
	if (hx != hy)
		return hx < hy ? 1 : -1;
	if (hx && tx != ty)
		return tx < ty ? 1 : -1;
	if (hx && bx != by)
		return bx < by ? 1 : -1;
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

	r->p50 = rocelat_ll_quantile(&r->ll, 0.50, s->min, s->max);
	r->p90 = rocelat_ll_quantile(&r->ll, 0.90, s->min, s->max);
	r->p99 = rocelat_ll_quantile(&r->ll, 0.99, s->min, s->max);
	r->mean_ns = s->samples ? (double)s->sum / s->samples : 0;
}

/*
 * The flows of this interval, worst first, from the flow table (a flow's
 * statistics live in its entry). With clear (per interval) the BPF side
 * first starts a new interval (stats_epoch) in the other buffer of each
 * entry, then the one just ended is read. Also counts the live flows and
 * requests.
 */
struct flows_read {
	__u32 epoch;
	bool interval;		/* the histograms since the last read */
	int n;
};

/* one entry of the flow table: a flow counted, and a row when its
 * interval (epoch) has something to show */
static int collect_flow(const void *key, const void *val, void *ctx)
{
	const struct pending_flow *pf = val;
	const struct roce_flow_stats *st;
	struct flows_read *fr = ctx;
	struct flow_row *r;

	if (!pf->used)
		return 0;
	live_flows++;
	for (int i = 0; i < PENDING_RING; i++)
		live_pending += !!(pf->ring[i].flags & SLOT_VALID);
	st = pending_flow_stats(pf, fr->epoch);
	if (!st || fr->n >= max_rows || !(st->samples || st->retransmits ||
	    st->naks || st->rnr_naks || st->cnps || st->ecn_ce ||
	    st->timeouts || st->resp_missing || st->untimed))
		return 0;
	r = &rows[fr->n++];
	r->key = pf->id;
	r->req_qpn = pf->req_qpn;
	r->paired = pf->flags & FLOW_PAIRED;
	r->switch_clock = pf->flags & FLOW_SWITCH_CLOCK;
	r->sport = pf->sport;
	r->tun_kind = pf->tun_kind;
	r->tun_family = pf->tun_family;
	r->tun_id = pf->tun_id;
	memcpy(r->tun_saddr, pf->tun_saddr, 16);
	r->st = *st;
	if (!fr->interval || rocelat_ll_since(&ll_reads, *(const __u32 *)key, pf, &r->ll))
		r->ll = pf->ll;
	flow_row_fill(r);
	return 0;
}

static int collect_flows(struct rocelat_backend *be, bool clear)
{
	struct flows_read fr = { .epoch = be->epoch(be), .interval = clear };

	if (clear)
		fr.epoch = be->next_interval(be);
	live_flows = live_pending = 0;
	be->flows_for_each(be, collect_flow, &fr);
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
	static struct rl_llhist sum;

	memset(&sum, 0, sizeof(sum));
	memset(o, 0, sizeof(*o));
	o->min = ~0ULL;
	for (int i = 0; i < n; i++) {
		const struct roce_flow_stats *s = &rows[i].st;

		if (row_turn(&rows[i]) != turn || !s->samples)
			continue;
		rocelat_ll_add_into(&sum, &rows[i].ll);
		o->samples += s->samples;
		o->min = s->min < o->min ? s->min : o->min;
		o->max = s->max > o->max ? s->max : o->max;
	}
	if (!o->samples) {
		o->min = 0;
		return;
	}
	o->p50 = rocelat_ll_quantile(&sum, 0.50, o->min, o->max);
	o->p90 = rocelat_ll_quantile(&sum, 0.90, o->min, o->max);
	o->p99 = rocelat_ll_quantile(&sum, 0.99, o->min, o->max);
}

/* the interface of a live answer; none for a capture */
static const char *ifname_of(__u32 ifindex, char *buf)
{
	if (cfg.offline)
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
	pi->dport = cfg.cli->roce_port;
}

static const char *short_unit(void)
{
	return cfg.unit_ns == 1 ? "ns" : cfg.unit_ns == 1000 ? "us" : "ms";
}

/* a latency in ns in the chosen unit, for the table's 6 columns */
static void fmt_unit(double ns, char *buf, size_t len)
{
	double v = ns / cfg.unit_ns;

	snprintf(buf, len, v < 100 && cfg.unit_ns > 1 ? "%.1f" : "%.0f", v);
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

static const char *session_str(const struct flow_row *r, char *buf, size_t len);

/* the rows [from, to) of mirror session ses (NULL: every row) */
static void print_flow_table(int from, int to, int wa, int wb, const char *ses)
{
	char a[ADDR_STRLEN], b[ADDR_STRLEN], p50[16], p99[16], max[16], rs[96];

	printf("%-*s %-*s %6s %5s %7s %4s%-2s %4s%-2s %4s%-2s %4s %3s %3s %3s %3s\n",
	       wa, "REQUESTER", wb, "RESPONDER", "QPN", "SPORT", "SAMPLES",
	       "P50", short_unit(), "P99", short_unit(), "MAX", short_unit(),
	       "RETX", "TMO", "NAK", "RNR", "CNP");
	for (int i = from; i < to; i++) {
		const struct flow_row *r = &rows[i];

		if (ses && strcmp(ses, session_str(r, rs, sizeof(rs))))
			continue;
		fmt_unit(r->p50, p50, sizeof(p50));
		fmt_unit(r->p99, p99, sizeof(p99));
		fmt_unit((double)r->st.max, max, sizeof(max));
		/* a flow without samples has no latency: "-", not 0 */
		if (!r->st.samples) {
			strcpy(p50, "-");
			strcpy(p99, "-");
			strcpy(max, "-");
		}
		printf("%-*s %-*s %#6x %5u %7llu %6s %6s %6s %4llu %3llu %3llu %3llu %3llu\n",
		       wa, pkt_addr_str(r->key.family, r->key.req, a, sizeof(a)),
		       wb, pkt_addr_str(r->key.family, r->key.resp, b, sizeof(b)),
		       r->key.qpn, r->sport, (unsigned long long)r->st.samples,
		       p50, p99, max,
		       (unsigned long long)r->st.retransmits,
		       (unsigned long long)r->st.timeouts,
		       (unsigned long long)r->st.naks,
		       (unsigned long long)r->st.rnr_naks,
		       (unsigned long long)r->st.cnps);
	}
}

/*
 * The rows [from, to) as one table, or, when they came in several mirror
 * sessions (a collector fed by two switches), a table per session under
 * its name, sessions in order of their worst flow: the same flow seen by
 * two mirrors is two rows that would look alike.
 */
static void print_session_tables(int from, int to, int wa, int wb)
{
	char first[96], s[96], t[96];
	bool several = false;

	session_str(&rows[from], first, sizeof(first));
	for (int i = from + 1; i < to && !several; i++)
		several = strcmp(first, session_str(&rows[i], s, sizeof(s)));
	if (!several) {
		print_flow_table(from, to, wa, wb, NULL);
		return;
	}
	for (int i = from; i < to; i++) {
		bool seen = false;

		session_str(&rows[i], s, sizeof(s));
		for (int j = from; j < i && !seen; j++)
			seen = !strcmp(s, session_str(&rows[j], t, sizeof(t)));
		if (seen)
			continue;
		printf("%smirror session %s:\n", i > from ? "\n" : "", s[0] ? s : "none");
		print_flow_table(i, to, wa, wb, s);
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
		print_session_tables(0, nrtt, wa, wb);
	if (nrtt < n) {
		printf("%sLocal turnaround (requests this host answered, request in -> answer out):\n",
		       nrtt ? "\n" : "");
		print_session_tables(nrtt, n, wa, wb);
	}
	o = find_outlier(n, &ratio, &med, &peers);
	if (o >= 0)
		print_outlier_text(o, ratio, med, peers);
}

/* decimals of the unit that show whole nanoseconds */
static int unit_decimals(void)
{
	return cfg.unit_ns >= 1000000 ? 6 : cfg.unit_ns >= 1000 ? 3 : 0;
}

/* a latency (quantile, min, max) in the unit, in whole nanoseconds */
static void json_unit_f(struct json_w *w, const char *key, double ns)
{
	json_fixed(w, key, (double)(long long)(ns + 0.5) / cfg.unit_ns, unit_decimals());
}

/* a mean in the unit, three decimals more: mean x samples is the sum */
static void json_unit_mean(struct json_w *w, const char *key, double ns)
{
	json_fixed(w, key, ns / cfg.unit_ns, unit_decimals() + 3);
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
	else
		json_null(w, "req_qpn");	/* not learned yet: unknown */
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
	__u64 slots[HIST_SLOTS];
	struct json_w w;
	double ratio, med;
	int peers, o;

	for (int i = 0; i < n; i++) {
		const struct flow_row *r = &rows[i];

		json_begin(&w, stdout);
		json_str(&w, "type", "flow");
		json_time(&w, now);
		json_flow_key(&w, r);
		json_str(&w, "unit", short_unit());
		json_u64(&w, "samples", r->st.samples);
		json_unit_mean(&w, "mean", r->mean_ns);
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
		json_u64(&w, "untimed", r->st.untimed);
		json_key(&w, "buckets");
		for (int s = 0; s < HIST_SLOTS; s++)
			slots[s] = r->st.hist[s];
		hist_json_buckets(w.f, slots, HIST_SLOTS);
		json_end(&w);
	}
	o = find_outlier(n, &ratio, &med, &peers);
	if (o < 0)
		return;
	json_begin(&w, stdout);
	json_str(&w, "type", "outlier");
	json_time(&w, now);
	json_flow_key(&w, &rows[o]);
	json_str(&w, "unit", short_unit());
	json_unit_f(&w, "median", rows[o].p50);
	json_unit_mean(&w, "mean", rows[o].mean_ns);
	json_unit_f(&w, "peer_median", med);
	json_u64(&w, "peers", peers);
	json_f64(&w, "ratio", ratio);
	json_end(&w);
}

/* ---- Prometheus text file (--prom), through lib/prom ----------------- */

/* counters and the log2 histogram are cumulative (never reset); the
 * quantiles are those of the latest report's round trips */
/* a flow's mirror session, "" when it came plain: "vxlan 10.9.0.1 id 42" */
static const char *session_str(const struct flow_row *r, char *buf, size_t len)
{
	char a[ADDR_STRLEN];

	if (!r->tun_kind)
		buf[0] = 0;
	else
		snprintf(buf, len, "%s %s id %u", tun_kind_name(r->tun_kind),
			 pkt_addr_str(r->tun_family, r->tun_saddr, a, sizeof(a)), r->tun_id);
	return buf;
}

/* the report's totals and rows[0..n) handed to rocelat_prom.c; rtt NULL
 * at start, before anything was read */
static void write_prom(struct rocelat_backend *be, const struct overall *rtt, int n)
{
	struct rocelat_prom_flow *f = calloc(n + 1, sizeof(*f));
	struct rocelat_prom_in in = {
		.counter_names = counter_names, .flows = f, .live_flows = live_flows,
		.live_pending = live_pending, .unit_s = cfg.unit_ns * 1e-9,
		.sources = cfg.sources, .nsources = cfg.nsources,
	};
	struct rocelat_counters tot;
	int err;

	if (!cfg.cli->prom_path)
		goto out;
	read_counters(be, &tot);
	in.tot = &tot;
	if (rtt && rtt->samples) {
		in.quantiles = true;
		in.q_ns[0] = rtt->p50, in.q_ns[1] = rtt->p90, in.q_ns[2] = rtt->p99;
		in.q_ns[3] = (double)rtt->max;
	}
	for (int i = 0; f && rtt && i < n; i++) {
		const struct flow_row *r = &rows[i];
		struct rocelat_prom_flow *o = &f[in.nflows++];

		pkt_addr_str(r->key.family, r->key.req, o->req, sizeof(o->req));
		pkt_addr_str(r->key.family, r->key.resp, o->resp, sizeof(o->resp));
		snprintf(o->req_qpn, sizeof(o->req_qpn), r->paired ? "0x%x" : "?", r->req_qpn);
		snprintf(o->resp_qpn, sizeof(o->resp_qpn), "0x%x", r->key.qpn);
		snprintf(o->sport, sizeof(o->sport), "%u", r->sport);
		session_str(r, o->session, sizeof(o->session));
		o->turnaround = row_turn(r);
		o->samples = r->st.samples;
		o->p50_ns = r->p50;
		o->p99_ns = r->p99;
	}
	err = rocelat_prom_write(cfg.cli->prom_path, &in);
	if (err)
		cli_prom_err(cfg.cli, err);
out:
	free(f);
}

/* ---- one report ------------------------------------------------------ */

/* --prom without an interval: the file is rewritten, nothing printed */
void rocelat_report_prom(struct rocelat_backend *be)
{
	struct overall rtt;
	int n;

	be->sweep(be);
	n = collect_flows(be, false);
	overall_of(n, false, &rtt);
	write_prom(be, &rtt, n);
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
	json_time(&w, now);
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

/* the --max-flows to suggest for n QPs active at once: a quarter more
 * (three 4-way sets a flow leave some room unused: 4.6% of a full table's
 * QPs are left out, none of 10,000 in 16,384 entries), up to a power of
 * two, and more than the table
 * that left them out (it held fewer than n: sets full where others were
 * not), within what --max-flows takes */
static __u64 max_flows_for(__u64 n)
{
	__u64 m = 16;

	while ((m < n + n / 4 || m <= cfg.max_flows) && m < 1000000)
		m *= 2;
	return m < 1000000 ? m : 1000000;
}

/* at the last report: what the run could not pair, one line (on stderr
 * with -j, so stdout stays JSON lines) */
static void print_warnings(const struct rocelat_counters *tot)
{
	FILE *f = cfg.cli->json ? stderr : stdout;
	__u64 answers = tot->c[RL_ACKS] + tot->c[RL_READ_RESP];

	if (answers && !tot->c[RL_REQUESTS])
		fprintf(f, "WARNING: %llu answers and no request seen: nothing to "
			"time (the requests go where rocelat does not look: "
			"--no-egress, the other port of a mirror)\n",
			(unsigned long long)answers);
	if (tot->c[RL_WAIT_FULL])
		fprintf(f, "WARNING: %llu QPs left out of the pairing index (over %u "
			"awaited their first answer at once): paired only when "
			"among %d of their pair of hosts, else their answers are "
			"held and their requests time out\n",
			(unsigned long long)tot->c[RL_WAIT_FULL], cfg.wait_n, PAIR_QPS);
	if (tot->c[RL_UNTRACKED] || tot->c[RL_UNTRACKED_LOST])
		fprintf(f, "WARNING: %s%llu QPs untracked, %llu of their requests "
			"not timed: the flow table (--max-flows %u) was full of "
			"active flows; --max-flows %llu would cover them\n",
			tot->c[RL_UNTRACKED_LOST] ? "at least " : "",
			(unsigned long long)tot->c[RL_UNTRACKED],
			(unsigned long long)tot->c[RL_UNTRACKED_REQS], cfg.max_flows,
			(unsigned long long)max_flows_for(live_flows + tot->c[RL_UNTRACKED]));
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
static double report_time(struct rocelat_backend *be)
{
	if (!cfg.offline)
		return cli_now_epoch();
	return be->clock(be) / 1e9;
}

void rocelat_report(struct rocelat_backend *be, bool interval)
{
	struct rocelat_counters tot, d;
	struct overall rtt, turn;
	double now = report_time(be);
	static long reports;
	/* at exit: a signal, the count of reports reached, or the one
	 * report of a run without an interval */
	bool last = cli_exiting() || !interval || (cfg.cli->count && ++reports >= cfg.cli->count);
	__u64 evicted;
	int nflows;
	struct json_w w;

	/* requests unanswered for --timeout on flows that went quiet are
	 * counted now (offline: at the capture's latest time, which the
	 * program's clock holds) */
	be->sweep(be);
	read_counters(be, &tot);
	for (int i = 0; i < RL_NR; i++)
		d.c[i] = tot.c[i] - prev_total.c[i];
	for (int i = 0; i < HIST_SLOTS; i++) {
		d.hist.slots[i] = tot.hist.slots[i] - prev_total.hist.slots[i];
		d.turn_hist.slots[i] = tot.turn_hist.slots[i] - prev_total.turn_hist.slots[i];
	}
	prev_total = tot;
	nflows = collect_flows(be, interval);
	evicted = tot.c[RL_FLOWS] > live_flows ? tot.c[RL_FLOWS] - live_flows : 0;
	overall_of(nflows, false, &rtt);
	overall_of(nflows, true, &turn);
	write_prom(be, &rtt, nflows);

	if (cfg.cli->json) {
		json_overall("hist", now, &d, d.hist.slots, &rtt);
		if (turn.samples)
			json_overall("turnaround_hist", now, &d, d.turn_hist.slots, &turn);
		if (cfg.flows)
			print_flows_json(nflows, now);
		json_begin(&w, stdout);
		json_str(&w, "type", "counters");
		json_time(&w, now);
		for (int i = 0; i < RL_NR; i++)
			json_u64(&w, counter_names[i], d.c[i]);
		json_u64(&w, "pending", live_pending);
		json_u64(&w, "flows", live_flows);
		json_u64(&w, "flows_evicted", evicted);
		json_end(&w);
		if (last)
			print_warnings(&tot);
		return;
	}
	cli_print_epoch(cfg.cli, stdout, now);
	if (cfg.cli->timestamp)
		printf("\n");
	if (hist_total(d.hist.slots, HIST_SLOTS)) {
		hist_print_log2(stdout, d.hist.slots, HIST_SLOTS, cfg.unit);
		print_overall_text("round trip", &rtt);
	} else {
		printf("no latency samples\n");
	}
	if (hist_total(d.turn_hist.slots, HIST_SLOTS)) {
		printf("\nlocal turnaround (this host answered):\n");
		hist_print_log2(stdout, d.turn_hist.slots, HIST_SLOTS, cfg.unit);
		print_overall_text("turnaround", &turn);
	}
	printf("\n");
	if (cfg.flows) {
		if (nflows)
			print_flows_text(nflows);
		else
			printf("no flows\n");
		printf("\n");
	}
	/* nine lines every interval push the histogram off a terminal:
	 * with -v each interval's, else the whole run's once at the end */
	if (cfg.cli->verbose) {
		print_counters_text(&d, evicted);
	} else if (last) {
		if (interval)
			printf("counters since start:\n");
		print_counters_text(&tot, evicted);
	}
	if (last)
		print_warnings(&tot);
	fflush(stdout);
}

int rocelat_report_init(const struct rocelat_report_cfg *c, int nrows)
{
	cfg = *c;
	max_rows = nrows;
	rows = calloc(max_rows, sizeof(*rows));
	return rows ? 0 : -ENOMEM;
}

void rocelat_report_prom_start(struct rocelat_backend *be)
{
	write_prom(be, NULL, 0);
}

void rocelat_report_free(void)
{
	free(rows);
	rows = NULL;
	rocelat_prom_free();
	rocelat_ll_reads_free(&ll_reads);
}
