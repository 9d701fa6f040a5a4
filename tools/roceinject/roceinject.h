/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* roceinject: the types its BPF side and its loader share */
#ifndef AGENTXDP_ROCEINJECT_H
#define AGENTXDP_ROCEINJECT_H

#include "lib/pkt_info.h"

/* the faults, as bits of targ_faults and of an event's faults */
enum inject_fault {
	FAULT_DROP = 0,		/* TC_ACT_SHOT */
	FAULT_CE,		/* ECN CE in the IP header */
	FAULT_ICRC,		/* the ICRC's 4 bytes inverted */
	FAULT_DELAY,		/* egress: departure time now + delay (fq) */
	FAULT_QPN,		/* the BTH's destination QPN rewritten */
	FAULT_PKEY,		/* the BTH's P_Key rewritten */
	FAULT_TRUNC,		/* IPv4: the UDP payload cut to targ_trunc_len bytes */
	FAULT_DUP,		/* egress: a copy sent first (bpf_clone_redirect) */
	FAULT_NR,
};

/* opcode classes (--class), as bits of targ_classes */
enum inject_class {
	CLASS_REQUEST = 0,	/* what a requester sends (roce_op_is_request) */
	CLASS_ACK,		/* ACKNOWLEDGE / ATOMIC ACK with an ACK syndrome */
	CLASS_NAK,		/* ... with an RNR NAK or NAK syndrome */
	CLASS_READ_RESP,	/* READ RESPONSE FIRST/MIDDLE/LAST/ONLY */
	CLASS_CNP,		/* congestion notification, opcode 0x81 */
	CLASS_NR,
};

enum inject_stat {
	STAT_ROCE,		/* RoCE packets seen: counted in the hot map (roceinject_stat()) */
	STAT_MATCHED,		/* ... that the selectors took */
	STAT_INJECTED,		/* ... altered (the count limit included) */
	STAT_LIMITED,		/* selected after --count was reached: left alone */
	STAT_EVENTS_LOST,	/* ring buffer full */
	STAT_QPS_FULL,		/* the per-QP map had no room: packet left alone */
	STAT_NR,
};

/* one queue pair as the packets name it: addresses, UDP source port
 * (the ECMP path), destination QPN */
struct inject_key {
	__u8 family;
	__u8 pad;
	__u16 sport;
	__u32 dqpn;
	__u8 saddr[16];
	__u8 daddr[16];
};

struct inject_qp {
	__u64 matched;		/* packets the selectors took (--every counts these) */
	__u64 injected;		/* packets altered */
	__u64 faults[FAULT_NR];	/* per fault */
};

/*
 * The hot map: what the program's entry reads of every packet and where
 * it counts the RoCE packets it sees, one per-CPU line, so that a
 * refused packet touches one line of map memory (tools/roceinject/roceinject.bpf.c,
 * inject_handle()). The loader writes port, -Q and --duplicate into
 * every CPU's line.
 */
struct inject_cpu_line {
	__u64 roce_seen;		/* RoCE packets seen by this CPU */
	__u32 qpn;			/* -Q, when qpn_set */
	__u16 roce_port;
	__u8 qpn_set;
	__u8 dup;			/* --duplicate */
	__u8 pad[48];
};

struct inject_event {
	__u64 ts_ns;
	__u32 faults;		/* bits of enum inject_fault */
	__u32 ifindex;
	struct pkt_info pkt;
};

/*
 * --probability: a packet is taken when the top 32 bits of this hash of
 * (seed, QPN, PSN) are below P * 2^32. No random numbers: the same seed
 * takes the same packets in every run, and a retransmission (same PSN) is
 * taken again exactly when its first transmission was. splitmix64's
 * finaliser: every input bit moves every output bit.
 */
static inline __u64 inject_hash(__u64 seed, __u32 qpn, __u32 psn)
{
	__u64 z = seed + (((__u64)qpn << 24 | psn) + 1) * 0x9E3779B97F4A7C15ULL;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

#endif
