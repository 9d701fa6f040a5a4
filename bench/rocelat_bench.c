// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Benchmark helper for bench/rocelat.sh (built by make).
 *
 *   rocelat_bench cost [N]          per-packet cost via BPF_PROG_TEST_RUN
 *   rocelat_bench steady OBJ [B]    rocelat_tc with warm caches, B batches
 *                                   (OBJ: build/bench/rocelat_steady.bpf.o)
 *   rocelat_bench xdp-pass IFACE    hold an empty XDP program on IFACE
 *                                   (BPF link) until SIGINT/SIGTERM
 *
 * cost: the empty XDP program and a non-RoCE frame with one large repeat
 * each; then, because a repeated RoCE frame is a retransmission after its
 * first run, the RoCE request (a new PSN every call) and the ACK that
 * completes it are timed one call at a time, N calls each, against the
 * empty program timed the same way. Ratios are to the empty program.
 * These calls have repeat 1, so the XDP test run skips the dispatcher
 * swap (and its RCU wait) that a repeat costs; the large repeats are 20.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rocelat.h"
#include "rocelat.skel.h"
#include "pkt_build.h"

static int empty_xdp_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 2 },	/* r0 = XDP_PASS */
		{ .code = 0x95 },				/* exit */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o);
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xdp_pass", "GPL", insns, 2, &o);

	if (fd < 0) {
		fprintf(stderr, "rocelat_bench: load empty XDP program: %s\n",
			strerror(errno));
		exit(1);
	}
	return fd;
}

/* average ns per run over one test run with a large repeat */
static double run_repeat(int fd, const void *pkt, int len, int repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len,
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(fd, &o)) {
		fprintf(stderr, "rocelat_bench: test run: %s\n", strerror(errno));
		exit(1);
	}
	return o.duration;
}

/* one call: the kernel's own duration for that single run */
static __u32 run_once(int fd, const void *pkt, int len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len,
		    .repeat = 1);

	if (bpf_prog_test_run_opts(fd, &o)) {
		fprintf(stderr, "rocelat_bench: test run: %s\n", strerror(errno));
		exit(1);
	}
	return o.duration;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* mean of the middle 80% (drops interrupts and migrations) */
static double trimmed_mean(__u32 *v, int n)
{
	double s = 0;
	int lo = n / 10, hi = n - n / 10;

	qsort(v, n, sizeof(*v), cmp_u32);
	for (int i = lo; i < hi; i++)
		s += v[i];
	return s / (hi - lo);
}

static double median(__u32 *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_u32);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/*
 * inner (an Ethernet frame of len bytes) as a switch's ERSPAN type III
 * mirror would send it: outer Ethernet + IPv4 (GRE) + GRE with a sequence
 * number (protocol 0x22EB) + the 12-byte ERSPAN III header, version 2,
 * session 7, a 100 ns timestamp (Gra 01). Returns the frame's length.
 */
static int erspan3_wrap(const uint8_t *inner, int len, uint8_t *out, int cap)
{
	static const uint8_t eth[14] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00 };
	int hdr = 14 + 20 + 8 + 12, tot = 20 + 8 + 12 + len;
	uint8_t *ip = out + 14, *gre = ip + 20, *ers = gre + 8;

	if (hdr + len > cap)
		return -1;
	memcpy(out, eth, 14);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = tot >> 8;
	ip[3] = tot;
	ip[8] = 64;
	ip[9] = 47;				/* GRE */
	memcpy(ip + 12, (uint8_t[]){ 192, 0, 2, 10 }, 4);
	memcpy(ip + 16, (uint8_t[]){ 192, 0, 2, 99 }, 4);
	memcpy(gre, (uint8_t[]){ 0x10, 0x00, 0x22, 0xEB, 0, 0, 0, 1 }, 8);
	memset(ers, 0, 12);
	ers[0] = 0x20;				/* version 2: type III */
	ers[3] = 7;				/* session ID */
	memcpy(ers + 4, (uint8_t[]){ 0x00, 0x01, 0x86, 0xA0 }, 4);
	ers[11] = 0x02;				/* Gra 01: 100 ns */
	memcpy(out + hdr, inner, len);
	return hdr + len;
}

static __u64 counter_sum(int fd, int idx);

/* rocelat reading mirror sessions (--mirror, -r): its parser decapsulates */
static int load_decap(struct rocelat_bpf **obj)
{
	*obj = rocelat_bpf__open();
	if (!*obj)
		return -1;
	(*obj)->rodata->targ_decap = true;
	return rocelat_bpf__load(*obj);
}

/* cost()'s large-repeat pairs */
enum { COST_PAIRS = 9 };

