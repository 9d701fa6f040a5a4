// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* nfdrop's BPF side loaded and attached (nfdrop_load.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "nfdrop.h"
#include "nfdrop.skel.h"
#include "nfdrop_evidence.h"
#include "nfdrop_load.h"
#include "nfdrop_names.h"
#include "lib/btf_enum.h"
#include "lib/cli.h"
#include "lib/ksyms.h"
#include "lib/maps.h"
#include "lib/netns.h"
#include "lib/probe.h"

/* func has BTF in vmlinux or in the (loaded) module that has it */
static bool have_func(const char *func, const char *module)
{
	return probe_btf_func(func, NULL) ||
	       (probe_module_loaded(module) && probe_btf_func(func, module));
}

/* fentry/fexit on func is allowed (this kernel refuses it with EPERM) */
static bool fexit_ok(const char *func, const char *module)
{
	return probe_fentry(func, NULL) ||
	       (probe_module_loaded(module) && probe_fentry(func, module));
}

/* ipt_do_table(priv, skb, state) from 5.16, (skb, state, table) before */
static bool xt_priv_first(void)
{
	int idx = probe_func_arg_index("ipt_do_table", "ip_tables", "priv");

	if (idx < 0)
		idx = probe_func_arg_index("ip6t_do_table", "ip6_tables", "priv");
	return idx != 2;	/* 0 when found first; unknown: the current ABI */
}

static const char *const reject_fns[4][2] = {
	{ "nf_send_unreach", "nf_reject_ipv4" },
	{ "nf_send_unreach6", "nf_reject_ipv6" },
	{ "nf_send_reset", "nf_reject_ipv4" },
	{ "nf_send_reset6", "nf_reject_ipv6" },
};

/*
 * Open, load and attach, with the fexit programs or without. fexit was
 * probed once (it is allowed or refused kernel-wide); the other functions
 * are only looked up in BTF, and a failure to load or attach them makes
 * the caller retry without fexit.
 */
static int load_bpf(const struct nfdrop_load_opts *env, struct nfdrop_ctx *ctx, bool fexit,
		    struct nfdrop_attached *a, struct nfdrop_bpf **objp)
{
	struct bpf_program *rej_progs[4];
	struct nfdrop_bpf *obj;
	int err;

	memset(a, 0, sizeof(*a));
	obj = nfdrop_bpf__open();
	if (!obj)
		return -errno;
	obj->rodata->targ_scope = env->all ? NFD_SCOPE_ALL : NFD_SCOPE_ROCE;
	obj->rodata->targ_roce_port = ctx->cli->roce_port;
	obj->rodata->targ_port = env->port;
	obj->rodata->targ_ifindex = env->ifindex;
	obj->rodata->targ_netns = env->netns_inum;
	obj->rodata->targ_events = env->events;
	obj->rodata->targ_stack = env->stack;
	obj->rodata->targ_snaplen = env->events ? env->snaplen : 0;
	obj->rodata->targ_nf_drop = ctx->nf_drop;
	if (ctx->not_specified >= 0 &&
	    ksyms_range(ctx->ksyms, "nf_queue", (__u64 *)&obj->rodata->targ_queue_start,
			(__u64 *)&obj->rodata->targ_queue_end))
		obj->rodata->targ_not_specified = ctx->not_specified;
	if (!ksyms_range(ctx->ksyms, "nf_hook_slow", (__u64 *)&obj->rodata->targ_slow_start,
			(__u64 *)&obj->rodata->targ_slow_end) && !fexit)
		cli_err("nf_hook_slow not in /proc/kallsyms: hooks will show as unknown");
	ksyms_range(ctx->ksyms, "nf_hook_slow_list", (__u64 *)&obj->rodata->targ_list_start,
		   (__u64 *)&obj->rodata->targ_list_end);
	ksyms_range(ctx->ksyms, "nft_do_chain", (__u64 *)&obj->rodata->targ_nft_start,
		   (__u64 *)&obj->rodata->targ_nft_end);
	ksyms_range(ctx->ksyms, "ipt_do_table", (__u64 *)&obj->rodata->targ_ipt_start,
		   (__u64 *)&obj->rodata->targ_ipt_end);
	ksyms_range(ctx->ksyms, "ip6t_do_table", (__u64 *)&obj->rodata->targ_ip6t_start,
		   (__u64 *)&obj->rodata->targ_ip6t_end);

