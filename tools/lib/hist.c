// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Histograms the BPF side fills (bpf/lib/hist.bpf.h): log2 ones printed
 * as libbpf-tools print them and as JSON buckets, log-linear ones summed
 * and read as quantiles.
 */
#include <stdbool.h>
#include <string.h>
#include "hist.h"

#define STARS_MAX 40

static __u64 slot_lo(int i)
{
	return i ? 1ULL << i : 0;
}

static __u64 slot_hi(int i)
{
	return (1ULL << (i + 1)) - 1;
}

void hist_print_log2(FILE *f, const __u64 *slots, int n, const char *unit)
{
	__u64 max = 0;
	int i, last = -1, stars, width;

	for (i = 0; i < n; i++) {
		if (slots[i])
			last = i;
		if (slots[i] > max)
			max = slots[i];
	}
	if (last < 0)
		return;
	width = last <= 29 ? 10 : 20;
	fprintf(f, "%*s%-*s : count    distribution\n", width + 3, "",
		width, unit);
	for (i = 0; i <= last; i++) {
		fprintf(f, "%*llu -> %-*llu : %-8llu |", width,
			(unsigned long long)slot_lo(i), width,
			(unsigned long long)slot_hi(i),
			(unsigned long long)slots[i]);
		stars = max ? (int)(slots[i] * STARS_MAX / max) : 0;
		for (int s = 0; s < STARS_MAX; s++)
			fputc(s < stars ? '*' : ' ', f);
		fputs("|\n", f);
	}
}

void hist_json_buckets(FILE *f, const __u64 *slots, int n)
{
	bool first = true;

	fputc('[', f);
	for (int i = 0; i < n; i++) {
		if (!slots[i])
			continue;
		fprintf(f, "%s{\"lo\":%llu,\"hi\":%llu,\"count\":%llu}",
			first ? "" : ",", (unsigned long long)slot_lo(i),
			(unsigned long long)slot_hi(i),
			(unsigned long long)slots[i]);
		first = false;
	}
	fputc(']', f);
}

__u64 hist_total(const __u64 *slots, int n)
{
	__u64 t = 0;

	for (int i = 0; i < n; i++)
		t += slots[i];
	return t;
}

__u64 hist_quantile(const __u64 *slots, int n, double q)
{
	__u64 total = hist_total(slots, n), acc = 0;

	if (!total)
		return 0;
	for (int i = 0; i < n; i++) {
		acc += slots[i];
		if ((double)acc >= q * (double)total)
			return slot_hi(i);
	}
	return slot_hi(n - 1);
}

void hist_add_into(__u64 *dst, const __u64 *src, int n)
{
	for (int i = 0; i < n; i++)
		dst[i] += src[i];
}

/* a struct llhist bucket's bounds in ns, inclusive */
static void llhist_bounds(__u32 b, __u64 *lo, __u64 *hi)
{
	__u32 e, sub;

	if (b < LLH_SUB) {
		*lo = *hi = b;
		return;
	}
	e = b / LLH_SUB + LLH_SUB_BITS - 1;
	sub = b % LLH_SUB;
	*lo = (__u64)(LLH_SUB + sub) << (e - LLH_SUB_BITS);
	*hi = *lo + (1ULL << (e - LLH_SUB_BITS)) - 1;
}

void llhist_add_into(__u32 *dst, const __u32 *src)
{
	for (int i = 0; i < LLH_BUCKETS; i++)
		dst[i] += src[i];
}

void llhist_to_log2(const __u32 *b, __u64 *slots, int nslots)
{
	for (int i = 0; i < LLH_BUCKETS; i++) {
		__u64 lo, hi;
		int slot = 0;

		if (!b[i])
			continue;
		llhist_bounds(i, &lo, &hi);
		while (lo > 1) {
			lo >>= 1;
			slot++;
		}
		slots[slot < nslots ? slot : nslots - 1] += b[i];
	}
}

double hist_ll_quantile(const __u32 *b, __u32 n, hist_bounds_fn bounds, double q,
			__u64 min, __u64 max)
{
	__u64 total = 0, acc = 0, rank, lo, hi;
	double v;

	for (__u32 i = 0; i < n; i++)
		total += b[i];
	if (!total)
		return 0;
	rank = (__u64)(q * (double)total);
	if ((double)rank < q * (double)total)
		rank++;
	if (rank < 1)
		rank = 1;
	for (__u32 i = 0; i < n; i++) {
		acc += b[i];
		if (acc < rank)
			continue;
		bounds(i, &lo, &hi);
		/* the open top bucket's midpoint is far above max: max it is */
		v = ((double)lo + (double)hi) / 2;
		if (v < (double)min)
			v = (double)min;
		if (v > (double)max)
			v = (double)max;
		return v;
	}
	return (double)max;
}

double llhist_quantile(const __u32 *b, double q, __u64 min, __u64 max)
{
	return hist_ll_quantile(b, LLH_BUCKETS, llhist_bounds, q, min, max);
}
