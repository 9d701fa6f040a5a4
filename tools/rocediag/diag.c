// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rocediag's join by QP and its verdict rules (diag.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diag.h"

const char *const diag_verdict_names[DV_NR] = {
	[DV_OK] = "OK", [DV_SLOW] = "SLOW", [DV_CONGESTED] = "CONGESTED",
	[DV_LOSSY] = "LOSSY", [DV_DROPPED] = "DROPPED-LOCALLY", [DV_STUCK] = "STUCK",
};

const char diag_verdict_rules[] =
"  STUCK            RDMA netlink has the QP in ERR, a fatal async event hit\n"
"                   it, or its send PSN stood still while its port's timeouts\n"
"                   or retries rose (rdmaqp: any RDMA device); rdma_rxe moved\n"
"                   the QP to ERR, or its retry timer fired with no answer\n"
"                   in the interval; or, with no drop on this host, requests\n"
"                   waited past --timeout and no answer came; or a kernel\n"
"                   QP's work request failed other than flushed, or its oldest\n"
"                   send WR waited past --timeout while none completed\n"
"                   (verbslat: NVMe-oF, NFS over RDMA ... on any RNIC it knows)\n"
"  DROPPED-LOCALLY  netfilter on this host dropped packets of the QP (the\n"
"                   rule is named), or this host dropped them (the reason)\n"
"                   and no answer came; or it did so earlier and the QP has\n"
"                   not answered since (held until it answers or is gone)\n"
"  LOSSY            retransmits, PSN sequence NAKs, timeouts, rdma_rxe's retry\n"
"                   timer or other drops on this host while answers still come;\n"
"                   for a QP only rdmaqp sees, its port's sequence error,\n"
"                   timeout or retransmission counters rising\n"
"  CONGESTED        CNPs or ECN CE marks; for a QP only rdmaqp sees, its\n"
"                   port's CNP or ECN counters or pause frames rising\n"
"  SLOW             median latency >= 4x the median of the other QPs' medians\n"
"                   and 200 us above it (5 samples each); this host's own\n"
"                   turnarounds (it answers) only against turnarounds\n"
"  OK               none of these\n";

int diag_table_init(struct diag_table *t, int max)
{
	memset(t, 0, sizeof(*t));
	t->qp = calloc(max, sizeof(*t->qp));
	t->held = calloc(max, sizeof(*t->held));
	t->max = max;
	return t->qp && t->held ? 0 : -ENOMEM;
}

void diag_table_free(struct diag_table *t)
{
	free(t->qp);
	free(t->held);
	t->qp = NULL;
	t->held = NULL;
}

void diag_table_reset(struct diag_table *t)
{
	t->n = 0;
	t->overflow = 0;
	t->unmatched_drops = 0;
	t->drop_events_lost = 0;
	t->rxe_events_lost = 0;
}

static bool diag_same_pair(const struct diag_qp *q, __u8 family, const __u8 *req,
			   const __u8 *resp)
{
	return q->family == family && !memcmp(q->req, req, 16) && !memcmp(q->resp, resp, 16);
}

static struct diag_qp *diag_new(struct diag_table *t, __u8 family, const __u8 *req,
				const __u8 *resp)
{
	struct diag_qp *q;

	if (t->n >= t->max) {
		t->overflow++;
		return NULL;
	}
	q = &t->qp[t->n++];
	memset(q, 0, sizeof(*q));
	q->family = family;
	memcpy(q->req, req, 16);
	memcpy(q->resp, resp, 16);
	q->resp_qpn = q->req_qpn = DIAG_QPN_UNKNOWN;
	return q;
}

/* the entry of the pair with qpn as its responder's (by_resp) or its
 * requester's QPN, made with that QPN alone known when there is none */
static struct diag_qp *diag_by_qpn(struct diag_table *t, __u8 family, const __u8 *req,
				   const __u8 *resp, __u32 qpn, bool by_resp, bool make)
{
	struct diag_qp *q;

	for (int i = 0; i < t->n; i++) {
		q = &t->qp[i];
		if ((by_resp ? q->resp_qpn : q->req_qpn) == qpn &&
		    diag_same_pair(q, family, req, resp))
			return q;
	}
	if (!make)
		return NULL;
	q = diag_new(t, family, req, resp);
	if (q && by_resp)
		q->resp_qpn = qpn;
	else if (q)
		q->req_qpn = qpn;
	return q;
}