	if (fexit) {
		a->nft = have_func("nft_do_chain", "nf_tables");
		a->ipt = have_func("ipt_do_table", "ip_tables");
		a->ip6t = have_func("ip6t_do_table", "ip6_tables");
		for (int i = 0; i < 4; i++)
			a->reject[i] = have_func(reject_fns[i][0], reject_fns[i][1]);
		obj->rodata->targ_xt_priv_first = xt_priv_first();
	}
	obj->rodata->targ_nft_fexit = a->nft;
	obj->rodata->targ_ipt_fexit = a->ipt;
	obj->rodata->targ_ip6t_fexit = a->ip6t;
	bpf_program__set_autoload(obj->progs.nfdrop_nft_exit, a->nft);
	bpf_program__set_autoload(obj->progs.nfdrop_ipt_exit, a->ipt);
	bpf_program__set_autoload(obj->progs.nfdrop_ip6t_exit, a->ip6t);
	rej_progs[0] = obj->progs.nfdrop_unreach;
	rej_progs[1] = obj->progs.nfdrop_unreach6;
	rej_progs[2] = obj->progs.nfdrop_reset;
	rej_progs[3] = obj->progs.nfdrop_reset6;
	for (int i = 0; i < 4; i++)
		bpf_program__set_autoload(rej_progs[i], a->reject[i]);
	/* every REJECT reply is seen only where nf_send_unreach is traced */
	ctx->reject_complete = a->reject[0];
	a->icmp_tp = !a->reject[0] && probe_tp_btf("icmp_send");
	bpf_program__set_autoload(obj->progs.nfdrop_icmp_send, a->icmp_tp);
	/* IPv6 has no such tracepoint: its errors are seen leaving */
	a->icmp6_out = !a->reject[1] && probe_tp_btf("net_dev_queue");
	obj->rodata->targ_icmp6_out = a->icmp6_out;
	bpf_program__set_autoload(obj->progs.nfdrop_icmp6_out, a->icmp6_out);

	/* one of four kfree_skb programs: tp_btf or raw_tp, with the reason
	 * argument (5.17+) or by the location (nfdrop.bpf.c) */
	a->tp_btf = probe_tp_btf("kfree_skb");
	a->by_location = !nfdrop_has_reason();
	{
		struct bpf_program *kfree[2][2] = {
			{ obj->progs.nfdrop_kfree_raw, obj->progs.nfdrop_kfree_btf },
			{ obj->progs.nfdrop_kfree_raw_nr, obj->progs.nfdrop_kfree_btf_nr },
		};

		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++)
				bpf_program__set_autoload(kfree[i][j], i == a->by_location &&
							  j == a->tp_btf);
	}
	maps_shrink_unused(obj->maps.events, env->events, obj->maps.stacks, env->stack);
	if (env->events && env->snaplen)
		bpf_map__set_max_entries(obj->maps.events, PKT_CAP_RINGBUF);

	err = nfdrop_bpf__load(obj);
	if (!err)
		err = nfdrop_bpf__attach(obj);
	if (err)
		nfdrop_bpf__destroy(obj);
	else
		*objp = obj;
	return err;
}

void nfdrop_ctx_init(struct nfdrop_ctx *ctx, const struct ksyms *ks,
		     const struct cli_env *cli)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->ksyms = ks;
	ctx->cli = cli;
	ctx->nf_drop = drop_reason_value("NETFILTER_DROP");
	ctx->not_specified = drop_reason_value("NOT_SPECIFIED");
}

bool nfdrop_has_reason(void)
{
	int n = probe_tp_nargs("kfree_skb");

	/* no BTF to tell: the enum comes with the argument (5.17) */
	return n < 0 ? drop_reason_value("NETFILTER_DROP") >= 0 : n >= 3;
}

struct nfdrop_bpf *nfdrop_load(const struct nfdrop_load_opts *env, struct nfdrop_attached *att,
			       struct nfdrop_ctx *ctx)
{
	struct nfdrop_bpf *obj = NULL;
	bool fexit = false;
	int err;

