// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat's BPF object for the kernel (rocelat_kernel.h): either build's
 * skeleton opened and taken apart by name, and the loaded object driven
 * as a struct rocelat_backend (rocelat_backend.h): maps read with bpf
 * syscalls, globals through the skeleton's memory map, a capture's frames
 * and the timeout sweep through BPF_PROG_TEST_RUN.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rocelat.h"
#include "rocelat.skel.h"
#include "rocelat_noloop.skel.h"
#include "rocelat_kernel.h"
#include "lib/cli.h"
#include "lib/maps.h"

/*
 * The bounded build's globals are set and read in the bpf_loop build's
 * layout (struct rocelat_kernel): the same, for every global user space
 * touches, or this does not compile.
 */
#define ROCELAT_SAME_GLOBAL(sec, f)						\
	_Static_assert(offsetof(struct rocelat_bpf__##sec, f) ==		\
		       offsetof(struct rocelat_noloop_bpf__##sec, f) &&		\
		       sizeof(((struct rocelat_bpf__##sec *)0)->f) ==		\
		       sizeof(((struct rocelat_noloop_bpf__##sec *)0)->f),	\
		       "the two builds place " #sec " " #f " apart")
_Static_assert(sizeof(struct rocelat_bpf__rodata) == sizeof(struct rocelat_noloop_bpf__rodata),
	       "the two builds' rodata differ");
_Static_assert(sizeof(struct rocelat_bpf__bss) == sizeof(struct rocelat_noloop_bpf__bss),
	       "the two builds' bss differ");
ROCELAT_SAME_GLOBAL(rodata, targ_roce_port);
ROCELAT_SAME_GLOBAL(rodata, targ_unit_ns);
ROCELAT_SAME_GLOBAL(rodata, targ_unit_log2);
ROCELAT_SAME_GLOBAL(rodata, targ_timeout_ns);
ROCELAT_SAME_GLOBAL(rodata, targ_offline);
ROCELAT_SAME_GLOBAL(rodata, targ_decap);
ROCELAT_SAME_GLOBAL(rodata, targ_mirror_time);
ROCELAT_SAME_GLOBAL(rodata, targ_flow_sets);
ROCELAT_SAME_GLOBAL(rodata, targ_samples);
ROCELAT_SAME_GLOBAL(bss, clock_ns);
ROCELAT_SAME_GLOBAL(bss, stats_epoch);
ROCELAT_SAME_GLOBAL(bss, samples_lost);

static struct rocelat_kernel *kernel_of(struct rocelat_backend *b)
{
	return (struct rocelat_kernel *)((char *)b - offsetof(struct rocelat_kernel, be));
}

static void kernel_set_clock(struct rocelat_backend *b, __u64 ts_ns)
{
	kernel_of(b)->bss->clock_ns = ts_ns;
}

static __u64 kernel_clock(struct rocelat_backend *b)
{
	return kernel_of(b)->bss->clock_ns;
}

/* through the tc entry point: an XDP test run swaps the XDP dispatcher
 * and waits for an RCU grace period per packet (~0.4 ms here); a tc one
 * does not, and the handler is the same */
static int kernel_packet(struct rocelat_backend *b, const void *frame, __u32 len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
		    .data_size_in = len, .repeat = 1);

	return bpf_prog_test_run_opts(bpf_program__fd(kernel_of(b)->progs.rocelat_tc), &o) ?
	       -errno : 0;
}

/* the sweep program reads no packet: any frame a test run takes */
static void kernel_sweep(struct rocelat_backend *b)
{
	unsigned char frame[64] = {};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
		    .data_size_in = sizeof(frame), .repeat = 1);

	if (bpf_prog_test_run_opts(bpf_program__fd(kernel_of(b)->progs.rocelat_sweep), &o))
		cli_err("timeout sweep failed: %s", strerror(errno));
}

static int kernel_counters(struct rocelat_backend *b, struct rocelat_counters *per_cpu)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(kernel_of(b)->maps.counters), &zero, per_cpu))
		return 0;
	return libbpf_num_possible_cpus();
}

struct flows_walk {
	int fd;			/* the flow table */
	rocelat_flow_fn cb;
	void *ctx;
};

/* one word of flows_used: its entries' flows */
static int flows_word(const void *key, const void *val, void *ctx)
{
	static struct pending_flow pf;	/* 10 KiB: not on the stack */
	const struct flows_walk *fw = ctx;
	__u64 bits = *(const __u64 *)val;

	for (__u32 b = 0; bits && b < 64; b++) {
		__u32 i = *(const __u32 *)key * 64 + b;

		if ((bits >> b & 1) && !bpf_map_lookup_elem(fw->fd, &i, &pf))
			fw->cb(&i, &pf, fw->ctx);
	}
	return 0;
}

static void kernel_flows_for_each(struct rocelat_backend *b, rocelat_flow_fn cb, void *ctx)
{
	struct rocelat_kernel *k = kernel_of(b);
	struct flows_walk fw = { bpf_map__fd(k->maps.pending), cb, ctx };

	maps_for_each(k->maps.flows_used, flows_word, &fw);
}

static __u32 kernel_epoch(struct rocelat_backend *b)
{
	return kernel_of(b)->bss->stats_epoch;
}

static __u32 kernel_next_interval(struct rocelat_backend *b)
{
	__u32 *ep = &kernel_of(b)->bss->stats_epoch;
	__u32 epoch = *ep;

	/* the next interval fills the other buffer from now on. A program
	 * that read the old epoch just before may still be adding to it:
	 * XDP and tc programs run inside RCU read-side sections (softirq or
	 * rcu_read_lock), so a grace period waits them out, and
	 * MEMBARRIER_CMD_GLOBAL is synchronize_rcu(). Where it is refused
	 * (nohz_full), a pause far longer than any program run. */
	*ep = epoch + 1;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(2000);
	return epoch;
}

static int kernel_samples_to(struct rocelat_backend *b, rocelat_sample_fn cb, void *ctx,
			     struct ring_buffer **rb)
{
	*rb = ring_buffer__new(bpf_map__fd(kernel_of(b)->maps.samples), cb, ctx, NULL);
	return *rb ? 0 : -errno;
}

static __u64 kernel_samples_lost(struct rocelat_backend *b)
{
	return kernel_of(b)->bss->samples_lost;
}

/* the skeleton of whichever build was opened (destroying NULL is nothing) */
static void kernel_close(struct rocelat_backend *b)
{
	struct rocelat_kernel *k = kernel_of(b);

	rocelat_bpf__destroy(k->loop);
	rocelat_noloop_bpf__destroy(k->bounded);
	free(k);
}

static const struct rocelat_backend rocelat_kernel_ops = {
	.set_clock = kernel_set_clock,
	.clock = kernel_clock,
	.packet = kernel_packet,
	.sweep = kernel_sweep,
	.counters = kernel_counters,
	.flows_for_each = kernel_flows_for_each,
	.epoch = kernel_epoch,
	.next_interval = kernel_next_interval,
	.samples_to = kernel_samples_to,
	.samples_lost = kernel_samples_lost,
	.close = kernel_close,
};

/* the pieces of either skeleton, by their names: a program, map or
 * global that one build lacks does not compile */
#define ROCELAT_KERNEL_TAKE(k, skel)						\
	do {									\
		(k)->skeleton = (skel)->skeleton;				\
		(k)->progs.rocelat_xdp = (skel)->progs.rocelat_xdp;		\
		(k)->progs.rocelat_tc = (skel)->progs.rocelat_tc;		\
		(k)->progs.rocelat_tc_in = (skel)->progs.rocelat_tc_in;		\
		(k)->progs.rocelat_sweep = (skel)->progs.rocelat_sweep;		\
		(k)->maps.cands = (skel)->maps.cands;				\
		(k)->maps.waitport = (skel)->maps.waitport;			\
		(k)->maps.untracked = (skel)->maps.untracked;			\
		(k)->maps.waitpsn = (skel)->maps.waitpsn;			\
		(k)->maps.pairs = (skel)->maps.pairs;				\
		(k)->maps.held = (skel)->maps.held;				\
		(k)->maps.pending = (skel)->maps.pending;			\
		(k)->maps.flows_used = (skel)->maps.flows_used;			\
		(k)->maps.flow_tags = (skel)->maps.flow_tags;			\
		(k)->maps.counters = (skel)->maps.counters;			\
		(k)->maps.samples = (skel)->maps.samples;			\
		(k)->rodata = (struct rocelat_bpf__rodata *)(void *)(skel)->rodata; \
		(k)->bss = (struct rocelat_bpf__bss *)(void *)(skel)->bss;	\
	} while (0)

struct rocelat_kernel *rocelat_kernel_open(bool bounded)
{
	struct rocelat_kernel *k = calloc(1, sizeof(*k));
	int err;

	if (!k)
		return NULL;
	k->be = rocelat_kernel_ops;
	if (bounded) {
		k->bounded = rocelat_noloop_bpf__open();
		if (k->bounded)
			ROCELAT_KERNEL_TAKE(k, k->bounded);
	} else {
		k->loop = rocelat_bpf__open();
		if (k->loop)
			ROCELAT_KERNEL_TAKE(k, k->loop);
	}
	if (!k->skeleton) {
		err = errno;
		free(k);
		errno = err;
		return NULL;
	}
	return k;
}