struct diag_qp *diag_by_request(struct diag_table *t, __u8 family, const __u8 *req,
				const __u8 *resp, __u32 resp_qpn)
{
	return diag_by_qpn(t, family, req, resp, resp_qpn, true, true);
}

struct diag_qp *diag_find_request(struct diag_table *t, __u8 family, const __u8 *req,
				  const __u8 *resp, __u32 resp_qpn)
{
	return diag_by_qpn(t, family, req, resp, resp_qpn, true, false);
}

struct diag_qp *diag_by_answer(struct diag_table *t, __u8 family, const __u8 *req,
			       const __u8 *resp, __u32 req_qpn)
{
	return diag_by_qpn(t, family, req, resp, req_qpn, false, true);
}

static void diag_add_u64(__u64 *to, __u64 v)
{
	*to += v;
}

/* what src knows, added to dst (same QP) */
static void diag_fold(struct diag_qp *dst, const struct diag_qp *src)
{
	if (src->lat_seen && !dst->lat_seen) {
		dst->lat_seen = true;
		dst->turnaround = src->turnaround;
		dst->samples = src->samples;
		dst->p50_ns = src->p50_ns;
		dst->p99_ns = src->p99_ns;
	}
	dst->requests |= src->requests;
	dst->answers |= src->answers;
	diag_add_u64(&dst->outstanding, src->outstanding);
	diag_add_u64(&dst->retransmits, src->retransmits);
	diag_add_u64(&dst->seq_naks, src->seq_naks);
	diag_add_u64(&dst->other_naks, src->other_naks);
	diag_add_u64(&dst->rnr_naks, src->rnr_naks);
	diag_add_u64(&dst->cnps, src->cnps);
	diag_add_u64(&dst->ecn_ce, src->ecn_ce);
	diag_add_u64(&dst->timeouts, src->timeouts);
	for (int i = 0; i < src->nsites; i++)
		diag_add_drop(dst, &src->sites[i], NULL);
	for (int i = 0; i < src->nsigs; i++)
		diag_add_sig(dst, &src->sigs[i], src->sig_packets[i]);
	if (src->rule.known && !dst->rule.known)
		dst->rule = src->rule;
	if (src->rxe_seen && !dst->rxe_seen) {
		dst->rxe_seen = true;
		memcpy(dst->rxe_dev, src->rxe_dev, sizeof(dst->rxe_dev));
	}
	if (src->state_changed && !dst->state_changed) {
		dst->state_changed = true;
		dst->state_from = src->state_from;
		dst->state_to = src->state_to;
		memcpy(dst->state_str, src->state_str, sizeof(dst->state_str));
	}
	dst->to_err |= src->to_err;
	diag_add_u64(&dst->rxe_retx_timer, src->rxe_retx_timer);
	diag_add_u64(&dst->rxe_retries, src->rxe_retries);
	diag_add_u64(&dst->rxe_retx_pkts, src->rxe_retx_pkts);
	diag_add_u64(&dst->rxe_rnr, src->rxe_rnr);
	diag_add_u64(&dst->rxe_rx_acks, src->rxe_rx_acks);
	if (!dst->sport)
		dst->sport = src->sport;
	if (dst->req_qpn == DIAG_QPN_UNKNOWN)
		dst->req_qpn = src->req_qpn;
}

void diag_merge(struct diag_table *t)
{
	for (int i = 0; i < t->n; i++) {
		struct diag_qp *u = &t->qp[i], *into = NULL;

		if (u->resp_qpn != DIAG_QPN_UNKNOWN || u->req_qpn == DIAG_QPN_UNKNOWN)
			continue;
		for (int j = 0; j < t->n && !into; j++) {
			struct diag_qp *q = &t->qp[j];

			if (j != i && q->resp_qpn != DIAG_QPN_UNKNOWN &&
			    q->req_qpn == u->req_qpn &&
			    diag_same_pair(q, u->family, u->req, u->resp))
				into = q;
		}
		if (!into)
			continue;
		diag_fold(into, u);
		t->qp[i] = t->qp[--t->n];
		i--;
	}
}

