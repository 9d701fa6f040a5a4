// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rxedrop's counts: the per-CPU drop-site slots and the drops map behind
 * them. Drops of 600 drop sites (more than a CPU has slots, so sites
 * collide and go to the map) run through the raw_tp program with
 * BPF_PROG_TEST_RUN on two CPUs; every site's count, slots and map
 * summed as rxedrop sums them, equals what was run. Needs root.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rxedrop.h"
#include "rxedrop.skel.h"
#include "lib/maps.h"
#include "tap.h"

#define NSITES 600
#define SITE(i) (0xffffffff81000000ULL + (__u64)(i) * 64)
#define REASON(i) (2 + (i) % 5)
#define TIMES(i) ((i) % 7 + 1)

static __u64 got[NSITES];
static int in_slots, in_map, foreign;

static int site_of(const struct drop_key *k)
{
	__u64 i = (k->location - SITE(0)) / 64;

	if (k->location < SITE(0) || i >= NSITES || SITE(i) != k->location ||
	    k->reason != REASON(i))
		return -1;
	return (int)i;
}

static void add(const struct drop_key *k, __u64 n, int *where)
{
	int i = site_of(k);

	if (i < 0) {
		foreign++;
		return;
	}
	got[i] += n;
	(*where)++;
}

/* one drop through the program, on cpu */
static int drop(struct rxedrop_bpf *obj, __u64 location, __u32 reason, int cpu)
{
	__u64 args[3] = { 0, location, reason };	/* skb NULL: no packet */
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = args,
		    .ctx_size_in = sizeof(args), .cpu = cpu,
		    .flags = BPF_F_TEST_RUN_ON_CPU);

	return bpf_prog_test_run_opts(bpf_program__fd(obj->progs.rxedrop_raw_tp), &o);
}

int main(void)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0, ok = 1;
	struct rxedrop_bpf *obj;
	struct drop_key k = {}, next, *prev = NULL;

	if (geteuid()) {
		printf("1..0 # SKIP needs root\n");
		return 0;
	}
	obj = rxedrop_bpf__open();
	if (!obj) {
		printf("Bail out! open rxedrop skeleton: %s\n", strerror(errno));
		return 1;
	}
	obj->rodata->targ_scope = SCOPE_ALL;	/* no packet: every drop counts */
	/* the counts-mode raw_tp program alone: test runs take raw_tp */
	maps_load_only(obj->obj, obj->progs.rxedrop_raw_tp);
	if (rxedrop_bpf__load(obj)) {
		printf("Bail out! load rxedrop: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < NSITES && !err; i++)
		for (int t = 0; t < TIMES(i) && !err; t++)
			err = drop(obj, SITE(i), REASON(i), ncpu > 1 ? t & 1 : 0);
	tap_eq(err, 0, "every drop ran through the raw_tp program");

	/* the map: per-CPU sums */
	{
		__u64 vals[ncpu];

		while (!bpf_map_get_next_key(bpf_map__fd(obj->maps.drops), prev, &next)) {
			if (!bpf_map_lookup_elem(bpf_map__fd(obj->maps.drops), &next, vals)) {
				__u64 s = 0;

				for (int c = 0; c < ncpu; c++)
					s += vals[c];
				add(&next, s, &in_map);
			}
			k = next;
			prev = &k;
		}
	}
	/* the slots: each CPU's its own site */
	{
		struct drop_slot sl[ncpu];

		for (__u32 i = 0; i < DROP_SLOTS; i++) {
			if (bpf_map_lookup_elem(bpf_map__fd(obj->maps.drop_slots), &i, sl))
				continue;
			for (int c = 0; c < ncpu; c++)
				if (sl[c].count)
					add(&sl[c].key, sl[c].count, &in_slots);
		}
	}
	for (int i = 0; i < NSITES; i++)
		if (got[i] != (__u64)TIMES(i)) {
			tap_ok(0, "site %d: counted %llu, dropped %d", i,
			       (unsigned long long)got[i], TIMES(i));
			ok = 0;
			break;
		}
	tap_ok(ok, "each of %d drop sites counted exactly as often as it dropped", NSITES);
	tap_eq(foreign, 0, "no count under a site or reason never dropped");
	tap_ok(in_slots > 0 && in_slots <= DROP_SLOTS * ncpu,
	       "sites counted in the per-CPU slots (%d)", in_slots);
	tap_ok(in_map > 0, "colliding sites counted in the map (%d)", in_map);
	rxedrop_bpf__destroy(obj);
	return tap_done();
}
