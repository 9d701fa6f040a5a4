/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocediag's join and verdicts (tools/rocediag/diag.c): the evidence the four
 * tools' sources hold about one queue pair in one reporting interval, the
 * table that joins them by QP, and the rules that turn it into one
 * verdict. Plain data in, plain data out: tests/unit/diag.c tests the
 * rules without a kernel.
 *
 * A QP pair is named by its requester and responder addresses and the
 * responder's QPN (what every request carries in its BTH), as in rocelat;
 * the requester's QPN (what the answers carry) once known. Sources that
 * see the other direction (a dropped ACK names the requester QP; the
 * responder's rdma_rxe QP names itself) find the entry by what they carry.
 *
 * The verdicts, worst first (diag_verdict_rules() prints them):
 *   STUCK            RDMA netlink has the QP in ERR, a fatal async event
 *                    (ib_core) hit it, or its send PSN
 *                    still while its port's timeouts or retries rose
 *                    (rdmaqp: any RDMA device); rdma_rxe moved the QP
 *                    to ERR, or its retry timer
 *                    fired with no answer in the interval; or, with no
 *                    drop on this host, requests waited past rocelat's
 *                    --timeout and no answer came in the interval
 *   DROPPED-LOCALLY  netfilter on this host dropped packets of the QP
 *                    (the rule named), or this host dropped them (kfree_skb,
 *                    the reason) and no answer came in the interval; or
 *                    it did so in an earlier interval and the QP has not
 *                    answered since (diag_carry() holds that evidence)
 *   LOSSY            retransmits, PSN sequence NAKs, timeouts, rdma_rxe's
 *                    retry timer, or other drops on this host, while
 *                    answers still come; or, for a QP only rdmaqp sees,
 *                    its port's sequence error, timeout or retransmission
 *                    counters rising
 *   CONGESTED        CNPs or ECN CE marks; or, for a QP only rdmaqp
 *                    sees, its port's CNP or ECN counters or its netdev's
 *                    pause frames rising
 *   SLOW             median latency >= DIAG_SLOW_RATIO x the median of
 *                    the other QPs' medians and DIAG_SLOW_MIN_GAP_NS above
 *                    it (DIAG_SLOW_MIN_SAMPLES samples each); round trips
 *                    are compared with round trips, this host's own
 *                    turnarounds (it answered the requests) with
 *                    turnarounds: a turnaround is never a path's latency
 *   OK               none of these
 */
#ifndef AGENTXDP_DIAG_H
#define AGENTXDP_DIAG_H

#include <stdbool.h>
#include <linux/types.h>

#define DIAG_SLOW_RATIO		4.0
#define DIAG_SLOW_MIN_GAP_NS	200000.0
#define DIAG_SLOW_MIN_SAMPLES	5
#define DIAG_MAX_SITES		4
#define DIAG_MAX_SIGS		4
#define DIAG_QPN_UNKNOWN	0xffffffffU
/* how long a QP's drop evidence is held when no source can tell whether
 * the QP still exists (only drops were seen: no -i, no rdma_rxe) */
#define DIAG_HOLD_S		600.0
#define DIAG_VB_SIDES		2	/* this host's QPs of one entry: both ends of a local pair */
#define DIAG_VB_OPS		6
#define DIAG_VB_ERRS		4

enum diag_verdict {
	DV_OK, DV_SLOW, DV_CONGESTED, DV_LOSSY, DV_DROPPED, DV_STUCK, DV_NR,
};
extern const char *const diag_verdict_names[DV_NR];

/* one place this host dropped the QP's packets */
struct diag_site {
	char location[64];	/* kfree_skb's caller */
	char reason[64];	/* skb_drop_reason, without SKB_DROP_REASON_ */
	char ifname[16];
	bool netfilter;		/* NETFILTER_DROP */
	__u64 packets;
};

/* the packet signature of netfilter drops, to meet nfdrop's rows */
struct diag_sig {
	__u8 saddr[16], daddr[16];
	__u16 sport, dport;
};

/* the netfilter rule that dropped them, as nfdrop names it */
struct diag_rule {
	bool known;		/* a rule or policy is named */
	bool certain;		/* and nothing is inferred */
	char where[400];	/* "ip filter INPUT handle 2" */
	char text[512];		/* the rule as nft lists it */
	__u64 packets;		/* nfdrop's count for it */
};

/* verbslat: one opcode's work requests completed with success */
struct diag_vb_op {
	char opcode[20];	/* "SEND", "RDMA_WRITE", "RECV" (enum ib_wr_opcode) */
	__u64 count;
	__u64 unsignaled;	/* of count, retired by a later completion */
	double p50_ns, p99_ns;	/* post to completion */
};

/* completions with an error status */
struct diag_vb_err {
	char status[32];	/* "IB_WC_RETRY_EXC_ERR" (enum ib_wc_status) */
	__u64 count;
};

/* verbslat: one kernel QP of this host (NVMe-oF, NFS over RDMA ...), its
 * work requests this interval */
struct diag_verbs {
	char dev[32];
	__u32 qpn;
	int nops, nerrs;
	struct diag_vb_op op[DIAG_VB_OPS];	/* the busiest, when more */
	struct diag_vb_err err[DIAG_VB_ERRS];
	__u64 errors;		/* every error completion (err[] may hold fewer kinds) */
	__u64 flushes;		/* of errors, IB_WC_WR_FLUSH_ERR: the QP was in ERR */
	__u64 sq_done;		/* send WRs completed, any status */
	__u64 sq_samples;	/* of them, with success: */
	double sq_p50_ns, sq_p99_ns;	/* their latency, all send opcodes */
	__u64 sq_outstanding;	/* send WRs posted, not complete at the read */
	double sq_oldest_s;	/* the oldest signaled one's age (0: none): an
				 * unsignaled one is owed no completion */
	__u64 rq_posted;	/* receive WRs waiting for a message */
};

struct diag_qp {
	/* identity */
	__u8 family;
	__u8 req[16], resp[16];
	__u32 resp_qpn;		/* DIAG_QPN_UNKNOWN: only the requester's known */
	__u32 req_qpn;		/* DIAG_QPN_UNKNOWN until paired */
	__u16 sport;		/* UDP source port of its requests (ECMP path) */

	/* rocelat, this interval */
	bool lat_seen;		/* rocelat has the flow */
	bool turnaround;	/* its samples are this host's turnaround
				 * (request in, answer out), not round trips */
	bool requests;		/* requests seen in the interval */
	bool answers;		/* an answer completed a request in it */
	__u64 outstanding;	/* requests waiting for an answer now */
	__u64 samples;
	double p50_ns, p99_ns;
	__u64 retransmits, seq_naks, other_naks, rnr_naks, cnps, ecn_ce, timeouts;

	/* drops on this host, this interval */
	__u64 drops;
	int nsites;
	struct diag_site sites[DIAG_MAX_SITES];
	int nsigs;
	struct diag_sig sigs[DIAG_MAX_SIGS];
	__u64 sig_packets[DIAG_MAX_SIGS];	/* its netfilter drops of each */
	struct diag_rule rule;

	/* rdma_rxe, this interval (either side's QP) */
	bool rxe_seen;
	char rxe_dev[16];
	__u8 state_from, state_to;	/* enum ib_qp_state; from == to: no change */
	bool state_changed;
	bool to_err;			/* the QP went to ERR */
	char state_str[48];		/* "RTS -> ERR" */
	__u64 rxe_retx_timer, rxe_retries, rxe_retx_pkts, rxe_rnr, rxe_rx_acks;

	/* rdmaqp: RDMA netlink's QP and its port's counters, this interval;
	 * any RDMA device, the one source for a hardware RNIC's QPs (an
	 * entry of family 0: no addresses, req is the device, req_qpn the
	 * QP, resp_qpn its peer) */
	bool rq_seen;
	char rq_dev[32];
	__u32 rq_port;
	char rq_state[16];		/* its state at the poll */
	char rq_change[48];		/* "RTS -> ERR" when it changed */
	bool rq_err;			/* in ERR */
	char rq_fatal[16];		/* a fatal async event: "QP_FATAL" */
	bool rq_frozen;			/* RTS, its send PSN still while the
					 * port's timeouts or retries rose */
	__u32 rq_sq_psn;
	__u64 rq_tx, rq_rx;		/* packets its PSNs moved */
	char rq_loss[160];		/* the port's loss counters that rose */
	char rq_cong[160];		/* its congestion counters and pauses */

	/* verbslat: the work requests of this host's kernel QPs of the pair
	 * (an entry of family 0 as rdmaqp's when no other source has it:
	 * req is the device, req_qpn the QP, resp_qpn its peer) */
	int nvb;
	struct diag_verbs vb[DIAG_VB_SIDES];

	/* carried from earlier intervals (diag_carry()): drops of the QP on
	 * this host with no answer since */
	bool held;		/* earlier intervals' evidence is carried */
	bool rule_held;		/* rule is an earlier interval's */
	__u64 held_drops;	/* drops of the earlier intervals */
	char held_ifname[16];	/* where the first of them was dropped */
	double first_drop, last_drop;	/* wall clock (s) of the first and the
					 * latest interval with drops */
	double held_for_s;	/* since last_drop */

	/* the verdict */
	int verdict;
	char why[256];
	double slow_ratio, peers_median_ns;
};

/* which sources this run has; the reasons when one is missing */
struct diag_sources {
	bool lat;		/* rocelat's XDP/tc programs attached */
	bool drops;		/* rxedrop's kfree_skb program */
	bool rules;		/* nfdrop's netfilter path */
	bool rxe;		/* rxeqp's rdma_rxe hooks */
	bool rdma;		/* rdmaqp's RDMA netlink and port counters */
	bool verbs;		/* verbslat's hooks on the RDMA drivers */
	char no_lat[128], no_drops[128], no_rules[128], no_rxe[128];
	/* why rdma is down, "" when there is nothing to see: no RDMA
	 * device, or no RDMA subsystem in the kernel (rdma_absent) */
	char no_rdma[128];
	bool rdma_absent;
	/* why verbs is down; verbs_absent: no RDMA device (no_verbs "") or
	 * none of a driver verbslat knows (it names them) */
	char no_verbs[160];
	bool verbs_absent;
	char verbs_hook[64];	/* "rdma_rxe via fentry", for the banner */
	/* a send WR outstanding this long with none completing is stuck
	 * (rocelat's --timeout) */
	double wr_timeout_s;
	/* latency's ingress where it is not XDP, for the banner: "tc
	 * ingress on eth1 (XDP refused at MTU 9000)"; "" on XDP */
	char lat_hook[128];
};

/* which sources saw a held QP, and which still hold it (diag_alive) */
enum { DIAG_BY_LAT = 1, DIAG_BY_RXE = 2 };

/* a QP's drop evidence, kept across intervals until it answers again or
 * is gone */
struct diag_held {
	__u8 family;
	__u8 req[16], resp[16];
	__u32 resp_qpn, req_qpn;
	__u16 sport;
	__u64 drops;		/* up to the last interval */
	double first, last;	/* wall clock (s) of its first and latest drops */
	struct diag_rule rule;
	char ifname[16];	/* of its first drop site */
	unsigned int seen_by, alive;	/* DIAG_BY_* */
	bool matched;		/* in this interval's table */
	bool gone;		/* a source that saw it no longer holds it */
};

struct diag_table {
	struct diag_qp *qp;
	int n, max;
	struct diag_held *held;	/* not reset between intervals */
	int nheld;
	__u64 overflow;		/* QPs not kept: the table was full */
	__u64 unmatched_drops;	/* drops of RoCE packets with no BTH-parsed QP */
	/* events the interval lost to a full ring buffer: drops (the QPs'
	 * drop counts are short by as many), rdma_rxe's QP events */
	__u64 drop_events_lost, rxe_events_lost;
	/* RoCE packets the latency source saw since start (rocelat's count:
	 * those to the RoCE port with a BTH), on every -i interface */
	__u64 roce_packets;
};

int diag_table_init(struct diag_table *t, int max);
void diag_table_free(struct diag_table *t);
void diag_table_reset(struct diag_table *t);

/* the entry a request names (requester, responder, responder QPN),
 * made when new; NULL when the table is full */
struct diag_qp *diag_by_request(struct diag_table *t, __u8 family, const __u8 *req,
				const __u8 *resp, __u32 resp_qpn);
/* the same without making one: NULL when there is none */
struct diag_qp *diag_find_request(struct diag_table *t, __u8 family, const __u8 *req,
				  const __u8 *resp, __u32 resp_qpn);
/* the entry an answer names (it goes resp -> req, to the requester's
 * QPN): the one paired with that QPN, else one made with the responder's
 * QPN unknown (diag_merge() joins it when the pairing turns up) */
struct diag_qp *diag_by_answer(struct diag_table *t, __u8 family, const __u8 *req,
			       const __u8 *resp, __u32 req_qpn);
/* entries of unknown responder QPN into the paired entry they belong to */
void diag_merge(struct diag_table *t);

/* a drop of the QP's packet at site */
void diag_add_drop(struct diag_qp *q, const struct diag_site *site,
		   const struct diag_sig *sig);
/* counts packets more netfilter drops of q's packets with signature sig */
void diag_add_sig(struct diag_qp *q, const struct diag_sig *sig, __u64 packets);

/* a source still holds the QP (rocelat's flow, rdma_rxe's QP: by is
 * DIAG_BY_*), busy or idle; either QPN may be DIAG_QPN_UNKNOWN */
void diag_alive(struct diag_table *t, __u8 family, const __u8 *req, const __u8 *resp,
		__u32 resp_qpn, __u32 req_qpn, unsigned int by);
/* held evidence into this interval's entries (now: wall clock, s): a QP
 * that answered forgets it; one that dropped without answering keeps it;
 * one of no entry this interval gets one with the held evidence alone,
 * until a source that saw it no longer holds it (gone), or, when none
 * could tell, DIAG_HOLD_S after its last drop. A gone QP's evidence
 * stays DIAG_HOLD_S for what its leftovers show (rocelat's timeouts of
 * the requests it never had answered), not for a QP rdma_rxe sees anew */
void diag_carry(struct diag_table *t, double now);

/* every entry's verdict and why (interval_s: the interval's length),
 * then the table sorted worst first */
void diag_verdicts(struct diag_table *t, const struct diag_sources *src, double interval_s);
/* the rules above, one line each, for --help and docs */
extern const char diag_verdict_rules[];

#endif
