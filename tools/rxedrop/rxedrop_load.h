/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* rxedrop's BPF side opened, filtered, loaded and attached to kfree_skb
 * (tools/rxedrop/rxedrop_load.c): shared by rxedrop and rocediag */
#ifndef AGENTXDP_RXEDROP_LOAD_H
#define AGENTXDP_RXEDROP_LOAD_H
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct cli_env;
struct ksyms;

struct rxedrop_bpf;

struct rxedrop_load_opts {
	const struct cli_env *cli;	/* the caller's common options: --roce-port */
	int scope;		/* enum rxedrop_scope */
	int ifindex;		/* within netns_inum; 0: any */
	unsigned int netns_inum;	/* network namespace inode, 0: any */
	int port;		/* 0: any */
	bool events;		/* the ring buffer, else counts */
	bool stack;
	unsigned int snaplen;	/* -w: bytes of each packet into its event, 0 none */
	const struct ksyms *ksyms;	/* rdma_rxe's text, to leave its frees out */
};

/* tp_btf where the kernel has it (*use_tp_btf), else raw_tp; NULL after
 * a one-line error. Drop reasons must be loaded (drop_reasons_load()). */
struct rxedrop_bpf *rxedrop_load(const struct rxedrop_load_opts *o, bool *use_tp_btf);

/* how rxe_rcv's checks are hooked ("fexit", "kprobes"), NULL where they
 * are not (no rdma_rxe loaded, or neither hook allowed): then drops in
 * rxe_rcv carry RXE_CHECK_NONE */
const char *rxedrop_checks_hooked(const struct rxedrop_bpf *obj);

/* enum rxe_check's name for output ("icrc"), NULL for RXE_CHECK_NONE */
const char *rxedrop_check_name(unsigned int check);

/* the drop reason's name, and for a drop in rxe_rcv the check that
 * failed: "NOT_SPECIFIED rxe:icrc" */
const char *rxedrop_reason_str(__u32 reason, __u32 check, char *buf, size_t len);

/* -w: a drop event of len bytes (a struct drop_event_cap when the program
 * copied bytes) into p at wall-clock time t, the drop as -j names it in the
 * comment: "location=LOCATION reason=REASON[ rxe_check=CHECK]" */
struct pcapng;
void rxedrop_write_packet(struct pcapng *p, const void *event, size_t len,
			  const char *location, double t);

/* kfree_skb passes a drop reason (5.17+); before, drops count by location */
bool rxedrop_has_reason(void);

#endif