void diag_add_drop(struct diag_qp *q, const struct diag_site *site,
		   const struct diag_sig *sig)
{
	int i;

	q->drops += site->packets;
	for (i = 0; i < q->nsites; i++) {
		struct diag_site *s = &q->sites[i];

		if (!strcmp(s->location, site->location) && !strcmp(s->reason, site->reason) &&
		    !strcmp(s->ifname, site->ifname)) {
			s->packets += site->packets;
			break;
		}
	}
	if (i == q->nsites && q->nsites < DIAG_MAX_SITES)
		q->sites[q->nsites++] = *site;
	if (sig)
		diag_add_sig(q, sig, site->packets);
}

void diag_add_sig(struct diag_qp *q, const struct diag_sig *sig, __u64 packets)
{
	int i;

	for (i = 0; i < q->nsigs; i++)
		if (!memcmp(&q->sigs[i], sig, sizeof(*sig)))
			break;
	if (i == q->nsigs) {
		if (q->nsigs == DIAG_MAX_SIGS)
			return;
		q->sigs[q->nsigs] = *sig;
		q->sig_packets[q->nsigs++] = 0;
	}
	q->sig_packets[i] += packets;
}

/* ---- evidence held across intervals ---- */

/* h is the QP of this pair with one of these QPNs */
static bool diag_held_is(const struct diag_held *h, __u8 family, const __u8 *req,
			 const __u8 *resp, __u32 resp_qpn, __u32 req_qpn)
{
	if (h->family != family || memcmp(h->req, req, 16) || memcmp(h->resp, resp, 16))
		return false;
	return (resp_qpn != DIAG_QPN_UNKNOWN && h->resp_qpn == resp_qpn) ||
	       (req_qpn != DIAG_QPN_UNKNOWN && h->req_qpn == req_qpn);
}

static struct diag_held *diag_held_of(struct diag_table *t, const struct diag_qp *q)
{
	for (int i = 0; i < t->nheld; i++)
		if (diag_held_is(&t->held[i], q->family, q->req, q->resp, q->resp_qpn,
				 q->req_qpn))
			return &t->held[i];
	return NULL;
}

void diag_alive(struct diag_table *t, __u8 family, const __u8 *req, const __u8 *resp,
		__u32 resp_qpn, __u32 req_qpn, unsigned int by)
{
	for (int i = 0; i < t->nheld; i++)
		if (diag_held_is(&t->held[i], family, req, resp, resp_qpn, req_qpn))
			t->held[i].alive |= by;
}

static unsigned int diag_seen_by(const struct diag_qp *q)
{
	return (q->lat_seen ? DIAG_BY_LAT : 0) | (q->rxe_seen ? DIAG_BY_RXE : 0);
}

/* what h holds, onto q (this interval's drops are q's own) */
static void diag_held_onto(struct diag_qp *q, const struct diag_held *h, double now)
{
	q->held = h->drops > 0;
	q->held_drops = h->drops;
	snprintf(q->held_ifname, sizeof(q->held_ifname), "%s", h->ifname);
	q->first_drop = h->first;
	q->last_drop = h->last;
	q->held_for_s = now - h->last;
	if (!q->rule.known && h->rule.known) {
		q->rule = h->rule;
		q->rule.packets = 0;
		q->rule_held = true;
	}
}

/* q's evidence of this interval into h: a drop with no answer */
static void diag_held_add(struct diag_held *h, const struct diag_qp *q, double now)
{
	if (!h->drops)
		h->first = now;
	h->last = now;
	h->drops += q->drops;
	if (q->rule.known && !q->rule_held)
		h->rule = q->rule;
	if (!h->ifname[0] && q->nsites)
		snprintf(h->ifname, sizeof(h->ifname), "%s", q->sites[0].ifname);
	if (h->resp_qpn == DIAG_QPN_UNKNOWN)
		h->resp_qpn = q->resp_qpn;
	if (h->req_qpn == DIAG_QPN_UNKNOWN)
		h->req_qpn = q->req_qpn;
	if (!h->sport)
		h->sport = q->sport;
}

static struct diag_held *diag_held_new(struct diag_table *t, const struct diag_qp *q)
{
	struct diag_held *h;