/*
 * The empty program (efd) and rocelat (rfd) on one frame, with a large
 * repeat each, after a warm-up: the pair COST_PAIRS times, interleaved.
 * The kernel gives whole ns per run (about 8 here), and a pair's two runs
 * see the same state of the machine. The medians of each (*e, *o), and
 * returned, that of the pairs' ratios.
 */
static double cost_pairs(int efd, int rfd, const void *pkt, int len, int repeat,
			 double *e, double *o)
{
	__u32 pe[COST_PAIRS], po[COST_PAIRS], pr[COST_PAIRS];

	run_repeat(efd, pkt, len, repeat / 10);
	run_repeat(rfd, pkt, len, repeat / 10);
	for (int i = 0; i < COST_PAIRS; i++) {
		pe[i] = run_repeat(efd, pkt, len, repeat);
		po[i] = run_repeat(rfd, pkt, len, repeat);
		pr[i] = po[i] * 1000 / (pe[i] ? pe[i] : 1);
	}
	*e = median(pe, COST_PAIRS);
	*o = median(po, COST_PAIRS);
	return median(pr, COST_PAIRS) / 1000;
}

static int cost(int n)
{
	struct rocelat_bpf *obj = rocelat_bpf__open();
	uint8_t other[2048], req[2048], ack[2048];
	struct pkt_spec s_other = { .dport = 53, .payload = 64 };
	struct pkt_spec s_req = { .opcode = ROCE_SEND_ONLY, .ackreq = true,
				  .dqpn = 0x11, .payload = 64 };
	struct pkt_spec s_ack = { .saddr = "10.0.0.2", .daddr = "10.0.0.1",
				  .opcode = ROCE_ACKNOWLEDGE, .syndrome = 0x1f,
				  .dqpn = 0x111 };
	int len_other, len_req, len_ack, len_ers, efd, rfd, dfd, repeat = 1000000;
	double e_rep, o_rep, e1, r1, a1, d1, x1;
	__u32 *ve, *vr, *va, *vd, *vx;
	struct rocelat_bpf *dobj;
	uint8_t ers[2048];
	double o_ratio;

	if (!obj || rocelat_bpf__load(obj) || load_decap(&dobj)) {
		fprintf(stderr, "rocelat_bench: load rocelat: %s\n", strerror(errno));
		return 1;
	}
	dfd = bpf_program__fd(dobj->progs.rocelat_xdp);
	efd = empty_xdp_prog();
	rfd = bpf_program__fd(obj->progs.rocelat_xdp);
	len_other = pkt_build(&s_other, other, sizeof(other));
	len_ack = pkt_build(&s_ack, ack, sizeof(ack));
	ve = calloc(n, sizeof(*ve));
	vr = calloc(n, sizeof(*vr));
	va = calloc(n, sizeof(*va));
	vd = calloc(n, sizeof(*vd));
	vx = calloc(n, sizeof(*vx));
	if (!ve || !vr || !va || !vd || !vx)
		return 1;

	o_ratio = cost_pairs(efd, rfd, other, len_other, repeat, &e_rep, &o_rep);
	for (int i = 0; i < n; i++) {
		s_req.psn = i;
		s_ack.psn = i;
		len_req = pkt_build(&s_req, req, sizeof(req));
		pkt_build(&s_ack, ack, sizeof(ack));
		ve[i] = run_once(efd, req, len_req);
		vr[i] = run_once(rfd, req, len_req);
		va[i] = run_once(rfd, ack, len_ack);
		/* the same request to rocelat with decapsulation on, plain
		 * and inside an ERSPAN III mirror session (two PSNs apart: two
		 * flows of the decap object) */
		s_req.psn = 2 * i;
		len_req = pkt_build(&s_req, req, sizeof(req));
		vd[i] = run_once(dfd, req, len_req);
		len_ers = erspan3_wrap(req, len_req, ers, sizeof(ers));
		vx[i] = run_once(dfd, ers, len_ers);
	}
	e1 = trimmed_mean(ve, n);
	r1 = trimmed_mean(vr, n);
	a1 = trimmed_mean(va, n);
	d1 = trimmed_mean(vd, n);
	x1 = trimmed_mean(vx, n);

	printf("empty XDP program, repeat %d:     %7.1f ns/packet (median of %d)\n",
	       repeat, e_rep, COST_PAIRS);
	printf("non-RoCE packet,   repeat %d:     %7.1f ns/packet  ratio %.2f (target <= 1.5; median of the pairs' ratios)\n",
	       repeat, o_rep, o_ratio);
	printf("empty XDP program, one run per call: %5.1f ns/packet\n", e1);
	printf("RoCE request (new PSN), per call:    %5.1f ns/packet  ratio %.2f (target <= 4)\n",
	       r1, r1 / e1);
	printf("ACK completing it, per call:         %5.1f ns/packet  ratio %.2f (target <= 4)\n",
	       a1, a1 / e1);
	printf("request, decapsulation on, per call: %5.1f ns/packet  ratio %.2f to it off\n",
	       d1, d1 / r1);
	printf("request in ERSPAN III, per call:     %5.1f ns/packet  ratio %.2f to plain, decap off\n",
	       x1, x1 / r1);
	/* both kinds were RoCE requests to it, each a new PSN of its flow */
	if (counter_sum(bpf_map__fd(dobj->maps.counters), RL_TRACKED) != 2ULL * n) {
		fprintf(stderr, "rocelat_bench: the decapsulating rocelat tracked %llu of %d requests\n",
			(unsigned long long)counter_sum(bpf_map__fd(dobj->maps.counters), RL_TRACKED),
			2 * n);
		return 1;
	}
	printf("RESULT cost_nonroce_ratio=%.2f cost_request_ratio=%.2f cost_ack_ratio=%.2f cost_decap_plain_ratio=%.2f cost_erspan3_ratio=%.2f\n",
	       o_ratio, r1 / e1, a1 / e1, d1 / r1, x1 / r1);
	rocelat_bpf__destroy(dobj);
	close(efd);
	rocelat_bpf__destroy(obj);
	return 0;
}

