/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rxedrop: the types both sides share, tools/rxedrop/rxedrop.bpf.c and
 * the loader tools/rxedrop/rxedrop.c: what is counted (scope), the count
 * key and slot of a drop, and the event of -e.
 */
#ifndef AGENTXDP_RXEDROP_H
#define AGENTXDP_RXEDROP_H

#include "lib/pkt_info.h"
#include "lib/pkt_cap.h"

#define IFNAMSIZ_AX 16

enum rxedrop_scope {
	SCOPE_ROCE = 0,		/* UDP to the RoCE port only (default) */
	SCOPE_UDP,		/* any UDP */
	SCOPE_ALL,		/* any packet */
};

enum rxedrop_stat {
	STAT_EVENTS_LOST,	/* ring buffer full */
	STAT_COUNTS_LOST,	/* a drop site and reason the drops map had no room for */
	STAT_RXE_CONSUMED,	/* packets rdma_rxe freed after its QP took them in */
	STAT_NR,
};

/*
 * Which of rdma_rxe's receive checks dropped a packet in rxe_rcv (6.1's
 * rxe_recv.c: length, destination GID, BTH version and QPN 0, then the QP
 * lookup, the QP's type, state and address, its P_Key and Q_Key, last the
 * ICRC), where the loader could hook rxe_rcv and the three checks that are
 * functions of their own (rxe_pool_get_index, check_keys, rxe_icrc_check).
 * The others are inlined: named by elimination, a group each.
 */
enum rxe_check {
	RXE_CHECK_NONE = 0,	/* not a drop in rxe_rcv, or not hooked */
	RXE_CHECK_HEADER,	/* before the QP lookup: length, GID, version, QPN 0 */
	RXE_CHECK_NO_QP,	/* no QP has the destination QPN */
	RXE_CHECK_QP,		/* QP found, keys not reached: type/state or address */
	RXE_CHECK_KEYS,		/* check_keys: P_Key (or a UD QP's Q_Key) */
	RXE_CHECK_ICRC,		/* rxe_icrc_check */
	RXE_CHECK_UNKNOWN,	/* in rxe_rcv, but not after a check we saw fail */
	RXE_CHECK_NR,
};

struct drop_key {
	__u64 location;
	__u32 reason;
	__u32 check;		/* enum rxe_check */
};

/*
 * Counts mode's hot path: a per-CPU direct-mapped table of drop sites.
 * A slot belongs to the first (location, reason) that hashes to it on
 * that CPU, for good (count 0: free); the others go to the drops hash
 * map. Counts only grow: user space reports differences, so nothing is
 * ever reset under a running program and no drop is lost between a read
 * and a reset.
 */
#define DROP_SLOTS	256

struct drop_slot {
	struct drop_key key;
	__u64 count;
};

static inline __u32 drop_slot_of(__u64 location, __u32 reason)
{
	__u64 h = (location ^ ((__u64)reason << 32 | reason)) * 0x9E3779B97F4A7C15ULL;

	return (__u32)(h >> 56) & (DROP_SLOTS - 1);
}

struct drop_event {
	__u64 ts_ns;
	__u64 location;
	__u32 reason;
	__u32 ifindex;
	__s32 stack_id;
	__u8 verdict;		/* enum pkt_verdict */
	__u8 check;		/* enum rxe_check */
	__u8 pad[2];
	char ifname[IFNAMSIZ_AX];
	struct pkt_info pkt;
};

/* with -w: the event and the packet's first bytes */
struct drop_event_cap {
	struct drop_event e;
	struct pkt_cap cap;
};

#endif
