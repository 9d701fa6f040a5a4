/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocediag: the four tools' BPF sides in one process (rocediag_sources.c),
 * their evidence joined by QP and judged (tools/rocediag/diag.c), one verdict
 * line per QP (rocediag_output.c).
 */
#ifndef AGENTXDP_ROCEDIAG_H
#define AGENTXDP_ROCEDIAG_H
#include <stdbool.h>
#include <stdio.h>
#include "diag.h"
#include "lib/cli.h"
#include "lib/loop.h"

struct prom_file;

#define ROCEDIAG_MAX_IFACES	8
#define ROCEDIAG_MAX_QPS	4096

struct rocediag_cfg {
	struct cli_env cli;	/* the common options */
	const char *ifnames[ROCEDIAG_MAX_IFACES];
	int nifs;
	int xdp_mode;		/* enum netattach_mode */
	long timeout_ms;	/* rocelat's --timeout */
	bool no_rxe, no_rules;	/* leave a source out */
	bool problems;		/* --problems: QPs not OK, a line per peer pair */
	bool mirror;		/* --mirror: a collector; latency alone */
	unsigned int snaplen;	/* --snaplen (struct pcapng_args, lib/pcapng.h) */
	struct pcapng *pcap;	/* -w's file, open; NULL without -w */
};

/* load and attach every source the kernel allows; what is missing goes
 * into src with its reason. 0, or -1 after a one-line error when nothing
 * at all can be watched. Ring buffers are added to lp. */
int rocediag_sources_open(const struct rocediag_cfg *cfg, struct diag_sources *src,
			  struct loop *lp);
/* everything detached and freed */
void rocediag_sources_close(void);
/* the interval since the last call read into t (reset first); its length
 * in seconds */
double rocediag_sources_read(struct diag_table *t);

/* rdmaqp's source (rocediag_rdma.c): RDMA netlink's QPs and the ports'
 * counters, src->rdma set when there is an RDMA device to poll */
void rocediag_rdma_open(const struct rocediag_cfg *cfg, struct diag_sources *src,
			struct loop *lp);
/* the interval's QPs no other source has an entry for into t; rdma_rxe's
 * left to rxeqp when rxe_up */
void rocediag_rdma_read(struct diag_table *t, bool rxe_up);
/* the ports' counters and pause frames of the last read into pf, under
 * rdmaqp --prom's names (nothing without an RDMA device) */
void rocediag_rdma_prom(struct prom_file *pf);
void rocediag_rdma_close(void);

/* verbslat's source (rocediag_verbs.c): the work requests of the kernel
 * QPs of the RDMA drivers it knows; src->verbs set when hooked, else
 * src->no_verbs and verbs_absent say why */
void rocediag_verbs_open(const struct rocediag_cfg *cfg, struct diag_sources *src);
/* the interval's QPs with work into t: the entry of their QP pair, else
 * their own (after rocediag_rdma_read(): its entries are joined) */
void rocediag_verbs_read(struct diag_table *t);
void rocediag_verbs_close(void);

/* one report of t: text or -j */
void rocediag_print(const struct diag_table *t, const struct diag_sources *src,
		    const struct rocediag_cfg *cfg);
/* the "cannot see" lines of the sources missing */
void rocediag_print_missing(FILE *out, const struct diag_sources *src);
/* --prom: the verdicts, the RoCE packets seen and which sources are up */
void rocediag_prom(const struct diag_table *t, const struct diag_sources *src,
		   const struct rocediag_cfg *cfg);
void rocediag_output_free(void);

#endif
