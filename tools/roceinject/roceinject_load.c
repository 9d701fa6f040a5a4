// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* roceinject's BPF side loaded and attached (roceinject_load.h) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "roceinject.h"
#include "roceinject.skel.h"
#include "roceinject_load.h"
#include "lib/cli.h"
#include "lib/maps.h"
#include "lib/netattach.h"
#include "lib/probe.h"

/* a clsact filter of a killed run is recognised by these (netattach.c) */
const struct netattach_tc_id inject_tc_id = {
	.handle = 0x1A7E, .prio = NETATTACH_PRIO_ROCEINJECT, .prog_name = "roceinject_tc", .tool = "roceinject",
};

static void roceinject_set_rodata(struct roceinject_bpf *obj, const struct inject_opts *o)
{
	typeof(obj->rodata) r = obj->rodata;

	r->targ_faults = o->faults;
	r->targ_delay_ns = o->delay_ns;
	r->targ_new_qpn = o->new_qpn;
	r->targ_new_pkey = o->new_pkey;
	r->targ_trunc_len = o->trunc_len;
	r->targ_sport = o->sport;
	r->targ_family = o->family;
	r->targ_saddr_set = o->saddr_set;
	r->targ_daddr_set = o->daddr_set;
	memcpy((void *)r->targ_saddr, o->saddr, 16);
	memcpy((void *)r->targ_daddr, o->daddr, 16);
	r->targ_classes = o->classes;
	r->targ_opcode = o->opcode;
	r->targ_psn_set = o->psn_set;
	r->targ_psn_lo = o->psn_lo;
	r->targ_psn_hi = o->psn_hi;
	r->targ_every = o->every;
	/* P * 2^32, 2^32 itself for P = 1 (the BPF side skips the hash) */
	r->targ_prob = (__u64)(o->prob * 4294967296.0);
	r->targ_seed = o->seed;
	r->targ_count = o->count;
	r->targ_events = o->events;
}

int roceinject_set_hot(struct roceinject_bpf *obj, __u16 roce_port, bool qpn_set, __u32 qpn,
		       bool dup)
{
	int ncpu = libbpf_num_possible_cpus(), err;
	struct inject_cpu_line *l;
	__u32 zero = 0;

	if (ncpu <= 0)
		return errno = -ncpu, -1;
	l = calloc(ncpu, sizeof(*l));
	if (!l)
		return -1;
	for (int c = 0; c < ncpu; c++) {
		l[c].roce_port = roce_port;
		l[c].qpn_set = qpn_set;
		l[c].qpn = qpn;
		l[c].dup = dup;
	}
	err = bpf_map_update_elem(bpf_map__fd(obj->maps.hot), &zero, l, BPF_ANY);
	free(l);
	return err;
}

struct roceinject_bpf *roceinject_load(const struct inject_opts *o, struct netattach *f)
{
	struct roceinject_bpf *obj;
	int err;

	/* the per-QP counts and --count take the old value of an atomic
	 * add: say so before the verifier says only "rejected" */
	if (!probe_atomic_fetch_add()) {
		cli_err("this kernel lacks the BPF atomic fetch-and-add instruction (5.12+), "
			"which roceinject's BPF program needs: it cannot run here");
		return NULL;
	}
	netattach_init(f, o->ifname, cli_ifindex(&o->cli, o->ifname));
	obj = roceinject_bpf__open();
	if (!obj) {
		cli_bpf_err("open BPF object", -errno);
		return NULL;
	}
	roceinject_set_rodata(obj, o);
	maps_shrink_unused(obj->maps.events, o->events, NULL, false);
	err = roceinject_bpf__load(obj);
	if (err) {
		cli_bpf_err("load BPF program", err);
		goto fail;
	}
	if (roceinject_set_hot(obj, o->cli.roce_port, o->qpn_set, o->qpn,
			       o->faults & (1U << FAULT_DUP))) {
		cli_bpf_err("set up roceinject's hot map", -errno);
		goto fail;
	}
	if (netattach_tc(f, obj->progs.roceinject_tc, &inject_tc_id,
			 o->ingress ? NETATTACH_INGRESS : NETATTACH_EGRESS))
		goto fail;
	return obj;
fail:
	roceinject_bpf__destroy(obj);
	return NULL;
}

__u64 roceinject_hot_seen(struct roceinject_bpf *obj, int ncpu)
{
	struct inject_cpu_line *l = calloc(ncpu, sizeof(*l));
	__u32 zero = 0;
	__u64 sum = 0;

	if (!l || bpf_map_lookup_elem(bpf_map__fd(obj->maps.hot), &zero, l)) {
		free(l);
		return 0;
	}
	for (int c = 0; c < ncpu; c++)
		sum += l[c].roce_seen;
	free(l);
	return sum;
}

__u64 roceinject_stat(struct roceinject_bpf *obj, int stat, int ncpu)
{
	if (stat == STAT_ROCE)
		return roceinject_hot_seen(obj, ncpu);
	return maps_stat(obj->maps.stats, stat, ncpu);
}
