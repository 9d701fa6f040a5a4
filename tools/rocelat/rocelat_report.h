/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* rocelat's report (tools/rocelat/rocelat_report.c), as the loader drives it */
#ifndef AGENTXDP_ROCELAT_REPORT_H
#define AGENTXDP_ROCELAT_REPORT_H

#include <stdbool.h>
#include <linux/types.h>

/* obj: the loaded BPF object; NULL: its native build, which -r runs
 * (tools/rocelat/rocelat_native.h) */
struct cli_env;
struct rocelat_bpf;

/* what the report takes from the command line */
struct rocelat_report_cfg {
	const struct cli_env *cli;	/* the common options: -j, -T, -v, --prom, count */
	bool flows;		/* -F: the per-flow table */
	bool offline;		/* -r: times are the capture's */
	__u64 unit_ns;		/* -m, --nanoseconds or microseconds */
	const char *unit;	/* its name in the histogram header */
	int ncpu;
};

/* before the first report: room for nrows flow rows; 0 or -ENOMEM */
int rocelat_report_init(const struct rocelat_report_cfg *cfg, int nrows);
void rocelat_report_free(void);
/* one report: the histograms, counters and flows since the last one
 * (interval: the flow statistics start a new interval), --prom too */
void rocelat_report(struct rocelat_bpf *obj, bool interval);
/* --prom alone: at start (nothing read yet), and without an interval */
void rocelat_report_prom_start(struct rocelat_bpf *obj);
void rocelat_report_prom(struct rocelat_bpf *obj);

/* the reading of the maps, for other readers (rocediag): requests
 * unanswered for --timeout counted now (rocelat_sweep), and the flows'
 * statistics moved to a new interval; returns the epoch just ended, whose
 * buffer (pending_flow_stats()) now holds the interval's statistics */
void rocelat_sweep(struct rocelat_bpf *obj);
/* cb(&index, flow, ctx) for every entry of the flow table that has held a
 * flow (flows_used), read one by one; its used says whether it still does */
void rocelat_flows_for_each(struct rocelat_bpf *obj,
			    int (*cb)(const void *key, const void *val, void *ctx),
			    void *ctx);
__u32 rocelat_next_interval(struct rocelat_bpf *obj);

#endif
