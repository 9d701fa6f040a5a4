// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tools/rocediag/diag.c: rocediag's join by QP and each verdict rule, on
 * evidence set by hand (what each source would have read) */
#include <stdbool.h>
#include <string.h>
#include "diag.h"
#include "tap.h"

static const __u8 A[16] = { 10, 0, 0, 1 }, B[16] = { 10, 0, 0, 2 }, C[16] = { 10, 0, 0, 3 };
static struct diag_sources all = { .lat = true, .drops = true, .rules = true, .rxe = true };

/* a flow as rocelat reads it: paired, n samples at median p50 */
static struct diag_qp *flow(struct diag_table *t, const __u8 *resp, __u32 resp_qpn,
			    __u32 req_qpn, __u64 n, double p50)
{
	struct diag_qp *q = diag_by_request(t, 4, A, resp, resp_qpn);

	q->lat_seen = q->requests = q->answers = true;
	q->req_qpn = req_qpn;
	q->samples = n;
	q->p50_ns = q->p99_ns = p50;
	return q;
}

static const struct diag_qp *find(const struct diag_table *t, __u32 resp_qpn)
{
	for (int i = 0; i < t->n; i++)
		if (t->qp[i].resp_qpn == resp_qpn)
			return &t->qp[i];
	return NULL;
}

/* the why of QP resp_qpn has str (printed when not) */
static bool why_has(const struct diag_table *t, __u32 resp_qpn, const char *str)
{
	const struct diag_qp *q = find(t, resp_qpn);
	bool ok = q && strstr(q->why, str);

	if (!ok)
		printf("#   why: %s\n", q ? q->why : "(no such QP)");
	return ok;
}

static struct diag_site site(const char *reason, __u64 n)
{
	struct diag_site s = { .packets = n };

	snprintf(s.location, sizeof(s.location), "nft_do_chain");
	snprintf(s.reason, sizeof(s.reason), "%s", reason);
	snprintf(s.ifname, sizeof(s.ifname), "veth0");
	s.netfilter = !strcmp(reason, "NETFILTER_DROP");
	return s;
}

static int verdict_of(const struct diag_table *t, __u32 resp_qpn)
{
	const struct diag_qp *q = find(t, resp_qpn);

	return q ? q->verdict : -1;
}

static void test_demo(void)
{
	struct diag_table t;
	struct diag_site s = site("NETFILTER_DROP", 32);
	struct diag_qp *q;

	diag_table_init(&t, 16);
	flow(&t, B, 0x11, 0x111, 100, 500e3);
	flow(&t, B, 0x12, 0x112, 100, 5e6);
	q = diag_by_request(&t, 4, A, B, 0x13);
	q->lat_seen = q->requests = true;
	q->retransmits = 28;
	diag_add_drop(q, &s, NULL);
	diag_verdicts(&t, &all, 1.0);
	tap_eq(t.n, 3, "demo: three QPs");
	tap_eq(t.qp[0].verdict, DV_DROPPED, "demo: the firewalled QP first, DROPPED-LOCALLY");
	tap_eq(t.qp[0].resp_qpn, 0x13, "demo: ... it is QP 0x13");
	tap_eq(t.qp[1].verdict, DV_SLOW, "demo: then the slowed QP, SLOW");
	tap_eq(t.qp[1].resp_qpn, 0x12, "demo: ... it is QP 0x12");
	tap_ok(t.qp[1].slow_ratio > 9.9 && t.qp[1].slow_ratio < 10.1,
	       "demo: SLOW at 10x its peers' median (got %.2f)", t.qp[1].slow_ratio);
	tap_ok(why_has(&t, 0x12, "10.0x the other QPs' median (500 us)"),
	       "demo: the SLOW line says so");
	tap_eq(verdict_of(&t, 0x11), DV_OK, "demo: the clean QP OK");
	diag_table_free(&t);
}

