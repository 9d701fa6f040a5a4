/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user side of the log2 histograms: the BPF side's layout
 * (bpf/lib/hist.h, the same name one folder over) and the printers of
 * tools/lib/hist.c.
 */
#ifndef AGENTXDP_USER_HIST_H
#define AGENTXDP_USER_HIST_H

#include <linux/types.h>
#include <stdio.h>
#include "../../bpf/lib/hist.h"	/* the BPF side's layout (the same name) */

/* a log2 histogram as libbpf-tools prints it; unit is the column label */
void hist_print_log2(FILE *f, const __u64 *slots, int n, const char *unit);
/* the same as one JSON array of {"lo","hi","count"} objects, no newline */
void hist_json_buckets(FILE *f, const __u64 *slots, int n);
/* value below which a fraction q of samples fall (upper bound of the slot) */
__u64 hist_quantile(const __u64 *slots, int n, double q);
__u64 hist_total(const __u64 *slots, int n);
/* sum src into dst */
void hist_add_into(__u64 *dst, const __u64 *src, int n);

/* a log-linear histogram's bucket i: its bounds in ns, inclusive */
typedef void (*hist_bounds_fn)(__u32 i, __u64 *lo, __u64 *hi);
/*
 * The q-quantile (nearest rank: the ceil(q * total)-th smallest sample) of
 * the n buckets b whose bounds bounds() gives: the midpoint of its bucket,
 * clamped to the samples' own [min, max] (else pass 0, ~0); 0 without
 * samples. rocelat's flow histogram and struct llhist share it.
 */
double hist_ll_quantile(const __u32 *b, __u32 n, hist_bounds_fn bounds, double q,
			__u64 min, __u64 max);

void llhist_add_into(__u32 *dst, const __u32 *src);
/* a log-linear histogram's counts added into log2 slots of the same unit
 * (each of its buckets lies within one power of two; the top ones in the
 * last slot) */
void llhist_to_log2(const __u32 *b, __u64 *slots, int nslots);
/*
 * The q-quantile (nearest rank: the ceil(q * n)-th smallest sample) in ns:
 * the midpoint of its bucket, within 1.6% of the sample, clamped to the
 * exact [min, max] of the samples when they are known (else pass 0, ~0).
 */
double llhist_quantile(const __u32 *b, double q, __u64 min, __u64 max);

#endif
