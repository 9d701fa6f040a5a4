/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* verbslat's BPF side on the RDMA drivers present: which driver each
 * device has, the hooks picked, loaded, attached (verbslat_load.c) */
#ifndef AGENTXDP_VERBSLAT_LOAD_H
#define AGENTXDP_VERBSLAT_LOAD_H
#include <stdbool.h>

struct cli_env;
struct verbslat_bpf;

/* the drivers whose entry points verbslat knows */
enum vl_driver { VL_RXE, VL_MLX5, VL_IRDMA, VL_BNXT, VL_NDRIVERS };

struct verbslat_load_opts {
	const struct cli_env *cli;	/* -v */
	const char *devname;		/* -d, NULL: every device */
	bool qpn_set;
	unsigned int qpn;		/* -Q */
	const char *const *owners;	/* --ulp: up to VL_OWNERS module names
					 * (NULL ends them); NULL: any owner */
	bool events;			/* -e */
	bool force_kprobe;
	unsigned int max_wrs;		/* WRs kept outstanding per map; 0: the BPF side's */
	/* where a failure's one line goes instead of stderr (rocediag's
	 * "cannot see" line); NULL: stderr. A load or attach failure is
	 * still printed (err left empty) */
	char *err;
	int errlen;
};

struct verbslat_hooks {
	bool fentry;			/* fentry, else kprobes */
	bool driver[VL_NDRIVERS];	/* hooked */
};

/* the module a driver's functions are in ("rdma_rxe", "mlx5_ib" ...) */
const char *verbslat_driver_module(enum vl_driver d);

/* loaded and attached; NULL after a one-line error on stderr, or in
 * o->err (no such device, a driver it does not know, no module BTF, load
 * or attach) */
struct verbslat_bpf *verbslat_load(const struct verbslat_load_opts *o, struct verbslat_hooks *hk);

#endif
