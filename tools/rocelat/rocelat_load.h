/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* rocelat's BPF side opened, configured, loaded and attached to an
 * interface (tools/rocelat/rocelat_load.c): shared by rocelat and rocediag */
#ifndef AGENTXDP_ROCELAT_LOAD_H
#define AGENTXDP_ROCELAT_LOAD_H
#include <stdbool.h>
#include <linux/types.h>
#include "lib/netattach.h"

struct cli_env;
struct rocelat_kernel;
struct rocelat_backend;

struct rocelat_load_opts {
	const struct cli_env *cli;	/* the caller's common options: --roce-port, -v */
	__u64 unit_ns;		/* histogram unit */
	long timeout_ms;	/* a request unanswered this long is a timeout */
	long max_flows;		/* 0: the object's own (DEFAULT_MAX_FLOWS) */
	bool offline;		/* -r: the tc entry point only, capture clock */
	bool decap;
	int mirror_time;	/* MIRROR_TIME_* */
	bool no_egress;		/* tc egress not wanted (--mirror, --no-egress) */
	__u32 samples_bytes;	/* every sample also as an event, in a ring
				 * buffer this big (--svg); 0: none */
};

/* NULL where this kernel can run rocelat's BPF side, else what it lacks */
const char *rocelat_load_unsupported(void);

/* true where rocelat_load() takes the build with bounded loops instead of
 * bpf_loop (before 5.17) */
bool rocelat_load_bounded(void);

/* the object this kernel can take, loaded; NULL after a one-line error.
 * Kernels without bpf_loop (before 5.17) get the bounded-loop build of
 * the same source (rocelat_kernel.h). */
struct rocelat_kernel *rocelat_load(const struct rocelat_load_opts *o);
/* k as the report, --svg and the capture loop drive it
 * (rocelat_backend.h); closing that unloads k */
struct rocelat_backend *rocelat_kernel_backend(struct rocelat_kernel *k);

/* whose the programs are: without tcx, each tool's clsact filters have a
 * handle and priority of their own */
enum rocelat_owner { ROCELAT_BY_ROCELAT, ROCELAT_BY_ROCEDIAG, ROCELAT_OWNERS };

/* XDP (else tc ingress) and, with egress, tc egress on f, as clsact
 * filters of by's handle where there is no tcx. 0, or 1 after a line. */
int rocelat_attach(struct rocelat_kernel *k, struct netattach *f,
		   enum netattach_mode mode, bool egress, enum rocelat_owner by);

#endif