static void test_slow_bounds(void)
{
	struct diag_table t;

	/* 3.9x is not an outlier; 4x but under 200 us above is not either */
	diag_table_init(&t, 16);
	flow(&t, B, 1, 101, 50, 100e3);
	flow(&t, B, 2, 102, 50, 390e3);
	flow(&t, B, 3, 103, 50, 100e3);
	diag_verdicts(&t, &all, 1.0);
	tap_eq(verdict_of(&t, 2), DV_OK, "slow: 3.9x the peers' median is OK");
	diag_table_reset(&t);
	flow(&t, B, 1, 101, 50, 10e3);
	flow(&t, B, 2, 102, 50, 150e3);
	diag_verdicts(&t, &all, 1.0);
	tap_eq(verdict_of(&t, 2), DV_OK, "slow: 15x but 140 us above is OK");
	diag_table_reset(&t);
	flow(&t, B, 1, 101, 50, 100e3);
	flow(&t, B, 2, 102, 4, 5e6);
	diag_verdicts(&t, &all, 1.0);
	tap_eq(verdict_of(&t, 2), DV_OK, "slow: 4 samples are too few to call SLOW");
	diag_table_reset(&t);
	flow(&t, B, 2, 102, 50, 5e6);
	diag_verdicts(&t, &all, 1.0);
	tap_eq(verdict_of(&t, 2), DV_OK, "slow: no peers, no outlier");
	diag_table_free(&t);
}

static void test_rules(void)
{
	struct diag_table t;
	struct diag_site qd = site("QDISC_DROP", 3), nf = site("NETFILTER_DROP", 3);
	struct diag_qp *q;

	diag_table_init(&t, 16);
	/* loss at a qdisc while answers still come: LOSSY, not DROPPED */
	q = flow(&t, B, 1, 101, 50, 100e3);
	q->retransmits = 3;
	diag_add_drop(q, &qd, NULL);
	/* a rule's drop: DROPPED even with answers */
	q = flow(&t, B, 2, 102, 50, 100e3);
	diag_add_drop(q, &nf, NULL);
	/* a qdisc drop with no answer: DROPPED */
	q = flow(&t, B, 3, 103, 0, 0);
	q->answers = false;
	diag_add_drop(q, &qd, NULL);
	/* timeouts, no answer, no drop here: STUCK (the path or the peer) */
	q = flow(&t, B, 4, 104, 0, 0);
	q->answers = false;
	q->timeouts = 5;
	/* timeouts with answers: LOSSY */
	q = flow(&t, B, 5, 105, 50, 100e3);
	q->timeouts = 1;
	/* CNPs: CONGESTED */
	q = flow(&t, B, 6, 106, 50, 100e3);
	q->cnps = 7;
	/* rdma_rxe: ERR is STUCK, even with a rule's drops */
	q = flow(&t, B, 7, 107, 0, 0);
	q->answers = false;
	diag_add_drop(q, &nf, NULL);
	q->rxe_seen = q->to_err = q->state_changed = true;
	snprintf(q->state_str, sizeof(q->state_str), "RTS -> ERR");
	/* rdma_rxe: the retry timer with no answer is STUCK */
	q = flow(&t, B, 8, 108, 0, 0);
	q->answers = false;
	q->rxe_seen = true;
	q->rxe_retx_timer = 2;
	/* ... with answers it is not */
	q = flow(&t, B, 9, 109, 50, 100e3);
	q->rxe_seen = true;
	q->rxe_retx_timer = 1;
	q->rxe_rx_acks = 10;
	diag_verdicts(&t, &all, 2.0);
	tap_eq(verdict_of(&t, 1), DV_LOSSY, "rules: qdisc drops with answers: LOSSY");
	tap_eq(verdict_of(&t, 2), DV_DROPPED, "rules: a netfilter drop with answers: DROPPED-LOCALLY");
	tap_eq(verdict_of(&t, 3), DV_DROPPED, "rules: drops and no answer: DROPPED-LOCALLY");
	tap_eq(verdict_of(&t, 4), DV_STUCK, "rules: timeouts, no answer, no drop: STUCK");
	tap_ok(why_has(&t, 4, "0 answers in 2.0 s") && why_has(&t, 4, "no drop on this host"),
	       "rules: ... says 0 answers and no drop here");
	tap_eq(verdict_of(&t, 5), DV_LOSSY, "rules: timeouts with answers: LOSSY");
	tap_eq(verdict_of(&t, 6), DV_CONGESTED, "rules: CNPs: CONGESTED");
	tap_eq(verdict_of(&t, 7), DV_STUCK, "rules: rdma_rxe ERR: STUCK, over the drops");
	tap_ok(why_has(&t, 7, "QP went RTS -> ERR"), "rules: ... says the QP went RTS -> ERR");
	tap_eq(verdict_of(&t, 8), DV_STUCK, "rules: retry timer, no answer: STUCK");
	tap_eq(verdict_of(&t, 9), DV_LOSSY, "rules: retry timer with answers: LOSSY");
	tap_eq(t.qp[0].verdict, DV_STUCK, "rules: sorted worst first");
	tap_eq(t.qp[t.n - 1].verdict, DV_CONGESTED, "rules: ... least bad last");
	diag_table_free(&t);
}

