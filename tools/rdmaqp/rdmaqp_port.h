/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A port's counters as the driver exports them in sysfs:
 * /sys/class/infiniband/DEV/ports/N/counters/ (the IB PMA set) and
 * hw_counters/ (the driver's own: mlx5's out_of_sequence, rxe's
 * sent_pkts ...), every file read each interval, named as the driver
 * names it.
 */
#ifndef AGENTXDP_RDMAQP_PORT_H
#define AGENTXDP_RDMAQP_PORT_H

#include <stdbool.h>
#include <linux/types.h>
#include "rdmaqp_counters.h"
#include "rdmaqp_pfc.h"

#define RDMAQP_CNT_NAME 64

struct rdmaqp_counter {
	char name[RDMAQP_CNT_NAME];	/* the file's name */
	bool hw;			/* hw_counters/, else counters/ */
	bool valid;			/* read this time */
	bool ever;			/* read before */
	__u64 value, prev;
	bool has_prev;
};

struct rdmaqp_port {
	char dev[64];
	__u32 port;
	struct rdmaqp_counter *cnt;
	int n;
	/* the driver family whose table names the hw_counters (NULL: none) */
	const struct rdmaqp_family *family;
	bool family_known;
	/* the port's netdev (its first GID's), "" when it has none, and its
	 * pause counters */
	char netdev[16];
	struct rdmaqp_pfc pfc;
};

/* reads every counter of DEV's port N (sysfs root: /sys normally) into p,
 * keeping the previous values, and its netdev's pause counters; 0, or
 * -errno when the port has no counter directory at all */
int rdmaqp_port_read(struct rdmaqp_port *p, const char *sysfs);
void rdmaqp_port_free(struct rdmaqp_port *p);

#endif
