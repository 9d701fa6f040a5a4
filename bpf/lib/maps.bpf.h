/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A BPF object's maps and globals: where they live (AX_GLOBAL, AX_RODATA,
 * and AX_GLOBAL_FUNC for its global functions, so that one source also
 * builds natively), the maps the tracing tools share (AX_PERCPU_STATS,
 * AX_RINGBUF, AX_STACK_MAP), and helpers on map values.
 */
#ifndef AGENTXDP_MAPS_BPF_H
#define AGENTXDP_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/*
 * Where a BPF object's globals, maps and global functions live. In BPF,
 * where the loader sees them through the skeleton: a setting of the
 * loader's (targ_*) is AX_RODATA, const volatile, frozen at load; a
 * global variable or a map is AX_GLOBAL, a plain global; a global
 * function, checked once by the verifier on its own, not once per call,
 * is AX_GLOBAL_FUNC. rocelat's BPF source is also compiled natively, by
 * the host compiler (AX_NATIVE, tools/rocelat/rocelat_native.c), in one
 * file with the functions that set its settings before the first packet
 * and read its maps: there all of them are static, the settings
 * writable, and the native object exports nothing of the program.
 */
#ifdef AX_NATIVE
#define AX_GLOBAL	static
#define AX_RODATA	static volatile
#define AX_GLOBAL_FUNC	static __noinline
#else
#define AX_GLOBAL
#define AX_RODATA	const volatile
#define AX_GLOBAL_FUNC	__noinline
#endif

/*
 * Maps the tracing tools share, under the names their loaders use
 * (obj->maps.<name>):
 * AX_PERCPU_STATS  n __u64 counters per CPU, indexed by the tool's enum of
 *                  statistics (counter_inc), summed in user space
 * AX_RINGBUF       the ring buffer of -e events; the loaders shrink it when
 *                  no events are asked for
 * AX_STACK_MAP     kernel stacks for bpf_get_stackid() (-s), up to
 *                  AX_STACK_DEPTH frames each
 * tools/lib/maps.h reads them (the stack depth from the map's value size).
 */
#define AX_STACK_DEPTH 127	/* PERF_MAX_STACK_DEPTH */

#define AX_PERCPU_STATS(name, n)					\
	AX_GLOBAL struct {						\
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);		\
		__uint(max_entries, n);					\
		__type(key, __u32);					\
		__type(value, __u64);					\
	} name SEC(".maps")

#define AX_RINGBUF(name, bytes)						\
	AX_GLOBAL struct {						\
		__uint(type, BPF_MAP_TYPE_RINGBUF);			\
		__uint(max_entries, bytes);				\
	} name SEC(".maps")

#define AX_STACK_MAP(name, entries)					\
	AX_GLOBAL struct {						\
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);			\
		__uint(max_entries, entries);				\
		__uint(key_size, sizeof(__u32));			\
		__uint(value_size, AX_STACK_DEPTH * sizeof(__u64));	\
	} name SEC(".maps")

/* look a key up, inserting init first when it is missing (BPF_NOEXIST keeps
 * a racing insert from another CPU) */
static __always_inline void *map_lookup_or_init(void *map, const void *key,
						const void *init)
{
	void *val = bpf_map_lookup_elem(map, key);
	long err;

	if (val)
		return val;
	err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST */)
		return 0;
	return bpf_map_lookup_elem(map, key);
}

/* per-CPU array of counters, indexed by an enum */
static __always_inline void counter_inc(void *map, __u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(map, &idx);

	if (v)
		*v += 1;
}

#endif