static void test_no_false_stuck(void)
{
	struct diag_table t;
	struct diag_sources lat_only = { .lat = true };
	struct diag_qp *q;

	/* requests still outstanding at the report, answers in the interval,
	 * no source of failure: not STUCK */
	diag_table_init(&t, 16);
	q = flow(&t, B, 1, 101, 50, 100e3);
	q->outstanding = 4;
	/* a QP that went quiet: nothing sent, nothing answered, nothing due */
	q = diag_by_request(&t, 4, A, B, 2);
	q->lat_seen = true;
	diag_verdicts(&t, &lat_only, 1.0);
	tap_eq(verdict_of(&t, 1), DV_OK, "no false STUCK: outstanding requests with answers are OK");
	tap_eq(verdict_of(&t, 2), DV_OK, "no false STUCK: a quiet QP is OK");
	diag_table_free(&t);
}

static void test_join(void)
{
	struct diag_table t;
	struct diag_site s = site("NETFILTER_DROP", 5);
	struct diag_qp *q;

	diag_table_init(&t, 16);
	/* a dropped ACK names the requester's QPN; the flow is paired later */
	q = diag_by_answer(&t, 4, A, B, 0x111);
	diag_add_drop(q, &s, NULL);
	q = diag_by_answer(&t, 4, A, C, 0x111);		/* another pair: apart */
	diag_add_drop(q, &s, NULL);
	flow(&t, B, 0x11, 0x111, 10, 100e3);
	flow(&t, B, 0x12, 0x112, 10, 100e3);
	tap_eq(t.n, 4, "join: before the merge, four entries");
	diag_merge(&t);
	tap_eq(t.n, 3, "join: the answer's drops merged into the paired flow");
	tap_ok(find(&t, 0x11) && find(&t, 0x11)->drops == 5, "join: ... flow 0x11 has them");
	tap_ok(find(&t, 0x12) && find(&t, 0x12)->drops == 0, "join: ... flow 0x12 not");
	/* the same request twice: one entry */
	tap_ok(diag_by_request(&t, 4, A, B, 0x11) == find(&t, 0x11),
	       "join: a request finds its flow");
	/* a full table counts what it could not keep */
	diag_table_reset(&t);
	for (__u32 i = 0; i < 20; i++)
		diag_by_request(&t, 4, A, B, i);
	tap_eq(t.n, 16, "join: a full table keeps its size");
	tap_eq(t.overflow, 4, "join: ... and counts the QPs it could not keep");
	diag_table_free(&t);
}

