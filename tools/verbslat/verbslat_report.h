/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* verbslat's tables, JSON lines and error events (verbslat_report.c) */
#ifndef AGENTXDP_VERBSLAT_REPORT_H
#define AGENTXDP_VERBSLAT_REPORT_H

struct cli_env;
struct btf_enum_names;
struct verbslat_bpf;
struct vl_event;

/* what one run keeps, handed to the loop's callbacks */
struct vl_run {
	const struct cli_env *cli;
	struct verbslat_bpf *obj;
	int ncpu;
	struct btf_enum_names *status;	/* enum ib_wc_status, from ib_core's BTF */
	struct btf_enum_names *opcode;	/* enum ib_wr_opcode, IB_WR_ stripped */
};

/* the interval's completions per QP, opcode and status (then cleared),
 * the work outstanding per QP, the totals */
void vl_report(struct vl_run *r);
void vl_print_event_header(const struct vl_run *r);
void vl_print_event(const struct vl_run *r, const struct vl_event *e);

#endif
