/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user-space side of bpf/lib/maps.bpf.h: the per-CPU statistics of
 * AX_PERCPU_STATS summed, the ring buffer and stack map sized for what was
 * asked, kernel stacks of AX_STACK_MAP printed (-s), and every entry of a
 * hash map read in one place (maps_for_each(), maps_keys()).
 */
#ifndef AGENTXDP_MAPS_H
#define AGENTXDP_MAPS_H

#include <stdbool.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include "json.h"
#include "ksyms.h"

/* the sum of one value per CPU */
__u64 maps_percpu_sum(const __u64 *vals, int ncpu);
/* statistic idx of an AX_PERCPU_STATS map, summed over ncpu CPUs; 0 when
 * it cannot be read */
__u64 maps_stat(const struct bpf_map *stats, __u32 idx, int ncpu);
/* before load: of obj's programs only keep is loaded (NULL: none, the
 * maps alone) */
void maps_load_only(struct bpf_object *obj, const struct bpf_program *keep);
/* before load: the smallest ring buffer without -e, one stack without -s
 * (stacks may be NULL for a tool without -s) */
void maps_shrink_unused(struct bpf_map *events, bool want_events,
			struct bpf_map *stacks, bool want_stacks);
/*
 * Stack stack_id of an AX_STACK_MAP map, one "    sym+0xoff" line per frame
 * or "    [stack unavailable]" (bpf_get_stackid() failed or the stack was
 * replaced), or with w the JSON array "stack" (empty when unavailable).
 * The frames above bpf_trace_run* (a tracepoint's BPF trampoline) are left
 * out.
 */
void maps_print_stack(const struct ksyms *ks, const struct bpf_map *stacks,
		      __s32 stack_id, struct json_w *w);

/*
 * Every entry of map m, like bcc's dump_hash(): cb(key, value, ctx) for
 * each, the value as the kernel hands it out (for a per-CPU map one
 * 8-byte-aligned value per possible CPU, as bpf_map_lookup_elem() does).
 * Read with BPF_MAP_LOOKUP_BATCH, chunk entries at a time, where the kernel
 * has it (5.6+), else by a bpf_map_get_next_key() walk with a lookup per
 * key (an entry deleted in between is skipped). cb returns nonzero to stop.
 * Entries the BPF side adds or deletes meanwhile may or may not be seen.
 * Returns how many entries cb saw, or -errno (nothing read: no memory, or
 * the map cannot be read).
 */
int maps_for_each(const struct bpf_map *m,
		  int (*cb)(const void *key, const void *value, void *ctx), void *ctx);
/* the keys of map m (at most max, key_size bytes each) into keys, by a
 * get_next_key walk; returns how many */
int maps_keys(const struct bpf_map *m, void *keys, int max);
/* maps_for_each() by the walk alone, as on a kernel without batch lookups
 * (the unit test reads the same map both ways) */
int maps_for_each_walk(const struct bpf_map *m,
		       int (*cb)(const void *key, const void *value, void *ctx), void *ctx);

#endif
