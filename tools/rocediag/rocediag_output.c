// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rocediag's report: a verdict line per QP with its evidence, as text,
 * JSON lines (-j) or Prometheus gauges (--prom) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include "rocediag.h"
#include "lib/cli.h"
#include "lib/json.h"
#include "lib/prom.h"
#include "lib/roce_names.h"

/* a QP as every output names it: its two addresses, its two QPNs in hex
 * ("?" where not yet known) */
struct qp_names {
	char req[ADDR_STRLEN], resp[ADDR_STRLEN];
	char req_qpn[16], resp_qpn[16];
};

static void qpn_str(__u32 qpn, char *buf, int len)
{
	if (qpn == DIAG_QPN_UNKNOWN)
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "0x%x", qpn);
}

static const struct qp_names *qp_names(const struct diag_qp *q, struct qp_names *n)
{
	/* rdmaqp's and verbslat's QPs have no addresses: the device names them */
	if (!q->family && q->rq_seen)
		snprintf(n->req, sizeof(n->req), "%s", q->rq_dev);
	else if (!q->family && q->nvb)
		snprintf(n->req, sizeof(n->req), "%s", q->vb[0].dev);
	else
		pkt_addr_str(q->family, q->req, n->req, sizeof(n->req));
	pkt_addr_str(q->family, q->resp, n->resp, sizeof(n->resp));
	qpn_str(q->req_qpn, n->req_qpn, sizeof(n->req_qpn));
	qpn_str(q->resp_qpn, n->resp_qpn, sizeof(n->resp_qpn));
	return n;
}

#define TEXT_COLS	80

/*
 * text as lines of at most TEXT_COLS columns, the first after nothing,
 * the others after indent spaces: broken after a comma where one is in
 * the line's last 40%, else at its last space (a word longer than a line
 * stays whole)
 */
static void print_wrapped(FILE *out, const char *text, int indent)
{
	int width = TEXT_COLS;

	while (strlen(text) > (size_t)width) {
		int cut = -1, comma = -1;

		for (int i = 1; i <= width; i++) {
			if (text[i] != ' ')
				continue;
			cut = i;
			if (text[i - 1] == ',' && i >= width * 6 / 10)
				comma = i;
		}
		if (comma > 0)
			cut = comma;
		if (cut < 0) {
			const char *sp = strchr(text + width, ' ');

			if (!sp)
				break;
			cut = sp - text;
		}
		fprintf(out, "%.*s\n%*s", cut, text, indent, "");
		text += cut + 1;
		width = TEXT_COLS - indent;
	}
	fprintf(out, "%s\n", text);
}

void rocediag_print_missing(FILE *out, const struct diag_sources *src)
{
	const char *miss[] = {
		src->lat ? NULL : src->no_lat, src->drops ? NULL : src->no_drops,
		src->rules ? NULL : src->no_rules, src->rxe ? NULL : src->no_rxe,
		src->rdma ? NULL : src->no_rdma, src->verbs ? NULL : src->no_verbs,
	};

	for (unsigned int i = 0; i < sizeof(miss) / sizeof(miss[0]); i++)
		if (miss[i] && miss[i][0]) {
			char line[160];

			snprintf(line, sizeof(line), "cannot see %s", miss[i]);
			print_wrapped(out, line, 4);
		}
}

static const char *us_str(double ns, char *buf, size_t len)
{
	if (ns >= 1e6)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.0f us", ns / 1e3);
	return buf;
}

/* verbslat's line of one of the entry's kernel QPs: its work requests
 * per opcode, post to completion (beside the wire's on the verdict line
 * when rocelat times the QP), what waits, the errors */
