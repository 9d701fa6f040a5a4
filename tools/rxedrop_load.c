// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rxedrop's BPF side loaded and attached (rxedrop_load.h) */
#include <errno.h>
#include <bpf/libbpf.h>
#include "rxedrop.h"
#include "rxedrop.skel.h"
#include "rxedrop_load.h"
#include "lib/btf_enum.h"
#include "lib/cli.h"
#include "lib/ksyms.h"
#include "lib/maps.h"
#include "lib/probe.h"

/* of the ten programs, the one for the mode that the kernel can take and
 * costs least (rxedrop.bpf.c) is loaded; true for tp_btf, false for raw_tp.
 * A kfree_skb without the reason (before 5.17) gets a program that reads
 * only the skb and the location. */
static bool rxedrop_choose_prog(struct rxedrop_bpf *obj, bool events, bool reason)
{
	bool tp_btf = probe_tp_btf("kfree_skb");
	bool mem = tp_btf && reason && probe_untrusted_mem("kfree_skb");
	struct bpf_program *progs[2][3] = {	/* raw_tp, tp_btf, tp_btf_mem */
		{ obj->progs.rxedrop_raw_tp, obj->progs.rxedrop_tp_btf,
		  obj->progs.rxedrop_tp_btf_mem },
		{ obj->progs.rxedrop_raw_tp_ev, obj->progs.rxedrop_tp_btf_ev,
		  obj->progs.rxedrop_tp_btf_mem_ev },
	};
	struct bpf_program *noreason[2][2] = {	/* raw_tp, tp_btf */
		{ obj->progs.rxedrop_raw_tp_nr, obj->progs.rxedrop_tp_btf_nr },
		{ obj->progs.rxedrop_raw_tp_nr_ev, obj->progs.rxedrop_tp_btf_nr_ev },
	};
	maps_load_only(obj->obj, reason ? progs[events][tp_btf + mem] :
				 noreason[events][tp_btf]);
	return tp_btf;
}

bool rxedrop_has_reason(void)
{
	int n = probe_tp_nargs("kfree_skb");

	/* no BTF to tell: the enum is there from 5.17 on, with the argument */
	return n < 0 ? drop_reason_value("NOT_SPECIFIED") >= 0 : n >= 3;
}

struct rxedrop_bpf *rxedrop_load(const struct rxedrop_load_opts *env, bool *use_tp_btf)
{
	struct rxedrop_bpf *obj = rxedrop_bpf__open();
	long long consumed;
	bool reason;
	int err;

	if (!obj) {
		cli_bpf_err("open BPF object", -errno);
		return NULL;
	}
	obj->rodata->targ_scope = env->scope;
	obj->rodata->targ_roce_port = cli.roce_port;
	obj->rodata->targ_ifindex = env->ifindex;
	obj->rodata->targ_netns = env->netns_inum;
	obj->rodata->targ_port = env->port;
	obj->rodata->targ_stack = env->stack;
	consumed = drop_reason_value("SKB_CONSUMED");
	obj->rodata->targ_consumed = consumed >= 0 ? consumed : ~0U;
	/* rdma_rxe's own frees of the packets its QPs took in (rxedrop.bpf.c) */
	/* without reasons every free is reason 0 (rxedrop.bpf.c) */
	reason = rxedrop_has_reason();
	consumed = reason ? drop_reason_value("NOT_SPECIFIED") : 0;
	if (consumed >= 0 && env->ksyms &&
	    ksyms_range(env->ksyms, "rxe_responder", (__u64 *)&obj->rodata->targ_rxe_resp_start,
			(__u64 *)&obj->rodata->targ_rxe_resp_end) &&
	    ksyms_range(env->ksyms, "rxe_completer", (__u64 *)&obj->rodata->targ_rxe_comp_start,
			(__u64 *)&obj->rodata->targ_rxe_comp_end))
		obj->rodata->targ_not_specified = consumed;

	*use_tp_btf = rxedrop_choose_prog(obj, env->events, reason);
	maps_shrink_unused(obj->maps.events, env->events, obj->maps.stacks, env->stack);

	err = rxedrop_bpf__load(obj);
	if (err) {
		cli_bpf_err("load BPF programs", err);
		goto fail;
	}
	err = rxedrop_bpf__attach(obj);
	if (err) {
		cli_bpf_err("attach to kfree_skb", err);
		goto fail;
	}
	return obj;
fail:
	rxedrop_bpf__destroy(obj);
	return NULL;
}

