/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef AGENTXDP_MAPS_BPF_H
#define AGENTXDP_MAPS_BPF_H

#include <bpf/bpf_helpers.h>

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