static void print_verbs_text(const struct diag_verbs *v)
{
	char line[1024], a[32], b[32];
	size_t o;

	o = snprintf(line, sizeof(line), "  verbs: %s QP 0x%x work requests", v->dev, v->qpn);
	for (int i = 0; i < v->nops && o < sizeof(line); i++)
		o += snprintf(line + o, sizeof(line) - o, "%s %s %llu (p50 %s, p99 %s)",
			      i ? "," : ":", v->op[i].opcode, (unsigned long long)v->op[i].count,
			      us_str(v->op[i].p50_ns, a, sizeof(a)),
			      us_str(v->op[i].p99_ns, b, sizeof(b)));
	if (!v->nops && o < sizeof(line))
		o += snprintf(line + o, sizeof(line) - o, ": none completed");
	if (o < sizeof(line))
		o += snprintf(line + o, sizeof(line) - o, ", %llu send WRs outstanding",
			      (unsigned long long)v->sq_outstanding);
	if (v->sq_oldest_s > 0 && o < sizeof(line))
		o += snprintf(line + o, sizeof(line) - o, " (oldest signaled %.3f s)",
			      v->sq_oldest_s);
	for (int e = 0; e < v->nerrs && o < sizeof(line); e++)
		o += snprintf(line + o, sizeof(line) - o, ", %llu %s",
			      (unsigned long long)v->err[e].count, v->err[e].status);
	print_wrapped(stdout, line, 6);
}

static void print_qp_text(const struct diag_qp *q)
{
	char line[1024];
	struct qp_names n;
	int len;

	qp_names(q, &n);
	len = snprintf(line, sizeof(line), "QP %s/%s -> %s/%s (sport %u): %s", n.req,
		       n.req_qpn, n.resp, n.resp_qpn, q->sport,
		       diag_verdict_names[q->verdict]);
	/* the evidence on the verdict's line when its first clause fits there */
	if (len + 1 + (int)strcspn(q->why, ",") > TEXT_COLS) {
		printf("%s\n", line);
		len = snprintf(line, sizeof(line), "   ");
	}
	snprintf(line + len, sizeof(line) - len, " %s", q->why);
	print_wrapped(stdout, line, 4);
	for (int i = 0; i < q->nsites; i++) {
		snprintf(line, sizeof(line), "  dropped: %llu packets at %s (%s) on %s",
			 (unsigned long long)q->sites[i].packets, q->sites[i].location,
			 q->sites[i].reason, q->sites[i].ifname[0] ? q->sites[i].ifname : "-");
		print_wrapped(stdout, line, 6);
	}
	if (q->rule.known) {
		snprintf(line, sizeof(line), "  by: %s%s%s%s", q->rule.where,
			 q->rule.text[0] ? ": " : "", q->rule.text,
			 q->rule.certain ? "" : " (inferred)");
		print_wrapped(stdout, line, 6);
	}
	if (q->rq_seen) {
		snprintf(line, sizeof(line), "  rdmaqp: %s port %u QP 0x%x %s%s%s, %llu packets sent, "
			 "%llu received", q->rq_dev, q->rq_port, q->req_qpn, q->rq_state,
			 q->rq_change[0] ? " (was " : "", q->rq_change[0] ? q->rq_change : "",
			 (unsigned long long)q->rq_tx, (unsigned long long)q->rq_rx);
		if (q->rq_change[0])
			snprintf(line + strlen(line), sizeof(line) - strlen(line), ")");
		print_wrapped(stdout, line, 6);
	}
	if (q->rxe_seen && (q->state_changed || q->rxe_retx_timer || q->rxe_retries)) {
		snprintf(line, sizeof(line),
			 "  rxe: %s%s%s, %llu go-back-N retries, %llu packets resent",
			 q->rxe_dev, q->state_changed ? " QP " : "",
			 q->state_changed ? q->state_str : "",
			 (unsigned long long)q->rxe_retries, (unsigned long long)q->rxe_retx_pkts);
		print_wrapped(stdout, line, 6);
	}
	for (int i = 0; i < q->nvb; i++)
		print_verbs_text(&q->vb[i]);
}

/* QPs of one pair of hosts (either way round), by verdict */
struct peer_sum {
	__u8 family;
	__u8 a[16], b[16];
	int n, count[DV_NR];
};

static bool peer_is(const struct peer_sum *p, const struct diag_qp *q)
{
	return p->family == q->family &&
	       ((!memcmp(p->a, q->req, 16) && !memcmp(p->b, q->resp, 16)) ||
		(!memcmp(p->a, q->resp, 16) && !memcmp(p->b, q->req, 16)));
}

/* t's QPs summed per pair of peers, in order of first appearance (worst
 * first, as t is sorted); the number of pairs */
