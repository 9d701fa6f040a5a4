// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Benchmark-only wrappers around rocelat's own handler (bench/rocelat.sh,
 * "steady state"): BPF_PROG_TEST_RUN with a repeat runs one packet many
 * times, and a repeated request is a retransmission. These programs call
 * the very handler of bpf/rocelat.bpf.c and then add one to the packet's
 * PSN, so each iteration of a repeat is a new request (or the ACK of the
 * next one) with caches warm, as on a busy link. steady_bump does only the
 * PSN step: the baseline the handler's cost is measured against.
 * steady_clock is the PSN step plus one read of the clock rocelat stamps
 * requests and answers with: the floor of any program that times packets.
 *
 * The frames come from tests/unit/pkt_build.h: Ethernet + IPv4 + UDP, BTH
 * at byte 42, its AckReq/PSN word at byte 50.
 */
#include "../bpf/rocelat.bpf.c"

#define STEADY_PSN_OFF	(14 + 20 + 8 + 8)

static __always_inline void psn_step(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__be32 *w = data + STEADY_PSN_OFF;
	__u32 v;

	if ((void *)(w + 1) > data_end)
		return;
	v = bpf_ntohl(*w);
	*w = bpf_htonl((v & 0xff000000) | ((v + 1) & ROCE_PSN_MASK));
}

SEC("xdp")
int steady_handle(struct xdp_md *ctx)
{
	rocelat_handle((void *)(long)ctx->data, (void *)(long)ctx->data_end,
		       0, ctx->ingress_ifindex, false);
	psn_step(ctx);
	return XDP_PASS;
}

SEC("xdp")
int steady_bump(struct xdp_md *ctx)
{
	psn_step(ctx);
	return XDP_PASS;
}

__u64 bench_clock_sink;

SEC("xdp")
int steady_clock(struct xdp_md *ctx)
{
	bench_clock_sink = bpf_ktime_get_ns();
	psn_step(ctx);
	return XDP_PASS;
}