/* per-CPU counters of rocelat's counters map (fd), summed */
static __u64 counter_sum(int fd, int idx)
{
	int ncpu = libbpf_num_possible_cpus();
	struct rocelat_counters *v = calloc(ncpu, sizeof(*v));
	__u32 zero = 0;
	__u64 t = 0;

	if (!v || bpf_map_lookup_elem(fd, &zero, v)) {
		free(v);
		return ~0ULL;
	}
	for (int c = 0; c < ncpu; c++)
		t += v[c].c[idx];
	free(v);
	return t;
}

static void set_psn(uint8_t *pkt, uint32_t psn)
{
	/* pkt_build: Ethernet + IPv4 + UDP, BTH at 42; keep the AckReq bit */
	pkt[51] = psn >> 16;
	pkt[52] = psn >> 8;
	pkt[53] = psn;
}

/* the program named NAME of object O, or -1 */
static int prog_fd(struct bpf_object *o, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(o, name);

	return p ? bpf_program__fd(p) : -1;
}

/* steady_step_<kind> of O with TARGET in its tail-call slot, or -1 */
static int step_into(struct bpf_object *o, const char *kind, int target)
{
	char prog[32], map[32];
	__u32 zero = 0;
	int mfd;

	snprintf(prog, sizeof(prog), "steady_step_%s", kind);
	snprintf(map, sizeof(map), "steady_%s_next", kind);
	mfd = bpf_object__find_map_fd_by_name(o, map);
	if (mfd < 0 || target < 0 || bpf_map_update_elem(mfd, &zero, &target, BPF_ANY)) {
		fprintf(stderr, "rocelat_bench: tail call %s -> program %d: %s\n",
			prog, target, strerror(errno));
		return -1;
	}
	return prog_fd(o, prog);
}

/*
 * Steady state: bench/rocelat_steady.bpf.o steps the PSN and tail-calls
 * rocelat_tc (or an empty program, or one clock read), so a repeat of
 * BATCH is BATCH new requests, then BATCH ACKs each completing one of
 * them, with warm caches. BATCH is half the pending ring: nothing is
 * evicted. One tc test run per batch and kind, no RCU wait in any.
 */