/* an interval of QP 0x21's requests dropped by a rule, nothing answered */
static struct diag_qp *dropped(struct diag_table *t, __u64 n, bool rule)
{
	struct diag_site nf = site("NETFILTER_DROP", n);
	struct diag_qp *q = diag_by_request(t, 4, A, B, 0x21);

	q->lat_seen = q->requests = true;
	q->sport = 49154;
	diag_add_drop(q, &nf, NULL);
	if (rule) {
		q->rule.known = q->rule.certain = true;
		snprintf(q->rule.where, sizeof(q->rule.where), "inet f input handle 2");
		q->rule.packets = n;
	}
	return q;
}

static void test_held(void)
{
	struct diag_table t;
	const struct diag_qp *q;
	struct diag_qp *w;

	diag_table_init(&t, 16);
	/* interval 1 (t = 100 s): 7 dropped by the rule */
	dropped(&t, 7, true);
	diag_carry(&t, 100);
	diag_verdicts(&t, &all, 1.0);
	tap_eq(verdict_of(&t, 0x21), DV_DROPPED, "held: interval 1 DROPPED-LOCALLY");
	/* interval 2: timeouts, no answer, no drop: the STUCK "no
	 * drop on this host" */
	diag_table_reset(&t);
	w = diag_by_request(&t, 4, A, B, 0x21);
	w->lat_seen = true;
	w->timeouts = 4;
	diag_alive(&t, 4, A, B, 0x21, DIAG_QPN_UNKNOWN, DIAG_BY_LAT);
	diag_carry(&t, 101);
	diag_verdicts(&t, &all, 1.0);
	q = find(&t, 0x21);
	tap_eq(verdict_of(&t, 0x21), DV_DROPPED, "held: interval 2, no drop, no answer: still DROPPED-LOCALLY");
	tap_ok(q && q->held && q->held_drops == 7 && q->last_drop == 100,
	       "held: ... its 7 drops held, the last at 100 s");
	tap_ok(q && q->rule.known && q->rule_held && !strcmp(q->rule.where, "inet f input handle 2") &&
	       q->rule.packets == 0, "held: ... the rule held, none of its packets this interval");
	tap_ok(q && q->nsites == 0 && !strcmp(q->held_ifname, "veth0"),
	       "held: ... and the interface of its first drop");
	tap_ok(why_has(&t, 0x21, "no answer since 7 packets were dropped on this host, the last 1 s ago"),
	       "held: ... says since when");
	tap_ok(q && !strstr(q->why, "no drop on this host"), "held: ... never 'no drop on this host'");
	/* interval 3: no source had anything of it, rocelat still holds it */
	diag_table_reset(&t);
	diag_alive(&t, 4, A, B, 0x21, DIAG_QPN_UNKNOWN, DIAG_BY_LAT);
	diag_carry(&t, 102);
	diag_verdicts(&t, &all, 1.0);
	tap_eq(t.n, 1, "held: interval 3, nothing seen: the QP still reported");
	tap_eq(verdict_of(&t, 0x21), DV_DROPPED, "held: ... DROPPED-LOCALLY");
	tap_ok(find(&t, 0x21) && find(&t, 0x21)->sport == 49154, "held: ... with its path");
	/* interval 4: 3 more dropped: this interval's and the earlier ones apart */
	diag_table_reset(&t);
	dropped(&t, 3, false);
	diag_carry(&t, 103);
	diag_verdicts(&t, &all, 1.0);
	q = find(&t, 0x21);
	tap_ok(q && q->drops == 3 && q->held_drops == 7 && q->last_drop == 103 &&
	       q->first_drop == 100, "held: interval 4: 3 now, 7 before, first at 100 s");
	/* interval 5: it answers: recovered, the evidence forgotten */
	diag_table_reset(&t);
	flow(&t, B, 0x21, 0x121, 10, 100e3);
	diag_alive(&t, 4, A, B, 0x21, 0x121, DIAG_BY_LAT);
	diag_carry(&t, 104);
	diag_verdicts(&t, &all, 1.0);
	tap_eq(verdict_of(&t, 0x21), DV_OK, "held: answers again: OK");
	tap_eq(t.nheld, 0, "held: ... nothing held");
	diag_table_reset(&t);
	diag_carry(&t, 105);
	tap_eq(t.n, 0, "held: ... and not brought back");

	diag_table_free(&t);
}