static int peer_sums(const struct diag_table *t, struct peer_sum *ps)
{
	int np = 0;

	for (int i = 0; i < t->n; i++) {
		const struct diag_qp *q = &t->qp[i];
		int j;

		for (j = 0; j < np && !peer_is(&ps[j], q); j++)
			;
		if (j == np) {
			memset(&ps[np], 0, sizeof(ps[np]));
			ps[np].family = q->family;
			memcpy(ps[np].a, q->req, 16);
			memcpy(ps[np].b, q->resp, 16);
			np++;
		}
		ps[j].n++;
		ps[j].count[q->verdict]++;
	}
	return np;
}

/* "3 QPs: 1 DROPPED-LOCALLY, 2 OK", worst first */
static void verdict_counts(char *buf, size_t len, int n, const int *count)
{
	size_t o = snprintf(buf, len, "%d QP%s", n, n == 1 ? "" : "s");
	bool first = true;

	for (int v = DV_NR - 1; v >= 0 && o < len; v--) {
		if (!count[v])
			continue;
		o += snprintf(buf + o, len - o, "%s %d %s", first ? ":" : ",", count[v],
			      diag_verdict_names[v]);
		first = false;
	}
}

static void print_peers_text(const struct diag_table *t)
{
	struct peer_sum *ps = calloc(t->n ? t->n : 1, sizeof(*ps));
	int np = ps ? peer_sums(t, ps) : 0;

	for (int i = 0; i < np; i++) {
		char a[ADDR_STRLEN], b[ADDR_STRLEN], c[160], line[300];

		pkt_addr_str(ps[i].family, ps[i].a, a, sizeof(a));
		pkt_addr_str(ps[i].family, ps[i].b, b, sizeof(b));
		verdict_counts(c, sizeof(c), ps[i].n, ps[i].count);
		snprintf(line, sizeof(line), "peers %s <-> %s: %s", a, b, c);
		print_wrapped(stdout, line, 4);
	}
	free(ps);
}

static void print_text(const struct diag_table *t, const struct diag_sources *src,
		       const struct rocediag_cfg *cfg)
{
	int count[DV_NR] = {};
	char head[160];

	for (int i = 0; i < t->n; i++)
		count[t->qp[i].verdict]++;
	cli_print_timestamp(&cfg->cli, stdout);
	verdict_counts(head, sizeof(head), t->n, count);
	printf("%s\n", head);
	if (cfg->problems)
		print_peers_text(t);
	for (int i = 0; i < t->n; i++)
		if (!cfg->problems || t->qp[i].verdict != DV_OK)
			print_qp_text(&t->qp[i]);
	if (t->unmatched_drops)
		printf("dropped apart from any QP: %llu packets (not RoCE v2, or not kept)\n",
		       (unsigned long long)t->unmatched_drops);
	if (t->overflow)
		printf("WARNING: %llu QPs not shown (more than %d)\n",
		       (unsigned long long)t->overflow, t->max);
	if (t->drop_events_lost)
		printf("WARNING: %llu drop events lost to a full ring buffer: the drops\n"
		       "above are short by as many\n", (unsigned long long)t->drop_events_lost);
	if (t->rxe_events_lost)
		printf("WARNING: %llu rdma_rxe QP events lost to a full ring buffer\n",
		       (unsigned long long)t->rxe_events_lost);
	printf("\n");
	fflush(stdout);
}

static void json_missing(struct json_w *w, const struct diag_sources *src)
{
	json_arr_open(w, "cannot_see");
	if (!src->lat)
		json_str(w, NULL, src->no_lat);
	if (!src->drops)
		json_str(w, NULL, src->no_drops);
	if (!src->rules)
		json_str(w, NULL, src->no_rules);
	if (!src->rxe)
		json_str(w, NULL, src->no_rxe);
	if (!src->rdma && src->no_rdma[0])
		json_str(w, NULL, src->no_rdma);
	if (!src->verbs && src->no_verbs[0])
		json_str(w, NULL, src->no_verbs);
	json_arr_close(w);
}

static void json_qpn(struct json_w *w, const char *key, __u32 qpn)
{
	if (qpn == DIAG_QPN_UNKNOWN)
		json_null(w, key);
	else
		json_u64(w, key, qpn);
}