static int steady(const char *objpath, int batches)
{
	enum { BATCH = PENDING_RING / 2 };
	struct pkt_spec s_req = { .opcode = ROCE_SEND_ONLY, .ackreq = true,
				  .dqpn = 0x11, .payload = 64 };
	struct pkt_spec s_ack = { .saddr = "10.0.0.2", .daddr = "10.0.0.1",
				  .opcode = ROCE_ACKNOWLEDGE, .syndrome = 0x1f,
				  .dqpn = 0x111 };
	uint8_t req[2048], ack[2048];
	struct rocelat_bpf *rl = rocelat_bpf__open_and_load();
	struct bpf_object *o = bpf_object__open_file(objpath, NULL);
	int len_req, len_ack, efd, cfd, rfd;
	__u32 *ve, *vc, *vr, *va;
	__u64 samples, retx, evicted, unmatched, want = (__u64)batches * BATCH;
	double e, c, r, a, clk;

	if (!rl) {
		fprintf(stderr, "rocelat_bench: load rocelat: %s\n", strerror(errno));
		return 1;
	}
	if (!o || bpf_object__load(o)) {
		fprintf(stderr, "rocelat_bench: load %s: %s\n", objpath, strerror(errno));
		return 1;
	}
	efd = step_into(o, "empty", prog_fd(o, "steady_empty"));
	cfd = step_into(o, "clock", prog_fd(o, "steady_clock"));
	rfd = step_into(o, "rocelat", bpf_program__fd(rl->progs.rocelat_tc));
	if (efd < 0 || cfd < 0 || rfd < 0)
		return 1;
	len_req = pkt_build(&s_req, req, sizeof(req));
	len_ack = pkt_build(&s_ack, ack, sizeof(ack));
	ve = calloc(batches, sizeof(*ve));
	vc = calloc(batches, sizeof(*vc));
	vr = calloc(batches, sizeof(*vr));
	va = calloc(batches, sizeof(*va));
	if (!ve || !vc || !vr || !va)
		return 1;
	for (int i = 0; i < batches; i++) {
		/* the step comes first: the runs see PSN .. PSN + BATCH - 1 */
		uint32_t psn = (uint32_t)i * BATCH - 1;

		set_psn(req, psn);
		set_psn(ack, psn);
		ve[i] = run_repeat(efd, req, len_req, BATCH);
		vc[i] = run_repeat(cfd, req, len_req, BATCH);
		vr[i] = run_repeat(rfd, req, len_req, BATCH);
		va[i] = run_repeat(rfd, ack, len_ack, BATCH);
	}
	e = trimmed_mean(ve, batches);
	c = trimmed_mean(vc, batches);
	r = trimmed_mean(vr, batches);
	a = trimmed_mean(va, batches);
	clk = c - e;
	samples = counter_sum(bpf_map__fd(rl->maps.counters), RL_SAMPLES);
	retx = counter_sum(bpf_map__fd(rl->maps.counters), RL_RETRANSMITS);
	evicted = counter_sum(bpf_map__fd(rl->maps.counters), RL_EVICTED);
	unmatched = counter_sum(bpf_map__fd(rl->maps.counters), RL_UNMATCHED);
	printf("steady state, %d batches of %d requests then their %d ACKs (tc test runs, repeat %d, PSN +1 each run):\n",
	       batches, BATCH, BATCH, BATCH);
	printf("  samples %llu of %llu expected, retransmits %llu, evicted %llu, unmatched %llu\n",
	       (unsigned long long)samples, (unsigned long long)want,
	       (unsigned long long)retx, (unsigned long long)evicted,
	       (unsigned long long)unmatched);
	printf("  PSN step + empty program:   %6.1f ns/packet\n", e);
	printf("  PSN step + one clock read:  %6.1f ns/packet  (bpf_ktime_get_ns %.1f ns: a timing program's floor is %.2fx the empty one)\n",
	       c, clk, c / e);
	printf("  PSN step + rocelat_tc, request: %6.1f ns/packet  rocelat's own part %.1f ns = %.2f clock reads\n",
	       r, r - e, (r - e) / clk);
	printf("  PSN step + rocelat_tc, ACK:     %6.1f ns/packet  rocelat's own part %.1f ns = %.2f clock reads\n",
	       a, a - e, (a - e) / clk);
	printf("RESULT steady_request_ns=%.1f steady_ack_ns=%.1f steady_empty_ns=%.1f steady_clock_ns=%.1f steady_request_clocks=%.2f steady_ack_clocks=%.2f steady_floor_ratio=%.2f steady_samples_ok=%d\n",
	       r - e, a - e, e, clk, (r - e) / clk, (a - e) / clk, c / e,
	       samples == want && !retx && !evicted);
	bpf_object__close(o);
	rocelat_bpf__destroy(rl);
	return samples == want ? 0 : 1;
}

static volatile sig_atomic_t stop;

static void on_sig(int sig)
{
	stop = 1;
}

static int hold_xdp_pass(const char *ifname)
{
	int ifindex = if_nametoindex(ifname), fd, lfd;

	if (!ifindex) {
		fprintf(stderr, "rocelat_bench: no interface %s\n", ifname);
		return 1;
	}
	fd = empty_xdp_prog();
	lfd = bpf_link_create(fd, ifindex, BPF_XDP, NULL);
	if (lfd < 0) {
		fprintf(stderr, "rocelat_bench: attach XDP to %s: %s\n", ifname,
			strerror(-lfd));
		return 1;
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	close(lfd);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "cost"))
		return cost(argc > 2 ? atoi(argv[2]) : 100000);
	if (argc >= 3 && !strcmp(argv[1], "steady"))
		return steady(argv[2], argc > 3 ? atoi(argv[3]) : 20000);
	if (argc >= 3 && !strcmp(argv[1], "xdp-pass"))
		return hold_xdp_pass(argv[2]);
	fprintf(stderr, "usage: rocelat_bench cost [N] | steady OBJ [BATCHES] | xdp-pass IFACE\n");
	return 2;
}
