// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat's measurement through BPF_PROG_TEST_RUN with the offline clock:
 * request/ACK pairing by queue pair (the answer names the requester's QPN,
 * the flow is keyed by the responder's), cumulative ACKs, PSN wrap, READ,
 * retransmissions (Karn), NAKs, RNR NAKs, evictions and timeouts;
 * histogram slots exact. tests/unit/rocelat_pairing.c has the shapes of
 * hardware RNICs' traffic.
 * Needs root.
 */
#include "rocelat_test.h"
#include "rocelat_hist.h"

static struct rocelat_bpf *obj;
static struct roce_flow_id path;	/* 10.0.0.1 -> 10.0.0.2 responder QP 0x11 */

#define C(x) (t_counters(obj).c[x])

static void request(__u32 psn, __u64 t)
{
	t_request(obj, psn, t);
}

/* the answer: responder -> requester, same source port, requester's QPN */
static void answer(__u8 op, __u8 syndrome, __u32 psn, __u64 t)
{
	struct pkt_spec s = {
		.saddr = "10.0.0.2", .daddr = "10.0.0.1", .opcode = op,
		.syndrome = syndrome, .dqpn = 0x111, .psn = psn,
	};

	t_xdp(obj, &s, t);
}

static void ack(__u32 psn, __u64 t)
{
	answer(ROCE_ACKNOWLEDGE, 0x1f, psn, t);
}

static struct roce_flow_stats flow(void)
{
	struct roce_flow_stats fs;

	t_flow(obj, &path, &fs);
	return fs;
}

static int pending_now(void)
{
	static struct pending_flow pp;

	if (t_pending(obj, &path, &pp))
		return -1;
	return t_pending_count(&pp);
}

static __u64 hist_total_u(const __u64 *s)
{
	__u64 t = 0;

	for (int i = 0; i < HIST_SLOTS; i++)
		t += s[i];
	return t;
}

static void test_single(void)
{
	struct rocelat_counters c;
	struct roce_flow_stats fs;
	struct rl_llhist ll;
	struct roce_flow_id fk = path;

	t_reset(obj);
	request(100, 1 * MS);
	ack(100, 1 * MS + 600 * US);
	c = t_counters(obj);
	tap_eq(c.c[RL_SAMPLES], 1, "request + ACK: one sample");
	tap_eq(c.hist.slots[9], 1, "600 us lands in slot 9 (512-1023 us)");
	tap_eq(hist_total_u(c.hist.slots), 1, "and nowhere else");
	tap_eq(t_flow(obj, &path, &fs), 0,
	       "flow keyed by requester, responder and the request's QPN");
	tap_eq(fs.samples, 1, "flow: one sample");
	tap_eq(fs.max, 600 * US, "flow: max is the exact latency in ns");
	tap_eq(fs.sum, 600 * US, "flow: sum");
	tap_eq(fs.hist[9], 1, "flow histogram slot 9");
	tap_eq(fs.last_psn, 100, "flow: last answered PSN");
	tap_eq(fs.min, 600 * US, "flow: min");
	t_flow_ll(obj, &path, &ll);
	tap_eq(ll.b[llhist_test_bucket(600 * US)], 1,
	       "flow: log-linear bucket of 600 us");
	fk.qpn = 0x111;
	tap_ok(t_flow(obj, &fk, &fs) != 0,
	       "no flow under the ACK's (requester's) QPN");
	tap_eq(C(RL_LEARNED), 1, "the requester QP 0x111 was paired with 0x11");
	tap_eq(pending_now(), 0, "pending slot freed");
	ack(100, 2 * MS);
	tap_eq(C(RL_UNMATCHED), 1, "duplicate ACK completes nothing: unmatched");
	tap_eq(C(RL_SAMPLES), 1, "and gives no sample");
}

static void test_wrong_key(void)
{
	struct pkt_spec s = {
		.saddr = "10.0.0.2", .daddr = "10.0.0.1", .opcode = ROCE_ACKNOWLEDGE,
		.syndrome = 0x1f, .psn = 5, .sport = 49153,
	};

	t_reset(obj);
	request(5, 1000);
	s.saddr = "10.0.0.3";		/* other responder */
	t_xdp(obj, &s, 2000);
	s.saddr = "10.0.0.1";		/* same direction as the request */
	s.daddr = "10.0.0.2";
	t_xdp(obj, &s, 2000);
	s.saddr = "10.0.0.2";		/* right addresses, PSN before the window */
	s.daddr = "10.0.0.1";
	s.psn = 3;
	t_xdp(obj, &s, 2000);
	tap_eq(C(RL_SAMPLES), 0, "ACK with other address/direction/PSN: no sample");
	tap_eq(C(RL_HELD), 3, "... three ACKs of QPs not paired, held");
	tap_eq(C(RL_UNMATCHED), 0, "... not unmatched (yet)");
	tap_eq(pending_now(), 1, "... request still pending");
	s.psn = 5;			/* from another source port (49153) */
	t_xdp(obj, &s, 3000);
	tap_eq(C(RL_SAMPLES), 1, "the ACK from the responder's own source port pairs by QP");
	tap_eq(flow().max, 2000, "... 2 us");
	tap_eq(C(RL_UNMATCHED), 1, "the held ACK before the window completed nothing");
}

static void test_cumulative(void)
{
	struct rocelat_counters c;

	t_reset(obj);
	request(200, 10 * MS);
	request(201, 10 * MS + 10 * US);
	request(202, 10 * MS + 20 * US);
	request(203, 10 * MS + 30 * US);
	ack(201, 10 * MS + 1000 * US);
	c = t_counters(obj);
	tap_eq(c.c[RL_SAMPLES], 2, "ACK 201 completes 200 and 201");
	tap_eq(c.hist.slots[9], 2, "1000 and 990 us in slot 9");
	tap_eq(pending_now(), 2, "202 and 203 still pending");
	ack(203, 10 * MS + 3000 * US);
	c = t_counters(obj);
	tap_eq(c.c[RL_SAMPLES], 4, "ACK 203 completes 202 and 203");
	tap_eq(c.hist.slots[11], 2, "2980 and 2970 us in slot 11 (2048-4095)");
	tap_eq(flow().max, 2980 * US, "flow max 2980 us");
	tap_eq(pending_now(), 0, "nothing pending");
	tap_eq(c.c[RL_UNMATCHED], 0, "no unmatched ACK");
}

static void test_wrap(void)
{
	struct rocelat_counters c;

	t_reset(obj);
	request(0xFFFFFE, 1 * MS);
	request(0xFFFFFF, 1 * MS);
	request(0x000000, 1 * MS);
	request(0x000001, 1 * MS);
	tap_eq(C(RL_RETRANSMITS), 0, "PSN 0xFFFFFE..0x000001: no retransmit across the wrap");
	ack(0x000000, 1 * MS + 100 * US);
	c = t_counters(obj);
	tap_eq(c.c[RL_SAMPLES], 3, "ACK 0 covers 0xFFFFFE, 0xFFFFFF and 0");
	tap_eq(c.hist.slots[6], 3, "100 us in slot 6 (64-127)");
	tap_eq(pending_now(), 1, "PSN 1 still pending");
	request(0x000002, 1 * MS + 200 * US);
	ack(0x000002, 1 * MS + 300 * US);
	c = t_counters(obj);
	tap_eq(c.c[RL_SAMPLES], 5, "ACK 2 covers 1 and 2");
	tap_eq(c.hist.slots[8], 1, "300 us in slot 8");
	tap_eq(c.hist.slots[6], 4, "100 us in slot 6");
	request(0xFFFFFF, 2 * MS);
	tap_eq(C(RL_RETRANSMITS), 1, "PSN 0xFFFFFF after 2: behind the wrap, a retransmit");
}

static void test_retransmit(void)
{
	struct rocelat_counters c;

	t_reset(obj);
	request(500, 1 * MS);
	request(500, 1 * MS + 100 * US);
	tap_eq(C(RL_RETRANSMITS), 1, "request PSN seen again: one retransmit");
	tap_eq(flow().retransmits, 1, "flow retransmits 1");
	ack(500, 1 * MS + 300 * US);
	c = t_counters(obj);
	tap_eq(c.c[RL_SAMPLES], 0, "Karn: ACK of a retransmitted PSN gives no sample");
	tap_eq(c.c[RL_KARN_DISCARDED], 1, "... counted as discarded");
	tap_eq(c.c[RL_UNMATCHED], 0, "... and not as unmatched");
	request(501, 2 * MS);
	ack(501, 2 * MS + 50 * US);
	tap_eq(C(RL_SAMPLES), 1, "next PSN measured again");

	/* IPv6 has no ID: a PSN seen again within 20 us is taken for the
	 * same packet (README), later for a retransmission */
	struct pkt_spec v6 = { .family = 6, .opcode = ROCE_SEND_ONLY, .ackreq = true,
			       .dqpn = 0x11, .psn = 600, .payload = 32 };

	t_reset(obj);
	t_xdp(obj, &v6, 1 * MS);
	t_xdp(obj, &v6, 1 * MS + 19 * US);
	tap_eq(C(RL_DUPLICATES), 1, "IPv6: the PSN again within 20 us: a duplicate");
	tap_eq(C(RL_RETRANSMITS), 0, "... not a retransmit");
	t_xdp(obj, &v6, 1 * MS + 500 * US);
	tap_eq(C(RL_RETRANSMITS), 1, "IPv6: the PSN again 500 us later: a retransmit");
}

static void test_read(void)
{
	struct pkt_spec s = {
		.opcode = ROCE_READ_REQUEST, .ackreq = true, .dqpn = 0x11,
		.psn = 600, .dma_len = 3000,
	};
	struct rocelat_counters c;

	t_reset(obj);
	t_xdp(obj, &s, 1 * MS);
	tap_eq(C(RL_TRACKED), 1, "READ REQUEST tracked");
	answer(ROCE_READ_RESP_FIRST, 0x1f, 600, 1 * MS + 20 * US);
	answer(ROCE_READ_RESP_MIDDLE, 0, 601, 1 * MS + 30 * US);
	answer(ROCE_READ_RESP_LAST, 0x1f, 602, 1 * MS + 40 * US);
	c = t_counters(obj);
	tap_eq(c.c[RL_READ_RESP], 3, "three READ RESPONSE packets");
	tap_eq(c.c[RL_SAMPLES], 1, "first READ RESPONSE is the one sample");
	tap_eq(c.hist.slots[4], 1, "20 us in slot 4 (16-31)");
	tap_eq(c.c[RL_UNMATCHED], 0, "MIDDLE/LAST are not unmatched");
	s.psn = 603;
	s.ackreq = false;		/* a READ is answered without AckReq too */
	t_xdp(obj, &s, 2 * MS);
	answer(ROCE_READ_RESP_ONLY, 0x1f, 603, 2 * MS + 70 * US);
	c = t_counters(obj);
	tap_eq(c.c[RL_SAMPLES], 2, "READ RESPONSE ONLY completes the next READ");
	tap_eq(c.hist.slots[6], 1, "70 us in slot 6");
}

static void test_nak(void)
{
	struct rocelat_counters c;
	struct roce_flow_stats fs;

	t_reset(obj);
	request(700, 1 * MS);
	request(701, 1 * MS + 10 * US);
	request(702, 1 * MS + 20 * US);
	answer(ROCE_ACKNOWLEDGE, 0x60 | ROCE_NAK_PSN_SEQ_ERR, 701, 1 * MS + 200 * US);
	c = t_counters(obj);
	tap_eq(c.c[RL_NAK_SEQ], 1, "PSN sequence error NAK counted");
	tap_eq(c.c[RL_SAMPLES], 1, "NAK 701 acknowledges 700 only");
	tap_eq(pending_now(), 2, "701 and 702 still pending");
	request(701, 1 * MS + 300 * US);
	request(702, 1 * MS + 310 * US);
	tap_eq(C(RL_RETRANSMITS), 2, "go-back-N resend of 701, 702: two retransmits");
	ack(702, 1 * MS + 500 * US);
	c = t_counters(obj);
	tap_eq(c.c[RL_SAMPLES], 1, "their ACK gives no sample (Karn)");
	tap_eq(c.c[RL_KARN_DISCARDED], 2, "two discarded");
	fs = flow();
	tap_eq(fs.naks, 1, "flow NAKs 1");
	tap_eq(fs.nak[ROCE_NAK_PSN_SEQ_ERR], 1, "flow sequence-error NAKs 1");
	tap_eq(fs.retransmits, 2, "flow retransmits 2");

	/* fatal NAK codes end the named request without a sample */
	t_reset(obj);
	request(900, 1 * MS);
	answer(ROCE_ACKNOWLEDGE, 0x60 | ROCE_NAK_REMOTE_ACCESS, 900, 2 * MS);
	request(901, 3 * MS);
	answer(ROCE_ACKNOWLEDGE, 0x60 | ROCE_NAK_INVALID_REQ, 901, 4 * MS);
	request(902, 5 * MS);
	answer(ROCE_ACKNOWLEDGE, 0x60 | ROCE_NAK_REMOTE_OP, 902, 6 * MS);
	c = t_counters(obj);
	tap_eq(c.c[RL_NAK_REMOTE_ACCESS], 1, "remote access NAK counted");
	tap_eq(c.c[RL_NAK_INVALID_REQ], 1, "invalid request NAK counted");
	tap_eq(c.c[RL_NAK_REMOTE_OP], 1, "remote operational NAK counted");
	tap_eq(c.c[RL_SAMPLES], 0, "no sample from a fatal NAK");
	tap_eq(pending_now(), 0, "the NAKed requests are no longer pending");
	tap_eq(flow().naks, 3, "flow NAKs 3");
}

static void test_rnr(void)
{
	struct rocelat_counters c;
	struct roce_flow_stats fs;

	t_reset(obj);
	request(800, 1 * MS);
	answer(ROCE_ACKNOWLEDGE, 0x20 | 14, 800, 1 * MS + 50 * US);
	c = t_counters(obj);
	tap_eq(c.c[RL_RNR_NAKS], 1, "RNR NAK counted");
	tap_eq(c.c[RL_SAMPLES], 0, "RNR NAK is no sample");
	fs = flow();
	tap_eq(fs.rnr_naks, 1, "flow RNR NAKs 1");
	tap_eq(fs.rnr_timer, 14, "flow keeps the RNR timer field");
	request(800, 2 * MS);
	ack(800, 2 * MS + 40 * US);
	c = t_counters(obj);
	tap_eq(c.c[RL_RETRANSMITS], 1, "RNR retry is a retransmit");
	tap_eq(c.c[RL_SAMPLES], 0, "... whose ACK is discarded");
}

static void test_bounds(void)
{
	struct rocelat_counters c;
	int i;

	t_reset(obj);
	for (i = 0; i < PENDING_RING + 1; i++)
		request(1000 + i, 1 * MS + i * US);
	tap_eq(C(RL_EVICTED), 1, "ring of %d: the 17th outstanding request evicts one",
	       PENDING_RING);
	tap_eq(pending_now(), PENDING_RING, "ring stays full");
	ack(1000 + PENDING_RING, 2 * MS);
	tap_eq(C(RL_SAMPLES), PENDING_RING, "cumulative ACK completes the %d left",
	       PENDING_RING);

	/* a deep window answered one ACK at a time, in order */
	t_reset(obj);
	for (i = 0; i < 40; i++)
		request(5000 + i, 1 * MS + i * US);
	for (i = 0; i < 40; i++)
		ack(5000 + i, 2 * MS + i * US);
	c = t_counters(obj);
	tap_eq(c.c[RL_SAMPLES], 40, "40 in flight, 40 ACKs: 40 samples");
	tap_eq(c.hist.slots[9], 40, "each 1000 us (slot 9)");
	tap_eq(c.c[RL_EVICTED] + c.c[RL_UNMATCHED], 0, "no eviction, no unmatched ACK");
	tap_eq(pending_now(), 0, "ring drained");
	{
		static struct pending_flow pp;

		t_pending(obj, &path, &pp);
		tap_eq(pp.tail, pp.head, "tail caught up with head");
	}
	/* a hole (fatal NAK) in the middle of the window */
	t_reset(obj);
	request(6000, 1 * MS);
	request(6001, 1 * MS);
	request(6002, 1 * MS);
	answer(ROCE_ACKNOWLEDGE, 0x60 | ROCE_NAK_INVALID_REQ, 6001, 1 * MS + 10 * US);
	tap_eq(C(RL_SAMPLES), 1, "fatal NAK 6001 acknowledges 6000");
	tap_eq(C(RL_FATAL_ENDED), 2, "... and ends 6001 and 6002: the QP is in error");
	tap_eq(pending_now(), 0, "nothing pending");
	ack(6002, 1 * MS + 20 * US);
	tap_eq(C(RL_SAMPLES), 1, "a later ACK 6002 times nothing");

	t_reset(obj);
	request(2000, 1 * MS);
	ack(2000, 1 * MS + 1500 * MS);	/* beyond the 1 s timeout */
	c = t_counters(obj);
	tap_eq(c.c[RL_TIMEOUTS], 1, "answer after the timeout: counted as timeout");
	tap_eq(c.c[RL_SAMPLES], 0, "... and no sample");

	t_reset(obj);
	for (i = 0; i < PENDING_RING; i++)
		request(3000 + i, 1 * MS);
	request(3000 + PENDING_RING, 3000 * MS);
	tap_eq(C(RL_TIMEOUTS), 1, "a slot reused after the timeout counts a timeout");
	tap_eq(C(RL_EVICTED), 0, "... not an eviction");
}

static void test_flows_and_qpn(void)
{
	struct pkt_spec s = {
		.opcode = ROCE_SEND_ONLY, .ackreq = true, .dqpn = 0x22,
		.psn = 50, .sport = 49153,
	};
	static struct pending_flow pf;
	struct roce_flow_id p2;
	struct roce_flow_stats fs;

	t_reset(obj);
	request(50, 1 * MS);
	t_xdp(obj, &s, 1 * MS);		/* same PSN, other QP */
	tap_eq(C(RL_RETRANSMITS), 0, "same PSN on another QP is no retransmit");
	/* both windows hold PSN 50: an answer from a third source port
	 * cannot tell them apart */
	s = (struct pkt_spec){ .saddr = "10.0.0.2", .daddr = "10.0.0.1",
		.opcode = ROCE_ACKNOWLEDGE, .syndrome = 0x1f, .dqpn = 0x111,
		.psn = 50, .sport = 50000 };
	t_xdp(obj, &s, 1 * MS + 500 * US);
	tap_eq(C(RL_AMBIGUOUS), 1, "an answer two QPs' windows cover is ambiguous");
	tap_eq(C(RL_SAMPLES) + C(RL_UNMATCHED), 0, "... neither timed nor unmatched");
	s = (struct pkt_spec){ .opcode = ROCE_SEND_ONLY, .ackreq = true,
		.dqpn = 0x22, .sport = 49153 };
	/* the next requests move the windows apart: ACK 90 fits QP 0x22's
	 * only; once 0x22 is paired with 0x122, ACK 51 fits 0x11's only */
	request(51, 2 * MS);
	s.psn = 90;
	t_xdp(obj, &s, 2 * MS);
	s = (struct pkt_spec){ .saddr = "10.0.0.2", .daddr = "10.0.0.1",
		.opcode = ROCE_ACKNOWLEDGE, .syndrome = 0x1f, .dqpn = 0x122,
		.psn = 90, .sport = 50000 };
	t_xdp(obj, &s, 2 * MS + 5000 * US);
	ack(51, 2 * MS + 500 * US);
	tap_eq(C(RL_LEARNED), 2, "each requester QP paired once the windows differ");
	/* the ambiguous ACK of PSN 50 was held: once 0x111 is paired, it
	 * times request 50 at its own 500 us, not at ACK 51's 1500 */
	tap_eq(flow().hist[8], 2, "QP 0x11: 50 and 51 at 500 us each (slot 8)");
	tap_eq(flow().hist[10], 0, "... none at 1500 us (slot 10)");
	tap_eq(flow().samples, 2, "QP 0x11: two samples");
	t_flow_key(&p2, 4, "10.0.0.1", "10.0.0.2", 0x22);
	tap_eq(t_flow(obj, &p2, &fs), 0, "flow of responder QP 0x22");
	tap_eq(fs.samples, 2, "QP 0x22: ACK 90 covers 50 and 90");
	tap_eq(fs.hist[12], 2, "QP 0x22: 6000 and 5000 us in slot 12");
	t_pending(obj, &p2, &pf);
	tap_eq(pf.sport, 49153, "QP 0x22 keeps its requests' source port");
	tap_eq(pf.req_qpn, 0x122, "... and its requester's QPN");
}

/* the other direction of a paired QP pair: B's requests to A's QP 0x111,
 * answered to B's QP 0x11, whose ACK is ahead of every request seen (the
 * sniffer lost those between): paired from the first direction */
static void test_reverse_pairing(void)
{
	struct pkt_spec s = {
		.saddr = "10.0.0.2", .daddr = "10.0.0.1", .opcode = ROCE_SEND_ONLY,
		.ackreq = true, .dqpn = 0x111, .psn = 7000,
	};
	struct roce_flow_id back;
	struct roce_flow_stats fs;

	t_reset(obj);
	request(100, 1 * MS);
	ack(100, 1 * MS + 40 * US);
	tap_eq(C(RL_LEARNED), 1, "A -> B paired by the ACK's PSN");
	t_xdp(obj, &s, 2 * MS);		/* B -> A, PSN 7000; 7001-7004 lost */
	s = (struct pkt_spec){ .saddr = "10.0.0.1", .daddr = "10.0.0.2",
		.opcode = ROCE_ACKNOWLEDGE, .syndrome = 0x1f, .dqpn = 0x11,
		.psn = 7004 };
	t_xdp(obj, &s, 2 * MS + 70 * US);
	t_flow_key(&back, 4, "10.0.0.2", "10.0.0.1", 0x111);
	tap_eq(t_flow(obj, &back, &fs), 0, "flow B -> A, responder QP 0x111");
	tap_eq(fs.samples, 1, "B -> A: the ACK ahead of the window times PSN 7000");
	tap_eq(fs.max, 70 * US, "... at 70 us");
	tap_eq(C(RL_UNMATCHED), 0, "nothing unmatched");
	tap_eq(C(RL_LEARNED), 1, "one pairing learned, serving both directions");
}

/* answers before their QP is paired are held and time what they cover at
 * their own time once the pairing is known (a late pairing never closes
 * old requests at its own time) */
static void test_held_answers(void)
{
	struct roce_flow_stats fs;

	t_reset(obj);
	request(10, 1 * MS);
	ack(11, 1 * MS + 19 * US);	/* 11 lost: ahead of the window, held */
	request(12, 1 * MS + 30 * US);
	ack(13, 1 * MS + 90 * US);	/* 13 lost: held */
	tap_eq(C(RL_HELD), 2, "two answers held");
	tap_eq(C(RL_SAMPLES), 0, "... nothing timed yet");
	request(14, 1 * MS + 100 * US);
	ack(14, 1 * MS + 863 * US);	/* in the window: pairs */
	fs = flow();
	tap_eq(fs.samples, 3, "three samples once paired");
	tap_eq(fs.min, 19 * US, "PSN 10 at its own ACK's 19 us");
	tap_eq(fs.max, 763 * US, "PSN 14 at 763 us");
	tap_eq(fs.sum, (19 + 60 + 763) * US, "PSN 12 at 60 us");
	tap_eq(C(RL_UNTIMED), 0, "nothing untimed");
	tap_eq(pending_now(), 0, "nothing pending");

	/* ten held answers: the two oldest are forgotten, and the requests
	 * they covered are untimed, never timed by a later answer */
	t_reset(obj);
	for (__u32 i = 0; i < 10; i++) {
		request(100 + 2 * i, 1 * MS + 20 * i * US);
		ack(101 + 2 * i, 1 * MS + (20 * i + 10) * US);
	}
	tap_eq(C(RL_HELD), 10, "ten answers held");
	request(120, 2 * MS);
	ack(120, 2 * MS + 5 * US);
	fs = flow();
	tap_eq(C(RL_UNTIMED), 2, "PSN 100 and 102: answered, untimed");
	tap_eq(fs.untimed, 2, "... in the flow's statistics too");
	tap_eq(fs.samples, 9, "the other eight at their own ACKs, and PSN 120");
	tap_eq(fs.max, 10 * US, "... none longer than 10 us");
	tap_eq(fs.min, 5 * US, "... PSN 120 at 5 us");
	tap_eq(pending_now(), 0, "nothing pending");

	/* a held answer older than the requests its PSN would cover (an old
	 * connection's, on the same QPNs) covers none of them */
	t_reset(obj);
	ack(500, 1 * MS);
	request(100, 2 * MS);
	request(101, 2 * MS + 100 * US);
	ack(101, 2 * MS + 200 * US);
	fs = flow();
	tap_eq(fs.samples, 2, "an older held answer times nothing");
	tap_eq(fs.min, 100 * US, "... PSN 101 at 100 us");
	tap_eq(fs.max, 200 * US, "... PSN 100 at 200 us, by the later ACK");
	tap_eq(C(RL_UNMATCHED), 1, "... and is unmatched");
}

/*
 * A recording out of time order: an ACK shown before the request it
 * answers (stamped after it, as a capture of several queues writes it)
 * times it at its own time; an answer stamped before its request, or an
 * old one, times nothing it should not.
 */
static void test_out_of_order(void)
{
	struct roce_flow_stats fs;

	t_reset(obj);
	request(100, 1 * MS);
	ack(100, 1 * MS + 50 * US);
	ack(101, 2 * MS + 20 * US);	/* written before its request */
	tap_eq(C(RL_UNMATCHED), 1, "an ACK ahead of every request: no match yet");
	request(101, 2 * MS);
	request(102, 3 * MS);
	ack(102, 3 * MS + 30 * US);
	fs = flow();
	tap_eq(fs.samples, 3, "three samples");
	tap_eq(fs.sum, (50 + 20 + 30) * US, "PSN 101 at its own ACK's 20 us");
	tap_eq(fs.max, 50 * US, "... nothing longer than 50 us");
	tap_eq(C(RL_UNMATCHED), 0, "... and the ACK is matched after all");
	tap_eq(pending_now(), 0, "nothing pending");

	/* one cumulative ACK ahead of three requests: each timed to it */
	t_reset(obj);
	request(200, 1 * MS);
	ack(200, 1 * MS + 10 * US);
	ack(203, 2 * MS + 100 * US);
	request(201, 2 * MS);
	request(202, 2 * MS + 40 * US);
	request(203, 2 * MS + 60 * US);
	request(204, 3 * MS);
	ack(204, 3 * MS + 5 * US);
	fs = flow();
	tap_eq(fs.samples, 5, "cumulative ahead: five samples");
	tap_eq(fs.sum, (10 + 100 + 60 + 40 + 5) * US, "... each at the ACK's time");
	tap_eq(pending_now(), 0, "... nothing pending");

	/* an answer stamped before its request: no time, no 0 ns sample */
	t_reset(obj);
	request(300, 2 * MS);
	ack(300, 1 * MS);
	fs = flow();
	tap_eq(fs.samples, 0, "answer stamped before its request: no sample");
	tap_eq(C(RL_REORDERED), 1, "... counted as reordered");
	tap_eq(fs.untimed, 1, "... and untimed in the flow");
	tap_eq(pending_now(), 0, "... and not pending");

	/* an ACK ahead, older than the request that follows (an old
	 * connection's): that request waits for its own answer */
	t_reset(obj);
	request(400, 1 * MS);
	ack(400, 1 * MS + 10 * US);
	ack(405, 1 * MS + 20 * US);
	request(401, 2 * MS);
	ack(401, 2 * MS + 70 * US);
	fs = flow();
	tap_eq(fs.samples, 2, "an older ACK ahead times nothing");
	tap_eq(fs.max, 70 * US, "... PSN 401 at its own ACK");
	tap_eq(C(RL_UNMATCHED), 1, "... which stays unmatched");
	tap_eq(C(RL_REORDERED), 0, "... and nothing is reordered");
}

/* rxe's symmetric source port settles overlapping windows */
static void test_port_tiebreak(void)
{
	struct pkt_spec s = {
		.opcode = ROCE_SEND_ONLY, .ackreq = true, .dqpn = 0x22,
		.psn = 50, .sport = 49153,
	};
	struct roce_flow_id p2;
	struct roce_flow_stats fs;

	t_reset(obj);
	request(50, 1 * MS);
	t_xdp(obj, &s, 1 * MS);
	s = (struct pkt_spec){ .saddr = "10.0.0.2", .daddr = "10.0.0.1",
		.opcode = ROCE_ACKNOWLEDGE, .syndrome = 0x1f, .dqpn = 0x122,
		.psn = 50, .sport = 49153 };
	t_xdp(obj, &s, 1 * MS + 700 * US);
	tap_eq(C(RL_AMBIGUOUS), 0, "same windows, the answer's port is one QP's: not ambiguous");
	t_flow_key(&p2, 4, "10.0.0.1", "10.0.0.2", 0x22);
	tap_ok(!t_flow(obj, &p2, &fs) && fs.samples == 1 && fs.max == 700 * US,
	       "... the sample goes to the QP sending from that port");
	tap_eq(flow().samples, 0, "... not to the other");
}

/* the path's flow's log-linear histogram since the last call, as
 * rocelat's report reads an interval's */
static struct rocelat_ll_reads reads;

static void ll_interval(struct rl_llhist *ll)
{
	static struct pending_flow pf;
	__u32 at;

	memset(ll, 0, sizeof(*ll));
	if (!t_pending_at(obj, &path, &pf, &at))
		rocelat_ll_since(&reads, at, &pf, ll);
}

/* rocelat's -F with an interval: the path's own flow lives in its pending
 * entry and starts from zero when user space steps stats_epoch */
static void test_interval_epoch(void)
{
	struct roce_flow_stats fs;
	static struct rl_llhist ll;

	t_reset(obj);
	request(100, 1 * MS);
	ack(100, 1 * MS + 600 * US);
	request(101, 2 * MS);
	ack(101, 2 * MS + 600 * US);
	tap_eq(flow().samples, 2, "interval 1: two samples on the path's flow");
	obj->bss->stats_epoch++;
	tap_ok(t_flow(obj, &path, &fs) != 0,
	       "interval 2 begun: the last interval's flow is not reported again");
	tap_eq(pending_now(), 0, "the pending ring is untouched by the new interval");
	request(102, 3 * MS);
	ack(102, 3 * MS + 5000 * US);
	fs = flow();
	tap_eq(fs.samples, 1, "interval 2: its one sample only");
	tap_eq(fs.max, 5000 * US, "interval 2: max from zero");
	tap_eq(fs.hist[9], 0, "interval 2: interval 1's slot emptied");
	tap_eq(fs.hist[12], 1, "interval 2: 5000 us in slot 12");
	tap_eq(C(RL_SAMPLES), 3, "global counters keep counting");
	/* the log-linear histogram counts on; an interval's is what it
	 * gained since the entry's last read (rocelat_ll_since()) */
	ll_interval(&ll);
	tap_ok(ll.b[llhist_test_bucket(600 * US)] == 2 &&
	       ll.b[llhist_test_bucket(5000 * US)] == 1,
	       "log-linear: a first read has all three samples");
	request(103, 10 * MS);
	ack(103, 10 * MS + 600 * US);
	ll_interval(&ll);
	tap_ok(ll.b[llhist_test_bucket(600 * US)] == 1 &&
	       ll.b[llhist_test_bucket(5000 * US)] == 0,
	       "log-linear: the next read only the sample since");
	rocelat_ll_reads_free(&reads);
}

static void test_cnp_ecn(void)
{
	struct pkt_spec s = {
		.opcode = ROCE_SEND_ONLY, .ackreq = true, .dqpn = 0x11,
		.psn = 1, .ecn = AX_ECN_CE,
	};
	struct roce_flow_stats fs;

	t_reset(obj);
	t_xdp(obj, &s, 1 * MS);
	ack(1, 1 * MS + 10 * US);	/* pairs requester QP 0x111 */
	s = (struct pkt_spec){ .saddr = "10.0.0.2", .daddr = "10.0.0.1",
		.opcode = ROCE_OPCODE_CNP, .dqpn = 0x111 };
	t_xdp(obj, &s, 1 * MS);
	fs = flow();
	tap_eq(fs.ecn_ce, 1, "CE-marked request counted on its flow");
	tap_eq(fs.cnps, 1, "CNP back to the requester (its QPN) counted on the flow");
	/* CE-marked READ RESPONSEs: the requester notifies the responder */
	s = (struct pkt_spec){ .opcode = ROCE_OPCODE_CNP, .dqpn = 0x11 };
	t_xdp(obj, &s, 2 * MS);
	tap_eq(flow().cnps, 2, "CNP to the responder (its QPN) counted on the flow");
	tap_eq(C(RL_CNPS), 2, "global CNP count");
	tap_eq(C(RL_ECN_CE), 1, "global ECN CE count");
}

/* the histogram slot of lat ns in 1 us units: floor(log2(lat / unit)) */
static int slot_us(__u64 lat)
{
	__u64 q = lat / US;
	int s = q ? 63 - __builtin_clzll(q) : 0;

	return s < HIST_SLOTS ? s : HIST_SLOTS - 1;
}

/*
 * One flow's samples up and down across powers of two and across the
 * unit's slot edges (a sample may reuse its flow's last logarithm): each
 * one in the slots and the log-linear bucket its own value gives.
 */
static void test_slot_sweep(void)
{
	__u64 lats[200], t = 1 * MS;
	struct rocelat_counters c0, c1;
	struct roce_flow_stats f0, f1;
	static struct rl_llhist l0, l1;
	int n = 0, bad = 0, k;

	for (k = 0; k < 30; k++) {		/* 0 ns .. 0.54 s, up */
		lats[n++] = (1ULL << k) - 1;
		lats[n++] = (1ULL << k) + 1;
	}
	for (k = 29; k >= 0; k--)		/* and down */
		lats[n++] = 1ULL << k;
	for (k = 0; k < 19; k++) {		/* either side of each us slot's edge */
		lats[n++] = (US << k) - 1;
		lats[n++] = US << k;
		lats[n++] = ((US << k) - 1) | 1;
	}
	t_reset(obj);
	c0 = t_counters(obj);
	memset(&f0, 0, sizeof(f0));
	memset(&l0, 0, sizeof(l0));
	for (int i = 0; i < n; i++) {
		request(1000 + i, t);
		ack(1000 + i, t + lats[i]);
		t += lats[i] + 10 * US;
		c1 = t_counters(obj);
		f1 = flow();
		t_flow_ll(obj, &path, &l1);
		bad += c1.hist.slots[slot_us(lats[i])] != c0.hist.slots[slot_us(lats[i])] + 1 ||
		       hist_total_u(c1.hist.slots) != (__u64)i + 1 ||
		       f1.hist[slot_us(lats[i])] != f0.hist[slot_us(lats[i])] + 1 ||
		       l1.b[llhist_test_bucket(lats[i])] !=
		       l0.b[llhist_test_bucket(lats[i])] + 1;
		c0 = c1;
		f0 = f1;
		l0 = l1;
	}
	tap_eq(C(RL_SAMPLES), n, "slot sweep: %d samples, 0 ns to 0.54 s, up and down", n);
	tap_eq(bad, 0, "slot sweep: each in its own slot and log-linear bucket");
}

static void test_units(void)
{
	struct rocelat_bpf *save = obj, *ns = t_load(1, ROCE_V2_PORT);
	struct rocelat_bpf *ms = t_load(1000000, ROCE_V2_PORT);

	obj = ns;
	request(1, 1000);
	ack(1, 1000 + 1500);
	tap_eq(t_counters(obj).hist.slots[10], 1, "-N: 1500 ns in slot 10 (1024-2047 ns)");
	obj = ms;
	request(1, 0);
	ack(1, 5 * MS + 10);
	tap_eq(t_counters(obj).hist.slots[2], 1, "-m: 5 ms in slot 2 (4-7 ms)");
	obj = save;
	rocelat_bpf__destroy(ns);
	rocelat_bpf__destroy(ms);
}

int main(void)
{
	obj = t_load(1000, ROCE_V2_PORT);
	t_flow_key(&path, 4, "10.0.0.1", "10.0.0.2", 0x11);
	test_single();
	test_wrong_key();
	test_cumulative();
	test_wrap();
	test_retransmit();
	test_read();
	test_nak();
	test_rnr();
	test_bounds();
	test_flows_and_qpn();
	test_port_tiebreak();
	test_reverse_pairing();
	test_held_answers();
	test_out_of_order();
	test_interval_epoch();
	test_cnp_ecn();
	test_units();
	test_slot_sweep();
	rocelat_bpf__destroy(obj);
	return tap_done();
}
