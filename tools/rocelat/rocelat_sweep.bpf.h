/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocelat's timeout sweep over the flow table: the requests left
 * unanswered for --timeout on flows that went quiet, counted and popped,
 * flow by flow, one word of flows_used at a time (sweep_flows()). User
 * space runs the program that sweeps (rocelat_sweep, in rocelat.bpf.c)
 * before each report: through BPF_PROG_TEST_RUN live and with -r
 * --in-kernel, natively with -r (rocelat_native_sweep()).
 */
#ifndef AGENTXDP_ROCELAT_SWEEP_BPF_H
#define AGENTXDP_ROCELAT_SWEEP_BPF_H

#include "rocelat_state.bpf.h"
#include "rocelat_flow.bpf.h"

struct sweep_ctx {
	__u64 now;
	struct rocelat_counters *cnt;
};

/*
 * Requests are appended in time order, so the timed-out ones of a flow are
 * a prefix of its ring: count them and pop them. Racing the flow's own
 * answer walk on another CPU, a pop can be lost (the slot stays a hole,
 * popped later) but no request is counted twice: a slot is cleared before
 * it is counted. A function of its own, checked once by the verifier,
 * not once per place in the bitmap walk; its count goes to memory, not to
 * a register it returns, whose every value along the ring walk would be a
 * state of its own to the verifier (6.1 gave up at a million).
 */
AX_GLOBAL_FUNC int rocelat_sweep_flow(struct pending_flow *pf,
				      struct rocelat_counters *cnt, __u64 now0)
{
	__u32 tail, head, pop = 0;
	__u64 now = now0;
	int i;

	if (!pf || !cnt || !pf->used)
		return 0;
	tail = pf->tail;
	head = pf->head;

	/* a switch-timed flow: the switch's time now, from both clocks' at
	 * the flow's latest frame */
	if (pf->flags & FLOW_SWITCH_CLOCK)
		now = pf->sw_last + (now0 - pf->arr_last);
	for (i = 0; i < PENDING_RING; i++) {
		struct pending_slot *s = &pf->ring[(tail + pop) & (PENDING_RING - 1)];

		if (tail + pop == head)
			break;
		if (s->flags & SLOT_VALID) {
			if (flow_age(pf, now, s->ts_ns) <= targ_timeout_ns)
				break;
			s->flags = 0;
			cnt->c[RL_TIMEOUTS]++;
			__sync_fetch_and_add(&flow_stats(pf)->timeouts, 1);
		}
		pop++;
	}
	if (pop)
		pf->tail = tail + pop;
	return 0;
}

/* one word of flows_used: the flows of its entries (a walk of the bitmap,
 * not of the table: 176 words, not 11,264 entries of 4.5 KiB, by default) */
static long sweep_word(struct bpf_map *map, __u32 *word, __u64 *bits,
		       struct sweep_ctx *sc)
{
	__u64 b = *bits;
	__u32 i, idx;

	for (i = 0; i < 64 && b >> i; i++) {
		struct pending_flow *pf;

		if (!(b >> i & 1))
			continue;
		idx = *word * 64 + i;
		pf = bpf_map_lookup_elem(&pending, &idx);
		rocelat_sweep_flow(pf, sc->cnt, sc->now);
	}
	return 0;
}

/* the sweep of every flow the table has held, at sc->now */
static __always_inline void sweep_flows(struct sweep_ctx *sc)
{
	bpf_for_each_map_elem(&flows_used, sweep_word, sc, 0);
}

#endif