	if (t->nheld == t->max)
		return NULL;
	h = &t->held[t->nheld++];
	memset(h, 0, sizeof(*h));
	h->family = q->family;
	memcpy(h->req, q->req, 16);
	memcpy(h->resp, q->resp, 16);
	h->resp_qpn = q->resp_qpn;
	h->req_qpn = q->req_qpn;
	return h;
}

/* this interval's entry q against its held evidence; false: forget it */
static bool diag_carry_qp(struct diag_table *t, struct diag_qp *q, double now)
{
	struct diag_held *h = diag_held_of(t, q);

	/* it answered: recovered, whatever it dropped before */
	if (q->answers)
		return !h;
	/* rdma_rxe has a QP of these numbers again: a new one */
	if (h && h->gone && q->rxe_seen)
		return false;
	if (h)
		diag_held_onto(q, h, now);
	else if (q->drops)
		h = diag_held_new(t, q);
	if (!h)
		return true;
	h->matched = true;
	h->seen_by |= diag_seen_by(q);
	if (q->drops) {
		if (!q->held)
			q->first_drop = now;
		diag_held_add(h, q, now);
		q->last_drop = now;
		q->held_for_s = 0;
	}
	return true;
}

/* held h with no entry this interval: a source that saw it no longer
 * holds it */
static bool diag_held_gone(const struct diag_held *h)
{
	return h->seen_by & ~h->alive;
}

void diag_carry(struct diag_table *t, double now)
{
	for (int i = 0; i < t->nheld; i++)
		t->held[i].matched = false;
	for (int i = 0; i < t->n; i++) {
		struct diag_held *h = diag_held_of(t, &t->qp[i]);

		if (!diag_carry_qp(t, &t->qp[i], now) && h)
			*h = t->held[--t->nheld];
	}
	for (int i = 0; i < t->nheld; i++) {
		struct diag_held *h = &t->held[i];
		struct diag_qp *q;

		if (h->matched) {
			h->alive = 0;
			continue;
		}
		h->gone |= diag_held_gone(h);
		h->alive = 0;
		if ((h->gone || !h->seen_by) && now - h->last >= DIAG_HOLD_S) {
			*h = t->held[--t->nheld];
			i--;
			continue;
		}
		if (h->gone)
			continue;
		/* no source had anything of it this interval: its evidence alone */
		q = diag_new(t, h->family, h->req, h->resp);
		if (!q)
			continue;
		q->resp_qpn = h->resp_qpn;
		q->req_qpn = h->req_qpn;
		q->sport = h->sport;
		diag_held_onto(q, h, now);
	}
}

/* ---- verdicts ---- */

static const char *diag_fmt_ns(double ns, char *buf, size_t len)
{
	if (ns >= 1e9)
		snprintf(buf, len, "%.2f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.0f us", ns / 1e3);
	return buf;
}

static bool diag_has_median(const struct diag_qp *q)
{
	return q->lat_seen && q->samples >= DIAG_SLOW_MIN_SAMPLES;
}

static int diag_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the median of the other QPs' medians of the same kind (round trips,
 * or this host's turnarounds); false when there are none */
static bool diag_peers_median(const struct diag_table *t, int self, double *out)
{
	double *m = calloc(t->n, sizeof(*m));
	int n = 0;

	if (!m)
		return false;
	for (int i = 0; i < t->n; i++)
		if (i != self && diag_has_median(&t->qp[i]) &&
		    t->qp[i].turnaround == t->qp[self].turnaround)
			m[n++] = t->qp[i].p50_ns;
	if (n) {
		qsort(m, n, sizeof(*m), diag_cmp_double);
		*out = n & 1 ? m[n / 2] : (m[n / 2 - 1] + m[n / 2]) / 2;
	}
	free(m);
	return n > 0;
}

static bool diag_is_slow(const struct diag_table *t, int i)
{
	struct diag_qp *q = &t->qp[i];
	double peers;

	if (!diag_has_median(q) || !diag_peers_median(t, i, &peers) || peers <= 0)
		return false;
	q->peers_median_ns = peers;
	q->slow_ratio = q->p50_ns / peers;
	return q->slow_ratio >= DIAG_SLOW_RATIO && q->p50_ns - peers >= DIAG_SLOW_MIN_GAP_NS;
}

