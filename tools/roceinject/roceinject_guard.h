/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What roceinject puts on an interface goes when it ends, however it ends
 * (tools/roceinject/roceinject_guard.c). A watchdog process, forked before any BPF
 * program is loaded (so it holds none), waits for EOF on a pipe, which
 * comes when the tool exits or is killed, and then removes:
 * - --delay's fq qdisc: fq holds a packet until its earliest departure
 *   time (skb->tstamp, which the BPF side sets), where a noqueue or pfifo
 *   root sends it at once. Added at the interface's root for the run,
 *   with a handle of our own;
 * - on kernels without tcx (before 6.6), the clsact filter, once no
 *   process holds its program, and the clsact qdisc if the run made it.
 * A tcx link goes with the process by itself.
 */
#ifndef AGENTXDP_ROCEINJECT_GUARD_H
#define AGENTXDP_ROCEINJECT_GUARD_H
#include <stdbool.h>
#include <sys/types.h>
#include "lib/netattach.h"

/* the root qdisc's handle, 0x1A7E: (ours, and no default qdisc's) */
#define INJECT_FQ_HANDLE 0x1A7E0000U

struct inject_guard {
	int ifindex;
	bool fq;		/* our fq qdisc is at the root */
	int pipe_wr;		/* -1: no watchdog */
	pid_t watchdog;
};

struct cli_env;

/* the watchdog for ifname (of cli's -N namespace, else ours), with fq at
 * its root first when fq is set; 0, or -errno after a one-line error (a
 * root qdisc of someone else's is never replaced) */
int inject_guard_start(struct inject_guard *g, const struct cli_env *cli, const char *ifname,
		       bool fq);
/* tells the watchdog what f attached (a clsact filter of id) */
void inject_guard_attached(struct inject_guard *g, const struct netattach *f,
			   const struct netattach_tc_id *id);
/* the end of the run: the watchdog removes what is left and ends */
void inject_guard_end(struct inject_guard *g);

#endif
