/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocelat's latency samples: each in the histograms and its flow's
 * statistics (sample_add()), and with --svg (targ_samples) also as an
 * event, for user space to draw at its time (tools/rocelat/rocelat_svg.c).
 */
#ifndef AGENTXDP_ROCELAT_SAMPLES_BPF_H
#define AGENTXDP_ROCELAT_SAMPLES_BPF_H

#include "lib/hist.bpf.h"
#include "rocelat_state.bpf.h"
#include "rocelat_flow.bpf.h"

/* --svg: sample events the ring buffer had no room for */
AX_GLOBAL __u64 samples_lost = 0;

/* a page, unused, unless --svg sizes it (rocelat_load_opts): rocediag
 * loads this object too, and asks for no samples */
AX_RINGBUF(samples, 4096);
/* wake the reader once per this much backlog (it also polls every 100 ms) */
#define SAMPLES_WAKEUP_BYTES	(256 * sizeof(struct rocelat_sample_event))

/*
 * --svg: the sample as an event. Its time is the answer's: a held answer's
 * own, except on the switch's clock (32-bit ticks, another epoch), where
 * it is the arrival of the packet being handled.
 */
static __always_inline void sample_emit(const struct pending_flow *pf,
					const struct answer_ctx *ac, __u64 lat,
					__u32 turn)
{
	struct rocelat_sample_event *e;
	__u64 avail;

	e = bpf_ringbuf_reserve(&samples, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&samples_lost, 1);
		return;
	}
	e->ts_ns = ac->sw ? now_ns() : ac->now;
	e->lat_ns = lat;
	__builtin_memcpy(&e->id, &pf->id, sizeof(e->id));
	e->sport = pf->sport;
	e->turn = !!turn;
	avail = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(e, avail >= SAMPLES_WAKEUP_BYTES &&
			   avail < SAMPLES_WAKEUP_BYTES + sizeof(*e) + 8 ?
			   BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/*
 * A sample of e = floor(log2(lat)) new to flow pf: e and the histogram
 * positions that follow from it, kept with the flow (hist_slot_scaled()
 * and rocelat_ll_bucket() of any sample of the same e, read with one
 * comparison and one shift: sample_add())
 */
static __always_inline void sample_geometry(struct pending_flow *pf, __u64 lat)
{
	__u32 e = log2_u64(lat), a = targ_unit_log2, c;

	pf->lat_log2 = e;
	if (e <= a) {		/* lat / unit is 0 or 1: slot 0 */
		pf->slot_thr = 0;
		pf->slot_lo = pf->slot_hi = 0;
	} else {
		c = e - a;
		pf->slot_thr = targ_unit_ns << c;
		pf->slot_hi = c < HIST_SLOTS ? c : HIST_SLOTS - 1;
		pf->slot_lo = c - 1 < HIST_SLOTS ? c - 1 : HIST_SLOTS - 1;
	}
	if (e < RL_LL_MIN_LOG2) {	/* lat < 32: its own bucket */
		pf->ll_shift = 0;
		pf->ll_base = 0;
	} else if (e > RL_LL_MAX_LOG2) { /* the top bucket (lat >> 63 is 0) */
		pf->ll_shift = 63;
		pf->ll_base = RL_LL_BUCKETS - 1;
	} else {		/* lat >> (e - 5) is 32 + its top 5 bits */
		pf->ll_shift = e - RL_LL_MIN_LOG2;
		pf->ll_base = rocelat_ll_base(e);
	}
}

/* a latency sample of flow pf: the histograms, the flow's statistics */
static __always_inline void sample_add(struct pending_flow *pf,
				       struct roce_flow_stats *fs,
				       struct answer_ctx *ac,
				       struct rocelat_counters *cnt, __u64 lat,
				       __u32 turn)
{
	__u32 slot;
	__u64 ll;

	/* the next packet's clock read waits for the chain of dependent
	 * instructions after this one's: the flow's logarithm is taken when
	 * it fits (exact), and the slots that follow from it with it, one
	 * comparison and one shift (bench/rocelat.sh: an ACK from 3.2 to
	 * 2.8 clock reads with the logarithm kept, 2.7 with the slots) */
	if (lat >> (pf->lat_log2 & 63) != 1)
		sample_geometry(pf, lat);
	slot = lat >= pf->slot_thr ? pf->slot_hi : pf->slot_lo;
	ll = pf->ll_base + rocelat_ll_sub(lat >> (pf->ll_shift & 63));
	/* bounded for indexing: the 6.1 verifier knows nothing of bytes
	 * read back from the map (the empty asm keeps clang's masks and
	 * the clamp, on the 64-bit register the index is) */
	asm volatile("" : "+r"(slot), "+r"(ll));
	slot &= HIST_SLOTS - 1;
	if (ll > RL_LL_BUCKETS - 1)
		ll = RL_LL_BUCKETS - 1;
	cnt->c[RL_SAMPLES]++;
	if (turn) {
		cnt->c[RL_TURN_SAMPLES]++;
		cnt->turn_hist.slots[slot]++;
	} else {
		cnt->hist.slots[slot]++;
	}
	/*
	 * One writer per field, no atomics here: the samples are the answer
	 * side's (a flow's answers arrive through one queue, RSS hashing
	 * their 5-tuple, hence one CPU at a time), while its requests may be
	 * on another CPU (tc egress vs XDP); what both sides or the sweep
	 * count (timeouts, ECN, CNPs, untimed) is added atomically, and a
	 * new interval's zeroing is claimed (rocelat_stats_reset()).
	 * Lock-prefixed adds cost ~4 ns each here.
	 */
	if (!fs->samples || lat < fs->min)
		fs->min = lat;
	fs->samples++;
	fs->sum += lat;
	if (lat > fs->max)
		fs->max = lat;
	fs->ifindex = ac->ifindex;
	fs->last_psn = ac->sample_psn;
	fs->kind |= turn ? FLOW_KIND_TURN : FLOW_KIND_RTT;
	fs->hist[slot]++;
	pf->ll.b[ll]++;
	if (targ_samples)
		sample_emit(pf, ac, lat, turn);
}

/* a global function (rocelat_state.bpf.h): verified once, on its own */
AX_GLOBAL_FUNC int rocelat_sample(struct pending_flow *pf, struct answer_ctx *ac,
				  struct rocelat_counters *cnt, __u64 lat, __u32 turn)
{
	if (!pf || !ac || !cnt)
		return 0;
	sample_add(pf, flow_stats(pf), ac, cnt, lat, turn);
	return 1;
}

#endif
