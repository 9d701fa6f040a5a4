/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* log2 histograms aggregated in the kernel, printed by tools/lib/hist.c */
#ifndef AGENTXDP_HIST_BPF_H
#define AGENTXDP_HIST_BPF_H

#include "hist.h"

static __always_inline __u32 log2_u32(__u32 v)
{
	__u32 r, shift;

	r = (v > 0xFFFF) << 4; v >>= r;
	shift = (v > 0xFF) << 3; v >>= shift; r |= shift;
	shift = (v > 0xF) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 hi = v >> 32;

	return hi ? log2_u32(hi) + 32 : log2_u32(v);
}

/* slot 0 holds 0..1, slot n holds [2^n, 2^(n+1)) */
static __always_inline __u32 hist_slot(__u64 v)
{
	__u32 s = log2_u64(v);

	return s < HIST_SLOTS ? s : HIST_SLOTS - 1;
}

/*
 * hist_slot() for indexing: the 6.1 verifier loses hist_slot()'s clamp when
 * clang re-extends the 32-bit index in another register, and clang drops a
 * plain mask it can prove redundant; the empty asm hides the value from
 * clang so the mask (HIST_SLOTS is a power of two) stays for the verifier.
 */
static __always_inline __u32 hist_slot_bounded(__u64 v)
{
	__u32 s = hist_slot(v);

	asm volatile("" : "+r"(s));
	return s & (HIST_SLOTS - 1);
}

/* bucket of v (ns) in a struct llhist, bounded for indexing like above */
static __always_inline __u32 llhist_bucket(__u64 v)
{
	__u32 e, b;

	if (v < LLH_SUB) {
		b = v;
	} else {
		e = log2_u64(v);
		if (e > LLH_MAX_LOG2)
			b = LLH_BUCKETS - 1;
		else
			b = ((e - LLH_SUB_BITS + 1) << LLH_SUB_BITS) |
			    ((v >> (e - LLH_SUB_BITS)) & (LLH_SUB - 1));
	}
	asm volatile("" : "+r"(b));
	return b & (LLH_BUCKETS - 1);
}

static __always_inline void hist_add(struct hist *h, __u64 v)
{
	__u32 s = hist_slot_bounded(v);

	__sync_fetch_and_add(&h->slots[s], 1);
}

#endif
