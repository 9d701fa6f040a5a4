// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rocelat's BPF side loaded and attached (rocelat_load.h) */
#include <errno.h>
#include <stdlib.h>
#include <bpf/libbpf.h>
#include "rocelat.h"
#include "rocelat.skel.h"
#include "rocelat_kernel.h"
#include "rocelat_load.h"
#include "lib/cli.h"
#include "lib/probe.h"
#include "lib/netattach.h"

/*
 * XDP for jumbo frames: BPF_F_XDP_HAS_FRAGS (what libbpf's
 * SEC("xdp.frags") sets, and at load, too late to take back) where the
 * kernel has it (5.18+); before, the program loads without it and
 * netattach falls back to tc ingress where a driver refuses it at a
 * large MTU. AGENTXDP_NO_XDP_FRAGS: a test hook, so that this kernel
 * runs that path too.
 */
static void rocelat_load_frags(struct rocelat_kernel *k)
{
	struct bpf_program *p = k->progs.rocelat_xdp;

	if (!probe_xdp_frags() || getenv("AGENTXDP_NO_XDP_FRAGS"))
		return;
	k->rodata->targ_xdp_frags = true;
	bpf_program__set_flags(p, bpf_program__flags(p) | BPF_F_XDP_HAS_FRAGS);
}

/*
 * ROCELAT_VERIFIER_STATS: a test hook; with -v, libbpf prints each
 * program's verifier statistics (log level 4: "processed N insns"), so
 * that a test sees how close a build comes to the verifier's limit.
 */
static void rocelat_load_stats(struct rocelat_kernel *k)
{
	struct bpf_program *p[] = { k->progs.rocelat_xdp, k->progs.rocelat_tc,
				    k->progs.rocelat_tc_in, k->progs.rocelat_sweep };

	if (!getenv("ROCELAT_VERIFIER_STATS"))
		return;
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		bpf_program__set_log_level(p[i], 4);
}

/* the one setup of either build (rocelat_kernel.h: the same pieces) */
static void rocelat_load_config(struct rocelat_kernel *k, const struct rocelat_load_opts *o)
{
	long max_flows = o->max_flows;

	k->rodata->targ_roce_port = o->cli->roce_port;
	ROCELAT_SET_UNIT(k->rodata, o->unit_ns);
	k->rodata->targ_timeout_ns = (__u64)o->timeout_ms * 1000000ULL;
	k->rodata->targ_offline = o->offline;
	k->rodata->targ_decap = o->decap;
	k->rodata->targ_mirror_time = o->mirror_time;
	rocelat_load_frags(k);
	rocelat_load_stats(k);
	if (o->offline) {
		bpf_program__set_autoload(k->progs.rocelat_xdp, false);
		bpf_program__set_autoload(k->progs.rocelat_tc_in, false);
	} else if (o->no_egress) {
		bpf_program__set_autoload(k->progs.rocelat_tc, false);
	}
	if (!max_flows)
		return;
	/* whole sets: at most max_flows */
	k->rodata->targ_flow_sets = max_flows / FLOW_WAYS;
	bpf_map__set_max_entries(k->maps.pending, ROCELAT_PENDING_N(max_flows));
	bpf_map__set_max_entries(k->maps.flows_used, ROCELAT_USED_WORDS(max_flows));
	bpf_map__set_max_entries(k->maps.flow_tags, max_flows / FLOW_WAYS);
	bpf_map__set_max_entries(k->maps.cands, ROCELAT_CANDS_N(max_flows));
	bpf_map__set_max_entries(k->maps.waitport, ROCELAT_WAIT_N(max_flows));
	bpf_map__set_max_entries(k->maps.untracked, ROCELAT_WAIT_N(max_flows));
	bpf_map__set_max_entries(k->maps.waitpsn, ROCELAT_WAIT_N(max_flows));
	bpf_map__set_max_entries(k->maps.pairs, ROCELAT_PAIRS_N(max_flows));
	bpf_map__set_max_entries(k->maps.held, ROCELAT_CANDS_N(max_flows));
	k->rodata->targ_samples = o->samples_bytes != 0;
	if (o->samples_bytes)
		bpf_map__set_max_entries(k->maps.samples, o->samples_bytes);
}

