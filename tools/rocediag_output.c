// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rocediag's report: a verdict line per QP with its evidence, as text,
 * JSON lines (-j) or Prometheus gauges (--prom) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	pkt_addr_str(q->family, q->req, n->req, sizeof(n->req));
	pkt_addr_str(q->family, q->resp, n->resp, sizeof(n->resp));
	qpn_str(q->req_qpn, n->req_qpn, sizeof(n->req_qpn));
	qpn_str(q->resp_qpn, n->resp_qpn, sizeof(n->resp_qpn));
	return n;
}

static void print_missing(const struct diag_sources *src)
{
	const char *miss[] = {
		src->lat ? NULL : src->no_lat, src->drops ? NULL : src->no_drops,
		src->rules ? NULL : src->no_rules, src->rxe ? NULL : src->no_rxe,
	};

	for (unsigned int i = 0; i < sizeof(miss) / sizeof(miss[0]); i++)
		if (miss[i] && miss[i][0])
			printf("cannot see %s\n", miss[i]);
}

static void print_qp_text(const struct diag_qp *q)
{
	struct qp_names n;

	qp_names(q, &n);
	printf("QP %s/%s -> %s/%s (sport %u): %-6s %s\n", n.req, n.req_qpn, n.resp,
	       n.resp_qpn, q->sport, diag_verdict_names[q->verdict], q->why);
	for (int i = 0; i < q->nsites; i++)
		printf("  dropped: %llu packets at %s (%s) on %s\n",
		       (unsigned long long)q->sites[i].packets, q->sites[i].location,
		       q->sites[i].reason, q->sites[i].ifname[0] ? q->sites[i].ifname : "-");
	if (q->rule.known)
		printf("  by: %s%s%s%s\n", q->rule.where, q->rule.text[0] ? ": " : "",
		       q->rule.text, q->rule.certain ? "" : " (inferred)");
	if (q->rxe_seen && (q->state_changed || q->rxe_retx_timer || q->rxe_retries))
		printf("  rxe: %s%s%s, %llu go-back-N retries, %llu packets resent\n",
		       q->rxe_dev, q->state_changed ? " QP " : "",
		       q->state_changed ? q->state_str : "",
		       (unsigned long long)q->rxe_retries, (unsigned long long)q->rxe_retx_pkts);
}

static void print_text(const struct diag_table *t, const struct diag_sources *src)
{
	int count[DV_NR] = {};
	bool first = true;

	for (int i = 0; i < t->n; i++)
		count[t->qp[i].verdict]++;
	cli_print_timestamp(stdout);
	printf("%d QP%s", t->n, t->n == 1 ? "" : "s");
	for (int v = DV_NR - 1; v >= 0; v--) {
		if (!count[v])
			continue;
		printf("%s %d %s", first ? ":" : ",", count[v], diag_verdict_names[v]);
		first = false;
	}
	printf("\n");
	for (int i = 0; i < t->n; i++)
		print_qp_text(&t->qp[i]);
	if (t->unmatched_drops)
		printf("dropped apart from any QP: %llu packets (not RoCE v2, or not kept)\n",
		       (unsigned long long)t->unmatched_drops);
	if (t->overflow)
		printf("WARNING: %llu QPs not shown (more than %d)\n",
		       (unsigned long long)t->overflow, t->max);
	if (t->drop_events_lost)
		printf("WARNING: %llu drop events lost to a full ring buffer: the drops "
		       "above are short by as many\n", (unsigned long long)t->drop_events_lost);
	if (t->rxe_events_lost)
		printf("WARNING: %llu rdma_rxe QP events lost to a full ring buffer\n",
		       (unsigned long long)t->rxe_events_lost);
	print_missing(src);
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
	json_arr_close(w);
}

static void json_qpn(struct json_w *w, const char *key, __u32 qpn)
{
	if (qpn == DIAG_QPN_UNKNOWN)
		json_i64(w, key, -1);
	else
		json_u64(w, key, qpn);
}

static void print_qp_json(const struct diag_qp *q, const struct diag_sources *src,
			  double now)
{
	struct qp_names n;
	struct json_w w;

	qp_names(q, &n);
	json_begin(&w, stdout);
	json_str(&w, "type", "qp");
	json_f64(&w, "time", now);
	json_str(&w, "req", n.req);
	json_qpn(&w, "req_qpn", q->req_qpn);
	json_str(&w, "resp", n.resp);
	json_qpn(&w, "resp_qpn", q->resp_qpn);
	json_u64(&w, "sport", q->sport);
	json_str(&w, "verdict", diag_verdict_names[q->verdict]);
	json_str(&w, "why", q->why);
	if (q->lat_seen) {
		json_obj_open(&w, "latency");
		json_u64(&w, "samples", q->samples);
		json_f64(&w, "p50_us", q->p50_ns / 1e3);
		json_f64(&w, "p99_us", q->p99_ns / 1e3);
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
	json_missing(&w, src);
	json_end(&w);
}

static void print_json(const struct diag_table *t, const struct diag_sources *src)
{
	double now = (double)time(NULL);
	int count[DV_NR] = {};
	struct json_w w;

	for (int i = 0; i < t->n; i++) {
		count[t->qp[i].verdict]++;
		print_qp_json(&t->qp[i], src, now);
	}
	json_begin(&w, stdout);
	json_str(&w, "type", "summary");
	json_f64(&w, "time", now);
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

void rocediag_print(const struct diag_table *t, const struct diag_sources *src)
{
	if (cli.json)
		print_json(t, src);
	else
		print_text(t, src);
}

/* ---- --prom: QPs per verdict, and a verdict gauge per QP (capped) ---- */

static struct prom_cap cap;

void rocediag_prom(const struct diag_table *t)
{
	struct prom_file pf;
	int count[DV_NR] = {};
	char (*keys)[160] = calloc(t->n + 1, sizeof(*keys));
	const char **kp = calloc(t->n + 1, sizeof(*kp));
	double *weight = calloc(t->n + 1, sizeof(*weight));
	bool *own = calloc(t->n + 1, sizeof(*own));
	int err;

	if (!cli.prom_path || !keys || !kp || !weight || !own)
		goto out;
	err = prom_open(&pf, cli.prom_path);
	if (err) {
		cli_prom_err(err);
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
	prom_cap_select(&cap, t->n, kp, weight, own);
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
		qp_names(q, &n);
		snprintf(sp, sizeof(sp), "%u", q->sport);
		l[0] = (struct prom_label){ "req", n.req };
		l[1] = (struct prom_label){ "req_qpn", n.req_qpn };
		l[2] = (struct prom_label){ "resp", n.resp };
		l[3] = (struct prom_label){ "resp_qpn", n.resp_qpn };
		l[4] = (struct prom_label){ "sport", sp };
		l[5] = (struct prom_label){ "verdict", diag_verdict_names[q->verdict] };
		prom_gauge(&pf, "agentxdp_rocediag_qp_verdict", l, 6, q->verdict);
	}
	err = prom_commit(&pf);
	if (err)
		cli_prom_err(err);
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
