/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* rxeqp: types shared by tools/rxeqp/rxeqp.bpf.c and tools/rxeqp/rxeqp.c */
#ifndef AGENTXDP_RXEQP_H
#define AGENTXDP_RXEQP_H

#include "lib/hist.h"

#define RXEQP_DEVNAME 16
#define RXEQP_MAX_QPS 4096

/* one QP: the rxe device's network interface and the QP number; QPNs are
 * per device (both rxe devices of a test bed start at 0x11) */
struct qp_key {
	__u32 ifindex;
	__u32 qpn;
};

/* per-QP counters, index into qp_stats.cnt[]; names in tools/rxeqp/rxeqp.c */
enum qp_counter {
	QC_TX_PKTS,		/* packets this QP sent (rxe_xmit_packet) */
	QC_TX_BYTES,		/* their BTH..ICRC bytes */
	QC_RX_PKTS,		/* packets delivered to this QP (past rxe_rcv's checks) */
	QC_RX_BYTES,
	QC_TX_REQ_PKTS,		/* request packets sent (requester) */
	QC_TX_REQS,		/* request messages sent: last/only packets, first transmission */
	QC_TX_RESP_PKTS,	/* ACKs, read responses, atomic ACKs sent (responder) */
	QC_TX_ACKS,		/* of which ACKNOWLEDGE packets (incl. NAKs) */
	QC_RX_REQ_PKTS,		/* request packets received (responder) */
	QC_RX_RESP_PKTS,	/* responses received (requester) */
	QC_RX_ACKS,		/* of which ACKNOWLEDGE packets (incl. NAKs) */
	QC_RETX_PKTS,		/* request packets sent again (PSN behind the highest sent) */
	QC_RETRIES,		/* go-back-N restarts: runs of retransmitted packets */
	QC_RETX_TIMER,		/* retransmit timer firings */
	QC_RNR_TIMER,		/* RNR NAK timer firings */
	QC_RNR_SENT,		/* RNR NAKs sent (responder without a receive WQE) */
	QC_RNR_RCVD,		/* RNR NAKs received */
	QC_SEQERR_SENT,		/* PSN sequence error NAKs sent */
	QC_SEQERR_RCVD,		/* PSN sequence error NAKs received */
	QC_NAK_SENT,		/* other NAKs sent (invalid request, access, operational) */
	QC_NAK_RCVD,		/* other NAKs received */
	QC_DUP_REQS,		/* duplicate request packets (PSN behind the expected) */
	QC_CQES,		/* completions posted for this QP (send and receive) */
	QC_CQE_ERRS,		/* ... with an error status other than a flush */
	QC_CQE_FLUSH,		/* ... flushed (WR_FLUSH_ERR) */
	QC_LAT_SAMPLES,		/* request to ACK/response samples */
	QC_LAT_SUM_NS,
	QC_LAT_AMBIGUOUS,	/* ACKs of retransmitted requests: no sample (Karn) */
	QC_STATE_CHANGES,
	QC_NR,
};

#define QP_STATE_UNKNOWN 0xff
/* IB_QPS_ERR of enum ib_qp_state (include/rdma/ib_verbs.h), which the
 * loaders, without vmlinux.h, cannot name */
#define QP_STATE_ERR 6

/* One byte per flag, not bits of one byte: the requester, responder and
 * completer of one QP run on different CPUs, and a read-modify-write of a
 * shared flags byte could lose another's update. */
struct qp_stats {
	char dev[RXEQP_DEVNAME];	/* rdma device name */
	__u8 qp_type;			/* enum ib_qp_type */
	__u8 state;			/* enum ib_qp_state, QP_STATE_UNKNOWN */
	__u8 family;			/* 4, 6, 0 until known */
	__u8 peer_known;		/* identity read from a connected QP */
	__u8 psn_valid;			/* tx_psn_next is set (requester) */
	__u8 in_retry;			/* the last request sent was a retransmission */
	__u8 destroyed;			/* rxe_destroy_qp seen: one last report */
	__u8 rx_next_valid;		/* rx_next is set (responder) */
	__u8 saddr[16];			/* IPv4 in the first 4 bytes */
	__u8 daddr[16];
	__u16 sport;			/* UDP source port of this QP's packets */
	__u16 pad;
	__u32 dqpn;			/* peer (destination) QPN */
	__u32 tx_psn_next;		/* highest request PSN sent + 1 */
	__u32 tx_psn;			/* last PSN sent */
	__u32 rx_psn;			/* last PSN received */
	__u32 rx_next;			/* resp.psn once the queued requests are done */
	__u64 state_ns;			/* bpf_ktime_get_ns() of the last transition */
	__u64 cnt[QC_NR];
};

enum qp_event_type {
	EV_STATE,		/* state transition: old_state -> new_state */
	EV_RETX_TIMER,		/* retransmit timer fired: psn = sq psn, psn2 = acked psn */
	EV_RNR_TIMER,		/* RNR NAK timer fired */
	EV_RETRY,		/* go-back-N restart: psn = first PSN resent */
	EV_NAK_SENT,		/* NAK or RNR NAK sent: syndrome, psn */
	EV_NAK_RCVD,
	EV_CQE_ERR,		/* completion with an error status (flushes counted only) */
	EV_DESTROY,
	EV_NR,
};

#define EV_CAUSE_MODIFY	0	/* ib_modify_qp from the application */
#define EV_CAUSE_ERROR	1	/* rxe moved the QP to ERR itself (rxe_qp_error) */

struct qp_event {
	__u64 ts_ns;
	struct qp_key key;
	__u8 type;		/* enum qp_event_type */
	__u8 old_state;
	__u8 new_state;
	__u8 cause;		/* EV_CAUSE_*; AETH syndrome for NAKs */
	__u32 psn;
	__u32 psn2;
	__u32 status;		/* ib_wc_status; retries left for timers */
	__u32 opcode;		/* BTH opcode; ib_wc_opcode for CQEs */
};

/* pending request, for the request-to-ACK latency */
struct lat_key {
	struct qp_key qp;
	__u32 psn;
};

struct lat_val {
	__u64 ts_ns;
	__u32 retransmitted;
	__u32 pad;
};

enum rxeqp_stat {
	RXEQP_STAT_EVENTS_LOST,
	RXEQP_STAT_QPS_FULL,		/* a QP not tracked: the qps map was full */
	RXEQP_STAT_NR,
};

#endif
