// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat's transport semantics, each with the packet sequence that shows
 * it, through BPF_PROG_TEST_RUN with the offline clock: a new connection
 * reusing QPNs far behind, the same packet seen twice, a resumed READ, a
 * fatal NAK ending the QP's requests, an atomic answered only by its
 * ATOMIC ACKNOWLEDGE, local turnaround (request in on XDP, answer out on
 * tc), FLUSH and ATOMIC WRITE as requests, reserved opcodes, the timeout
 * sweep of a flow that went quiet, percentiles of the log-linear
 * histogram. Needs root.
 */
#include "rocelat_test.h"
#include "lib/hist.h"
#include "rocelat_hist.h"

static struct rocelat_bpf *obj;
static struct roce_flow_id flow_k;	/* 10.0.0.1 -> 10.0.0.2 responder QP 0x11 */

#define C(x) (t_counters(obj).c[x])

static void req_op(__u8 op, __u32 psn, __u64 t, __u32 dma_len)
{
	struct pkt_spec s = {
		.opcode = op, .ackreq = true, .dqpn = 0x11, .psn = psn,
		.dma_len = dma_len, .payload = 16,
	};

	t_xdp(obj, &s, t);
}

static void answer(__u8 op, __u8 syndrome, __u32 psn, __u64 t, int payload)
{
	struct pkt_spec s = {
		.saddr = "10.0.0.2", .daddr = "10.0.0.1", .opcode = op,
		.syndrome = syndrome, .dqpn = 0x111, .psn = psn, .sport = 61000,
		.payload = payload,
	};

	t_xdp(obj, &s, t);
}

static struct roce_flow_stats flow(void)
{
	struct roce_flow_stats fs;

	t_flow(obj, &flow_k, &fs);
	return fs;
}

static void test_new_connection(void)
{
	t_reset(obj);
	req_op(ROCE_SEND_ONLY, 0x800000, 1 * MS, 0);
	answer(ROCE_ACKNOWLEDGE, 0x1f, 0x800000, 1 * MS + 10 * US, 0);
	req_op(ROCE_SEND_ONLY, 0x800001, 2 * MS, 0);
	/* the application reconnects: same QPNs, a starting PSN 4 million
	 * behind; nothing of it is a retransmission */
	for (int i = 0; i < 5; i++)
		req_op(ROCE_SEND_ONLY, 0x400000 + i, 3 * MS + i * US, 0);
	tap_eq(C(RL_FLOW_RESETS), 1, "PSNs restarting far behind: one new connection");
	tap_eq(C(RL_RETRANSMITS), 0, "... not a retransmit storm");
	answer(ROCE_ACKNOWLEDGE, 0x1f, 0x400004, 3 * MS + 50 * US, 0);
	tap_eq(C(RL_SAMPLES), 6, "the new connection's five requests are timed");
	tap_eq(C(RL_UNMATCHED), 0, "... by its ACK");
}

static void test_duplicate_sighting(void)
{
	struct pkt_spec s = {
		.opcode = ROCE_SEND_ONLY, .ackreq = true, .dqpn = 0x11, .psn = 10,
	};

	t_reset(obj);
	t_xdp(obj, &s, 1 * MS);
	/* the very packet again 3 us later (a second interface, a bridge's
	 * other port): same PSN, same IPv4 ID */
	t_xdp(obj, &s, 1 * MS + 3 * US);
	tap_eq(C(RL_DUPLICATES), 1, "same PSN and IP ID within 20 us: one sighting");
	tap_eq(C(RL_RETRANSMITS), 0, "... not a retransmission");
	answer(ROCE_ACKNOWLEDGE, 0x1f, 10, 1 * MS + 40 * US, 0);
	tap_eq(C(RL_SAMPLES), 1, "and its answer is timed (no Karn discard)");
	/* a real resend comes later */
	t_xdp(obj, &s, 5 * MS);
	tap_eq(C(RL_RETRANSMITS), 1, "the same PSN 4 ms later is a retransmission");
}

/* a mirror of both directions of a link: every packet twice, bursts
 * reordered between the two copies */
