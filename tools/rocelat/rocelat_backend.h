/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocelat's BPF program as user space drives it, whichever build runs it:
 * - the kernel's (tools/rocelat/rocelat_kernel.c): the object that
 *   rocelat_load() loaded, its maps and globals read with bpf syscalls, a
 *   capture's frames through BPF_PROG_TEST_RUN (live, -r --in-kernel,
 *   rocediag);
 * - its native build (tools/rocelat/rocelat_native.c), which -r runs by
 *   default: the same source compiled by the host compiler.
 * The build is chosen once, where the program is opened; the report,
 * --svg, the capture loop and rocediag call these and nothing else.
 *
 * Included by user-space files (after <linux/types.h>) and by the native
 * build itself (after vmlinux.h): no header of its own.
 */
#ifndef AGENTXDP_ROCELAT_BACKEND_H
#define AGENTXDP_ROCELAT_BACKEND_H

struct rocelat_counters;
struct ring_buffer;

/* cb(&index, flow, ctx): one entry of the flow table (struct pending_flow) */
typedef int (*rocelat_flow_fn)(const void *key, const void *val, void *ctx);
/* cb(ctx, sample, size): one struct rocelat_sample_event, as a ring
 * buffer's callback gets it */
typedef int (*rocelat_sample_fn)(void *ctx, void *data, unsigned long size);

struct rocelat_backend {
	/* the program's clock (clock_ns): with -r the capture's, set to the
	 * time of the frame about to run */
	void (*set_clock)(struct rocelat_backend *b, __u64 ts_ns);
	__u64 (*clock)(struct rocelat_backend *b);
	/* one frame of a capture through the program; 0, or -errno */
	int (*packet)(struct rocelat_backend *b, const void *frame, __u32 len);
	/* requests unanswered for --timeout counted now (the program's
	 * rocelat_sweep), at the clock's time */
	void (*sweep)(struct rocelat_backend *b);
	/* each CPU's counters into per_cpu[], which has room for
	 * libbpf_num_possible_cpus(); how many CPUs' were written (the
	 * native build: 1), 0 when the map could not be read */
	int (*counters)(struct rocelat_backend *b, struct rocelat_counters *per_cpu);
	/* cb for every entry of the flow table that has held a flow
	 * (flows_used), read one by one; its used says whether it still does */
	void (*flows_for_each)(struct rocelat_backend *b, rocelat_flow_fn cb, void *ctx);
	/* the interval the flows' statistics go to now (stats_epoch) */
	__u32 (*epoch)(struct rocelat_backend *b);
	/* the next interval started; returns the one just ended, whose
	 * buffer (pending_flow_stats()) no program run adds to any more */
	__u32 (*next_interval)(struct rocelat_backend *b);
	/* --svg: every sample to cb. *rb: the ring buffer to consume them
	 * from (the kernel's), or NULL where cb gets each as it is made (the
	 * native build's). 0, or -errno. */
	int (*samples_to)(struct rocelat_backend *b, rocelat_sample_fn cb, void *ctx,
			  struct ring_buffer **rb);
	/* samples the ring buffer had no room for (samples_lost) */
	__u64 (*samples_lost)(struct rocelat_backend *b);
	/* the program unloaded, or the native build's maps freed; b is gone */
	void (*close)(struct rocelat_backend *b);
};

/* b closed; NULL: nothing to do */
static inline void rocelat_backend_close(struct rocelat_backend *b)
{
	if (b)
		b->close(b);
}

#endif
