/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocelat's BPF handler compiled natively (tools/rocelat/rocelat_native.c): what
 * -r runs by default. The same source as the BPF object, its maps in user
 * memory (tools/rocelat/bpfnative.h): no kernel, no privileges, no system
 * call per packet. One instance per process (the program's globals are
 * the process's).
 *
 * Included by user-space files (after <linux/types.h>) and by the native
 * build itself (after vmlinux.h): no header of its own.
 */
#ifndef AGENTXDP_ROCELAT_NATIVE_H
#define AGENTXDP_ROCELAT_NATIVE_H

struct rocelat_counters;
struct pending_flow;

/* what rocelat_load() sets in the BPF object's rodata and map sizes, for
 * -r (offline: the capture's clock) */
struct rocelat_native_cfg {
	__u16 roce_port;
	__u64 unit_ns;
	__u64 timeout_ns;
	int decap;
	int mirror_time;	/* MIRROR_TIME_* */
	long max_flows;		/* 0: DEFAULT_MAX_FLOWS */
	int samples;		/* every sample also as an event (--svg) */
};

/* 0, or -ENOMEM (-12) */
int rocelat_native_open(const struct rocelat_native_cfg *c);
void rocelat_native_close(void);
/* the capture's clock: the time of the frame about to run (clock_ns) */
void rocelat_native_set_clock(__u64 ts_ns);
/* one frame of the capture */
void rocelat_native_packet(const void *frame, __u32 len);
/* the timeout sweep at the latest frame's time (rocelat_sweep) */
void rocelat_native_sweep(void);
/* the counters (one CPU's) */
void rocelat_native_counters(struct rocelat_counters *out);
/* cb(&index, flow, ctx) for every entry of the flow table that has held a
 * flow, as rocelat_flows_for_each() */
void rocelat_native_flows_for_each(int (*cb)(const void *key, const void *val,
					     void *ctx), void *ctx);
/* the program's globals that user space reads or steps */
__u32 *rocelat_native_epoch(void);
__u64 rocelat_native_clock(void);
__u64 rocelat_native_samples_lost(void);
/* where --svg's sample events go, as a ring buffer's callback would */
void rocelat_native_samples_to(int (*cb)(void *ctx, void *data, unsigned long size),
			       void *ctx);

#endif
