// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * verbslat's BPF side: the driver of each RDMA device, from sysfs (the
 * module of /sys/class/infiniband/DEV/device/driver; Soft-RoCE devices
 * have no parent device but a `parent` attribute naming their netdev,
 * rxe_verbs.c), then the three entry points of each driver found, fentry
 * where the kernel allows it, kprobes otherwise (verbslat_load.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "verbslat.h"
#include "verbslat.skel.h"
#include "verbslat_load.h"
#include "lib/cli.h"
#include "lib/ibdev.h"
#include "lib/probe.h"

/* the module each driver's entry points are in, and what sysfs names
 * the driver of its devices (the PCI or auxiliary driver's module) */
static const struct {
	const char *module, *sysfs[3];
	const char *funcs[3];		/* post_send, post_recv, poll_cq */
} drivers[VL_NDRIVERS] = {
	[VL_RXE] = { "rdma_rxe", { "rdma_rxe" },
		     { "rxe_post_send", "rxe_post_recv", "rxe_poll_cq" } },
	[VL_MLX5] = { "mlx5_ib", { "mlx5_core", "mlx5_ib" },
		      { "mlx5_ib_post_send_nodrain", "mlx5_ib_post_recv_nodrain",
			"mlx5_ib_poll_cq" } },
	[VL_IRDMA] = { "irdma", { "irdma" },
		       { "irdma_post_send", "irdma_post_recv", "irdma_poll_cq" } },
	[VL_BNXT] = { "bnxt_re", { "bnxt_re", "bnxt_en" },
		      { "bnxt_re_post_send", "bnxt_re_post_recv", "bnxt_re_poll_cq" } },
};

const char *verbslat_driver_module(enum vl_driver d)
{
	return d < VL_NDRIVERS ? drivers[d].module : "?";
}

/* a failure's line: into o->err where the caller wants it there */
__attribute__((format(printf, 2, 3)))
static void load_err(const struct verbslat_load_opts *o, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (o->err)
		snprintf(o->err, o->errlen, "%s", line);
	else
		cli_err("%s", line);
}

static int driver_of(const char *name)
{
	for (int d = 0; d < VL_NDRIVERS; d++)
		for (int i = 0; i < 3 && drivers[d].sysfs[i]; i++)
			if (!strcmp(name, drivers[d].sysfs[i]))
				return d;
	return -1;
}

/* the drivers of the devices (of -d's alone) marked in want; 0, or -1
 * after a one-line error */
static int find_drivers(const struct verbslat_load_opts *o, const char *only, bool *want)
{
	DIR *dir = opendir(IBDEV_CLASS);
	struct dirent *de;
	int ndev = 0, nwant = 0;
	char drv[128], bad[256] = "";

	while (dir && (de = readdir(dir))) {
		int d;

		if (de->d_name[0] == '.' || (only && strcmp(de->d_name, only)))
			continue;
		ndev++;
		ibdev_module(NULL, de->d_name, drv, sizeof(drv));
		d = driver_of(drv);
		if (d >= 0) {
			nwant += !want[d];
			want[d] = true;
		} else if (!bad[0]) {
			snprintf(bad, sizeof(bad), "%.64s (driver %.64s)", de->d_name,
				 drv[0] ? drv : "unknown");
		}
	}
	if (dir)
		closedir(dir);
	if (!ndev) {
		load_err(o, only ? "no RDMA device %s" : "no RDMA device%s", only ?: "");
		return -1;
	}
	if (bad[0] && (only || !nwant)) {
		load_err(o, "unsupported RDMA driver: %s; verbslat knows rdma_rxe, mlx5_ib, "
			 "irdma, bnxt_re", bad);
		return -1;
	}
	if (bad[0] && (!o->err || (o->cli && o->cli->verbose)))
		cli_err("not traced: %s, a driver verbslat does not know", bad);
	return 0;
}

/* driver d's programs set to load (or not): those named after it
 * ("rxe_", "mlx5_" ...) on fentry/fexit, or on kprobes; false when its
 * module or a function of it is missing */
static bool pick_driver(const struct verbslat_load_opts *o, struct verbslat_bpf *obj, int d,
			bool want, bool fentry)
{
	static const char *const prefix[VL_NDRIVERS] = { "rxe_", "mlx5_", "irdma_", "bnxt_" };
	bool ok = want && probe_module_loaded(drivers[d].module);
	struct bpf_program *p;

	for (int i = 0; ok && i < 3; i++) {
		ok = fentry ? probe_btf_func(drivers[d].funcs[i], drivers[d].module)
			    : probe_kprobe(drivers[d].funcs[i]);
		if (!ok && (!o->err || (o->cli && o->cli->verbose)))
			cli_err("%s: %s not found in this kernel's %s", drivers[d].module,
				drivers[d].funcs[i], drivers[d].module);
	}
	bpf_object__for_each_program(p, obj->obj) {
		const char *sec = bpf_program__section_name(p);
		bool on_fentry = !strncmp(sec, "fentry/", 7) || !strncmp(sec, "fexit/", 6);

		if (!strncmp(bpf_program__name(p), prefix[d], strlen(prefix[d])))
			bpf_program__set_autoload(p, ok && fentry == on_fentry);
	}
	return ok;
}

static void set_rodata(struct verbslat_bpf *obj, const struct verbslat_load_opts *o)
{
	obj->rodata->targ_qpn = o->qpn;
	obj->rodata->targ_qpn_set = o->qpn_set;
	obj->rodata->targ_events = o->events;
	if (o->devname)
		snprintf((char *)obj->rodata->targ_dev, VL_DEVNAME, "%s", o->devname);
	for (int i = 0; o->owners && i < VL_OWNERS && o->owners[i]; i++)
		snprintf((char *)obj->rodata->targ_owner[i], VL_OWNER, "%s", o->owners[i]);
}

/* which hooks: 0, or -1 after a one-line error */
static int pick_hooks(struct verbslat_bpf *obj, const struct verbslat_load_opts *o,
		      struct verbslat_hooks *hk)
{
	bool want[VL_NDRIVERS] = {};
	int n = 0;

	if (find_drivers(o, o->devname, want))
		return -1;
	if (!probe_module_loaded("ib_core")) {
		load_err(o, "ib_core has no BTF here (no /sys/kernel/btf/ib_core: a kernel "
			 "before 5.11): verbslat reads ib_core's types through it");
		return -1;
	}
	hk->fentry = !o->force_kprobe && probe_fentry("ib_destroy_qp_user", "ib_core");
	if (!hk->fentry && !probe_kprobe("ib_destroy_qp_user")) {
		load_err(o, "this kernel allows neither fentry on ib_core%s nor kprobes",
			 o->force_kprobe ? " (not tried: --kprobe)" : "");
		return -1;
	}
	bpf_program__set_autoload(obj->progs.vl_destroy_fentry, hk->fentry);
	bpf_program__set_autoload(obj->progs.vl_destroy_kprobe, !hk->fentry);
	for (int d = 0; d < VL_NDRIVERS; d++)
		n += hk->driver[d] = pick_driver(o, obj, d, want[d], hk->fentry);
	if (!n) {
		load_err(o, "no RDMA driver to trace: the drivers' modules are not loaded or "
			 "lack the entry points");
		return -1;
	}
	return 0;
}

struct verbslat_bpf *verbslat_load(const struct verbslat_load_opts *o, struct verbslat_hooks *hk)
{
	struct verbslat_bpf *obj = verbslat_bpf__open();
	int e;

	memset(hk, 0, sizeof(*hk));
	if (!obj) {
		cli_bpf_err("open BPF object", -errno);
		return NULL;
	}
	if (pick_hooks(obj, o, hk))
		goto fail;
	set_rodata(obj, o);
	if (!o->events)
		bpf_map__set_max_entries(obj->maps.events, 4096);
	if (o->max_wrs) {
		bpf_map__set_max_entries(obj->maps.pending, o->max_wrs);
		bpf_map__set_max_entries(obj->maps.unsig, o->max_wrs);
	}
	e = verbslat_bpf__load(obj);
	if (e) {
		cli_bpf_err("load BPF programs", e);
		goto fail;
	}
	e = verbslat_bpf__attach(obj);
	if (e) {
		cli_bpf_err(hk->fentry ? "attach fentry to the RDMA driver" :
			    "attach kprobes to the RDMA driver", e);
		goto fail;
	}
	return obj;
fail:
	verbslat_bpf__destroy(obj);
	return NULL;
}
