/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rdmaqp's polling of the QPs within a budget of QP queries per interval.
 * Every QP RDMA netlink reports costs the kernel an ib_query_qp (nldev.c:
 * fill_res_qp_entry), a firmware command on mlx5, in a dump as much as
 * alone. Up to the budget, one dump per device per interval (it also
 * finds new QPs). Past it, the QPs are queried alone (RES_QP_GET's doit),
 * budget of them per interval, least recently queried first: a round of
 * every QP takes ceil(QPs / budget) intervals. The set of QPs then comes
 * from one dump per device at the first poll, and after it from eBPF's
 * create and destroy events (a dump again when events were lost); without
 * eBPF, a dump of a device whose QP count (RES_GET's summary, which
 * queries no QP) changed or one of whose QPs is gone, at most once a round.
 */
#ifndef AGENTXDP_RDMAQP_POLL_H
#define AGENTXDP_RDMAQP_POLL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "rdmaqp_nl.h"
#include "rdmaqp_table.h"

#define RDMAQP_BUDGET_DEFAULT 256
#define RDMAQP_POLL_DEVS 64

/* what the poll knows of a device's QP set */
struct rdmaqp_poll_dev {
	__u32 index;
	__u64 count;	/* its QP count at its last dump */
	bool dumped;	/* dumped once: its QPs are known */
	bool lost;	/* a QP of it gone or moved since: dump again (no eBPF) */
};

struct rdmaqp_poll {
	/* settings */
	unsigned int budget;	/* QP queries per interval; 0: no bound */
	bool bpf;		/* eBPF's events keep the QP set */
	const char *only_dev;	/* -d, or NULL */
	bool resync;		/* the caller's: eBPF lost events, dump again */
	/* state */
	struct rdmaqp_poll_dev dev[RDMAQP_POLL_DEVS];
	int ndev;
	unsigned int since_dump;	/* polls since a dump */
	/* the last poll */
	unsigned int known;	/* QPs of the selected devices it can query */
	unsigned int queried;	/* QPs it queried (a dump's entries, the single ones) */
	unsigned int dumps;	/* devices it dumped */
	unsigned int round;	/* polls a round of every known QP takes */
	bool bounded;		/* QPs past the budget: queried in rounds */
	__u64 queries_total;
	/* scratch */
	struct rdmaqp_qpreq *req;
	int *err;
	void *order;
	size_t cap;
};

/* a QP queried: its row (after rdmaqp_sample) and its state before */
typedef void (*rdmaqp_poll_fn)(void *ctx, struct rdmaqp_row *row, __u8 old_state);

/* one poll of the QPs of devs (now: CLOCK_MONOTONIC seconds): rows
 * queried get in_dump, span and since; fn is called for each; 0 or the
 * -errno of netlink */
int rdmaqp_poll_qps(struct rdmaqp_poll *p, struct mnl_socket *nl, struct rdmaqp_table *t,
		    const struct rdmaqp_dev *devs, int ndevs, double now, rdmaqp_poll_fn fn,
		    void *ctx);
void rdmaqp_poll_free(struct rdmaqp_poll *p);

#endif
