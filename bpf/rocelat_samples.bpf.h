/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocelat --svg: every latency sample also as an event, for user space to
 * draw at its time (tools/rocelat_svg.c). Included by bpf/rocelat.bpf.c
 * after now_ns().
 */
#ifndef AGENTXDP_ROCELAT_SAMPLES_BPF_H
#define AGENTXDP_ROCELAT_SAMPLES_BPF_H

/* --svg: every sample also as an event (samples ring buffer) */
const volatile bool targ_samples = false;
/* --svg: sample events the ring buffer had no room for */
__u64 samples_lost = 0;

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

#endif
