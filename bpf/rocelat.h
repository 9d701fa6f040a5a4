/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* rocelat: types shared by bpf/rocelat.bpf.c and tools/rocelat.c */
#ifndef AGENTXDP_ROCELAT_H
#define AGENTXDP_ROCELAT_H

#include "lib/hist.h"
#include "lib/pkt_info.h"
#include "lib/roce_proto.h"

/*
 * Outstanding requests of one path, a FIFO ring in PSN order: answers come
 * in order, so completing scans only from the oldest entry up to the first
 * one not yet covered. A path with more requests in flight drops its
 * oldest (counted as an eviction). Power of two.
 */
#define PENDING_RING		64

/* global counters, one per-CPU struct looked up once per RoCE packet */
enum rocelat_counter {
	RL_ROCE_PKTS,		/* packets to the RoCE port with a BTH */
	RL_PARSE_ERRORS,	/* truncated or inconsistent headers */
	RL_REQUESTS,		/* request packets (any RC/XRC request opcode) */
	RL_TRACKED,		/* requests waiting for an answer (AckReq, READ, atomic) */
	RL_ACKS,		/* ACKNOWLEDGE / ATOMIC ACK packets (ACK, NAK, RNR) */
	RL_READ_RESP,		/* READ RESPONSE packets */
	RL_SAMPLES,		/* latency samples taken */
	RL_RETRANSMITS,		/* request packets with a PSN seen before */
	RL_KARN_DISCARDED,	/* answers to retransmitted requests: no sample */
	RL_NAK_SEQ,		/* NAK PSN sequence error */
	RL_NAK_INVALID_REQ,
	RL_NAK_REMOTE_ACCESS,
	RL_NAK_REMOTE_OP,
	RL_NAK_INVALID_RD,
	RL_NAK_OTHER,		/* reserved NAK codes and syndromes */
	RL_RNR_NAKS,
	RL_CNPS,
	RL_ECN_CE,		/* RoCE packets with IP ECN = CE */
	RL_EVICTED,		/* pending request pushed out by a newer one */
	RL_TIMEOUTS,		/* pending request unanswered for --timeout */
	RL_UNMATCHED,		/* answer that completed no pending request */
	RL_QP_SWITCH,		/* one path (addresses, sport) used by another QP */
	RL_OTHER_TRANSPORT,	/* UC, UD, RD packets: counted, not timed */
	RL_NR,
};

/* per-CPU: the counters and the histogram of all samples */
struct rocelat_counters {
	__u64 c[RL_NR];
	struct hist hist;
};

/* requester -> responder over one UDP source port: one ECMP path */
struct roce_path_key {
	__u8 family;
	__u8 pad;
	__u16 sport;
	__u8 req[16];		/* requester address (IPv4 in the first 4) */
	__u8 resp[16];		/* responder address */
};

/* a flow: a path plus the responder's QPN taken from the request */
struct roce_flow_key {
	struct roce_path_key path;
	__u32 resp_qpn;
};

#define SLOT_VALID	0x01
#define SLOT_RETX	0x02	/* retransmitted: the answer is ambiguous */
#define SLOT_READ	0x04	/* READ REQUEST: first READ RESPONSE answers */

struct pending_slot {
	__u64 ts_ns;
	__u32 psn;
	__u32 qpn_flags;	/* responder QPN << 8 | SLOT_* */
};

#define PATH_HI_VALID	0x01
#define PATH_QP_MIXED	0x02	/* another QP used the path: PSNs interleave */
#define PATH_ST_VALID	0x04	/* st holds the flow of responder QPN st_qpn */

struct roce_flow_stats {
	__u64 samples;
	__u64 sum;		/* latency sum, ns */
	__u64 max;		/* ns */
	__u64 retransmits;
	__u64 naks;		/* all NAK codes */
	__u64 nak[ROCE_NAK_CODES];
	__u64 rnr_naks;
	__u64 cnps;
	__u64 ecn_ce;
	__u32 ifindex;		/* where the latest answer was seen */
	__u32 last_psn;		/* latest answered PSN */
	__u8 rnr_timer;		/* timer field of the latest RNR NAK */
	__u8 pad[7];
	struct hist hist;	/* log2 of latency in the chosen unit */
};

/*
 * One pending-map entry per path. The statistics of the path's first
 * responder QPN live in the entry itself (st): an answer then costs one
 * hash lookup, not two. Another QPN on the same path (rare: the UDP source
 * port usually comes from the QPN) has its row in the flows map. st
 * belongs to reporting interval st_epoch: when user space starts a new
 * interval (stats_epoch in .bss) the next update zeroes it first.
 */
struct pending_path {
	__u32 hi_psn;		/* highest request PSN seen on the path */
	__u32 resp_qpn;		/* QPN of the latest request */
	__u32 head;		/* next slot to fill (free-running) */
	__u32 tail;		/* oldest slot that may be in use */
	__u32 flags;		/* PATH_* */
	__u32 st_qpn;		/* responder QPN of st */
	__u32 st_epoch;		/* interval st counts in */
	__u32 pad;
	struct pending_slot ring[PENDING_RING];
	struct roce_flow_stats st;
};

/* the flow a pending-map entry holds for reporting interval epoch, if any */
static inline const struct roce_flow_stats *
pending_path_flow(const struct pending_path *pp, __u32 epoch)
{
	return (pp->flags & PATH_ST_VALID) && pp->st_epoch == epoch ? &pp->st : 0;
}

#endif
