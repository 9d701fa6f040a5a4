/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * BPF maps in user memory, for a BPF program's C compiled natively (by
 * the host compiler, with tools/rocelat/native/ in front of libbpf's headers):
 * rocelat -r runs its BPF handler this way, without the kernel and
 * without privileges (tools/rocelat/rocelat_native.c).
 *
 * The semantics are the kernel's where a BPF program can tell:
 * - array: every key below max_entries is there, zeroed at creation;
 *   an update copies in, a lookup returns the slot. A per-CPU array is
 *   an array of one CPU (the native program runs on one thread).
 * - hash: update with BPF_ANY / BPF_NOEXIST / BPF_EXIST (-EEXIST,
 *   -ENOENT), -E2BIG when max_entries are in use; a value's address is
 *   stable until its key is deleted. LRU hash: a full map pushes out the
 *   least recently looked-up or updated entry instead of failing (the
 *   kernel's LRU is approximate, per CPU: which entry goes may differ
 *   there, never whether one goes).
 * - for_each: every element once, in slot order; the callback may
 *   delete the element it is given; a non-zero return ends the walk.
 * - ring buffer: a submitted record goes straight to the consumer set
 *   with bpfnative_rb_consumer(); none is ever lost, and nothing waits,
 *   so "available data" is always 0.
 *
 * This header is included by the natively compiled BPF source, which sees
 * the kernel's types (vmlinux.h) and no libc: plain C types only here.
 */
#ifndef AGENTXDP_BPFNATIVE_H
#define AGENTXDP_BPFNATIVE_H

struct bpfnative_map;

/* type: the BPF_MAP_TYPE_* number (array, per-CPU array, hash, LRU hash,
 * ring buffer); NULL for another type or without memory */
struct bpfnative_map *bpfnative_map_new(unsigned int type, unsigned int key_size,
					unsigned int value_size,
					unsigned int max_entries);
void bpfnative_map_free(struct bpfnative_map *m);

void *bpfnative_lookup(struct bpfnative_map *m, const void *key);
long bpfnative_update(struct bpfnative_map *m, const void *key,
		      const void *value, unsigned long long flags);
long bpfnative_delete(struct bpfnative_map *m, const void *key);
/* cb(map_arg, key, value, ctx) for each element; the number visited */
long bpfnative_for_each(struct bpfnative_map *m,
			long (*cb)(void *map, void *key, void *value, void *ctx),
			void *map_arg, void *ctx);

/* ring buffers: records reserved, then submitted (delivered at once to
 * the consumer, if one is set) or discarded */
void *bpfnative_rb_reserve(struct bpfnative_map *m, unsigned long long size);
void bpfnative_rb_submit(void *data);
void bpfnative_rb_discard(void *data);
void bpfnative_rb_consumer(struct bpfnative_map *m,
			   int (*cb)(void *ctx, void *data, unsigned long size),
			   void *ctx);

#endif
