/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* verbslat's tables, JSON lines and error events (verbslat_report.c) */
#ifndef AGENTXDP_VERBSLAT_REPORT_H
#define AGENTXDP_VERBSLAT_REPORT_H

#include "verbslat.h"

struct cli_env;
struct btf_enum_names;
struct verbslat_bpf;
struct vl_event;
struct vl_prom;

/* completions of one QP, opcode and status */
struct vl_row {
	struct vl_stat_key k;
	struct vl_stat s;
};

/* what one run keeps, handed to the loop's callbacks */
struct vl_run {
	const struct cli_env *cli;
	struct verbslat_bpf *obj;
	int ncpu;
	struct btf_enum_names *status;	/* enum ib_wc_status, from ib_core's BTF */
	struct btf_enum_names *opcode;	/* enum ib_wr_opcode, IB_WR_ stripped */
	struct vl_prom *prom;		/* --prom's totals; NULL without --prom */
	/* the interval's rows drained so far (a --prom write between two
	 * tables drains the BPF side's map too), for the next table */
	struct vl_row *held;
	int nheld;
};

/* the interval's completions per QP, opcode and status (then cleared),
 * the work outstanding per QP, the totals; with --prom its file too */
void vl_report(struct vl_run *r);
/* the --prom file alone: the completions drained into its totals and
 * kept for the next table */
void vl_prom_only(struct vl_run *r);
void vl_print_event_header(const struct vl_run *r);
void vl_print_event(const struct vl_run *r, const struct vl_event *e);

#endif