/* rdmaqp's evidence of a QP */
static void json_rdma(struct json_w *w, const struct diag_qp *q)
{
	json_obj_open(w, "rdmaqp");
	json_str(w, "dev", q->rq_dev);
	json_u64(w, "port", q->rq_port);
	json_u64(w, "qpn", q->req_qpn);
	json_str(w, "state", q->rq_state);
	if (q->rq_change[0])
		json_str(w, "state_change", q->rq_change);
	json_bool(w, "err", q->rq_err);
	if (q->rq_fatal[0])
		json_str(w, "fatal_event", q->rq_fatal);
	json_bool(w, "frozen", q->rq_frozen);
	json_u64(w, "sq_psn", q->rq_sq_psn);
	json_u64(w, "tx_packets", q->rq_tx);
	json_u64(w, "rx_packets", q->rq_rx);
	json_str(w, "port_loss", q->rq_loss);
	json_str(w, "port_congestion", q->rq_cong);
	json_obj_close(w);
}

/* verbslat's evidence: the entry's kernel QPs, their work requests (the
 * send queue's latency beside the wire's "latency" where both are) */
static void json_verbs(struct json_w *w, const struct diag_qp *q)
{
	json_arr_open(w, "verbs");
	for (int i = 0; i < q->nvb; i++) {
		const struct diag_verbs *v = &q->vb[i];

		json_obj_open(w, NULL);
		json_str(w, "dev", v->dev);
		json_u64(w, "qpn", v->qpn);
		json_u64(w, "send_completed", v->sq_done);
		json_u64(w, "send_samples", v->sq_samples);
		/* null: nothing to time */
		if (v->sq_samples) {
			json_fixed(w, "send_p50_us", v->sq_p50_ns / 1e3, 3);
			json_fixed(w, "send_p99_us", v->sq_p99_ns / 1e3, 3);
		} else {
			json_null(w, "send_p50_us");
			json_null(w, "send_p99_us");
		}
		json_u64(w, "send_outstanding", v->sq_outstanding);
		if (v->sq_oldest_s > 0)
			json_fixed(w, "send_oldest_ms", v->sq_oldest_s * 1e3, 3);
		else
			json_null(w, "send_oldest_ms");
		json_u64(w, "recv_posted", v->rq_posted);
		json_arr_open(w, "ops");
		for (int o = 0; o < v->nops; o++) {
			json_obj_open(w, NULL);
			json_str(w, "opcode", v->op[o].opcode);
			json_u64(w, "count", v->op[o].count);
			json_u64(w, "unsignaled", v->op[o].unsignaled);
			json_fixed(w, "p50_us", v->op[o].p50_ns / 1e3, 3);
			json_fixed(w, "p99_us", v->op[o].p99_ns / 1e3, 3);
			json_obj_close(w);
		}
		json_arr_close(w);
		json_u64(w, "errors", v->errors);
		json_obj_open(w, "errors_by_status");
		for (int e = 0; e < v->nerrs; e++)
			json_u64(w, v->err[e].status, v->err[e].count);
		json_obj_close(w);
		json_obj_close(w);
	}
	json_arr_close(w);
}

