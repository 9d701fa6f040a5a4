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

struct hook {
	const char *func, *module;
	struct bpf_program *fentry, *kprobe;
	struct bpf_program *fexit, *kretprobe;	/* the return twin, if any */
	bool required;
};

static bool func_exists(const struct hook *h, bool fentry)
{
	if (!probe_module_loaded(h->module))
		return false;
	return fentry ? probe_btf_func(h->func, h->module) : probe_kprobe(h->func);
}

static void set_autoload(const struct hook *h, bool on, bool fentry)
{
	bpf_program__set_autoload(h->fentry, on && fentry);
	bpf_program__set_autoload(h->kprobe, on && !fentry);
	if (h->fexit) {
		bpf_program__set_autoload(h->fexit, on && fentry);
		bpf_program__set_autoload(h->kretprobe, on && !fentry);
	}
}

/* the programs of every hook present set to load; how many are missing,
 * -1 with err when a required one is */
static int pick_hooks(struct rdmaqp_bpf *obj, bool use_fentry, bool verbose, int *nhooks,
		      char *err, int errlen)
{
#define HOOK(fn, mod, prog, req) { .func = fn, .module = mod, \
	.fentry = obj->progs.rdmaqp_##prog##_fentry, .kprobe = obj->progs.rdmaqp_##prog##_kprobe, \
	.required = req }
	struct hook hooks[] = {
		HOOK("rdma_restrack_add", RDMAQP_MODULE, create, true),
		HOOK("ib_destroy_qp_user", RDMAQP_MODULE, destroy, true),
		HOOK("_ib_modify_qp", RDMAQP_MODULE, modify, true),
		HOOK("ib_dispatch_event", RDMAQP_MODULE, async, false),
		/* ib_uverbs: loaded once a process opened a verbs device */
		HOOK("ib_uverbs_qp_event_handler", RDMAQP_UVERBS, qp_async, false),
	};
#undef HOOK
	int missing = 0;

	hooks[2].fexit = obj->progs.rdmaqp_modify_ret_fexit;
	hooks[2].kretprobe = obj->progs.rdmaqp_modify_ret_kretprobe;
	*nhooks = sizeof(hooks) / sizeof(hooks[0]);
	for (int i = 0; i < *nhooks; i++) {
		struct hook *h = &hooks[i];
		bool ok = func_exists(h, use_fentry);

		set_autoload(h, ok, use_fentry);
		if (ok)
			continue;
		if (h->required) {
			snprintf(err, errlen, "cannot trace the RDMA control path: %s not "
				 "found in this kernel's %s", h->func, h->module);
			return -1;
		}
		if (verbose)
			cli_err("%s (%s) not found: its events are not seen", h->func, h->module);
		missing++;
	}
	return missing;
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
	hk->fentry = !o->force_kprobe && probe_fentry("rdma_restrack_add", RDMAQP_MODULE);
	if (!hk->fentry && !probe_kprobe("rdma_restrack_add")) {
		snprintf(err, errlen, "this kernel allows neither fentry on ib_core%s nor "
			 "kprobes", o->force_kprobe ? " (not tried: --kprobe)" : "");
		return NULL;
	}
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