/* ", 3 retransmits" and the like, appended to buf */
static void diag_cat(char *buf, size_t len, const char *fmt, unsigned long long v)
{
	size_t o = strlen(buf);

	if (o < len)
		snprintf(buf + o, len - o, fmt, v);
}

/* what the sources can say of the QP's losses: counts where a source
 * saw them, "unknown" where none could */
static void diag_why_counts(struct diag_qp *q, const struct diag_sources *src)
{
	size_t len = sizeof(q->why);
	char *w = q->why;

	if (q->lat_seen && q->verdict != DV_SLOW && q->verdict != DV_OK)
		diag_cat(w, len, ", %llu samples", q->samples);
	/* a QP only rdmaqp or verbslat sees has no addresses the drops
	 * could be joined by */
	if (!src->drops || (!q->family && (q->rq_seen || q->nvb)))
		diag_cat(w, len, ", drops unknown", 0);
	else if (q->verdict != DV_DROPPED)
		diag_cat(w, len, ", %llu drops", q->drops);
	if (q->lat_seen)
		diag_cat(w, len, ", %llu retransmits", q->retransmits);
	else if (q->rxe_seen)
		diag_cat(w, len, ", %llu retransmits", q->rxe_retx_pkts);
	else
		diag_cat(w, len, ", retransmits unknown", 0);
	if (q->seq_naks)
		diag_cat(w, len, ", %llu PSN sequence NAKs", q->seq_naks);
	if (q->other_naks)
		diag_cat(w, len, ", %llu fatal NAKs", q->other_naks);
	if (q->rnr_naks)
		diag_cat(w, len, ", %llu RNR NAKs", q->rnr_naks);
	if (q->timeouts)
		diag_cat(w, len, ", %llu timeouts", q->timeouts);
	if (q->cnps)
		diag_cat(w, len, ", %llu CNPs", q->cnps);
	if (q->ecn_ce)
		diag_cat(w, len, ", %llu ECN CE", q->ecn_ce);
	if (q->rxe_retx_timer)
		diag_cat(w, len, ", retry timer fired %llux", q->rxe_retx_timer);
}

/* verbslat's side of the QP that failed: an error completion other
 * than a flush (a flush follows the QP into ERR, as at every orderly
 * disconnect: evidence, not a cause); NULL when none did */
static const struct diag_verbs *diag_vb_failed(const struct diag_qp *q)
{
	for (int i = 0; i < q->nvb; i++)
		if (q->vb[i].errors > q->vb[i].flushes)
			return &q->vb[i];
	return NULL;
}

/* its side whose send WRs wait past the bound with none completing */
static const struct diag_verbs *diag_vb_stalled(const struct diag_qp *q, double bound_s)
{
	for (int i = 0; i < q->nvb; i++)
		if (q->vb[i].sq_outstanding && !q->vb[i].sq_done &&
		    q->vb[i].sq_oldest_s >= bound_s)
			return &q->vb[i];
	return NULL;
}

static double diag_wr_timeout(const struct diag_sources *src)
{
	return src && src->wr_timeout_s > 0 ? src->wr_timeout_s : 1.0;
}

/* "rxe-a QP 0x12: 1 IB_WC_RETRY_EXC_ERR, 31 IB_WC_WR_FLUSH_ERR" */
static void diag_vb_errors(const struct diag_verbs *v, char *w, size_t len)
{
	size_t o = strlen(w);

	if (o < len)
		snprintf(w + o, len - o, "%s QP 0x%x:", v->dev, v->qpn);
	for (int e = 0; e < v->nerrs; e++) {
		o = strlen(w);
		if (o < len)
			snprintf(w + o, len - o, "%s %llu %s", e ? "," : "",
				 (unsigned long long)v->err[e].count, v->err[e].status);
	}
}

