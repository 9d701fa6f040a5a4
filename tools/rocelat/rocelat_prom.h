/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* rocelat's --prom file (tools/rocelat/rocelat_prom.c): what the report
 * (rocelat_report.c) read, written through lib/prom */
#ifndef AGENTXDP_ROCELAT_PROM_H
#define AGENTXDP_ROCELAT_PROM_H

#include <stdbool.h>
#include <linux/types.h>
#include "rocelat.h"
#include "lib/roce_names.h"

struct prom_source;

/* one flow of the latest report, its labels as text */
struct rocelat_prom_flow {
	char req[ADDR_STRLEN], resp[ADDR_STRLEN];
	char req_qpn[16];	/* "?" until paired */
	char resp_qpn[16], sport[8];
	char session[96];	/* the mirror session, "" when none */
	bool turnaround;	/* kind turnaround, else rtt */
	__u64 samples;
	double p50_ns, p99_ns;
};

struct rocelat_prom_in {
	const struct rocelat_counters *tot;	/* cumulative, all CPUs */
	const char *const *counter_names;	/* RL_NR names */
	__u64 live_flows, live_pending;
	double unit_s;		/* the histogram slots' unit in seconds */
	bool quantiles;		/* q_ns holds the latest report's round trips */
	double q_ns[4];		/* p50, p90, p99, max */
	const struct rocelat_prom_flow *flows;
	int nflows;
	const struct prom_source *sources;
	int nsources;
};

/* the whole file, written atomically; 0 or -errno */
int rocelat_prom_write(const char *path, const struct rocelat_prom_in *in);
void rocelat_prom_free(void);

#endif
