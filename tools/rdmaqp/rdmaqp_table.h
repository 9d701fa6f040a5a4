/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rdmaqp's view of every QP: the last netlink sample, the packets its PSNs
 * moved (24-bit, modulo 2^24), and what the control-path events said
 * (owner at creation, the PSNs a modify set, the last state).
 */
#ifndef AGENTXDP_RDMAQP_TABLE_H
#define AGENTXDP_RDMAQP_TABLE_H

#include <stdbool.h>
#include <linux/types.h>
#include "rdmaqp.h"
#include "rdmaqp_nl.h"

#define RDMAQP_PSN_MASK 0xffffffu

/* where a PSN's counting started */
enum rdmaqp_base {
	RQ_BASE_NONE,		/* not counting yet */
	RQ_BASE_SAMPLE,		/* the first sample in a state that sends/receives */
	RQ_BASE_MODIFY,		/* the PSN the modify to RTR/RTS set (eBPF) */
};

struct rdmaqp_psn {
	enum rdmaqp_base base;
	__u32 prev;		/* PSN counted up to */
	__u64 interval, total;	/* packets: this interval, since base */
};

struct rdmaqp_row {
	struct rdmaqp_key key;
	struct rdmaqp_nlqp nl;	/* last sample */
	bool sampled;		/* nl is set */
	bool in_dump;		/* queried by the latest poll (its dump, or alone) */
	bool destroyed;		/* destroy event seen */
	struct rdmaqp_psn tx, rx;	/* send PSN (sq), receive PSN (rq) */
	__u8 state;		/* last state known, either source */
	/* CLOCK_MONOTONIC seconds: since, what the PSN counts run from (the
	 * last query, or the create or modify that set a base); span, the
	 * seconds the latest query's counts (tx/rx.interval) cover */
	double since, span;
	double queried_at;	/* the last query (0: never), the round's order */
	/* owner at creation (eBPF) */
	bool created;
	__u32 owner_pid;
	__u64 cgroup_id, created_ns;
	char owner_comm[RDMAQP_COMM];
	char comm[RDMAQP_COMM];	/* the netlink pid's /proc comm, or kern_name */
};

#define RDMAQP_GONE_DEVS 64

/* the packets of a device's QPs that are gone (destroyed, or their
 * number reused): what --prom's per-device "other" series start from, so
 * that they never go back */
struct rdmaqp_gone {
	__u32 dev_index;
	__u64 tx, rx;
};

struct rdmaqp_table {
	struct rdmaqp_row *rows;
	int n, cap;
	struct rdmaqp_gone gone[RDMAQP_GONE_DEVS];
	int ngone;
};

/* the gone totals of dev_index (made when new); NULL: too many devices */
struct rdmaqp_gone *rdmaqp_gone_of(struct rdmaqp_table *t, __u32 dev_index);

/* the row of key, made (zeroed, state unknown) when new; NULL: no memory.
 * Rows are kept in key order (a binary search): a pointer to one holds
 * until the next row is made or forgotten */
struct rdmaqp_row *rdmaqp_row(struct rdmaqp_table *t, const struct rdmaqp_key *k);
/* a netlink sample of a QP: packets since the last one into its row;
 * returns the row, and *old_state the state before it */
struct rdmaqp_row *rdmaqp_sample(struct rdmaqp_table *t, const struct rdmaqp_nlqp *q,
				 __u8 *old_state);
/* an eBPF event on a QP into its row (owner, PSN bases, state) */
struct rdmaqp_row *rdmaqp_apply(struct rdmaqp_table *t, const struct rdmaqp_event *e);
/* before a poll: interval counts zeroed, in_dump cleared */
void rdmaqp_table_begin(struct rdmaqp_table *t);
/* after a poll: rows of dev_index that were not in its dump are gone */
void rdmaqp_table_forget(struct rdmaqp_table *t, __u32 dev_index);
/* a QP netlink says is gone (a query's ENOENT): its packets into its
 * device's gone totals, its row away */
void rdmaqp_table_drop(struct rdmaqp_table *t, const struct rdmaqp_key *k);
void rdmaqp_table_free(struct rdmaqp_table *t);

#endif
