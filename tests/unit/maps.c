// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tools/lib/maps.c: maps_for_each() by batch and by walk, maps_keys(), on
 * the maps of rxedrop's skeleton (loaded, nothing attached). Needs root. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "rxedrop.h"
#include "rxedrop.skel.h"
#include "lib/maps.h"
#include "tap.h"

#define NKEYS 300	/* several batches of MAPS_CHUNK */

struct seen {
	int n, ncpu, stop_at;
	__u64 sum;
	bool keys_ok;
};

static int count_entry(const void *key, const void *val, void *ctx)
{
	const struct drop_key *k = key;
	struct seen *s = ctx;

	s->n++;
	s->sum += maps_percpu_sum(val, s->ncpu);
	if (k->location < 1 || k->location > NKEYS || k->reason != k->location * 2)
		s->keys_ok = false;
	return s->stop_at && s->n == s->stop_at;
}

/* an entry of a map whose key is not a drop_key (the stats array) */
static int count_index(const void *key, const void *val, void *ctx)
{
	struct seen *s = ctx;

	s->n++;
	s->sum += maps_percpu_sum(val, s->ncpu);
	return 0;
}

static void check(struct rxedrop_bpf *obj, int ncpu, bool batch)
{
	const char *how = batch ? "batch" : "walk";
	/* sum over keys 1..NKEYS of sum over CPUs of (key + cpu) */
	__u64 want = (__u64)ncpu * NKEYS * (NKEYS + 1) / 2 +
		     (__u64)NKEYS * ncpu * (ncpu - 1) / 2;
	struct seen s = { .ncpu = ncpu, .keys_ok = true };
	int (*for_each)(const struct bpf_map *, int (*)(const void *, const void *, void *),
			void *) = batch ? maps_for_each : maps_for_each_walk;
	int n;

	n = for_each(obj->maps.drops, count_entry, &s);
	tap_eq(n, NKEYS, "%s: every entry of a per-CPU hash", how);
	tap_ok(s.n == NKEYS && s.keys_ok, "%s: each key once, whole", how);
	tap_eq(s.sum, want, "%s: per-CPU values, one per possible CPU", how);

	memset(&s, 0, sizeof(s));
	s.ncpu = ncpu;
	s.keys_ok = true;
	s.stop_at = 10;
	n = for_each(obj->maps.drops, count_entry, &s);
	tap_ok(n == 10 && s.n == 10, "%s: the callback stops the read (%d)", how, n);

	memset(&s, 0, sizeof(s));
	s.ncpu = ncpu;
	n = for_each(obj->maps.stats, count_index, &s);
	tap_eq(n, STAT_NR, "%s: a per-CPU array has its every index", how);
}

int main(void)
{
	struct rxedrop_bpf *obj;
	int ncpu = libbpf_num_possible_cpus(), err;
	struct drop_key keys[NKEYS + 1];

	if (geteuid()) {
		tap_skip("needs root", "maps_for_each on real maps");
		return tap_done();
	}
	obj = rxedrop_bpf__open();
	tap_ok(obj != NULL, "open rxedrop's skeleton");
	if (!obj)
		return tap_done();
	/* its maps, no program */
	maps_load_only(obj->obj, NULL);
	err = rxedrop_bpf__load(obj);
	tap_eq(err, 0, "load its maps");
	if (err)
		goto out;
	for (int i = 1; i <= NKEYS; i++) {
		struct drop_key k = { .location = i, .reason = 2 * i };
		__u64 vals[ncpu];

		for (int c = 0; c < ncpu; c++)
			vals[c] = i + c;
		bpf_map_update_elem(bpf_map__fd(obj->maps.drops), &k, vals, BPF_ANY);
	}
	check(obj, ncpu, true);
	check(obj, ncpu, false);

	tap_eq(maps_keys(obj->maps.drops, keys, NKEYS + 1), NKEYS, "maps_keys: every key");
	tap_eq(maps_keys(obj->maps.drops, keys, 5), 5, "maps_keys: at most max");
out:
	rxedrop_bpf__destroy(obj);
	return tap_done();
}