/* held evidence of QPs that are gone, or seen by drops alone */
static void test_held_gone(void)
{
	struct diag_table t;
	struct diag_qp *w;

	diag_table_init(&t, 16);
	/* gone: rocelat no longer holds the flow */
	diag_table_reset(&t);
	dropped(&t, 2, true);
	diag_carry(&t, 200);
	diag_table_reset(&t);
	diag_carry(&t, 201);
	tap_eq(t.n, 0, "held: a QP gone from rocelat's table is no longer reported");
	/* rdma_rxe destroyed it; rocelat's timeouts of its requests come
	 * later (the VM's REJECT: 10 s after): its drops, not 'no drop' */
	diag_table_reset(&t);
	w = diag_by_request(&t, 4, A, B, 0x21);
	w->lat_seen = true;
	w->timeouts = 16;
	diag_carry(&t, 210);
	diag_verdicts(&t, &all, 1.0);
	tap_eq(verdict_of(&t, 0x21), DV_DROPPED, "held: a gone QP's late timeouts: DROPPED-LOCALLY by its drops");
	tap_ok(!strstr(find(&t, 0x21)->why, "no drop on this host"), "held: ... never 'no drop on this host'");
	/* rdma_rxe has a QP of those numbers again: a new QP, nothing held */
	diag_table_reset(&t);
	w = diag_by_request(&t, 4, A, B, 0x21);
	w->rxe_seen = true;
	diag_carry(&t, 220);
	diag_verdicts(&t, &all, 1.0);
	tap_eq(verdict_of(&t, 0x21), DV_OK, "held: a new QP of a gone one's numbers starts clean");
	tap_eq(t.nheld, 0, "held: ... nothing held");
	/* a gone QP's evidence ends DIAG_HOLD_S after its last drop */
	diag_table_reset(&t);
	dropped(&t, 2, true);
	diag_carry(&t, 250);
	diag_table_reset(&t);
	diag_carry(&t, 251);
	diag_table_reset(&t);
	diag_carry(&t, 250 + DIAG_HOLD_S);
	tap_eq(t.nheld, 0, "held: a gone QP's evidence ends DIAG_HOLD_S after its last drop");

	/* seen by drops alone (no -i): held DIAG_HOLD_S after its last drop */
	diag_table_reset(&t);
	w = dropped(&t, 2, false);
	w->lat_seen = false;
	diag_carry(&t, 300);
	diag_table_reset(&t);
	diag_carry(&t, 300 + DIAG_HOLD_S - 1);
	tap_eq(t.n, 1, "held: drops alone: held while DIAG_HOLD_S has not passed");
	diag_table_reset(&t);
	diag_carry(&t, 300 + DIAG_HOLD_S);
	tap_eq(t.n, 0, "held: ... forgotten after it");

	/* STUCK by rdma_rxe keeps the rule and never says no drop */
	diag_table_reset(&t);
	dropped(&t, 5, true);
	diag_carry(&t, 400);
	diag_table_reset(&t);
	w = diag_by_request(&t, 4, A, B, 0x21);
	w->rxe_seen = w->to_err = true;
	diag_alive(&t, 4, A, B, 0x21, DIAG_QPN_UNKNOWN, DIAG_BY_LAT);
	diag_carry(&t, 401);
	diag_verdicts(&t, &all, 1.0);
	tap_eq(verdict_of(&t, 0x21), DV_STUCK, "held: rdma_rxe's ERR after held drops: STUCK");
	tap_ok(why_has(&t, 0x21, "5 dropped on this host before") && find(&t, 0x21)->rule.known &&
	       !strstr(find(&t, 0x21)->why, "no drop on this host"),
	       "held: ... with the held drops and rule, never 'no drop on this host'");
	diag_table_free(&t);
}

