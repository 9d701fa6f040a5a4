// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat's XDP program on jumbo frames through BPF_PROG_TEST_RUN: loaded
 * with BPF_F_XDP_HAS_FRAGS (as rocelat_load.c does where the kernel has
 * it), a frame larger than the test run's first buffer (a page less XDP's
 * headroom and tailroom, about 3.5 KB) arrives as a multi-buffer xdp_md:
 * headers in the first buffer, the payload beyond it. Exactly the
 * counters the frames call for move; with decap (a mirror port) the
 * truncation check takes the whole frame's length (bpf_xdp_get_buff_len),
 * not the first buffer's. Needs root; skips where the kernel has no XDP
 * frags (before 5.18).
 */
#include "rocelat_test.h"
#include "lib/probe.h"

#define JUMBO_CAP	9100

static struct rocelat_bpf *obj;
static uint8_t frame[JUMBO_CAP];

#define C(x) (t_counters(obj).c[x])

/* the skeleton as rocelat_load.c sets it up for a live XDP run with
 * frags, offline clock for the test; decap as a mirror port has it.
 * (The test run hands even a program without frags a multi-buffer
 * frame; only a driver refuses it, so that case is tests/host/jumbo.bats') */
static struct rocelat_bpf *load_frags(bool decap)
{
	struct rocelat_bpf *o = rocelat_bpf__open();
	struct bpf_program *p;

	if (!o) {
		printf("Bail out! open rocelat skeleton: %s\n", strerror(errno));
		exit(1);
	}
	p = o->progs.rocelat_xdp;
	o->rodata->targ_offline = true;
	ROCELAT_SET_UNIT(o->rodata, 1000);
	o->rodata->targ_roce_port = ROCE_V2_PORT;
	o->rodata->targ_decap = decap;
	o->rodata->targ_xdp_frags = true;
	bpf_program__set_flags(p, bpf_program__flags(p) | BPF_F_XDP_HAS_FRAGS);
	if (rocelat_bpf__load(o)) {
		printf("Bail out! load rocelat (needs root): %s\n", strerror(errno));
		exit(1);
	}
	t_ncpu = libbpf_num_possible_cpus();
	return o;
}

/* a frame of s at t_ns through XDP; its length */
static int run_jumbo(const struct pkt_spec *s, __u64 t_ns, int *rv)
{
	int len;

	memset(frame, 0, sizeof(frame));
	len = pkt_build(s, frame, sizeof(frame));
	obj->bss->clock_ns = t_ns;
	*rv = t_run_prog(obj->progs.rocelat_xdp, frame, len);
	return len;
}

static const struct pkt_spec write4k = {
	.opcode = ROCE_WRITE_ONLY, .ackreq = true, .dqpn = 0x12, .psn = 100,
	.dma_len = 4096, .payload = 4096,
};
static const struct pkt_spec ack = {
	.opcode = ROCE_ACKNOWLEDGE, .dqpn = 0x11, .psn = 100,
	.saddr = "10.0.0.2", .daddr = "10.0.0.1", .sport = 49152,
};

static void test_write_4k(void)
{
	struct rocelat_counters c;
	int rv, len;

	obj = load_frags(false);
	len = run_jumbo(&write4k, 1000, &rv);
	tap_eq(rv, T_XDP_PASS, "frags: a %d-byte WRITE_ONLY (RoCE MTU 4096) passes", len);
	run_jumbo(&ack, 51000, &rv);
	tap_eq(rv, T_XDP_PASS, "frags: its ACK passes");
	c = t_counters(obj);
	tap_eq(c.c[RL_ROCE_PKTS], 2, "frags: two RoCE packets");
	tap_eq(c.c[RL_REQUESTS], 1, "frags: one request");
	tap_eq(c.c[RL_TRACKED], 1, "frags: tracked (AckReq read from the first buffer)");
	tap_eq(c.c[RL_ACKS], 1, "frags: one ACK");
	tap_eq(c.c[RL_SAMPLES], 1, "frags: one latency sample");
	tap_eq(c.c[RL_PARSE_ERRORS], 0, "frags: no parse error");
	tap_eq(c.c[RL_TRUNCATED], 0, "frags: nothing called truncated");
	rocelat_bpf__destroy(obj);
}

/* decap on (a mirror port): a plain 9000-byte frame is whole, one whose
 * IP length claims more than it carries is cut */
static void test_decap_truncation(void)
{
	struct pkt_spec send9k = {
		.opcode = ROCE_SEND_ONLY, .ackreq = true, .dqpn = 0x13, .psn = 5,
		.payload = 9000 - 20 - 8 - 12 - 4,
	};
	int rv, len;

	obj = load_frags(true);
	len = run_jumbo(&send9k, 1000, &rv);
	tap_eq(len, 9014, "a 9000-byte IP packet in a %d-byte frame", len);
	tap_eq(rv, T_XDP_PASS, "decap, frags: the 9014-byte frame passes");
	tap_eq(C(RL_ROCE_PKTS), 1, "decap, frags: one RoCE packet");
	tap_eq(C(RL_TRUNCATED), 0, "decap, frags: whole (the frame's length, not the first buffer's)");
	/* the same headers, 1000 bytes of it cut off by a mirror */
	send9k.psn = 6;
	memset(frame, 0, sizeof(frame));
	len = pkt_build(&send9k, frame, sizeof(frame));
	obj->bss->clock_ns = 2000;
	rv = t_run_prog(obj->progs.rocelat_xdp, frame, len - 1000);
	tap_eq(rv, T_XDP_PASS, "decap, frags: a frame cut to %d bytes passes", len - 1000);
	tap_eq(C(RL_ROCE_PKTS), 2, "decap, frags: its headers parsed");
	tap_eq(C(RL_TRUNCATED), 1, "decap, frags: that one is truncated");
	tap_eq(C(RL_PARSE_ERRORS), 0, "decap, frags: no parse error");
	rocelat_bpf__destroy(obj);
}

int main(void)
{
	if (!probe_xdp_frags()) {
		tap_skip("this kernel has no XDP frags (5.18+)", "rocelat on multi-buffer XDP frames");
		return tap_done();
	}
	test_write_4k();
	test_decap_truncation();
	return tap_done();
}