	/* before 5.17 there are no reasons: the BPF side takes nf_hook_slow's
	 * frees for this code (any value; its reason column shows "-") */
	if (!nfdrop_has_reason())
		ctx->nf_drop = 1;
	if (ctx->nf_drop < 0) {
		cli_err("this kernel has no NETFILTER_DROP drop reason");
		return NULL;
	}
	if (env->method != NFDROP_METHOD_KFREE)
		fexit = fexit_ok("nft_do_chain", "nf_tables") ||
			fexit_ok("ipt_do_table", "ip_tables") ||
			fexit_ok("ip6t_do_table", "ip6_tables");
	if (env->method == NFDROP_METHOD_FEXIT && !fexit)
		cli_die("fexit on nft_do_chain/ipt_do_table is not allowed by this "
			"kernel (or nf_tables/ip_tables are not loaded)");
	/* the first counter window starts before the first drop is counted */
	ev_counters_start(env->netns_inum ? env->netns_inum : netns_self());
	err = load_bpf(env, ctx, fexit, att, &obj);
	if (err && fexit && env->method == NFDROP_METHOD_AUTO) {
		if (ctx->cli->verbose)
			cli_err("fexit programs failed (%s): kfree_skb + stack only",
				strerror(-err));
		err = load_bpf(env, ctx, false, att, &obj);
	}
	if (err) {
		cli_bpf_err("load and attach BPF programs", err);
		return NULL;
	}
	return obj;
}


const char *nfdrop_method_str(const struct nfdrop_attached *att, char *buf, int len)
{
	if (att->nft || att->ipt || att->ip6t)
		snprintf(buf, len, "fexit %s%s%s+ kfree_skb",
			 att->nft ? "nft_do_chain " : "", att->ipt ? "ipt_do_table " : "",
			 att->ip6t ? "ip6t_do_table " : "");
	else if (att->by_location)
		snprintf(buf, len, "kfree_skb in nf_hook_slow + stack via %s; drop "
			 "reasons unavailable (5.17+)", att->tp_btf ? "tp_btf" : "raw_tp");
	else
		snprintf(buf, len, "kfree_skb NETFILTER_DROP + stack via %s",
			 att->tp_btf ? "tp_btf" : "raw_tp");
	return buf;
}

/* counter snapshots of the namespaces with drops, before (pre) or after
 * a drain */
static void snapshot_netns(const struct nfd_key *keys, int n, bool pre)
{
	for (int i = 0; i < n; i++) {
		bool dup = false;

		for (int j = 0; j < i && !dup; j++)
			dup = keys[j].netns == keys[i].netns;
		if (dup)
			continue;
		if (pre)
			ev_counters_pre(keys[i].netns);
		else
			ev_counters_post(keys[i].netns);
	}
}

static int drain(struct nfdrop_bpf *obj, struct nfd_key *keys, unsigned long long *packets,
		 unsigned long long *rejected, int max, bool window)
{
	int fd = bpf_map__fd(obj->maps.drops), ncpu = libbpf_num_possible_cpus(), n;
	struct nfd_value *vals = calloc(ncpu > 0 ? ncpu : 1, sizeof(*vals));

	if (!vals)
		return 0;
	n = maps_keys(obj->maps.drops, keys, max);
	/* counters around the drain: what was drained moved them inside */
	if (window)
		snapshot_netns(keys, n, true);
	for (int i = 0; i < n; i++) {
		packets[i] = rejected[i] = 0;
		if (bpf_map_lookup_elem(fd, &keys[i], vals))
			continue;
		bpf_map_delete_elem(fd, &keys[i]);
		for (int c = 0; c < ncpu; c++) {
			packets[i] += vals[c].packets;
			rejected[i] += vals[c].rejected;
		}
	}
	if (window)
		snapshot_netns(keys, n, false);
	free(vals);
	return n;
}

int nfdrop_drain(struct nfdrop_bpf *obj, struct nfd_key *keys, unsigned long long *packets,
		 unsigned long long *rejected, int max)
{
	return drain(obj, keys, packets, rejected, max, true);
}

int nfdrop_drain_counts(struct nfdrop_bpf *obj, struct nfd_key *keys,
			unsigned long long *packets, unsigned long long *rejected, int max)
{
	return drain(obj, keys, packets, rejected, max, false);
}