/* the STUCK head of a QP verbslat sees stuck; false if it is not */
static bool diag_why_vb_stuck(struct diag_qp *q, const struct diag_sources *src,
			      double interval_s)
{
	const struct diag_verbs *v = diag_vb_failed(q);
	size_t len = sizeof(q->why);
	char *w = q->why;

	if (v) {
		w[0] = 0;
		diag_vb_errors(v, w, len);
		diag_cat(w, len, " (work requests failed)", 0);
		return true;
	}
	v = diag_vb_stalled(q, diag_wr_timeout(src));
	if (!v)
		return false;
	snprintf(w, len, "%s QP 0x%x: %llu send work requests outstanding, the oldest for "
		 "%.1f s, none completed in %.1f s", v->dev, v->qpn,
		 (unsigned long long)v->sq_outstanding, v->sq_oldest_s, interval_s);
	return true;
}

/* the verdict's own evidence, first in why */
static void diag_why_head(struct diag_qp *q, const struct diag_sources *src, double interval_s)
{
	const char *kind = q->turnaround ? "this host's turnaround " : "";
	char a[32], b[32], c[32];
	size_t len = sizeof(q->why);
	char *w = q->why;

	switch (q->verdict) {
	case DV_STUCK:
		if (q->rq_seen && q->rq_fatal[0])
			snprintf(w, len, "%s QP hit by %s (async event)%s", q->rq_dev, q->rq_fatal,
				 q->rq_err ? ", in ERR (RDMA netlink)" : "");
		else if (q->rq_seen && q->rq_err)
			snprintf(w, len, "%s QP in ERR (RDMA netlink)", q->rq_dev);
		else if (q->rq_seen && q->rq_frozen)
			snprintf(w, len, "%s send PSN still at %u for %.1f s while its port "
				 "resent", q->rq_dev, q->rq_sq_psn, interval_s);
		else if (diag_why_vb_stuck(q, src, interval_s))
			;
		else
			snprintf(w, len, "0 answers in %.1f s", interval_s);
		break;
	case DV_DROPPED:
		if (q->drops)
			snprintf(w, len, "%llu packets dropped on this host",
				 (unsigned long long)q->drops);
		else
			snprintf(w, len, "no answer since %llu packets were dropped on this "
				 "host, the last %.0f s ago", (unsigned long long)q->held_drops,
				 q->held_for_s);
		if (q->drops && q->held)
			diag_cat(w, len, ", and %llu before with no answer since",
				 q->held_drops);
		break;
	case DV_SLOW:
		snprintf(w, len, "%sp50 %s = %.1fx the other QPs' median (%s), p99 %s", kind,
			 diag_fmt_ns(q->p50_ns, a, sizeof(a)), q->slow_ratio,
			 diag_fmt_ns(q->peers_median_ns, b, sizeof(b)),
			 diag_fmt_ns(q->p99_ns, c, sizeof(c)));
		break;
	default:
		if (q->lat_seen && q->samples)
			snprintf(w, len, "%sp50 %s, p99 %s", kind,
				 diag_fmt_ns(q->p50_ns, a, sizeof(a)),
				 diag_fmt_ns(q->p99_ns, b, sizeof(b)));
		else if (q->lat_seen)
			snprintf(w, len, "no latency samples");
		else if (q->rq_seen)
			snprintf(w, len, "%s: %llu packets sent, %llu received (PSNs)", q->rq_dev,
				 (unsigned long long)q->rq_tx, (unsigned long long)q->rq_rx);
		else if (q->nvb && q->vb[0].sq_samples)
			snprintf(w, len, "work requests p50 %s, p99 %s",
				 diag_fmt_ns(q->vb[0].sq_p50_ns, a, sizeof(a)),
				 diag_fmt_ns(q->vb[0].sq_p99_ns, b, sizeof(b)));
		else if (q->nvb)
			snprintf(w, len, "%s QP 0x%x: no send work request completed",
				 q->vb[0].dev, q->vb[0].qpn);
		else
			snprintf(w, len, "no latency (%s)", src->lat ? "rocelat did not see it" :
				 "not timed");
		break;
	}
}

/* rdmaqp's evidence: the state change it polled, the port's counters */
static void diag_why_rdma(struct diag_qp *q)
{
	size_t len = sizeof(q->why), o;
	char *w = q->why;

	if (!q->rq_seen)
		return;
	o = strlen(w);
	if (q->rq_change[0] && !q->state_changed)
		snprintf(w + o, len - o, ", QP went %s (RDMA netlink)", q->rq_change);
	o = strlen(w);
	if (q->rq_loss[0])
		snprintf(w + o, len - o, ", port %u: %s", q->rq_port, q->rq_loss);
	o = strlen(w);
	if (q->rq_cong[0])
		snprintf(w + o, len - o, ", port %u: %s", q->rq_port, q->rq_cong);
}

