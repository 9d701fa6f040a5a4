/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --delay's fq qdisc (tools/roceinject_fq.c): fq holds a packet until its
 * earliest departure time (skb->tstamp, which the BPF side sets), a
 * noqueue or pfifo root sends it at once. Added at the interface's root
 * for the run with a handle of our own, and removed at exit by a watchdog
 * process that waits for the tool's end, so a kill -9 leaves no qdisc.
 */
#ifndef AGENTXDP_ROCEINJECT_FQ_H
#define AGENTXDP_ROCEINJECT_FQ_H
#include <stdbool.h>
#include <sys/types.h>

/* the root qdisc's handle, 0x1A7E: (ours, and no default qdisc's) */
#define INJECT_FQ_HANDLE 0x1A7E0000U

struct inject_fq {
	bool added;
	int ifindex;
	int pipe_wr;		/* the watchdog's end of run: EOF */
	pid_t watchdog;
};

/* fq at the root of ifname, and its watchdog; 0, or -errno after a
 * one-line error (a root qdisc of someone else's is never replaced) */
int inject_fq_add(struct inject_fq *fq, const char *ifname);
/* the qdisc removed (by the watchdog, which then ends) */
void inject_fq_remove(struct inject_fq *fq);

#endif
