/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocelat's shared state, which every part of its BPF side includes: the
 * loader's settings (targ_*), the clock (the kernel's, or the capture's
 * with -r: clock_ns), the reporting interval, the per-CPU counters and
 * scratch memory, the keys of requests and answers (qp_key_fill()) and
 * the mirroring switch's time of a frame. rocelat's global functions
 * (AX_GLOBAL_FUNC) are checked by the verifier once each, on their own,
 * instead of once per parser path times per ring slot; their pointer
 * arguments may be NULL to the verifier, hence the checks at their top.
 */
#ifndef AGENTXDP_ROCELAT_STATE_BPF_H
#define AGENTXDP_ROCELAT_STATE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "lib/parse.bpf.h"
#include "lib/maps.bpf.h"
#include "rocelat.h"

/*
 * The build for kernels without bpf_loop (before 5.17:
 * rocelat_noloop.bpf.o, -DROCELAT_NO_BPF_LOOP; rocelat_load.c picks it)
 * runs each bpf_loop() callback's body as a global function called in a
 * bounded loop instead (learn_search(), room_search(),
 * complete_slots_rest()), with the same steps and the same early end:
 * same source, same results. Inlined, the loops' bodies went past 6.1's
 * million instructions.
 */

AX_RODATA __u16 targ_roce_port = ROCE_V2_PORT;
AX_RODATA __u64 targ_unit_ns = 1000;	/* histogram unit: us */
AX_RODATA __u32 targ_unit_log2 = 9;	/* its log2, rounded down */
AX_RODATA __u64 targ_timeout_ns = 1000000000ULL;
AX_RODATA bool targ_offline = false;
/* follow GRE/ERSPAN/VXLAN/Geneve to the mirrored frame (-r, --mirror, --decap) */
AX_RODATA bool targ_decap = false;
AX_RODATA __u8 targ_mirror_time = MIRROR_TIME_AUTO;
/* the flow table's size in sets of FLOW_WAYS flows (rocelat_flow.bpf.h) */
AX_RODATA __u32 targ_flow_sets = DEFAULT_MAX_FLOWS / FLOW_WAYS;
/* --svg: every sample also as an event (samples ring buffer) */
AX_RODATA bool targ_samples = false;

/* offline mode: capture timestamp of the packet about to run, in ns */
AX_GLOBAL __u64 clock_ns = 0;
/* reporting interval; user space steps it to start a new one (flow stats
 * held in flow-table entries are zeroed lazily, at their next update) */
AX_GLOBAL __u32 stats_epoch = 0;

AX_GLOBAL struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rocelat_counters);
} counters SEC(".maps");

static __always_inline __u64 now_ns(void)
{
	return targ_offline ? clock_ns : bpf_ktime_get_ns();
}

/*
 * The mirror session or tunnel a decapsulated frame came in, hashed; 0 for
 * none. Symmetric in the outer addresses: a switch's mirror session sends
 * both directions from the switch to the collector, but between two
 * tunnel endpoints (a VXLAN overlay) requests and answers travel the
 * tunnel in opposite directions and must still meet.
 */
static __always_inline __u32 session_of(const struct pkt_info *pi)
{
	__u32 h, s, d;
	int i;

	if (!pi->tun_kind)
		return 0;
	h = (pi->tun_kind * 0x9E3779B1u) ^ pi->tun_id;
#pragma unroll
	for (i = 0; i < 4; i++) {
		__builtin_memcpy(&s, &pi->tun_saddr[4 * i], 4);
		__builtin_memcpy(&d, &pi->tun_daddr[4 * i], 4);
		h = (h ^ (s ^ d)) * 0x85EBCA6Bu;
		h = (h ^ (s + d)) * 0xC2B2AE35u;
		h ^= h >> 13;
	}
	return h ? h : 1;
}

/* the flow of a request (requester = source), or of an answer's requester
 * QP (requester = destination) */
static __always_inline void qp_key_fill(struct roce_qp_key *k,
					const struct pkt_info *pi, bool answer)
{
	if (answer)
		roce_qp_key_addrs(k, pi->family, pi->daddr, pi->saddr);
	else
		roce_qp_key_addrs(k, pi->family, pi->saddr, pi->daddr);
	k->qpn = pi->dqpn;
	k->session = session_of(pi);
}

/*
 * The mirroring switch's time of a frame in ns (ERSPAN III, 100 ns ticks
 * or IEEE 1588 nanoseconds), unless --mirror-time=arrival; the 32-bit
 * ticks wrap every *wrap ns.
 */
static __always_inline bool switch_time(const struct pkt_info *pi, __u64 *ns,
					__u64 *wrap)
{
	if (targ_mirror_time == MIRROR_TIME_ARRIVAL || !(pi->flags & PKT_F_TUN_TS))
		return false;
	if (pi->tun_ts_gra == PKT_GRA_100NS) {
		*ns = (__u64)pi->tun_ts * 100;
		*wrap = 100ULL << 32;
		return true;
	}
	if (pi->tun_ts_gra == PKT_GRA_IEEE1588) {
		*ns = pi->tun_ts;
		*wrap = 1ULL << 32;
		return true;
	}
	return false;
}

#endif
