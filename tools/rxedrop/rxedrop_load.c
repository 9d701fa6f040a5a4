// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rxedrop's BPF side loaded and attached (rxedrop_load.h) */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "rxedrop.h"
#include "rxedrop.skel.h"
#include "rxedrop_load.h"
#include "lib/btf_enum.h"
#include "lib/cli.h"
#include "lib/ksyms.h"
#include "lib/maps.h"
#include "lib/pcapng.h"
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

#define RXE_MODULE "rdma_rxe"

/* the functions of rdma_rxe's receive checks that are not inlined (6.1;
 * rxedrop.bpf.c), hooked in pairs: fentry/fexit, else kprobe/kretprobe */
static const char *const rxe_check_funcs[] = {
	"rxe_rcv", "rxe_pool_get_index", "check_keys", "rxe_icrc_check",
};

static void rxe_checks_pick(struct rxedrop_bpf *obj, bool fentry)
{
	struct bpf_program *fe[] = {
		obj->progs.rxedrop_rxe_rcv_fentry, obj->progs.rxedrop_rxe_qp_lookup_fexit,
		obj->progs.rxedrop_rxe_keys_fexit, obj->progs.rxedrop_rxe_icrc_fexit,
	};
	struct bpf_program *kp[] = {
		obj->progs.rxedrop_rxe_rcv_kprobe, obj->progs.rxedrop_rxe_qp_lookup_kretprobe,
		obj->progs.rxedrop_rxe_keys_kretprobe, obj->progs.rxedrop_rxe_icrc_kretprobe,
	};

	for (unsigned int i = 0; i < sizeof(fe) / sizeof(fe[0]); i++)
		bpf_program__set_autoload(fentry ? fe[i] : kp[i], true);
}

/* all four functions or none: naming by elimination needs every one of
 * them (a kernel that inlines check_keys cannot tell keys from QP state) */
static void rxe_checks_hook(struct rxedrop_bpf *obj, const struct ksyms *ks)
{
	unsigned int n = sizeof(rxe_check_funcs) / sizeof(rxe_check_funcs[0]);
	bool fentry, kprobe = true, btf = true;

	if (!ks || !probe_module_loaded(RXE_MODULE) ||
	    !ksyms_range(ks, "rxe_rcv", (__u64 *)&obj->rodata->targ_rxe_rcv_start,
			 (__u64 *)&obj->rodata->targ_rxe_rcv_end))
		return;
	for (unsigned int i = 0; i < n; i++) {
		btf = btf && probe_btf_func(rxe_check_funcs[i], RXE_MODULE);
		kprobe = kprobe && probe_kprobe(rxe_check_funcs[i]);
	}
	fentry = btf && probe_fentry("rxe_rcv", RXE_MODULE);
	if (fentry || kprobe) {
		rxe_checks_pick(obj, fentry);
		return;
	}
	obj->rodata->targ_rxe_rcv_start = obj->rodata->targ_rxe_rcv_end = 0;
}

const char *rxedrop_checks_hooked(const struct rxedrop_bpf *obj)
{
	if (bpf_program__autoload(obj->progs.rxedrop_rxe_icrc_fexit))
		return "fexit";
	if (bpf_program__autoload(obj->progs.rxedrop_rxe_icrc_kretprobe))
		return "kprobes";
	return NULL;
}

const char *rxedrop_check_name(unsigned int check)
{
	static const char *const names[RXE_CHECK_NR] = {
		[RXE_CHECK_HEADER] = "header",
		[RXE_CHECK_NO_QP] = "no_qp",
		[RXE_CHECK_QP] = "qp_state_addr",
		[RXE_CHECK_KEYS] = "pkey_qkey",
		[RXE_CHECK_ICRC] = "icrc",
		[RXE_CHECK_UNKNOWN] = "unknown",
	};

	return check < RXE_CHECK_NR ? names[check] : "unknown";
}

const char *rxedrop_reason_str(__u32 reason, __u32 check, char *buf, size_t len)
{
	size_t n;

	drop_reason_name(reason, buf, len);
	n = strlen(buf);
	if (check != RXE_CHECK_NONE)
		snprintf(buf + n, len - n, " rxe:%s", rxedrop_check_name(check));
	return buf;
}

void rxedrop_write_packet(struct pcapng *p, const void *event, size_t len,
			  const char *location, double t)
{
	static const struct pkt_cap none;
	const struct drop_event_cap *ec = event;
	const struct drop_event *e = event;
	char comment[256], reason[64];
	bool check = e->check != RXE_CHECK_NONE;

	drop_reason_name(e->reason, reason, sizeof(reason));
	snprintf(comment, sizeof(comment), "location=%s reason=%s%s%s", location, reason,
		 check ? " rxe_check=" : "", check ? rxedrop_check_name(e->check) : "");
	pcapng_write_cap(p, e->ifname, len >= sizeof(*ec) ? &ec->cap : &none, t, comment);
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
	obj->rodata->targ_roce_port = env->cli->roce_port;
	obj->rodata->targ_ifindex = env->ifindex;
	obj->rodata->targ_netns = env->netns_inum;
	obj->rodata->targ_port = env->port;
	obj->rodata->targ_stack = env->stack;
	obj->rodata->targ_snaplen = env->events ? env->snaplen : 0;
	consumed = drop_reason_value("SKB_CONSUMED");
	obj->rodata->targ_consumed = consumed >= 0 ? consumed : ~0U;
	/* rdma_rxe's own frees of the packets its QPs took in (rxedrop.bpf.c) */
	/* without reasons every free is reason 0 (rxedrop.bpf.c) */
	reason = rxedrop_has_reason();
	consumed = reason ? drop_reason_value("NOT_SPECIFIED") : 0;
	/* the responder's task is rxe_receiver from 6.4 on (Debian 13's
	 * 6.12: its frees and rxe_completer's were counted as drops, 160 in
	 * tests/vm/roceinject.bats, before this looked for the new name) */
	if (consumed >= 0 && env->ksyms &&
	    (ksyms_range(env->ksyms, "rxe_responder", (__u64 *)&obj->rodata->targ_rxe_resp_start,
			 (__u64 *)&obj->rodata->targ_rxe_resp_end) ||
	     ksyms_range(env->ksyms, "rxe_receiver", (__u64 *)&obj->rodata->targ_rxe_resp_start,
			 (__u64 *)&obj->rodata->targ_rxe_resp_end)) &&
	    ksyms_range(env->ksyms, "rxe_completer", (__u64 *)&obj->rodata->targ_rxe_comp_start,
			(__u64 *)&obj->rodata->targ_rxe_comp_end))
		obj->rodata->targ_not_specified = consumed;

	*use_tp_btf = rxedrop_choose_prog(obj, env->events, reason);
	rxe_checks_hook(obj, env->ksyms);
	maps_shrink_unused(obj->maps.events, env->events, obj->maps.stacks, env->stack);
	if (env->events && env->snaplen)
		bpf_map__set_max_entries(obj->maps.events, PKT_CAP_RINGBUF);

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

