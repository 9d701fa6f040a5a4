// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rdmaqp's BPF side: hooks picked, loaded and attached (rdmaqp_load.h) */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "rdmaqp.h"
#include "rdmaqp.skel.h"
#include "rdmaqp_load.h"
#include "lib/cli.h"
#include "lib/probe.h"

/* -v: a hook this kernel lacks */
static void warn_missing(const struct probe_hook *h)
{
	cli_err("%s not found: its events are not seen", h->funcs[0]);
}

/* the programs of every hook present set to load; how many are missing,
 * -1 with err when a required one is */
static int pick_hooks(struct rdmaqp_bpf *obj, bool use_fentry, bool verbose, int *nhooks,
		      char *err, int errlen)
{
#define HOOK(fn, prog, req) { .funcs = { fn }, .fentry = { obj->progs.rdmaqp_##prog##_fentry }, \
	.kprobe = { obj->progs.rdmaqp_##prog##_kprobe }, .required = req }
	struct probe_hook core[] = {
		HOOK("rdma_restrack_add", create, true),
		HOOK("ib_destroy_qp_user", destroy, true),
		HOOK("_ib_modify_qp", modify, true),
		HOOK("ib_dispatch_event", async, false),
	};
	/* ib_uverbs: loaded once a process opened a verbs device */
	struct probe_hook uverbs[] = { HOOK("ib_uverbs_qp_event_handler", qp_async, false) };
#undef HOOK
	const char *what = "cannot trace the RDMA control path";
	void (*warn)(const struct probe_hook *) = verbose ? warn_missing : NULL;
	int m1, m2;

	core[2].fexit = obj->progs.rdmaqp_modify_ret_fexit;
	core[2].kretprobe = obj->progs.rdmaqp_modify_ret_kretprobe;
	*nhooks = sizeof(core) / sizeof(core[0]) + sizeof(uverbs) / sizeof(uverbs[0]);
	m1 = probe_hooks_pick(core, 4, RDMAQP_MODULE, use_fentry, what, warn, err, errlen);
	if (m1 < 0)
		return -1;
	m2 = probe_hooks_pick(uverbs, 1, RDMAQP_UVERBS, use_fentry, what, warn, err, errlen);
	return m2 < 0 ? -1 : m1 + m2;
}

struct rdmaqp_bpf *rdmaqp_load(const struct rdmaqp_load_opts *o, struct rdmaqp_hooks *hk,
			       char *err, int errlen)
{
	struct rdmaqp_bpf *obj;
	int e;

	memset(hk, 0, sizeof(*hk));
	if (!probe_module_loaded(RDMAQP_MODULE)) {
		snprintf(err, errlen, "%s has no BTF here (no /sys/kernel/btf/%s: a kernel "
			 "before 5.11, or ib_core not loaded)", RDMAQP_MODULE, RDMAQP_MODULE);
		return NULL;
	}
	e = probe_hooks_mode("rdma_restrack_add", RDMAQP_MODULE, o->force_kprobe,
			     "cannot trace the RDMA control path", err, errlen);
	if (e < 0)
		return NULL;
	hk->fentry = e;
	obj = rdmaqp_bpf__open();
	if (!obj) {
		cli_bpf_err("open BPF object", -errno);
		err[0] = 0;
		return NULL;
	}
	hk->missing = pick_hooks(obj, hk->fentry, o->cli->verbose, &hk->nhooks, err, errlen);
	if (hk->missing < 0)
		goto fail;
	e = rdmaqp_bpf__load(obj);
	if (e) {
		cli_bpf_err("load BPF programs", e);
		err[0] = 0;
		goto fail;
	}
	e = rdmaqp_bpf__attach(obj);
	if (e) {
		cli_bpf_err(hk->fentry ? "attach fentry to ib_core" : "attach kprobes to ib_core", e);
		err[0] = 0;
		goto fail;
	}
	return obj;
fail:
	rdmaqp_bpf__destroy(obj);
	return NULL;
}
