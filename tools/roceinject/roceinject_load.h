/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* roceinject's BPF side opened, configured, loaded and attached at tc
 * ingress or egress (tools/roceinject/roceinject_load.c) */
#ifndef AGENTXDP_ROCEINJECT_LOAD_H
#define AGENTXDP_ROCEINJECT_LOAD_H
#include <stdbool.h>
#include <linux/types.h>
#include "lib/cli.h"
#include "lib/netattach.h"

struct roceinject_bpf;

/* what to alter and which packets: the command line, parsed */
struct inject_opts {
	struct cli_env cli;	/* the common options: --roce-port, -N */
	const char *ifname;
	bool ingress;
	__u32 faults;		/* bits of enum inject_fault */
	__u64 delay_ns;
	__u32 new_qpn;		/* --rewrite-qpn */
	__u16 new_pkey;		/* --rewrite-pkey */
	__u16 trunc_len;	/* --truncate */
	bool qpn_set;
	__u32 qpn;
	__u16 sport;
	__u8 family;		/* of saddr/daddr, 0 when neither is set */
	bool saddr_set, daddr_set;
	__u8 saddr[16], daddr[16];
	__u32 classes;		/* bits of enum inject_class */
	int opcode;		/* -1: any */
	bool psn_set;
	__u32 psn_lo, psn_hi;
	__u64 every;		/* 1: every packet */
	double prob;		/* 1: every packet */
	__u64 seed;
	__u64 count;		/* 0: no limit */
	bool events;
};

/* the identity of the clsact filter (kernels without tcx): its leftover
 * after a kill -9 is recognised by it */
extern const struct netattach_tc_id inject_tc_id;

/* the BPF side configured by o, loaded and attached to f (initialised
 * with o->ifname, of o's -N namespace); NULL after a one-line error,
 * nothing left attached */
struct roceinject_bpf *roceinject_load(const struct inject_opts *o, struct netattach *f);
/* what the program's entry reads of every packet (its hot map, written
 * after the load): the RoCE port, -Q and --duplicate; 0 or -1 with errno set */
int roceinject_set_hot(struct roceinject_bpf *obj, __u16 roce_port, bool qpn_set, __u32 qpn,
		       bool dup);
/* the RoCE packets counted in the hot map (ncpu: the possible CPUs) */
__u64 roceinject_hot_seen(struct roceinject_bpf *obj, int ncpu);
/* statistic stat (enum inject_stat) summed over ncpu CPUs: STAT_ROCE from
 * the program's hot map, the others from its stats map */
__u64 roceinject_stat(struct roceinject_bpf *obj, int stat, int ncpu);

#endif
