/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* rxeqp's BPF side on rdma_rxe, fentry where allowed, else kprobes
 * (tools/rxeqp/rxeqp_load.c): shared by rxeqp and rocediag */
#ifndef AGENTXDP_RXEQP_LOAD_H
#define AGENTXDP_RXEQP_LOAD_H
#include <stdbool.h>
#include <linux/types.h>

#define RXEQP_MODULE "rdma_rxe"

struct cli_env;
struct rxeqp_bpf;

struct rxeqp_load_opts {
	const struct cli_env *cli;	/* the caller's common options: -v */
	int ifindex;		/* 0: any */
	unsigned int netns;	/* ifindex's namespace inode, 0: any */
	__u32 qpn;
	bool qpn_set;
	bool events;		/* the ring buffer of QP events */
	bool latency;		/* request-to-ACK latency per QP */
	bool force_kprobe;
};

struct rxeqp_hooks {
	bool fentry;		/* fentry, else kprobes */
	int nhooks, missing;	/* of the hooks, missing in this rdma_rxe */
};

/* loaded and attached; NULL with err set (no rdma_rxe, neither fentry nor
 * kprobes, a required function missing) or, when open, load or attach
 * failed, after a one-line error with err "" */
struct rxeqp_bpf *rxeqp_load(const struct rxeqp_load_opts *o, struct rxeqp_hooks *hk,
			     char *err, int errlen);

#endif
