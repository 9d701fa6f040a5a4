/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* rocelat's report (tools/rocelat/rocelat_report.c), as the loader drives it */
#ifndef AGENTXDP_ROCELAT_REPORT_H
#define AGENTXDP_ROCELAT_REPORT_H

#include <stdbool.h>
#include <linux/types.h>

/* be: the program, whichever build runs it (rocelat_backend.h) */
struct cli_env;
struct prom_source;
struct rocelat_backend;

/* what the report takes from the command line */
struct rocelat_report_cfg {
	const struct cli_env *cli;	/* the common options: -j, -T, -v, --prom, count */
	bool flows;		/* -F: the per-flow table */
	bool offline;		/* -r: times are the capture's */
	__u64 unit_ns;		/* -m, --nanoseconds or microseconds */
	const char *unit;	/* its name in the histogram header */
	int ncpu;		/* libbpf_num_possible_cpus(): room for the
				 * counters of each (be->counters) */
	__u32 max_flows;	/* --max-flows: the flow table's size */
	__u32 wait_n;		/* the pairing index's (ROCELAT_WAIT_N) */
	/* --prom: what it watches, up or not (lib/prom.h), kept by reference */
	const struct prom_source *sources;
	int nsources;
};

/* before the first report: room for nrows flow rows; 0 or -ENOMEM */
int rocelat_report_init(const struct rocelat_report_cfg *cfg, int nrows);
void rocelat_report_free(void);
/* one report: the histograms, counters and flows since the last one
 * (interval: the flow statistics start a new interval), --prom too */
void rocelat_report(struct rocelat_backend *be, bool interval);
/* --prom alone: at start (nothing read yet), and without an interval */
void rocelat_report_prom_start(struct rocelat_backend *be);
void rocelat_report_prom(struct rocelat_backend *be);

#endif
