/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rdmaqp --prom FILE: per port every counter (hw_counters/ and counters/,
 * with the driver table's class), per netdev and priority the pause
 * frames, per QP the packets its PSNs moved and its state. QPs grow with
 * the host's work, so they go through lib/prom.h's sticky cap
 * (RDMAQP_PROM_QPS on their own, the rest and every QP gone summed per
 * device into qpn="other", which never goes back).
 */
#ifndef AGENTXDP_RDMAQP_PROM_H
#define AGENTXDP_RDMAQP_PROM_H

#include <stdbool.h>
#include <linux/types.h>
#include "lib/prom.h"
#include "rdmaqp_nl.h"
#include "rdmaqp_poll.h"
#include "rdmaqp_port.h"
#include "rdmaqp_table.h"

#define RDMAQP_PROM_QPS 64

struct rdmaqp_prom_in {
	const char *path;
	struct rdmaqp_table *qps;
	const struct rdmaqp_port *ports;
	int nports;
	const struct rdmaqp_dev *devs;
	int ndevs;
	/* the name of a QP state (enum ib_qp_state) */
	const char *(*state_name)(const void *ctx, __u8 st, char *buf, int len);
	const void *ctx;
	bool bpf;		/* the control-path hooks are attached */
	bool bpf_off;		/* --no-bpf */
	const char *no_bpf;	/* why not, when not */
	const struct rdmaqp_poll *poll;	/* the budget and the last poll */
	double now;		/* CLOCK_MONOTONIC seconds of the last poll */
};

/* the per-port and per-netdev families (counters, resources, pause
 * frames, pause storms) into pf: rdmaqp's file, and rocediag's where it
 * polls rdmaqp's sources, under the same names */
void rdmaqp_prom_ports(struct prom_file *pf, const struct rdmaqp_port *ports, int nports);
/* one write of the file; a failure is reported once (cli_prom_err()) by
 * the caller from the -errno returned */
int rdmaqp_prom_write(struct prom_cap *cap, const struct rdmaqp_prom_in *in);

#endif
