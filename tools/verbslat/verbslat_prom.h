/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* verbslat's --prom file: running totals of the completions its reports
 * drain from the BPF side, and the work outstanding now (verbslat_prom.c) */
#ifndef AGENTXDP_VERBSLAT_PROM_H
#define AGENTXDP_VERBSLAT_PROM_H

#include <linux/types.h>
#include "verbslat.h"

/* series of QPs of their own (lib/prom.h's sticky cap), as rxeqp and
 * rdmaqp; the others are summed per device as qpn="other" */
#define VL_PROM_QPS 64

struct vl_prom;

/* one traced QP now, and its WRs outstanding */
struct vl_qp_row {
	__u64 qp;
	struct vl_qp q;
	__u64 send, oldest_send;	/* send WRs outstanding, the oldest's post time */
	__u64 recv, oldest_recv;	/* receive WRs posted, waiting for a message */
};

/* what a write shows beside the totals */
struct vl_prom_in {
	const struct vl_qp_row *qps;	/* every QP the BPF side knows */
	int nq;
	__u64 now_ns;			/* CLOCK_MONOTONIC, the WRs' post times' clock */
	const __u64 *counters;		/* VL_STAT_NR run counters */
	const char *const *counter_names;
	__u64 kernel_skipped;		/* hook calls the kernel skipped the tool for */
};

/* NULL when out of memory */
struct vl_prom *vl_prom_new(void);
void vl_prom_free(struct vl_prom *p);
/* completions drained from the BPF side into the totals of their QP
 * (dev, qpn), opcode and status (names); 0 or -ENOMEM */
int vl_prom_add(struct vl_prom *p, const char *dev, __u32 qpn, const char *opcode,
		const char *status, const struct vl_stat *s);
/* the file at path; 0 or -errno */
int vl_prom_write(struct vl_prom *p, const char *path, const struct vl_prom_in *in);

#endif