const char *rocelat_load_unsupported(void)
{
	/* the flow statistics are claimed for zeroing by a compare-and-swap
	 * (rocelat_flow.bpf.h): say so before the verifier says only
	 * "rejected" */
	if (!probe_atomic_cmpxchg())
		return "this kernel lacks the BPF compare-and-exchange instruction "
		       "(5.12+), which rocelat's BPF program needs";
	/* the timeout sweep walks the flow table with it */
	if (!probe_for_each_map_elem())
		return "this kernel lacks the BPF helper bpf_for_each_map_elem "
		       "(5.13+), which rocelat's BPF program needs";
	return NULL;
}

bool rocelat_load_bounded(void)
{
	/* ROCELAT_FORCE_NO_BPF_LOOP: a test hook, so that a kernel with
	 * bpf_loop runs the bounded build too (tests/lib/rocelat_bounded.bash) */
	return !probe_bpf_loop() || getenv("ROCELAT_FORCE_NO_BPF_LOOP");
}

struct rocelat_kernel *rocelat_load(const struct rocelat_load_opts *o)
{
	const char *why = rocelat_load_unsupported();
	struct rocelat_kernel *k;
	bool bounded;
	int err;

	if (why) {
		/* -r runs natively (rocelat_native.c); --in-kernel asked
		 * for this */
		cli_err("%s: it cannot run here %s", why,
			o->offline ? "(-r without --in-kernel can)" : "live (-r can)");
		return NULL;
	}
	/* the ring walk and the pairing search are bpf_loop() callbacks
	 * (5.17+); before, the build of the same source with bounded loops */
	bounded = rocelat_load_bounded();
	k = rocelat_kernel_open(bounded);
	if (!k) {
		cli_bpf_err("open rocelat's BPF object", -errno);
		return NULL;
	}
	if (o->cli->verbose && bounded)
		cli_err("no bpf_loop (5.17+): loading the build with bounded loops");
	rocelat_load_config(k, o);
	err = bpf_object__load_skeleton(k->skeleton);
	if (err) {
		cli_bpf_err("load BPF programs", err);
		rocelat_backend_close(&k->be);
		return NULL;
	}
	return k;
}

struct rocelat_backend *rocelat_kernel_backend(struct rocelat_kernel *k)
{
	return &k->be;
}

/* the clsact filters' identities (a killed run's leftover is recognised
 * by them), rocelat's and rocediag's own, so that the two share an
 * interface without tcx too; by owner and then netattach_dir */
static const struct netattach_tc_id rocelat_tc_ids[ROCELAT_OWNERS][NETATTACH_DIRS] = {
	[ROCELAT_BY_ROCELAT] = {
		[NETATTACH_EGRESS] = { .handle = 0x52CE, .prio = NETATTACH_PRIO_ROCELAT,
				       .prog_name = "rocelat_tc", .tool = "rocelat" },
		[NETATTACH_INGRESS] = { .handle = 0x52CE, .prio = NETATTACH_PRIO_ROCELAT,
					.prog_name = "rocelat_tc_in", .tool = "rocelat" },
	},
	[ROCELAT_BY_ROCEDIAG] = {
		[NETATTACH_EGRESS] = { .handle = 0xD1A6, .prio = NETATTACH_PRIO_ROCEDIAG,
				       .prog_name = "rocelat_tc", .tool = "rocediag" },
		[NETATTACH_INGRESS] = { .handle = 0xD1A6, .prio = NETATTACH_PRIO_ROCEDIAG,
					.prog_name = "rocelat_tc_in", .tool = "rocediag" },
	},
};

int rocelat_attach(struct rocelat_kernel *k, struct netattach *f,
		   enum netattach_mode mode, bool egress, enum rocelat_owner by)
{
	const struct netattach_tc_id *id = rocelat_tc_ids[by];

	if (netattach_ingress(f, k->progs.rocelat_xdp, k->progs.rocelat_tc_in,
			      mode, &id[NETATTACH_INGRESS]))
		return 1;
	if (egress && netattach_tc_egress(f, k->progs.rocelat_tc, &id[NETATTACH_EGRESS]))
		return 1;
	return 0;
}
