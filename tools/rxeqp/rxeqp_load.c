// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rxeqp's BPF side: hooks picked, loaded and attached (rxeqp_load.h) */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "rxeqp.h"
#include "rxeqp.skel.h"
#include "rxeqp_load.h"
#include "lib/cli.h"
#include "lib/maps.h"
#include "lib/probe.h"

/* -v: a hook this rdma_rxe lacks */
static void warn_missing(const struct probe_hook *h)
{
	cli_err("%s not found: its counters stay 0", h->funcs[0]);
}

/* fentry or kprobe programs of every hook present in this rdma_rxe set to
 * load (-v: the missing named); returns how many are missing (*nhooks of
 * how many), -1 with err when a required one is */
static int pick_hooks(struct rxeqp_bpf *obj, bool use_fentry, bool verbose, int *nhooks,
		      char *err, int errlen)
{
#define HOOK(fn, prog, req) { .funcs = { fn }, .fentry = { obj->progs.rxeqp_##prog##_fentry }, \
	.kprobe = { obj->progs.rxeqp_##prog##_kprobe }, .required = req }
#define HOOK2(fn1, prog1, fn2, prog2) { .funcs = { fn1, fn2 }, \
	.fentry = { obj->progs.rxeqp_##prog1##_fentry, obj->progs.rxeqp_##prog2##_fentry }, \
	.kprobe = { obj->progs.rxeqp_##prog1##_kprobe, obj->progs.rxeqp_##prog2##_kprobe } }
	struct probe_hook hooks[] = {
		HOOK("rxe_xmit_packet", xmit, true),
		HOOK("rxe_resp_queue_pkt", resp_queue, true),
		HOOK("rxe_comp_queue_pkt", comp_queue, true),
		/* renamed with an rxe_ prefix in later kernels */
		HOOK2("retransmit_timer", retx_timer, "rxe_retransmit_timer", rxe_retx_timer),
		HOOK2("rnr_nak_timer", rnr_timer, "rxe_rnr_nak_timer", rxe_rnr_timer),
		HOOK("rxe_qp_from_attr", modify, false),
		HOOK("rxe_qp_error", qp_error, false),
		HOOK("rxe_cq_post", cq_post, false),
		HOOK("rxe_destroy_qp", destroy, false),
	};
#undef HOOK
#undef HOOK2

	*nhooks = sizeof(hooks) / sizeof(hooks[0]);
	return probe_hooks_pick(hooks, *nhooks, RXEQP_MODULE, use_fentry, "cannot trace rdma_rxe",
				verbose ? warn_missing : NULL, err, errlen);
}

struct rxeqp_bpf *rxeqp_load(const struct rxeqp_load_opts *o, struct rxeqp_hooks *hk,
			     char *err, int errlen)
{
	struct rxeqp_bpf *obj;
	int e;

	memset(hk, 0, sizeof(*hk));
	if (!probe_module_loaded(RXEQP_MODULE)) {
		snprintf(err, errlen, "rdma_rxe is not loaded (no /sys/kernel/btf/rdma_rxe)");
		return NULL;
	}
	e = probe_hooks_mode("rxe_xmit_packet", RXEQP_MODULE, o->force_kprobe,
			     "cannot trace rdma_rxe", err, errlen);
	if (e < 0)
		return NULL;
	hk->fentry = e;
	obj = rxeqp_bpf__open();
	if (!obj) {
		cli_bpf_err("open BPF object", -errno);
		err[0] = 0;
		return NULL;
	}
	hk->missing = pick_hooks(obj, hk->fentry, o->cli->verbose, &hk->nhooks, err, errlen);
	if (hk->missing < 0)
		goto fail;
	obj->rodata->targ_ifindex = o->ifindex;
	obj->rodata->targ_netns = o->netns;
	obj->rodata->targ_qpn = o->qpn;
	obj->rodata->targ_qpn_set = o->qpn_set;
	obj->rodata->targ_events = o->events;
	obj->rodata->targ_latency = o->latency;
	maps_shrink_unused(obj->maps.events, o->events, NULL, false);

	e = rxeqp_bpf__load(obj);
	if (e) {
		cli_bpf_err("load BPF programs", e);
		err[0] = 0;
		goto fail;
	}
	e = rxeqp_bpf__attach(obj);
	if (e) {
		cli_bpf_err(hk->fentry ? "attach fentry to rdma_rxe" : "attach kprobes to rdma_rxe",
			    e);
		err[0] = 0;
		goto fail;
	}
	return obj;
fail:
	rxeqp_bpf__destroy(obj);
	return NULL;
}
