// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reading the maps of bpf/lib/maps.bpf.h (maps.h): per-CPU statistics
 * summed, ring buffer and stack map sized, kernel stacks printed, and
 * every entry of a hash map walked, in batches where the kernel can.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "maps.h"

__u64 maps_percpu_sum(const __u64 *vals, int ncpu)
{
	__u64 s = 0;

	for (int i = 0; i < ncpu; i++)
		s += vals[i];
	return s;
}

__u64 maps_stat(const struct bpf_map *stats, __u32 idx, int ncpu)
{
	__u64 vals[ncpu];

	if (bpf_map_lookup_elem(bpf_map__fd(stats), &idx, vals))
		return 0;
	return maps_percpu_sum(vals, ncpu);
}

void maps_load_only(struct bpf_object *obj, const struct bpf_program *keep)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == keep);
}

void maps_shrink_unused(struct bpf_map *events, bool want_events,
			struct bpf_map *stacks, bool want_stacks)
{
	if (!want_events)
		bpf_map__set_max_entries(events, 4096);
	if (stacks && !want_stacks)
		bpf_map__set_max_entries(stacks, 1);
}

void maps_print_stack(const struct ksyms *ks, const struct bpf_map *stacks,
		      __s32 stack_id, struct json_w *w)
{
	int depth = bpf_map__value_size(stacks) / sizeof(__u64), first = 0;
	__u64 ips[depth];
	char sym[128];

	memset(ips, 0, sizeof(ips));
	if (w)
		json_arr_open(w, "stack");
	if (stack_id < 0 || bpf_map_lookup_elem(bpf_map__fd(stacks), &stack_id, ips)) {
		if (!w)
			printf("    [stack unavailable]\n");
		goto out;
	}
	for (int i = 0; i < depth && ips[i]; i++) {
		const struct ksym *k = ksyms_find(ks, ips[i]);

		if (k && !strncmp(k->name, "bpf_trace_run", 13))
			first = i + 1;
	}
	for (int i = first; i < depth && ips[i]; i++) {
		ksyms_format(ks, ips[i], sym, sizeof(sym), true);
		if (w) {
			json_key(w, NULL);
			json_escape(w->f, sym);
		} else {
			printf("    %s\n", sym);
		}
	}
out:
	if (w)
		json_arr_close(w);
}

/* the bytes bpf_map_lookup_elem() fills for one value of m */
static size_t maps_value_bytes(const struct bpf_map *m)
{
	size_t v = bpf_map__value_size(m);

	switch (bpf_map__type(m)) {
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE:
		return ((v + 7) & ~(size_t)7) * libbpf_num_possible_cpus();
	default:
		return v;
	}
}

#define MAPS_CHUNK 64

/* the batch read: how many entries cb saw, or -errno before the first one
 * (-EINVAL, -EOPNOTSUPP, ...: the kernel has no batch for this map) */
static int maps_for_each_batch(const struct bpf_map *m, size_t ksz, size_t vsz,
			       int (*cb)(const void *, const void *, void *), void *ctx)
{
	/* a hash map's batch token is a bucket (u32), an array's a key */
	size_t tsz = ksz > sizeof(__u64) ? ksz : sizeof(__u64);
	__u32 chunk = MAPS_CHUNK, count;
	char *keys = NULL, *vals = NULL, *in = calloc(2, tsz), *out = in + tsz;
	bool first = true;
	int fd = bpf_map__fd(m), seen = 0, err;

	if (!in)
		return -ENOMEM;
	for (;;) {
		if (!keys && (!(keys = malloc(chunk * ksz)) || !(vals = malloc(chunk * vsz)))) {
			seen = seen ? seen : -ENOMEM;
			break;
		}
		count = chunk;
		err = bpf_map_lookup_batch(fd, first ? NULL : in, out, keys, vals,
					   &count, NULL);
		if (err == -ENOSPC && !count) {
			/* one bucket holds more than chunk entries */
			free(keys);
			free(vals);
			keys = vals = NULL;
			chunk *= 2;
			continue;
		}
		if (err && err != -ENOENT) {
			seen = seen ? seen : err;
			break;
		}
		for (__u32 i = 0; i < count; i++)
			if (++seen, cb(keys + i * ksz, vals + i * vsz, ctx))
				goto out;
		if (err == -ENOENT)
			break;
		memcpy(in, out, tsz);
		first = false;
	}
out:
	free(keys);
	free(vals);
	free(in);
	return seen;
}

static int maps_walk(const struct bpf_map *m, size_t ksz, size_t vsz,
		     int (*cb)(const void *, const void *, void *), void *ctx)
{
	char *key = malloc(ksz), *next = malloc(ksz), *val = malloc(vsz);
	int fd = bpf_map__fd(m), seen = 0;
	bool first = true;

	if (!key || !next || !val) {
		seen = -ENOMEM;
		goto out;
	}
	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		memcpy(key, next, ksz);
		first = false;
		if (bpf_map_lookup_elem(fd, key, val))
			continue;
		seen++;
		if (cb(key, val, ctx))
			break;
	}
out:
	free(key);
	free(next);
	free(val);
	return seen;
}

int maps_for_each(const struct bpf_map *m,
		  int (*cb)(const void *key, const void *value, void *ctx), void *ctx)
{
	size_t ksz = bpf_map__key_size(m), vsz = maps_value_bytes(m);
	int n = -EOPNOTSUPP;

	/* a per-CPU array by the walk: 5.10's batch lookup of one gave no
	 * usable values (rxedrop's drop slots read as empty); its entries are
	 * few (rxedrop's 256) and read once an interval */
	if (bpf_map__type(m) != BPF_MAP_TYPE_PERCPU_ARRAY)
		n = maps_for_each_batch(m, ksz, vsz, cb, ctx);
	if (n == -EINVAL || n == -EOPNOTSUPP || n == -ENOTSUP || n == -EPERM)
		n = maps_walk(m, ksz, vsz, cb, ctx);
	return n;
}

int maps_for_each_walk(const struct bpf_map *m,
		       int (*cb)(const void *key, const void *value, void *ctx), void *ctx)
{
	return maps_walk(m, bpf_map__key_size(m), maps_value_bytes(m), cb, ctx);
}

int maps_keys(const struct bpf_map *m, void *keys, int max)
{
	size_t ksz = bpf_map__key_size(m);
	int fd = bpf_map__fd(m), n = 0;
	char *k = keys;

	while (n < max && !bpf_map_get_next_key(fd, n ? k + (n - 1) * ksz : NULL,
						k + n * ksz))
		n++;
	return n;
}