static void test_turnaround(void)
{
	struct diag_table t;
	struct diag_qp *q;

	/* on the responder: two QPs timed as round trips at 0.5 ms, one as
	 * this host's turnaround at 20 ms: never compared with them */
	diag_table_init(&t, 16);
	flow(&t, B, 1, 101, 50, 500e3);
	flow(&t, B, 2, 102, 50, 500e3);
	q = flow(&t, B, 3, 103, 50, 20e6);
	q->turnaround = true;
	q->sport = 49153;
	diag_verdicts(&t, &all, 1.0);
	tap_eq(verdict_of(&t, 3), DV_OK, "turnaround: never compared with round trips");
	tap_ok(why_has(&t, 3, "this host's turnaround p50 20.00 ms"), "turnaround: ... says what it is");
	/* against turnarounds: SLOW, and no path */
	diag_table_reset(&t);
	for (__u32 i = 1; i <= 3; i++) {
		q = flow(&t, B, i, 100 + i, 50, i == 3 ? 20e6 : 500e3);
		q->turnaround = true;
		q->sport = 49150 + i;
	}
	diag_verdicts(&t, &all, 1.0);
	tap_eq(verdict_of(&t, 3), DV_SLOW, "turnaround: 40x the other turnarounds: SLOW");
	tap_ok(why_has(&t, 3, "this host's turnaround p50 20.00 ms = 40.0x the other QPs' median"),
	       "turnaround: ... says it is this host's turnaround");
	tap_ok(find(&t, 3) && !strstr(find(&t, 3)->why, "path"), "turnaround: ... and names no path");
	diag_table_free(&t);
}

static void test_unknown(void)
{
	struct diag_table t;
	struct diag_sources drops_only = { .drops = true, .rules = true };
	struct diag_sources lat_only = { .lat = true };
	struct diag_site s = site("NETFILTER_DROP", 4);
	struct diag_qp *q;

	/* no -i: rxedrop saw the drops, nothing saw retransmits */
	diag_table_init(&t, 16);
	q = diag_by_request(&t, 4, A, B, 1);
	diag_add_drop(q, &s, NULL);
	diag_verdicts(&t, &drops_only, 1.0);
	tap_ok(why_has(&t, 1, "retransmits unknown"), "unknown: retransmits without rocelat");
	tap_ok(!strstr(find(&t, 1)->why, "0 retransmits"), "unknown: ... never 0 retransmits");
	/* no drop source: drops unknown */
	diag_table_reset(&t);
	flow(&t, B, 2, 102, 10, 100e3);
	diag_verdicts(&t, &lat_only, 1.0);
	tap_ok(why_has(&t, 2, "drops unknown") && why_has(&t, 2, "0 retransmits"),
	       "unknown: drops without rxedrop, retransmits known");
	diag_table_free(&t);
}

/* a QP only rdmaqp sees (a hardware RNIC's): family 0, device and QPNs */
static struct diag_qp *rdma_qp(struct diag_table *t, __u32 qpn, __u32 peer)
{
	static const __u8 none[16];
	struct diag_qp *q = diag_by_request(t, 0, none, none, peer);

	q->req_qpn = qpn;
	q->rq_seen = true;
	q->rq_port = 1;
	snprintf(q->rq_dev, sizeof(q->rq_dev), "mlx5_0");
	snprintf(q->rq_state, sizeof(q->rq_state), "RTS");
	return q;
}