static void print_qp_json(const struct diag_qp *q, const struct diag_sources *src,
			  double now)
{
	struct qp_names n;
	struct json_w w;

	qp_names(q, &n);
	json_begin(&w, stdout);
	json_str(&w, "type", "qp");
	json_time(&w, now);
	json_str(&w, "req", n.req);
	json_qpn(&w, "req_qpn", q->req_qpn);
	json_str(&w, "resp", n.resp);
	json_qpn(&w, "resp_qpn", q->resp_qpn);
	json_u64(&w, "sport", q->sport);
	json_str(&w, "verdict", diag_verdict_names[q->verdict]);
	json_str(&w, "why", q->why);
	if (q->lat_seen) {
		json_obj_open(&w, "latency");
		json_str(&w, "kind", q->turnaround ? "turnaround" : "rtt");
		json_u64(&w, "samples", q->samples);
		json_fixed(&w, "p50_us", q->p50_ns / 1e3, 3);	/* whole ns */
		json_fixed(&w, "p99_us", q->p99_ns / 1e3, 3);
		json_bool(&w, "answers", q->answers);
		json_u64(&w, "outstanding", q->outstanding);
		json_u64(&w, "retransmits", q->retransmits);
		json_u64(&w, "seq_naks", q->seq_naks);
		json_u64(&w, "fatal_naks", q->other_naks);
		json_u64(&w, "rnr_naks", q->rnr_naks);
		json_u64(&w, "timeouts", q->timeouts);
		json_u64(&w, "cnps", q->cnps);
		json_u64(&w, "ecn_ce", q->ecn_ce);
		json_obj_close(&w);
	}
	if (src->drops) {
		json_obj_open(&w, "drops");
		json_u64(&w, "packets", q->drops);
		json_arr_open(&w, "sites");
		for (int i = 0; i < q->nsites; i++) {
			json_obj_open(&w, NULL);
			json_str(&w, "location", q->sites[i].location);
			json_str(&w, "reason", q->sites[i].reason);
			json_str(&w, "ifname", q->sites[i].ifname);
			json_u64(&w, "packets", q->sites[i].packets);
			json_obj_close(&w);
		}
		json_arr_close(&w);
		if (q->rule.known) {
			json_obj_open(&w, "rule");
			json_str(&w, "where", q->rule.where);
			json_str(&w, "text", q->rule.text);
			json_bool(&w, "certain", q->rule.certain);
			json_u64(&w, "packets", q->rule.packets);
			json_obj_close(&w);
		}
		json_obj_close(&w);
	}
	if (q->held) {
		json_obj_open(&w, "held");
		json_u64(&w, "drops", q->held_drops);
		json_f64(&w, "first_drop", q->first_drop);
		json_f64(&w, "last_drop", q->last_drop);
		json_bool(&w, "rule_held", q->rule_held);
		json_obj_close(&w);
	}
	if (q->rxe_seen) {
		json_obj_open(&w, "rxe");
		json_str(&w, "dev", q->rxe_dev);
		if (q->state_changed)
			json_str(&w, "state_change", q->state_str);
		json_bool(&w, "to_err", q->to_err);
		json_u64(&w, "retry_timer", q->rxe_retx_timer);
		json_u64(&w, "retries", q->rxe_retries);
		json_u64(&w, "resent_packets", q->rxe_retx_pkts);
		json_obj_close(&w);
	}
	if (q->rq_seen)
		json_rdma(&w, q);
	if (q->nvb)
		json_verbs(&w, q);
	json_missing(&w, src);
	json_end(&w);
}

static void print_peers_json(const struct diag_table *t, double now)
{
	struct peer_sum *ps = calloc(t->n ? t->n : 1, sizeof(*ps));
	int np = ps ? peer_sums(t, ps) : 0;

	for (int i = 0; i < np; i++) {
		char a[ADDR_STRLEN], b[ADDR_STRLEN];
		struct json_w w;

		pkt_addr_str(ps[i].family, ps[i].a, a, sizeof(a));
		pkt_addr_str(ps[i].family, ps[i].b, b, sizeof(b));
		json_begin(&w, stdout);
		json_str(&w, "type", "peers");
		json_time(&w, now);
		json_str(&w, "a", a);
		json_str(&w, "b", b);
		json_u64(&w, "qps", ps[i].n);
		for (int v = 0; v < DV_NR; v++)
			json_u64(&w, diag_verdict_names[v], ps[i].count[v]);
		json_end(&w);
	}
	free(ps);
}

static void print_json(const struct diag_table *t, const struct diag_sources *src,
		       const struct rocediag_cfg *cfg)
{
	double now = cli_now_epoch();
	int count[DV_NR] = {};
	struct json_w w;

	if (cfg->problems)
		print_peers_json(t, now);
	for (int i = 0; i < t->n; i++) {
		count[t->qp[i].verdict]++;
		if (!cfg->problems || t->qp[i].verdict != DV_OK)
			print_qp_json(&t->qp[i], src, now);
	}
	json_begin(&w, stdout);
	json_str(&w, "type", "summary");
	json_time(&w, now);
	json_u64(&w, "qps", t->n);
	for (int v = 0; v < DV_NR; v++)
		json_u64(&w, diag_verdict_names[v], count[v]);
	json_u64(&w, "unmatched_drops", t->unmatched_drops);
	json_u64(&w, "qps_not_shown", t->overflow);
	json_u64(&w, "drop_events_lost", t->drop_events_lost);
	json_u64(&w, "rxe_events_lost", t->rxe_events_lost);
	json_missing(&w, src);
	json_end(&w);
}

