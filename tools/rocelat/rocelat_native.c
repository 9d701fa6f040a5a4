// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat's BPF program (tools/rocelat/rocelat.bpf.c), this very source, compiled
 * by the host compiler for -r: the Makefile builds this file with
 * tools/rocelat/native/ in front of libbpf's headers (BPF maps become
 * tools/rocelat/bpfnative.h's, helpers plain calls), with the bounded-loop
 * variant of the walks (ROCELAT_NO_BPF_LOOP) and without the kernel
 * entry points (AX_NATIVE). It sees the kernel's types and no libc.
 *
 * The loader's settings, read-only in a BPF object once loaded (rodata),
 * are set here before the first packet (rocelat_native_open()): with
 * AX_NATIVE they are writable, and they, the maps, the globals and the
 * global functions of the program are static (lib/maps.bpf.h), so that
 * this object exports none of them.
 */
#include "rocelat.bpf.c"
#include "rocelat_native.h"
#include "rocelat_backend.h"

/* the capture is the clock (targ_offline): nothing asks for this */
__u64 bpfnative_no_live_clock(void)
{
	__builtin_trap();
}

#define ROCELAT_NATIVE_MAP(name, n)					\
	bpfnative_map_bind(&name,					\
		bpfnative_map_new(sizeof(*name.type) / sizeof(int),	\
				  sizeof(*name.key), sizeof(*name.value), (n)))

static void *rocelat_native_maps[] = {
	&counters, &pending, &flows_used, &flow_tags, &pairs, &cands, &waitport, &waitpsn, &untracked, &cm_reqs, &held, &samples,
};

#define ROCELAT_NATIVE_NMAPS \
	(sizeof(rocelat_native_maps) / sizeof(rocelat_native_maps[0]))

/* one instance per process: the program's globals are the process's */
static struct rocelat_backend rocelat_native_backend;
static void rocelat_native_close(struct rocelat_backend *b);

struct rocelat_backend *rocelat_native_open(const struct rocelat_native_cfg *c)
{
	long f = c->max_flows ? c->max_flows : DEFAULT_MAX_FLOWS;
	__u32 i;

	targ_roce_port = c->roce_port;
	targ_unit_ns = c->unit_ns;
	targ_unit_log2 = rocelat_log2(c->unit_ns);
	targ_timeout_ns = c->timeout_ns;
	targ_offline = true;
	targ_decap = c->decap;
	targ_mirror_time = c->mirror_time;
	targ_flow_sets = f / FLOW_WAYS;
	targ_samples = !!c->samples;
	ROCELAT_NATIVE_MAP(counters, 1);
	ROCELAT_NATIVE_MAP(pending, ROCELAT_PENDING_N(f));
	ROCELAT_NATIVE_MAP(flows_used, ROCELAT_USED_WORDS(f));
	ROCELAT_NATIVE_MAP(flow_tags, f / FLOW_WAYS);
	ROCELAT_NATIVE_MAP(pairs, ROCELAT_PAIRS_N(f));
	ROCELAT_NATIVE_MAP(cands, ROCELAT_CANDS_N(f));
	ROCELAT_NATIVE_MAP(waitport, ROCELAT_WAIT_N(f));
	ROCELAT_NATIVE_MAP(untracked, ROCELAT_WAIT_N(f));
	ROCELAT_NATIVE_MAP(waitpsn, ROCELAT_WAIT_N(f));
	ROCELAT_NATIVE_MAP(cm_reqs, sizeof(*cm_reqs.max_entries) / sizeof(int));
	ROCELAT_NATIVE_MAP(held, ROCELAT_CANDS_N(f));
	bpfnative_map_bind(&samples, bpfnative_map_new(BPF_MAP_TYPE_RINGBUF, 0, 0,
						       1U << 20));
	for (i = 0; i < ROCELAT_NATIVE_NMAPS; i++)
		if (!bpfnative_of(rocelat_native_maps[i])) {
			rocelat_native_close(&rocelat_native_backend);
			return 0;
		}
	return &rocelat_native_backend;
}

static void rocelat_native_close(struct rocelat_backend *b)
{
	__u32 i;

	for (i = 0; i < ROCELAT_NATIVE_NMAPS; i++) {
		bpfnative_map_free(bpfnative_of(rocelat_native_maps[i]));
		bpfnative_map_bind(rocelat_native_maps[i], 0);
	}
}

static void rocelat_native_set_clock(struct rocelat_backend *b, __u64 ts_ns)
{
	clock_ns = ts_ns;
}

static int rocelat_native_packet(struct rocelat_backend *b, const void *frame, __u32 len)
{
	/* as the tc test run that the BPF path makes: the whole frame is
	 * linear, and it arrives on the test run's loopback (ifindex 1) */
	rocelat_handle((void *)frame, (void *)frame + len, len, 1, true);
	return 0;
}

static void rocelat_native_sweep(struct rocelat_backend *b)
{
	rocelat_sweep(0);
}

/* a per-CPU array here is one CPU's (bpfnative.h) */
static int rocelat_native_counters(struct rocelat_backend *b, struct rocelat_counters *out)
{
	__u32 zero = 0;

	__builtin_memcpy(out, bpf_map_lookup_elem(&counters, &zero), sizeof(*out));
	return 1;
}

static void rocelat_native_flows_for_each(struct rocelat_backend *be, rocelat_flow_fn cb,
					  void *ctx)
{
	__u32 w, b, i;
	__u64 *bits;

	/* every word of flows_used, as the kernel's map is read */
	for (w = 0; (bits = bpf_map_lookup_elem(&flows_used, &w)); w++) {
		for (b = 0; b < 64 && *bits >> b; b++) {
			i = w * 64 + b;
			if (*bits >> b & 1)
				cb(&i, bpf_map_lookup_elem(&pending, &i), ctx);
		}
	}
}

static __u32 rocelat_native_epoch(struct rocelat_backend *b)
{
	return stats_epoch;
}

/* one thread: no program run is under way meanwhile */
static __u32 rocelat_native_next_interval(struct rocelat_backend *b)
{
	return stats_epoch++;
}

static __u64 rocelat_native_clock(struct rocelat_backend *b)
{
	return clock_ns;
}

static __u64 rocelat_native_samples_lost(struct rocelat_backend *b)
{
	return samples_lost;
}

/* each sample is handed over as the program submits it: no ring buffer */
static int rocelat_native_samples_to(struct rocelat_backend *b, rocelat_sample_fn cb,
				     void *ctx, struct ring_buffer **rb)
{
	bpfnative_rb_consumer(bpfnative_of(&samples), cb, ctx);
	*rb = 0;
	return 0;
}

static struct rocelat_backend rocelat_native_backend = {
	.set_clock = rocelat_native_set_clock,
	.clock = rocelat_native_clock,
	.packet = rocelat_native_packet,
	.sweep = rocelat_native_sweep,
	.counters = rocelat_native_counters,
	.flows_for_each = rocelat_native_flows_for_each,
	.epoch = rocelat_native_epoch,
	.next_interval = rocelat_native_next_interval,
	.samples_to = rocelat_native_samples_to,
	.samples_lost = rocelat_native_samples_lost,
	.close = rocelat_native_close,
};