static void test_rdmaqp(void)
{
	struct diag_sources src = { .drops = true, .rdma = true };
	struct diag_table t;
	struct diag_qp *q;

	diag_table_init(&t, 16);
	q = rdma_qp(&t, 0x11, 1);
	q->rq_err = true;
	snprintf(q->rq_change, sizeof(q->rq_change), "RTS -> ERR");
	q = rdma_qp(&t, 0x12, 2);
	q->rq_tx = 5;
	q->rq_frozen = true;
	q->rq_sq_psn = 77;
	snprintf(q->rq_loss, sizeof(q->rq_loss), "local_ack_timeout_err +2");
	q = rdma_qp(&t, 0x13, 3);
	q->rq_tx = 900;
	snprintf(q->rq_loss, sizeof(q->rq_loss), "out_of_sequence +4");
	q = rdma_qp(&t, 0x14, 4);
	q->rq_tx = 900;
	snprintf(q->rq_cong, sizeof(q->rq_cong), "np_cnp_sent +9, eth1 pause frames +3");
	rdma_qp(&t, 0x15, 5)->rq_tx = 900;
	q = rdma_qp(&t, 0x16, 6);
	snprintf(q->rq_fatal, sizeof(q->rq_fatal), "QP_FATAL");
	diag_verdicts(&t, &src, 1.0);
	tap_ok(verdict_of(&t, 6) == DV_STUCK && why_has(&t, 6, "mlx5_0 QP hit by QP_FATAL (async event)"),
	       "rdmaqp: a fatal async event is STUCK");
	tap_ok(verdict_of(&t, 1) == DV_STUCK && why_has(&t, 1, "mlx5_0 QP in ERR (RDMA netlink)") &&
	       why_has(&t, 1, "QP went RTS -> ERR (RDMA netlink)"), "rdmaqp: ERR is STUCK");
	/* drops of a QP without addresses cannot be joined: never "no drop" */
	tap_ok(why_has(&t, 1, "drops unknown") && !strstr(find(&t, 1)->why, "no drop"),
	       "rdmaqp: drops unknown, not denied");
	tap_ok(verdict_of(&t, 2) == DV_STUCK && why_has(&t, 2, "send PSN still at 77") &&
	       why_has(&t, 2, "port 1: local_ack_timeout_err +2"),
	       "rdmaqp: send PSN frozen while the port resends is STUCK");
	tap_ok(verdict_of(&t, 3) == DV_LOSSY && why_has(&t, 3, "port 1: out_of_sequence +4"),
	       "rdmaqp: the port's sequence errors rising is LOSSY");
	tap_ok(verdict_of(&t, 4) == DV_CONGESTED && why_has(&t, 4, "eth1 pause frames +3"),
	       "rdmaqp: CNPs and pauses rising is CONGESTED");
	tap_ok(verdict_of(&t, 5) == DV_OK && why_has(&t, 5, "mlx5_0: 900 packets sent"),
	       "rdmaqp: a QP moving with a quiet port is OK");
	diag_table_free(&t);
}

/* a kernel QP as verbslat reads it, in an entry of its own (family 0) */
static struct diag_verbs *verbs_qp(struct diag_table *t, __u32 qpn, __u32 peer)
{
	static const __u8 dev[16] = { 3 }, none[16];
	struct diag_qp *q = diag_by_request(t, 0, dev, none, peer);
	struct diag_verbs *v = &q->vb[q->nvb++];

	q->req_qpn = qpn;
	snprintf(v->dev, sizeof(v->dev), "mlx5_0");
	v->qpn = qpn;
	snprintf(v->op[0].opcode, sizeof(v->op[0].opcode), "SEND");
	v->op[0].count = v->sq_done = v->sq_samples = 100;
	v->op[0].p50_ns = v->sq_p50_ns = 40e3;
	v->op[0].p99_ns = v->sq_p99_ns = 90e3;
	v->nops = 1;
	return v;
}

static void vb_err(struct diag_verbs *v, const char *status, __u64 n)
{
	snprintf(v->err[v->nerrs].status, sizeof(v->err[0].status), "%s", status);
	v->err[v->nerrs++].count = n;
	v->errors += n;
	v->flushes += strcmp(status, "IB_WC_WR_FLUSH_ERR") ? 0 : n;
}