void rocediag_print(const struct diag_table *t, const struct diag_sources *src,
		    const struct rocediag_cfg *cfg)
{
	if (cfg->cli.json)
		print_json(t, src, cfg);
	else
		print_text(t, src, cfg);
}

/* ---- --prom: QPs per verdict, and a verdict gauge per QP (capped) ---- */

static struct prom_cap cap;

/* a QP's identity labels, the first five of l; sp holds the port */
static void prom_qp_labels(const struct diag_qp *q, struct qp_names *n, char sp[8],
			   struct prom_label *l)
{
	qp_names(q, n);
	snprintf(sp, 8, "%u", q->sport);
	l[0] = (struct prom_label){ "req", n->req };
	l[1] = (struct prom_label){ "req_qpn", n->req_qpn };
	l[2] = (struct prom_label){ "resp", n->resp };
	l[3] = (struct prom_label){ "resp_qpn", n->resp_qpn };
	l[4] = (struct prom_label){ "sport", sp };
}

/*
 * Per QP (those own[] keeps): its latency quantiles of the interval, the
 * series the fleet rules compare across nodes, and the packets dropped
 * on this host with no answer since, named by interface and rule, the
 * series the drop alert names its cause with.
 */
static void prom_qp_families(struct prom_file *pf, const struct diag_table *t,
			     const bool *own)
{
	struct prom_label l[7];
	struct qp_names n;
	char sp[8];

	prom_family(pf, "agentxdp_rocediag_qp_latency_seconds", PROM_GAUGE,
		    "A QP's latency quantiles of the last interval, label q (0.5, 0.99); "
		    "kind rtt: request to answer on the wire, turnaround: this host's own");
	for (int i = 0; i < t->n; i++) {
		const struct diag_qp *q = &t->qp[i];

		if (!own[i] || !q->lat_seen || !q->samples)
			continue;
		prom_qp_labels(q, &n, sp, l);
		l[5] = (struct prom_label){ "kind", q->turnaround ? "turnaround" : "rtt" };
		l[6] = (struct prom_label){ "q", "0.5" };
		prom_gauge_seconds(pf, "agentxdp_rocediag_qp_latency_seconds", l, 7,
				   q->p50_ns, 1e-9);
		l[6].value = "0.99";
		prom_gauge_seconds(pf, "agentxdp_rocediag_qp_latency_seconds", l, 7,
				   q->p99_ns, 1e-9);
	}
	prom_family(pf, "agentxdp_rocediag_qp_dropped_packets", PROM_GAUGE,
		    "A QP's packets dropped on this host with no answer since (this "
		    "interval and the earlier ones carried), by interface and netfilter "
		    "rule (empty: none known)");
	for (int i = 0; i < t->n; i++) {
		const struct diag_qp *q = &t->qp[i];

		if (!own[i] || !(q->drops + q->held_drops))
			continue;
		prom_qp_labels(q, &n, sp, l);
		/* the carried one while drops are held: the series keeps its
		 * labels from interval to interval */
		l[5] = (struct prom_label){ "ifname", q->held_ifname[0] ? q->held_ifname :
					    q->nsites ? q->sites[0].ifname : "" };
		l[6] = (struct prom_label){ "rule", q->rule.known ? q->rule.where : "" };
		prom_gauge(pf, "agentxdp_rocediag_qp_dropped_packets", l, 7,
			   (double)(q->drops + q->held_drops));
	}
}

/*
 * What this agent can see: the RoCE packets its latency source saw (none
 * written while it is down: no number it did not measure), and each
 * source up or not, with its "cannot see" line. A source an option left
 * out (no -i, --no-rules, --no-rxe) is marked so, and rdma_rxe where the
 * host has no Soft-RoCE at all (module not loaded, as on a host whose
 * RNIC does RoCE in hardware) is marked absent: the fleet's
 * AgentXDPSourceDown leaves both alone, and fires for a loaded rdma_rxe
 * it cannot read.
 */
static bool rxe_absent(void)
{
	return access("/sys/module/rdma_rxe", F_OK) && access("/sys/kernel/btf/rdma_rxe", F_OK);
}