static void test_mirror_both_ways(void)
{
	struct pkt_spec r = {
		.opcode = ROCE_SEND_ONLY, .ackreq = true, .dqpn = 0x11,
	};
	struct pkt_spec a = {
		.saddr = "10.0.0.2", .daddr = "10.0.0.1", .opcode = ROCE_ACKNOWLEDGE,
		.syndrome = 0x1f, .dqpn = 0x111, .sport = 61000,
	};

	t_reset(obj);
	for (int i = 0; i < 10; i++) {
		__u64 t = (__u64)(i + 1) * MS;

		r.psn = 20 + 2 * i;
		t_xdp(obj, &r, t);
		r.psn++;
		t_xdp(obj, &r, t + 1 * US);
		r.psn--;			/* the copies of both, 4 us later */
		t_xdp(obj, &r, t + 4 * US);
		r.psn++;
		t_xdp(obj, &r, t + 5 * US);
		a.psn = r.psn;			/* one coalesced ACK, twice */
		t_xdp(obj, &a, t + 60 * US);
		t_xdp(obj, &a, t + 63 * US);
	}
	tap_eq(C(RL_DUPLICATES), 30, "each request and ACK seen twice: 30 second sightings");
	tap_eq(C(RL_RETRANSMITS), 0, "... no retransmission");
	tap_eq(C(RL_UNMATCHED), 0, "... no stray answer");
	tap_eq(C(RL_SAMPLES), 20, "... and every request timed once");
}

static void test_resumed_read(void)
{
	t_reset(obj);
	/* 4 KiB READ at MTU 1024: PSNs 100-103; the responses after the
	 * first are lost and the requester resumes at 101 */
	req_op(ROCE_READ_REQUEST, 100, 1 * MS, 4096);
	answer(ROCE_READ_RESP_FIRST, 0x1f, 100, 1 * MS + 30 * US, 1024);
	req_op(ROCE_READ_REQUEST, 101, 70 * MS, 3072);
	tap_eq(C(RL_RETRANSMITS), 1, "READ resumed at PSN 101 (inside its span): a retransmission");
	tap_eq(C(RL_SAMPLES), 1, "the first response timed the READ");
	tap_eq(flow().max, 30 * US, "... 30 us");
	answer(ROCE_READ_RESP_FIRST, 0x1f, 101, 70 * MS + 20 * US, 1024);
	answer(ROCE_READ_RESP_LAST, 0x1f, 103, 70 * MS + 40 * US, 1024);
	tap_eq(C(RL_UNMATCHED), 1, "the resumed part's response answers a retransmission: unmatched");
	tap_eq(C(RL_SAMPLES), 1, "... and untimed");
	req_op(ROCE_SEND_ONLY, 104, 71 * MS, 0);
	tap_eq(C(RL_RETRANSMITS), 1, "the next request (PSN 104) is new");
}

static void test_atomic_and_read_answers(void)
{
	t_reset(obj);
	req_op(ROCE_FETCH_ADD, 200, 1 * MS, 0);
	req_op(ROCE_SEND_ONLY, 201, 1 * MS + 5 * US, 0);
	/* the ATOMIC ACKNOWLEDGE is lost; the SEND's ACK passes the atomic */
	answer(ROCE_ACKNOWLEDGE, 0x1f, 201, 1 * MS + 50 * US, 0);
	tap_eq(C(RL_SAMPLES), 1, "an ACK passing an atomic times only the SEND");
	tap_eq(C(RL_RESP_MISSING), 1, "... the atomic's response is missing");
	tap_eq(flow().resp_missing, 1, "... on its flow");
	req_op(ROCE_COMPARE_SWAP, 202, 2 * MS, 0);
	answer(ROCE_ATOMIC_ACK, 0x1f, 202, 2 * MS + 25 * US, 8);
	tap_eq(C(RL_SAMPLES), 2, "an ATOMIC ACKNOWLEDGE times its atomic");
	req_op(ROCE_READ_REQUEST, 203, 3 * MS, 512);
	answer(ROCE_ACKNOWLEDGE, 0x1f, 203, 3 * MS + 25 * US, 0);
	tap_eq(C(RL_RESP_MISSING), 2, "an ACK naming a READ's PSN is no READ RESPONSE");
	tap_eq(C(RL_SAMPLES), 2, "... no sample");
}

