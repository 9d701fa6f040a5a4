// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Steady state of rocelat's tc program (bench/rocelat_bench.c, "steady"):
 * BPF_PROG_TEST_RUN with a repeat runs one packet many times, and a
 * repeated request is a retransmission. steady_step_KIND adds one to the
 * packet's PSN, then tail-calls rocelat_tc itself (KIND rocelat: rocelat's
 * own object, loaded from its skeleton and not rebuilt here), steady_empty
 * or steady_clock. So each run of a repeat is a new request (or the ACK of
 * the next one) with warm caches, as on a busy link; the difference to
 * the empty program is rocelat's own cost, and steady_clock's is one read
 * of the clock rocelat stamps packets with, the floor of any program that
 * times packets.
 *
 * tc, not XDP: an XDP test run with a repeat swaps the program into the
 * XDP dispatcher and back, and each swap waits for an RCU grace period
 * (about 25 ms here); a tc test run has no dispatcher.
 *
 * The frames come from tests/unit/pkt_build.h: Ethernet + IPv4 + UDP, BTH
 * at byte 42, its AckReq/PSN word at byte 50.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define STEADY_PSN_OFF	(14 + 20 + 8 + 8)
#define STEADY_PSN_MASK	0xffffff
#define STEADY_TC_NEXT	(-1)	/* TC_ACT_UNSPEC, what rocelat_tc returns */

/* adds one to the PSN (keeping the AckReq bit) */
static __always_inline void steady_psn_step(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	__be32 *w = data + STEADY_PSN_OFF;
	__u32 v;

	if ((void *)(w + 1) > data_end)
		return;
	v = bpf_ntohl(*w);
	*w = bpf_htonl((v & ~STEADY_PSN_MASK) | ((v + 1) & STEADY_PSN_MASK));
}

/*
 * steady_step_KIND: the PSN step, then a tail call through its own
 * one-slot array (filled once by rocelat_bench): updating a slot between
 * runs would re-patch the JIT's direct jump every time.
 */
#define STEADY_STEP(kind)						\
struct {								\
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);				\
	__uint(max_entries, 1);						\
	__type(key, __u32);						\
	__type(value, __u32);						\
} steady_##kind##_next SEC(".maps");					\
									\
SEC("tc")								\
int steady_step_##kind(struct __sk_buff *skb)				\
{									\
	steady_psn_step(skb);						\
	bpf_tail_call(skb, &steady_##kind##_next, 0);			\
	return STEADY_TC_NEXT;						\
}

STEADY_STEP(empty)
STEADY_STEP(clock)
STEADY_STEP(rocelat)

SEC("tc")
int steady_empty(struct __sk_buff *skb)
{
	return STEADY_TC_NEXT;
}

__u64 steady_clock_sink;

SEC("tc")
int steady_clock(struct __sk_buff *skb)
{
	steady_clock_sink = bpf_ktime_get_ns();
	return STEADY_TC_NEXT;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
