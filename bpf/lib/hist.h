/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The histogram layouts both sides read: a log2 histogram of
 * HIST_SLOTS slots, and a log-linear one; bpf/lib/hist.bpf.h fills them in
 * BPF, tools/lib/hist.c prints them.
 */
#ifndef AGENTXDP_HIST_H
#define AGENTXDP_HIST_H

#define HIST_SLOTS 32

struct hist {
	__u64 slots[HIST_SLOTS];
};

/*
 * Log-linear histogram (HdrHistogram's layout): values below 2^LLH_SUB_BITS
 * exact, above that LLH_SUB sub-buckets per power of two. A bucket is at
 * most 1/32 of its lower bound wide, so its midpoint is within 1.6% of any
 * value in it: percentiles within 3%, which log2 slots (up to 100% wide)
 * cannot give. Values in ns; 2^36 ns (69 s) and above share the top bucket.
 */
#define LLH_SUB_BITS	5
#define LLH_SUB		(1 << LLH_SUB_BITS)
#define LLH_MAX_LOG2	35
#define LLH_BUCKETS	((LLH_MAX_LOG2 - LLH_SUB_BITS + 2) * LLH_SUB)	/* 1024 */

struct llhist {
	__u32 b[LLH_BUCKETS];
};

#endif