static void test_fatal_nak(void)
{
	t_reset(obj);
	for (int i = 0; i < 5; i++)
		req_op(ROCE_SEND_ONLY, 300 + i, 1 * MS + i * US, 0);
	answer(ROCE_ACKNOWLEDGE, 0x60 | ROCE_NAK_REMOTE_ACCESS, 302, 1 * MS + 40 * US, 0);
	tap_eq(C(RL_SAMPLES), 2, "remote access NAK 302 acknowledges 300 and 301");
	tap_eq(C(RL_FATAL_ENDED), 3, "... and ends 302, 303, 304: the QP is in error");
	tap_eq(flow().nak[ROCE_NAK_REMOTE_ACCESS], 1, "counted on the flow by code");
}

static void test_turnaround(void)
{
	struct pkt_spec s = {
		.saddr = "10.0.0.2", .daddr = "10.0.0.1", .opcode = ROCE_ACKNOWLEDGE,
		.syndrome = 0x1f, .dqpn = 0x111, .psn = 400,
	};
	uint8_t buf[2048];
	int len;

	t_reset(obj);
	/* this host is the responder: the request arrives (XDP), the ACK
	 * leaves (tc) */
	req_op(ROCE_SEND_ONLY, 400, 1 * MS, 0);
	len = pkt_build(&s, buf, sizeof(buf));
	obj->bss->clock_ns = 1 * MS + 7 * US;
	tap_eq(t_run_prog(obj->progs.rocelat_tc, buf, len), T_TC_UNSPEC,
	       "tc egress passes the ACK on");
	tap_eq(C(RL_TURN_SAMPLES), 1, "request in, answer out: a local turnaround");
	tap_eq(t_counters(obj).turn_hist.slots[2], 1, "7 us in the turnaround histogram");
	tap_eq(t_counters(obj).hist.slots[2], 0, "... not among the round trips");
	tap_eq(flow().kind, FLOW_KIND_TURN, "the flow is a turnaround flow");
}

static void test_new_opcodes(void)
{
	t_reset(obj);
	req_op(ROCE_FLUSH, 500, 1 * MS, 0);
	req_op(ROCE_ATOMIC_WRITE, 501, 1 * MS + 1 * US, 8);
	tap_eq(C(RL_REQUESTS), 2, "FLUSH and ATOMIC WRITE are requests");
	tap_eq(C(RL_TRACKED), 2, "... tracked");
	answer(ROCE_ACKNOWLEDGE, 0x1f, 501, 1 * MS + 20 * US, 0);
	tap_eq(C(RL_SAMPLES), 2, "... and timed by the ACK");
	req_op(0x19, 502, 2 * MS, 0);	/* reserved RC opcode */
	req_op(0x1f, 503, 2 * MS, 0);
	tap_eq(C(RL_RESERVED_OP), 2, "reserved RC opcodes counted");
	tap_eq(C(RL_REQUESTS), 2, "... and not taken for requests");
}

static void test_sweep(void)
{
	static struct pending_flow pf;

	t_reset(obj);
	req_op(ROCE_SEND_ONLY, 600, 1 * MS, 0);
	answer(ROCE_ACKNOWLEDGE, 0x1f, 600, 1 * MS + 10 * US, 0);
	req_op(ROCE_SEND_ONLY, 601, 2 * MS, 0);
	req_op(ROCE_SEND_ONLY, 602, 900 * MS, 0);
	/* the flow goes quiet; a report at 1.5 s sweeps what is over 1 s */
	t_sweep(obj, 1500 * MS);
	tap_eq(C(RL_TIMEOUTS), 1, "a flow gone quiet: its request older than 1 s is a timeout");
	tap_eq(flow().timeouts, 1, "... counted on the flow");
	t_pending(obj, &flow_k, &pf);
	tap_eq(t_pending_count(&pf), 1, "the younger one still pending");
	t_sweep(obj, 1500 * MS);
	tap_eq(C(RL_TIMEOUTS), 1, "a second sweep counts nothing twice");
	t_sweep(obj, 3000 * MS);
	tap_eq(C(RL_TIMEOUTS), 2, "... until the next one is old enough");
}

