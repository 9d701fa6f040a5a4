// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * verbslat: how long the work requests of kernel RDMA users (NVMe over
 * Fabrics, NFS over RDMA, iSER, SMB Direct) take from post to completion,
 * per QP and opcode, which completions failed with which status, and
 * which QPs have work outstanding and since when: on any RNIC whose
 * driver's entry points it knows (tools/verbslat/verbslat.bpf.c), also
 * where no RoCE packet reaches the kernel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "verbslat.h"
#include "verbslat.skel.h"
#include "verbslat_load.h"
#include "verbslat_prom.h"
#include "verbslat_report.h"
#include "lib/btf_enum.h"
#include "lib/cli.h"
#include "lib/loop.h"
#include "lib/maps.h"

static struct {
	struct cli_env cli;
	bool events;
	bool force_kprobe;
	const char *devname;
	bool qpn_set;
	unsigned int qpn;
	int ulp;		/* --ulp: an index of ulps[], -1: any */
} env = { .ulp = -1 };

/* --ulp's names and the modules that own their QPs (allocate their PDs):
 * the KBUILD_MODNAME of nvme-rdma, nvmet-rdma, rpcrdma (NFS client and
 * server), ib_iser and ib_isert, cifs and ksmbd (SMB Direct), rds_rdma */
static const char *const ulps[] = { "nvme", "nvmet", "nfs", "iser", "smb", "rds" };
static const char *const ulp_owners[][VL_OWNERS + 1] = {
	{ "nvme_rdma" }, { "nvmet_rdma" }, { "rpcrdma" }, { "ib_iser", "ib_isert" },
	{ "cifs", "ksmbd" }, { "rds_rdma" },
};

const char *argp_program_version = "verbslat (AgentXDP) " AX_VERSION;
static const char doc[] =
"Time the work requests of kernel RDMA users (NVMe over Fabrics, NFS over\n"
"RDMA, iSER, SMB Direct) from post to completion, per QP and opcode, count\n"
"their completions by status and show the work outstanding per QP.\n"
"\n"
"USAGE: verbslat [OPTIONS] [interval] [count]\n"
"\n"
"Hooks the RDMA driver's post_send, post_recv and poll_cq (rdma_rxe,\n"
"mlx5_ib, irdma, bnxt_re) with fentry, else kprobes. Only kernel QPs:\n"
"user-space verbs post and poll without the kernel. Send WRs posted\n"
"unsignaled count as completed by the next completion of their send queue.\n"
"\n"
"EXAMPLES:\n"
"    verbslat             # table at Ctrl-C\n"
"    verbslat 1           # table every second\n"
"    verbslat -d mlx5_0 5 3  # device mlx5_0, three tables 5 seconds apart\n"
"    verbslat -Q 0x12 1   # QP 0x12 only\n"
"    verbslat --ulp nvme 1  # the NVMe-oF host's QPs (nvme_rdma) only\n"
"    verbslat -e          # one line per completion with an error status\n"
"    verbslat -j 1        # JSON lines\n"
"    verbslat --prom /var/lib/prometheus/node-exporter/verbslat.prom 15";

enum { OPT_KPROBE = 0x2000, OPT_ULP };