static void test_verbs(void)
{
	struct diag_sources src = { .drops = true, .rdma = true, .verbs = true,
				    .wr_timeout_s = 1.0 };
	struct diag_table t;
	struct diag_verbs *v;
	struct diag_qp *q;

	diag_table_init(&t, 16);
	verbs_qp(&t, 0x11, 1);
	vb_err(verbs_qp(&t, 0x12, 2), "IB_WC_WR_FLUSH_ERR", 31);
	v = verbs_qp(&t, 0x13, 3);
	vb_err(v, "IB_WC_RETRY_EXC_ERR", 1);
	vb_err(v, "IB_WC_WR_FLUSH_ERR", 3);
	v = verbs_qp(&t, 0x14, 4);
	v->nops = v->sq_done = v->sq_samples = 0;
	v->sq_outstanding = 3;
	v->sq_oldest_s = 2.5;
	/* waiting as long, but its send queue still completes */
	v = verbs_qp(&t, 0x15, 5);
	v->sq_outstanding = 3;
	v->sq_oldest_s = 2.5;
	/* nothing completes, but the oldest is younger than the bound */
	v = verbs_qp(&t, 0x16, 6);
	v->nops = v->sq_done = v->sq_samples = 0;
	v->sq_outstanding = 1;
	v->sq_oldest_s = 0.5;
	/* on the wire too: rocelat's latency and the WRs' side by side */
	q = flow(&t, B, 0x17, 0x117, 100, 30e3);
	q->vb[q->nvb++] = *v;
	q->vb[0].sq_done = 100;
	diag_verdicts(&t, &src, 1.0);
	tap_ok(verdict_of(&t, 1) == DV_OK && why_has(&t, 1, "work requests p50 40 us, p99 90 us"),
	       "verbs: a QP only verbslat sees is timed by its work requests");
	tap_ok(verdict_of(&t, 2) == DV_OK &&
	       why_has(&t, 2, "mlx5_0 QP 0x12: 31 IB_WC_WR_FLUSH_ERR"),
	       "verbs: flushes alone (an orderly disconnect) are evidence, not STUCK");
	tap_ok(verdict_of(&t, 3) == DV_STUCK &&
	       why_has(&t, 3, "mlx5_0 QP 0x13: 1 IB_WC_RETRY_EXC_ERR, 3 IB_WC_WR_FLUSH_ERR "
		       "(work requests failed)") && !strstr(find(&t, 3)->why, "), mlx5_0"),
	       "verbs: a work request failed (retries ran out) is STUCK, named once");
	tap_ok(verdict_of(&t, 4) == DV_STUCK &&
	       why_has(&t, 4, "mlx5_0 QP 0x14: 3 send work requests outstanding, the oldest for "
		       "2.5 s, none completed in 1.0 s"),
	       "verbs: send WRs waiting past --timeout with none completing is STUCK");
	tap_eq(verdict_of(&t, 5), DV_OK, "verbs: old WRs outstanding while others complete: OK");
	tap_eq(verdict_of(&t, 6), DV_OK, "verbs: nothing completing yet, within the bound: OK");
	tap_ok(verdict_of(&t, 0x17) == DV_OK && why_has(&t, 0x17, "p50 30 us, p99 30 us") &&
	       find(&t, 0x17)->nvb == 1, "verbs: beside rocelat's wire latency");
	src.wr_timeout_s = 3.0;
	diag_verdicts(&t, &src, 1.0);
	tap_eq(verdict_of(&t, 4), DV_OK, "verbs: the bound is --timeout's");
	diag_table_free(&t);
}

int main(void)
{
	test_verbs();
	test_rdmaqp();
	test_demo();
	test_slow_bounds();
	test_rules();
	test_no_false_stuck();
	test_join();
	test_held();
	test_held_gone();
	test_turnaround();
	test_unknown();
	return tap_done();
}
