/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What each driver's port hw_counters mean: one table per driver family
 * (mlx5, irdma, bnxt_re, rxe), each counter named as the driver's source
 * names it in sysfs, with its meaning and a class that says what kind of
 * trouble its rise is evidence of (rocediag's LOSSY and CONGESTED read the
 * classes). tests/unit/rdmaqp_counters.c checks every name against the
 * real modules of Debian's kernels.
 */
#ifndef AGENTXDP_RDMAQP_COUNTERS_H
#define AGENTXDP_RDMAQP_COUNTERS_H

#include <stddef.h>

enum rdmaqp_cls {
	RQ_CLS_TRAFFIC,		/* packets, bytes, operations: work done */
	RQ_CLS_LOSS,		/* sequence errors, timeouts, retransmissions */
	RQ_CLS_CONGESTION,	/* CNPs, ECN marks */
	RQ_CLS_ERROR,		/* completions in error, protocol errors */
	RQ_CLS_RESOURCE,	/* objects in use, high watermarks */
	RQ_CLS_NR,
};

extern const char *const rdmaqp_cls_names[RQ_CLS_NR];

struct rdmaqp_cdesc {
	const char *name;	/* the hw_counters/ file */
	enum rdmaqp_cls cls;
	const char *meaning;
};

struct rdmaqp_family {
	const char *name;	/* "mlx5" */
	const char *module;	/* the RDMA driver's module: "mlx5_ib" */
	const char *source;	/* where the kernel names the counters */
	const struct rdmaqp_cdesc *c;
	size_t n;
};

/* every family, *n of them */
const struct rdmaqp_family *rdmaqp_families(size_t *n);
/* the family of a device: by the driver its parent device is bound to
 * (/sys/class/infiniband/DEV/device/driver), else by which family names
 * most of the hw_counters it has (rxe has no parent device); NULL: none */
const struct rdmaqp_family *rdmaqp_family_of(const char *sysfs, const char *dev,
					     const char *const *hw_names, size_t n);
/* a counter of family f (NULL: none) by name; NULL when not in its table */
const struct rdmaqp_cdesc *rdmaqp_counter_desc(const struct rdmaqp_family *f,
					       const char *name);

#endif