/* nearest-rank quantiles of the log-linear histogram within 3% */
static void test_percentiles(void)
{
	static __u64 lat[1000];
	static struct rl_llhist ll;
	struct roce_flow_stats fs;
	__u64 x = 88172645463325252ULL;
	int n = 1000, worst = 0;

	t_reset(obj);
	for (int i = 0; i < n; i++) {
		/* xorshift: 3 us to 49 ms, about log-uniform */
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		lat[i] = (3000ULL << (x % 14)) + (x >> 20) % (3000ULL << (x % 14));
		req_op(ROCE_SEND_ONLY, 1000 + i, (__u64)i * 100 * MS, 0);
		answer(ROCE_ACKNOWLEDGE, 0x1f, 1000 + i, (__u64)i * 100 * MS + lat[i], 0);
	}
	t_flow(obj, &flow_k, &fs);
	t_flow_ll(obj, &flow_k, &ll);
	tap_eq(fs.samples, (__u64)n, "1000 samples");
	for (int a = 1; a < n; a++)
		for (int b = a; b > 0 && lat[b - 1] > lat[b]; b--) {
			__u64 t = lat[b];

			lat[b] = lat[b - 1];
			lat[b - 1] = t;
		}
	for (int qi = 0; qi < 4; qi++) {
		double q = (double[]){ 0.5, 0.9, 0.99, 0.999 }[qi];
		int rank = (int)(q * n + 0.999999);
		double exact = (double)lat[rank - 1];
		double got = rocelat_ll_quantile(&ll, q, fs.min, fs.max);
		double err = got > exact ? got / exact - 1 : 1 - got / exact;

		if (err * 10000 > worst)
			worst = (int)(err * 10000);
		tap_ok(err <= 0.03, "p%g %.0f ns vs exact %.0f ns: %.2f%% off (limit 3%%)",
		       q * 100, got, exact, err * 100);
	}
	tap_eq(fs.max, lat[n - 1], "max exact");
	tap_eq(fs.min, lat[0], "min exact");
	printf("# worst quantile error %.2f%%\n", worst / 100.0);
}

/* every bucket of struct rl_llhist: its bounds hold the values that
 * fall in it (both edges, and 2^36 ns and up in the top one), and its
 * midpoint is within 3% of each */
static void test_llhist_buckets(void)
{
	int bad = 0, b;
	__u64 lo, hi, prev_hi = 0;
	double worst = 0, mid, err;

	for (b = 0; b < RL_LL_BUCKETS; b++) {
		rocelat_ll_bounds(b, &lo, &hi);
		if ((b && lo != prev_hi + 1) || llhist_test_bucket(lo) != b ||
		    (int)rocelat_ll_bucket(lo) != b ||
		    (b < RL_LL_BUCKETS - 1 && (llhist_test_bucket(hi) != b ||
					       (int)rocelat_ll_bucket(hi) != b))) {
			if (bad++ < 3)
				printf("# bucket %d: [%llu, %llu]\n", b,
				       (unsigned long long)lo, (unsigned long long)hi);
			continue;
		}
		prev_hi = hi;
		if (b == RL_LL_BUCKETS - 1)
			break;
		mid = ((double)lo + (double)hi) / 2;
		err = mid / (double)lo - 1;
		worst = err > worst ? err : worst;
	}
	tap_ok(!bad && b == RL_LL_BUCKETS - 1 && lo == 1ULL << 36,
	       "560 buckets, each holding its bounds, one after the other up to 2^36 ns (%d wrong)", bad);
	tap_ok(worst < 0.03, "a bucket's midpoint within %.2f%% of its values (limit 3%%)",
	       worst * 100);
	tap_ok(sizeof(struct rl_llhist) == 2240, "a flow's histogram: %zu bytes",
	       sizeof(struct rl_llhist));
}

int main(void)
{
	obj = t_load(1000, ROCE_V2_PORT);
	t_flow_key(&flow_k, 4, "10.0.0.1", "10.0.0.2", 0x11);
	test_llhist_buckets();
	test_new_connection();
	test_duplicate_sighting();
	test_mirror_both_ways();
	test_resumed_read();
	test_atomic_and_read_answers();
	test_fatal_nak();
	test_turnaround();
	test_new_opcodes();
	test_sweep();
	test_percentiles();
	rocelat_bpf__destroy(obj);
	return tap_done();
}
