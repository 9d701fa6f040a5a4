/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* log2 histograms aggregated in the kernel, printed by tools/lib/hist.c */
#ifndef AGENTXDP_HIST_BPF_H
#define AGENTXDP_HIST_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "hist.h"

/*
 * 1 when v >= 2^k, for v < 2^(2k), without a comparison: BPF has no
 * conditional move, so clang makes each comparison a jump, and the
 * verifier walks both sides of every jump on a value it must know
 * precisely (here: an index). With five such jumps per logarithm, the
 * histograms were half of everything the verifier checked in rocelat.
 * The empty asm keeps clang from turning the sum back into a comparison.
 */
static __always_inline __u64 log2_step(__u64 v, int k)
{
	__u64 x = v >> k;

	asm volatile("" : "+r"(x));
	return (x + ((1ULL << k) - 1)) >> k;
}

/* floor(log2(v)), 0 for 0: a binary search of log2_step()s */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u64 r = 0, s;
	int k;

#pragma unroll
	for (k = 32; k > 1; k >>= 1) {
		s = log2_step(v, k) * k;
		v >>= s;
		r |= s;
	}
	return r | v >> 1;
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

/* bucket of v (ns) in a struct llhist, e = log2_u64(v), bounded for
 * indexing like above */
static __always_inline __u32 llhist_bucket_log2(__u64 v, __u32 e)
{
	__u32 b;

	if (v < LLH_SUB)
		b = v;
	else if (e > LLH_MAX_LOG2)
		b = LLH_BUCKETS - 1;
	else
		b = ((e - LLH_SUB_BITS + 1) << LLH_SUB_BITS) |
		    ((v >> (e - LLH_SUB_BITS)) & (LLH_SUB - 1));
	asm volatile("" : "+r"(b));
	return b & (LLH_BUCKETS - 1);
}

static __always_inline __u32 llhist_bucket(__u64 v)
{
	return llhist_bucket_log2(v, log2_u64(v));
}

/*
 * hist_slot_bounded(v / unit) from e = log2_u64(v), without the division
 * and without a logarithm of its own (each is a chain of dependent
 * instructions, and the next packet's clock read waits for their end).
 * With 2^a <= unit < 2^(a+1) and c = e - a, log2(v / unit) is c - 1, or
 * c when v >= unit << c (both lie in [2^e, 2^(e+1)), so their difference
 * has the sign of the comparison, read without a jump). Slots above the
 * last are clamped to it without a jump either (the index is at most 63).
 */
static __always_inline __u32 hist_slot_scaled(__u64 v, __u32 e, __u64 unit,
					      __u32 a)
{
	__u32 c, s;

	if (e <= a)		/* v < 2^(a+1): v / unit is 0 or 1 */
		return 0;
	c = e - a;
	s = c - (__u32)((v - (unit << c)) >> 63);
	s |= (s >> 5) * (HIST_SLOTS - 1);
	asm volatile("" : "+r"(s));
	return s & (HIST_SLOTS - 1);
}

/*
 * hist_slot_scaled() with a jump on v instead of the arithmetic: for a
 * hot path after a clock read, whose chain of dependent instructions the
 * next clock read waits for, where the CPU predicts the jump (a flow's
 * latency keeps its slot from one sample to the next). Same result.
 */
static __always_inline __u32 hist_slot_scaled_jump(__u64 v, __u32 e, __u64 unit,
						   __u32 a)
{
	__u32 c, s;

	if (e <= a)
		return 0;
	c = e - a;
	s = v >= unit << c ? c : c - 1;
	s |= (s >> 5) * (HIST_SLOTS - 1);
	asm volatile("" : "+r"(s));
	return s & (HIST_SLOTS - 1);
}

static __always_inline void hist_add(struct hist *h, __u64 v)
{
	__u32 s = hist_slot_bounded(v);

	__sync_fetch_and_add(&h->slots[s], 1);
}

#endif
