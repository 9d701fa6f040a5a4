/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocelat's BPF object for the kernel (tools/rocelat/rocelat_kernel.c), in
 * either of its two builds of one source: with bpf_loop (rocelat.skel.h)
 * or, for kernels before 5.17, with bounded loops (rocelat_noloop.skel.h).
 * Both skeletons name the same programs, maps and globals; what the loader
 * sets and user space reads is taken from either by those names, so that
 * every line after opening (tools/rocelat/rocelat_load.c, the backend's
 * functions) is one for both builds.
 */
#ifndef AGENTXDP_ROCELAT_KERNEL_H
#define AGENTXDP_ROCELAT_KERNEL_H
#include <stdbool.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include "rocelat_backend.h"

struct rocelat_bpf;
struct rocelat_noloop_bpf;
struct rocelat_bpf__rodata;
struct rocelat_bpf__bss;

struct rocelat_kernel {
	struct rocelat_backend be;	/* over the pieces below */
	struct bpf_object_skeleton *skeleton;
	struct {
		struct bpf_program *rocelat_xdp, *rocelat_tc, *rocelat_tc_in, *rocelat_sweep;
	} progs;
	struct {
		struct bpf_map *cands, *waitport, *waitpsn, *untracked,
			*pairs, *held, *pending, *flows_used, *flow_tags, *counters,
			*samples;
	} maps;
	/* the globals: the bounded build's have the bpf_loop build's layout
	 * (rocelat_kernel.c proves it), and libbpf maps them at the same
	 * address when it loads the object */
	struct rocelat_bpf__rodata *rodata;
	struct rocelat_bpf__bss *bss;
	/* the skeleton opened: one of the two, the other NULL */
	struct rocelat_bpf *loop;
	struct rocelat_noloop_bpf *bounded;
};

/* the build with bounded loops, else the one with bpf_loop, opened (not
 * loaded); NULL with errno set. Closed through k->be. */
struct rocelat_kernel *rocelat_kernel_open(bool bounded);

#endif