/* verbslat's error completions not in the head already (flushes) */
static void diag_why_verbs(struct diag_qp *q)
{
	const struct diag_verbs *head = q->verdict == DV_STUCK ? diag_vb_failed(q) : NULL;
	size_t len = sizeof(q->why);

	for (int i = 0; i < q->nvb; i++) {
		if (!q->vb[i].errors || &q->vb[i] == head)
			continue;
		diag_cat(q->why, len, ", ", 0);
		diag_vb_errors(&q->vb[i], q->why, len);
	}
}

static void diag_why(struct diag_qp *q, const struct diag_sources *src, double interval_s)
{
	size_t len = sizeof(q->why);
	char *w = q->why;

	diag_why_head(q, src, interval_s);
	diag_why_counts(q, src);
	if (q->state_changed) {
		size_t o = strlen(w);

		snprintf(w + o, len - o, ", QP went %s", q->state_str);
	}
	diag_why_rdma(q);
	diag_why_verbs(q);
	if (q->held && q->verdict != DV_DROPPED)
		diag_cat(w, len, ", %llu dropped on this host before with no answer since",
			 q->held_drops);
	/* a turnaround is this host's own time: no path in it */
	if (q->verdict == DV_SLOW && q->sport && !q->turnaround)
		diag_cat(w, len, " (path: sport %llu)", q->sport);
	if (q->verdict == DV_STUCK && !q->drops && !q->held && src->drops && q->family) {
		size_t o = strlen(w);

		snprintf(w + o, len - o, "; no drop on this host");
	}
}

static __u64 diag_nf_drops(const struct diag_qp *q)
{
	__u64 n = 0;

	for (int i = 0; i < q->nsites; i++)
		n += q->sites[i].netfilter ? q->sites[i].packets : 0;
	return n;
}

static int diag_verdict_of(struct diag_table *t, int i, const struct diag_sources *src)
{
	struct diag_qp *q = &t->qp[i];

	if (q->rq_seen && (q->rq_err || q->rq_frozen || q->rq_fatal[0]))
		return DV_STUCK;
	if (diag_vb_failed(q) || diag_vb_stalled(q, diag_wr_timeout(src)))
		return DV_STUCK;
	if (q->rxe_seen && (q->to_err || (q->rxe_retx_timer && !q->answers && !q->rxe_rx_acks)))
		return DV_STUCK;
	/* a rule's drop is the cause whatever else is seen; other drops
	 * (a qdisc, a full queue) with answers still coming are loss */
	/* and so is one of an earlier interval with no answer since */
	if (diag_nf_drops(q) || ((q->drops || q->held) && !q->answers))
		return DV_DROPPED;
	if (q->lat_seen && q->timeouts && !q->answers)
		return DV_STUCK;
	if (q->drops || q->retransmits || q->seq_naks || q->other_naks || q->timeouts ||
	    q->rxe_retries || q->rxe_retx_timer || q->rq_loss[0])
		return DV_LOSSY;
	if (q->cnps || q->ecn_ce || q->rq_cong[0])
		return DV_CONGESTED;
	if (diag_is_slow(t, i))
		return DV_SLOW;
	return DV_OK;
}

static int diag_cmp_qp(const void *a, const void *b)
{
	const struct diag_qp *x = a, *y = b;

	if (x->verdict != y->verdict)
		return x->verdict > y->verdict ? -1 : 1;
	if (x->drops != y->drops)
		return x->drops > y->drops ? -1 : 1;
	if (x->p50_ns != y->p50_ns)
		return x->p50_ns > y->p50_ns ? -1 : 1;
	return 0;
}

void diag_verdicts(struct diag_table *t, const struct diag_sources *src, double interval_s)
{
	for (int i = 0; i < t->n; i++)
		t->qp[i].verdict = diag_verdict_of(t, i, src);
	for (int i = 0; i < t->n; i++)
		diag_why(&t->qp[i], src, interval_s);
	qsort(t->qp, t->n, sizeof(*t->qp), diag_cmp_qp);
}
