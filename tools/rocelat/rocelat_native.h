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

struct rocelat_backend;

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

/* the native build, its maps made for c, as rocelat_backend.h drives it
 * (closing it frees them); NULL without the memory */
struct rocelat_backend *rocelat_native_open(const struct rocelat_native_cfg *c);

#endif