static void prom_visibility(struct prom_file *pf, const struct diag_table *t,
			    const struct diag_sources *src, const struct rocediag_cfg *cfg)
{
	const struct prom_source ps[] = {
		{ "latency", src->lat, !cfg->nifs, src->no_lat, false },
		{ "drops", src->drops, cfg->mirror, src->no_drops, false },
		{ "rules", src->rules, cfg->no_rules || cfg->mirror, src->no_rules, false },
		/* absent: what no option explains */
		{ "rdma_rxe", src->rxe, cfg->no_rxe || cfg->mirror, src->no_rxe,
		  !src->rxe && !cfg->no_rxe && !cfg->mirror && rxe_absent() },
		{ "rdma", src->rdma, cfg->mirror, src->no_rdma, src->rdma_absent },
		{ "verbs", src->verbs, cfg->mirror, src->no_verbs, src->verbs_absent },
	};

	prom_family(pf, "agentxdp_rocediag_roce_packets_total", PROM_COUNTER,
		    "RoCE packets (to the RoCE port, with a BTH) the latency source saw "
		    "on the -i interfaces; a hardware RNIC's own RoCE never reaches it");
	if (src->lat)
		prom_counter(pf, "agentxdp_rocediag_roce_packets_total", NULL, 0,
			     t->roce_packets);
	prom_sources(pf, "agentxdp_rocediag", ps, sizeof(ps) / sizeof(ps[0]));
}

void rocediag_prom(const struct diag_table *t, const struct diag_sources *src,
		   const struct rocediag_cfg *cfg)
{
	struct prom_file pf;
	int count[DV_NR] = {};
	char (*keys)[160] = calloc(t->n + 1, sizeof(*keys));
	const char **kp = calloc(t->n + 1, sizeof(*kp));
	double *weight = calloc(t->n + 1, sizeof(*weight));
	bool *own = calloc(t->n + 1, sizeof(*own));
	int err;

	if (!cfg->cli.prom_path || !keys || !kp || !weight || !own)
		goto out;
	err = prom_open(&pf, cfg->cli.prom_path);
	if (err) {
		cli_prom_err(&cfg->cli, err);
		goto out;
	}
	for (int i = 0; i < t->n; i++) {
		const struct diag_qp *q = &t->qp[i];
		struct qp_names n;

		count[q->verdict]++;
		qp_names(q, &n);
		snprintf(keys[i], sizeof(keys[i]), "%s\x1f%s\x1f%s\x1f%s", n.req, n.resp,
			 n.resp_qpn, n.req_qpn);
		kp[i] = keys[i];
		weight[i] = q->verdict;
	}
	prom_family(&pf, "agentxdp_rocediag_qps", PROM_GAUGE, "QPs of the last interval by verdict");
	for (int v = 0; v < DV_NR; v++) {
		struct prom_label l = { "verdict", diag_verdict_names[v] };

		prom_gauge(&pf, "agentxdp_rocediag_qps", &l, 1, count[v]);
	}
	prom_visibility(&pf, t, src, cfg);
	prom_cap_select(&cap, t->n, kp, weight, own);
	prom_qp_families(&pf, t, own);
	prom_family(&pf, "agentxdp_rocediag_qp_verdict", PROM_GAUGE,
		    "A QP's verdict of the last interval: 0 OK, 1 SLOW, 2 CONGESTED, "
		    "3 LOSSY, 4 DROPPED-LOCALLY, 5 STUCK (the busiest QPs; the rest are "
		    "in agentxdp_rocediag_qps)");
	for (int i = 0; i < t->n; i++) {
		const struct diag_qp *q = &t->qp[i];
		struct qp_names n;
		char sp[8];
		struct prom_label l[6];

		if (!own[i])
			continue;
		prom_qp_labels(q, &n, sp, l);
		l[5] = (struct prom_label){ "verdict", diag_verdict_names[q->verdict] };
		prom_gauge(&pf, "agentxdp_rocediag_qp_verdict", l, 6, q->verdict);
	}
	rocediag_rdma_prom(&pf);
	err = prom_commit(&pf);
	if (err)
		cli_prom_err(&cfg->cli, err);
out:
	free(keys);
	free(kp);
	free(weight);
	free(own);
}

void rocediag_output_free(void)
{
	prom_cap_free(&cap);
}