static const struct argp_option opts[] = {
	{ "device", 'd', "DEVICE", 0, "Only QPs of this RDMA device (as `rdma dev` names it)", 0 },
	{ "qpn", 'Q', "QPN", 0, "Only this QP number (decimal or 0x hex)", 0 },
	{ "ulp", OPT_ULP, "ULP", 0, "Only QPs of this kernel RDMA user, by the module that owns "
	  "them: nvme (nvme_rdma), nvmet (nvmet_rdma), nfs (rpcrdma), iser (ib_iser, ib_isert), "
	  "smb (cifs, ksmbd), rds (rds_rdma)", 0 },
	{ "events", 'e', NULL, 0, "Print one line per completion with an error status", 0 },
	{ "kprobe", OPT_KPROBE, NULL, 0, "Use kprobes even where fentry is allowed", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &env.cli;
		break;
	case 'd':
		if (!*arg || strlen(arg) >= VL_DEVNAME)
			argp_failure(state, 1, 0, "invalid device name: '%s'", arg);
		env.devname = arg;
		break;
	case 'Q':
		env.qpn = cli_arg_long(state, arg, 0, 0xffffff, "QP number");
		env.qpn_set = true;
		break;
	case OPT_ULP:
		env.ulp = cli_arg_choice(state, arg, ulps, (int)(sizeof(ulps) / sizeof(ulps[0])), "ULP");
		break;
	case 'e':
		env.events = true;
		break;
	case OPT_KPROBE:
		env.force_kprobe = true;
		break;
	case ARGP_KEY_END:
		cli_check_events(state, &env.cli, env.events, false);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

CLI_ARGP(argp, opts, parse_arg, doc);

static void report(void *ctx)
{
	vl_report(ctx);
}

static void prom(void *ctx, enum loop_when when)
{
	vl_prom_only(ctx);
}

static __u64 events_lost(void *ctx)
{
	struct vl_run *r = ctx;

	return maps_stat(r->obj->maps.counters, VL_STAT_EVENTS_LOST, r->ncpu);
}

static int handle_event(void *ctx, void *data, size_t len)
{
	if (len < sizeof(struct vl_event))
		return 0;
	vl_print_event(ctx, data);
	return 0;
}

static void banner(const struct verbslat_hooks *hk)
{
	char drv[128] = "";

	for (int d = 0; d < VL_NDRIVERS; d++)
		if (hk->driver[d])
			snprintf(drv + strlen(drv), sizeof(drv) - strlen(drv), "%s%s",
				 drv[0] ? ", " : "", verbslat_driver_module(d));
	/* on stderr with -j, so stdout stays pure JSON lines */
	fprintf(env.cli.json ? stderr : stdout,
		"Tracing work requests of kernel QPs (%s via %s)... Hit Ctrl-C to end.\n", drv,
		hk->fentry ? "fentry" : "kprobes");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct verbslat_load_opts lo = { .cli = &env.cli };
	struct verbslat_hooks hk;
	struct vl_run r = { .cli = &env.cli };
	struct loop lp = { .ctx = &r, .report = report, .events_lost = events_lost };
	int ret = 1;

	cli_parse(&argp, argc, argv, NULL);
	cli_setup(&env.cli, CLI_CAP_BPF | CLI_CAP_PERFMON);
	r.ncpu = libbpf_num_possible_cpus();
	if (r.ncpu <= 0)
		cli_die("cannot count CPUs");
	lo.devname = env.devname;
	lo.qpn_set = env.qpn_set;
	lo.qpn = env.qpn;
	lo.owners = env.ulp >= 0 ? ulp_owners[env.ulp] : NULL;
	lo.events = env.events;
	lo.force_kprobe = env.force_kprobe;
	r.obj = verbslat_load(&lo, &hk);
	if (!r.obj)
		return 1;
	if (env.cli.prom_path && !(r.prom = vl_prom_new())) {
		cli_err("out of memory");
		goto out;
	}
	lp.prom = env.cli.prom_path ? prom : NULL;
	r.status = btf_enum_load_module("ib_core", "ib_wc_status", NULL);
	r.opcode = btf_enum_load_module("ib_core", "ib_wr_opcode", "IB_WR_");
	banner(&hk);
	if (env.events) {
		lp.report = NULL;
		vl_print_event_header(&r);
		if (!loop_add_events(&lp, r.obj->maps.events, handle_event, &r, NULL))
			goto out;
	}
	ret = loop_run(&lp, &env.cli) ? 1 : 0;
out:
	vl_prom_free(r.prom);
	free(r.held);
	btf_enum_free(r.status);
	btf_enum_free(r.opcode);
	verbslat_bpf__destroy(r.obj);
	return ret;
}
