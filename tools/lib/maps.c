// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
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
