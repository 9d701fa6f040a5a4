/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libbpf's <bpf/bpf_helpers.h> for BPF C compiled natively: found first
 * on the include path of tools/rocelat/rocelat_native.c, so that the BPF source,
 * unchanged, builds with the host compiler. Map definitions keep libbpf's
 * form (their members only carry types and sizes); the first word of a
 * map's storage holds its struct bpfnative_map, which the helpers below
 * take from there. Helpers a natively built program cannot mean (kernel
 * memory, stacks, packet pulls) are left undeclared, so that using one
 * fails the build.
 */
#ifndef AGENTXDP_NATIVE_BPF_HELPERS_H
#define AGENTXDP_NATIVE_BPF_HELPERS_H

#include "bpfnative.h"

#define SEC(name)
#define __uint(name, val)	int (*name)[val]
#define __type(name, val)	typeof(val) *name
#define __array(name, val)	typeof(val) *name[]
#ifndef __always_inline
#define __always_inline		inline __attribute__((always_inline))
#endif
#define __noinline		__attribute__((noinline))
#define __weak			__attribute__((weak))
#define __hidden

/* the native map of a map definition, in its first word (copied: the
 * word's declared type is the definition's) */
static __always_inline struct bpfnative_map *bpfnative_of(const void *map)
{
	struct bpfnative_map *m;

	__builtin_memcpy(&m, map, sizeof(m));
	return m;
}

static __always_inline void bpfnative_map_bind(void *map, struct bpfnative_map *m)
{
	__builtin_memcpy(map, &m, sizeof(m));
}

static __always_inline void *bpf_map_lookup_elem(void *map, const void *key)
{
	return bpfnative_lookup(bpfnative_of(map), key);
}

static __always_inline long bpf_map_update_elem(void *map, const void *key,
						const void *value, __u64 flags)
{
	return bpfnative_update(bpfnative_of(map), key, value, flags);
}

static __always_inline long bpf_map_delete_elem(void *map, const void *key)
{
	return bpfnative_delete(bpfnative_of(map), key);
}

/* the callback's own types vary per call, all pointers: called as one */
#define bpf_for_each_map_elem(map, cb, ctx, flags)			\
	bpfnative_for_each(bpfnative_of(map),				\
		(long (*)(void *, void *, void *, void *))(void *)(cb),	\
		(map), (ctx))

static __always_inline void *bpf_ringbuf_reserve(void *rb, __u64 size, __u64 flags)
{
	return bpfnative_rb_reserve(bpfnative_of(rb), size);
}

static __always_inline void bpf_ringbuf_submit(void *data, __u64 flags)
{
	bpfnative_rb_submit(data);
}

static __always_inline void bpf_ringbuf_discard(void *data, __u64 flags)
{
	bpfnative_rb_discard(data);
}

/* records go to the consumer when submitted: none waits */
static __always_inline __u64 bpf_ringbuf_query(void *rb, __u64 flags)
{
	return 0;
}

/* one thread: CPU 0 */
static __always_inline __u32 bpf_get_smp_processor_id(void)
{
	return 0;
}

/* the native program runs on a capture's clock (targ_offline): a live
 * clock here would be a mistake, so there is none */
#define bpf_ktime_get_ns()	bpfnative_no_live_clock()
__u64 bpfnative_no_live_clock(void);

#endif
