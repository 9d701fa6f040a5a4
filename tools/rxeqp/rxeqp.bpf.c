// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rxeqp: per queue pair counters, events and request-to-ACK latency inside
 * Soft-RoCE (rdma_rxe), from fentry on the module's functions (module BTF)
 * or, where fentry is not allowed, kprobes on the same functions. Every hook
 * is a thin wrapper around one __always_inline handler; the loader picks
 * the fentry or the kprobe twin of each (bpf_program__set_autoload).
 *
 * Hooks and why these (Debian's 6.1, drivers/infiniband/sw/rxe/; all are
 * global, have BTF, are not inlined, take at most 4 arguments):
 *   rxe_net.c:rxe_xmit_packet(qp, pkt, skb)   every packet a QP sends,
 *       requests (rxe_req.c:rxe_requester) and ACKs/NAKs/read responses
 *       (rxe_resp.c:send_common_ack, read_reply) alike; the BTH and AETH
 *       are built by then, so NAKs, RNR NAKs and retransmissions show here
 *       although check_psn(), duplicate_request() and req_retry() are inlined
 *   rxe_resp.c:rxe_resp_queue_pkt(qp, skb)    a request that passed
 *       rxe_recv.c:rxe_rcv's checks, queued for the responder
 *   rxe_comp.c:rxe_comp_queue_pkt(qp, skb)    an ACK/response, queued for
 *       the completer
 *   rxe_comp.c:retransmit_timer(t), rxe_req.c:rnr_nak_timer(t)
 *       timer callbacks (renamed rxe_retransmit_timer/rxe_rnr_nak_timer in
 *       later kernels; both names have programs, the loader attaches the
 *       one that exists)
 *   rxe_qp.c:rxe_qp_from_attr(qp, attr, mask, udata)  ib_modify_qp's state
 *       changes (rxe_verbs.c:rxe_modify_qp calls it after checking)
 *   rxe_qp.c:rxe_qp_error(qp)                 rxe moving a QP to ERR on its
 *       own: retries exhausted (rxe_completer), responder errors
 *   rxe_cq.c:rxe_cq_post(cq, cqe, solicited)  every completion, with status
 *   rxe_verbs.c:rxe_destroy_qp(ibqp, udata)
 * Not used: rxe_requester/responder/completer (called once per packet in a
 * loop, and take void * on 6.1), rxe_qp_from_init (7 arguments: no fentry
 * on 6.1), rxe_post_send (user QPs post through a shared ring; the syscall
 * is only a doorbell, so post-to-completion is not visible per WR).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "rdma_rxe.h"
#include "lib/maps.bpf.h"
#include "lib/probe.bpf.h"
#include "lib/hist.bpf.h"
#include "lib/roce_proto.h"
#include "rxeqp.h"

/* include/uapi/rdma/rdma_user_rxe.h: an anonymous enum, so not in BTF */
#define RXE_NETWORK_TYPE_IPV4	1
#define RXE_NETWORK_TYPE_IPV6	2
#define RXE_PORT		1
#define AF_INET			2

const volatile __u32 targ_ifindex = 0;
/* -i's namespace (inode): every namespace numbers its devices from 1 */
const volatile __u32 targ_netns = 0;
const volatile __u32 targ_qpn = 0;
const volatile bool targ_qpn_set = false;
const volatile bool targ_events = false;
const volatile bool targ_latency = true;

static const struct qp_stats zero_stats;
static const struct hist zero_hist;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RXEQP_MAX_QPS);
	__type(key, struct qp_key);
	__type(value, struct qp_stats);
} qps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RXEQP_MAX_QPS);
	__type(key, struct qp_key);
	__type(value, struct hist);
} lat_hists SEC(".maps");

/* requests waiting for their ACK; LRU: an ACK lost for good never deletes */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct lat_key);
	__type(value, struct lat_val);
} pending SEC(".maps");

AX_PERCPU_STATS(stats, RXEQP_STAT_NR);
AX_RINGBUF(events, 1 << 20);

static __always_inline void cnt_add(struct qp_stats *s, int idx, __u64 v)
{
	if (idx >= 0 && idx < QC_NR)
		__sync_fetch_and_add(&s->cnt[idx], v);
}

/*
 * The network interface under an rxe device. rxe_dev.ndev is gone in later
 * kernels ("RDMA/rxe: Remove the direct link to net_device", 2024, v6.12
 * cycle), which ask ib_device_get_netdev(&rxe->ib_dev, RXE_PORT) instead:
 * the port's ib_port_data.netdev, which 6.1 fills too
 * (rxe_verbs.c:rxe_register_device -> ib_device_set_netdev(..., 1)).
 */
static __always_inline struct net_device *dev_netdev(struct ib_device *ibdev)
{
	struct rxe_dev *rxe = (void *)ibdev - bpf_core_field_offset(struct rxe_dev, ib_dev);
	struct net_device *ndev;

	if (bpf_core_field_exists(rxe->ndev)) {
		ndev = BPF_CORE_READ(rxe, ndev);
	} else {
		struct ib_port_data *pd = BPF_CORE_READ(ibdev, port_data);

		pd = (void *)pd + RXE_PORT * bpf_core_type_size(struct ib_port_data);
		ndev = BPF_CORE_READ(pd, netdev);
	}
	return ndev;
}

/* ibdev's interface index into *ifindex; false when -i (index and
 * namespace) does not select it */
static __always_inline bool dev_selected(struct ib_device *ibdev, __u32 *ifindex)
{
	struct net_device *ndev = dev_netdev(ibdev);

	*ifindex = ndev ? BPF_CORE_READ(ndev, ifindex) : 0;
	if (targ_ifindex && *ifindex != targ_ifindex)
		return false;
	return !targ_netns || (ndev && BPF_CORE_READ(ndev, nd_net.net, ns.inum) == targ_netns);
}

/* false when the QP is filtered out */
static __always_inline bool qp_key_of(struct rxe_qp *qp, struct qp_key *k)
{
	k->qpn = BPF_CORE_READ(qp, ibqp.qp_num);
	if (targ_qpn_set && k->qpn != targ_qpn)
		return false;
	return dev_selected(BPF_CORE_READ(qp, ibqp.device), &k->ifindex);
}

/* what a QP is from creation on: its device's name and its type */
static __always_inline void qp_names(struct rxe_qp *qp, struct qp_stats *s)
{
	if (s->dev[0])
		return;
	BPF_CORE_READ_STR_INTO(&s->dev, qp, ibqp.device, name);
	s->qp_type = BPF_CORE_READ(qp, ibqp.qp_type);
}

/* state and peer: once, and again after each modify */
static __always_inline void qp_identity(struct rxe_qp *qp, struct qp_stats *s)
{
	__u8 nt;

	qp_names(qp, s);
	if (s->state == QP_STATE_UNKNOWN)
		s->state = BPF_CORE_READ(qp, attr.qp_state);
	s->dqpn = BPF_CORE_READ(qp, attr.dest_qp_num);
	s->sport = BPF_CORE_READ(qp, src_port);
	nt = BPF_CORE_READ(qp, pri_av.network_type);
	if (nt == RXE_NETWORK_TYPE_IPV4) {
		s->family = 4;
		BPF_CORE_READ_INTO((__u32 *)s->saddr, qp, pri_av.sgid_addr._sockaddr_in.sin_addr.s_addr);
		BPF_CORE_READ_INTO((__u32 *)s->daddr, qp, pri_av.dgid_addr._sockaddr_in.sin_addr.s_addr);
	} else if (nt == RXE_NETWORK_TYPE_IPV6) {
		s->family = 6;
		BPF_CORE_READ_INTO(&s->saddr, qp, pri_av.sgid_addr._sockaddr_in6.sin6_addr);
		BPF_CORE_READ_INTO(&s->daddr, qp, pri_av.dgid_addr._sockaddr_in6.sin6_addr);
	}
	/* UD and GSI QPs have no single peer */
	if (s->dqpn || (s->qp_type != IB_QPT_RC && s->qp_type != IB_QPT_UC))
		s->peer_known = 1;
}

static __always_inline struct qp_stats *stats_of_key(const struct qp_key *k)
{
	struct qp_stats *s = bpf_map_lookup_elem(&qps, k);

	if (s)
		return s;
	s = map_lookup_or_init(&qps, k, &zero_stats);
	if (!s) {
		counter_inc(&stats, RXEQP_STAT_QPS_FULL);
		return NULL;
	}
	s->state = QP_STATE_UNKNOWN;
	return s;
}

static __always_inline struct qp_stats *qp_stats_of(struct rxe_qp *qp, struct qp_key *k)
{
	struct qp_stats *s;

	if (!qp_key_of(qp, k))
		return NULL;
	s = stats_of_key(k);
	if (s && !s->peer_known)
		qp_identity(qp, s);
	return s;
}

static __always_inline void emit(const struct qp_key *k, __u8 type, __u8 old_state,
				 __u8 new_state, __u8 cause, __u32 psn, __u32 psn2,
				 __u32 status, __u32 opcode)
{
	struct qp_event *e;

	if (!targ_events)
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		counter_inc(&stats, RXEQP_STAT_EVENTS_LOST);
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->key = *k;
	e->type = type;
	e->old_state = old_state;
	e->new_state = new_state;
	e->cause = cause;
	e->psn = psn;
	e->psn2 = psn2;
	e->status = status;
	e->opcode = opcode;
	bpf_ringbuf_submit(e, 0);
}

/* BTH (12 bytes) and the first AETH byte, from the packet's own header */
struct bth_aeth {
	__u8 opcode;
	__u8 flags;
	__u16 pkey;
	__u32 dqpn;
	__u32 psn;	/* AckReq in the top bit */
	__u8 syndrome;
	__u8 msn[3];
};

static __always_inline __u32 bth_psn(const struct bth_aeth *h)
{
	return bpf_ntohl(h->psn) & ROCE_PSN_MASK;
}

static __always_inline bool read_hdr(struct rxe_pkt_info *pkt, struct bth_aeth *h,
				     __u16 *paylen)
{
	void *hdr = BPF_CORE_READ(pkt, hdr);

	*paylen = BPF_CORE_READ(pkt, paylen);
	return hdr && !bpf_probe_read_kernel(h, sizeof(*h), hdr);
}

/* counts an ACK/NAK's AETH on the sending or the receiving QP */
static __always_inline void count_aeth(struct qp_stats *s, const struct qp_key *k,
				       const struct bth_aeth *h, bool sent)
{
	__u8 syn = h->syndrome;
	int idx;

	switch (ROCE_AETH_KIND(syn)) {
	case ROCE_AETH_ACK:
		return;
	case ROCE_AETH_RNR_NAK:
		idx = sent ? QC_RNR_SENT : QC_RNR_RCVD;
		break;
	case ROCE_AETH_NAK:
		if (ROCE_AETH_CODE(syn) == ROCE_NAK_PSN_SEQ_ERR)
			idx = sent ? QC_SEQERR_SENT : QC_SEQERR_RCVD;
		else
			idx = sent ? QC_NAK_SENT : QC_NAK_RCVD;
		break;
	default:
		return;
	}
	cnt_add(s, idx, 1);
	/* the responder did not take the request it NAKs: its PSN comes
	 * again, and is no duplicate (on_resp_queue) */
	if (sent)
		s->rx_next_valid = 0;
	emit(k, sent ? EV_NAK_SENT : EV_NAK_RCVD, s->state, s->state, syn,
	     bth_psn(h), 0, 0, h->opcode);
}

static __always_inline void lat_start(const struct qp_key *k, __u32 psn, bool retx)
{
	struct lat_key lk = { .qp = *k, .psn = psn };
	struct lat_val v = { .ts_ns = bpf_ktime_get_ns() }, *p;

	if (!retx) {
		bpf_map_update_elem(&pending, &lk, &v, BPF_ANY);
		return;
	}
	/* Karn: the ACK may answer either copy, so no sample from it */
	p = bpf_map_lookup_elem(&pending, &lk);
	if (p)
		p->retransmitted = 1;
}

static __always_inline void lat_end(struct qp_stats *s, const struct qp_key *k, __u32 psn)
{
	struct lat_key lk = { .qp = *k, .psn = psn };
	struct lat_val *p = bpf_map_lookup_elem(&pending, &lk);
	struct hist *h;
	__u64 d;

	if (!p)
		return;
	if (p->retransmitted) {
		cnt_add(s, QC_LAT_AMBIGUOUS, 1);
	} else {
		d = bpf_ktime_get_ns() - p->ts_ns;
		cnt_add(s, QC_LAT_SAMPLES, 1);
		cnt_add(s, QC_LAT_SUM_NS, d);
		h = map_lookup_or_init(&lat_hists, k, &zero_hist);
		if (h)
			hist_add(h, d / 1000);
	}
	bpf_map_delete_elem(&pending, &lk);
}

/* rxe_net.c:rxe_xmit_packet(qp, pkt, skb) */
static __always_inline int on_xmit(struct rxe_qp *qp, struct rxe_pkt_info *pkt)
{
	struct bth_aeth h;
	struct qp_stats *s;
	struct qp_key k;
	__u16 paylen;
	__u32 psn;

	s = qp_stats_of(qp, &k);
	if (!s || !read_hdr(pkt, &h, &paylen))
		return 0;
	psn = bth_psn(&h);
	cnt_add(s, QC_TX_PKTS, 1);
	cnt_add(s, QC_TX_BYTES, paylen);
	if (!roce_op_is_request(h.opcode)) {
		cnt_add(s, QC_TX_RESP_PKTS, 1);
		if (ROCE_OP(h.opcode) == ROCE_ACKNOWLEDGE) {
			cnt_add(s, QC_TX_ACKS, 1);
			count_aeth(s, &k, &h, true);
		}
		return 0;
	}

	/* a request: the requester of this QP, one CPU at a time */
	bool retx = s->psn_valid && roce_psn_diff(psn, s->tx_psn_next) < 0;

	cnt_add(s, QC_TX_REQ_PKTS, 1);
	if (retx) {
		cnt_add(s, QC_RETX_PKTS, 1);
		/* a new go-back-N run starts where the PSN does not advance */
		if (!s->in_retry || roce_psn_diff(psn, s->tx_psn) <= 0) {
			cnt_add(s, QC_RETRIES, 1);
			emit(&k, EV_RETRY, s->state, s->state, 0, psn, s->tx_psn_next, 0,
			     h.opcode);
		}
		s->in_retry = 1;
	} else {
		s->tx_psn_next = (psn + 1) & ROCE_PSN_MASK;
		s->psn_valid = 1;
		s->in_retry = 0;
		if (roce_op_ends_message(h.opcode))
			cnt_add(s, QC_TX_REQS, 1);
	}
	s->tx_psn = psn;
	if (targ_latency && (bpf_ntohl(h.psn) & 0x80000000) &&
	    ROCE_TRANSPORT(h.opcode) == ROCE_TR_RC)
		lat_start(&k, psn, retx);
	return 0;
}

static __always_inline struct rxe_pkt_info *skb_pkt(struct sk_buff *skb)
{
	/* rxe_hdr.h:SKB_TO_PKT: the packet info lives in skb->cb */
	return (void *)skb + bpf_core_field_offset(skb->cb);
}

/*
 * rxe_resp.c:check_psn (inlined) calls a request behind resp.psn a
 * duplicate when the responder gets to it. resp.psn only grows, but
 * requests queue: since 6.4 the responder is work queued, and a resent
 * request may be queued behind its own first copy, which has not yet moved
 * resp.psn past it (seen on 6.12: one duplicate fewer than rxe's counter).
 * So the PSN to compare with is where resp.psn will be once the queue is
 * done: one past the last in-sequence request queued. A READ request moves
 * it by its response packets, unknown here: then resp.psn alone; a NAK
 * sent (count_aeth) means the request was not taken: resp.psn alone too.
 */
static __always_inline void count_dup(struct qp_stats *s, struct rxe_qp *qp, __u32 psn,
				      bool read)
{
	__u32 expect = BPF_CORE_READ(qp, resp.psn);
	int d;

	if (s->rx_next_valid && roce_psn_diff(s->rx_next, expect) > 0)
		expect = s->rx_next;
	d = roce_psn_diff(psn, expect);
	if (d < 0) {
		cnt_add(s, QC_DUP_REQS, 1);
	} else if (d == 0) {
		s->rx_next = (psn + 1) & ROCE_PSN_MASK;
		s->rx_next_valid = !read;
	}
}

/* rxe_resp.c:rxe_resp_queue_pkt(qp, skb): a request for this QP's responder */
static __always_inline int on_resp_queue(struct rxe_qp *qp, struct sk_buff *skb)
{
	struct bth_aeth h;
	struct qp_stats *s;
	struct qp_key k;
	__u16 paylen;
	__u32 psn;

	s = qp_stats_of(qp, &k);
	if (!s || !read_hdr(skb_pkt(skb), &h, &paylen))
		return 0;
	psn = bth_psn(&h);
	cnt_add(s, QC_RX_PKTS, 1);
	cnt_add(s, QC_RX_BYTES, paylen);
	cnt_add(s, QC_RX_REQ_PKTS, 1);
	s->rx_psn = psn;
	if (ROCE_TRANSPORT(h.opcode) == ROCE_TR_RC)
		count_dup(s, qp, psn, ROCE_OP(h.opcode) == ROCE_READ_REQUEST);
	return 0;
}

/* rxe_comp.c:rxe_comp_queue_pkt(qp, skb): an ACK/response for the requester */
static __always_inline int on_comp_queue(struct rxe_qp *qp, struct sk_buff *skb)
{
	struct bth_aeth h;
	struct qp_stats *s;
	struct qp_key k;
	__u16 paylen;
	__u8 op;

	s = qp_stats_of(qp, &k);
	if (!s || !read_hdr(skb_pkt(skb), &h, &paylen))
		return 0;
	cnt_add(s, QC_RX_PKTS, 1);
	cnt_add(s, QC_RX_BYTES, paylen);
	cnt_add(s, QC_RX_RESP_PKTS, 1);
	op = ROCE_OP(h.opcode);
	if (op == ROCE_ACKNOWLEDGE) {
		cnt_add(s, QC_RX_ACKS, 1);
		if (ROCE_AETH_KIND(h.syndrome) != ROCE_AETH_ACK) {
			count_aeth(s, &k, &h, false);
			return 0;
		}
	}
	/* an ACK carries the PSN of the request that asked for it; a read's
	 * first response packet carries the read request's PSN */
	if (targ_latency && (op == ROCE_ACKNOWLEDGE || op == ROCE_ATOMIC_ACK ||
			     op == ROCE_READ_RESP_FIRST || op == ROCE_READ_RESP_ONLY))
		lat_end(s, &k, bth_psn(&h));
	return 0;
}

static __always_inline int on_timer(struct timer_list *t, bool rnr)
{
	struct rxe_qp *qp;
	struct qp_stats *s;
	struct qp_key k;

	/* from_timer(qp, t, retrans_timer / rnr_nak_timer) */
	if (rnr)
		qp = (void *)t - bpf_core_field_offset(struct rxe_qp, rnr_nak_timer);
	else
		qp = (void *)t - bpf_core_field_offset(struct rxe_qp, retrans_timer);
	s = qp_stats_of(qp, &k);
	if (!s)
		return 0;
	cnt_add(s, rnr ? QC_RNR_TIMER : QC_RETX_TIMER, 1);
	emit(&k, rnr ? EV_RNR_TIMER : EV_RETX_TIMER, s->state, s->state, 0,
	     BPF_CORE_READ(qp, req.psn), BPF_CORE_READ(qp, comp.psn),
	     rnr ? BPF_CORE_READ(qp, comp.rnr_retry) : BPF_CORE_READ(qp, comp.retry_cnt), 0);
	return 0;
}

static __always_inline void set_state(struct qp_stats *s, const struct qp_key *k,
				      __u8 old, __u8 new, __u8 cause)
{
	if (old == new)
		return;
	s->state = new;
	s->state_ns = bpf_ktime_get_ns();
	cnt_add(s, QC_STATE_CHANGES, 1);
	emit(k, EV_STATE, old, new, cause, s->tx_psn, s->rx_psn, 0, 0);
}

/* rxe_qp.c:rxe_qp_from_attr(qp, attr, mask, udata): ib_modify_qp */
static __always_inline int on_modify(struct rxe_qp *qp, struct ib_qp_attr *attr, int mask)
{
	struct qp_stats *s;
	struct qp_key k;
	__u8 old, new;

	if (!qp_key_of(qp, &k))
		return 0;
	s = stats_of_key(&k);
	if (!s)
		return 0;
	/* a new QP that got the number of a destroyed one */
	if (s->destroyed) {
		bpf_map_update_elem(&qps, &k, &zero_stats, BPF_ANY);
		bpf_map_delete_elem(&lat_hists, &k);
		s = bpf_map_lookup_elem(&qps, &k);
		if (!s)
			return 0;
		s->state = QP_STATE_UNKNOWN;
	}
	/* what earlier modifies set (the peer of RTR for the move to RTS); a
	 * new address or peer QPN is read again at the next packet, when
	 * rxe_modify_qp has set it and the UDP source port that follows */
	qp_identity(qp, s);
	if (mask & (IB_QP_AV | IB_QP_DEST_QPN))
		s->peer_known = 0;
	if (!(mask & IB_QP_STATE))
		return 0;
	old = BPF_CORE_READ(qp, attr.qp_state);
	new = BPF_CORE_READ(attr, qp_state);
	if (new == IB_QPS_RESET || new == IB_QPS_RTS) {
		s->psn_valid = 0;	/* the send PSN may start anew */
		s->in_retry = 0;
	}
	set_state(s, &k, old, new, EV_CAUSE_MODIFY);
	return 0;
}

/* rxe_qp.c:rxe_qp_error(qp); when ib_modify_qp asked for ERR,
 * rxe_qp_from_attr set attr.qp_state first and this is no change */
static __always_inline int on_qp_error(struct rxe_qp *qp)
{
	struct qp_stats *s;
	struct qp_key k;

	s = qp_stats_of(qp, &k);
	if (!s)
		return 0;
	set_state(s, &k, BPF_CORE_READ(qp, attr.qp_state), IB_QPS_ERR, EV_CAUSE_ERROR);
	return 0;
}

/* rxe_cq.c:rxe_cq_post(cq, cqe, solicited): user CQs get the uverbs layout
 * (rxe_comp.c:make_send_cqe, rxe_resp.c:do_complete) */
static __always_inline int on_cq_post(struct rxe_cq *cq, struct rxe_cqe *cqe)
{
	struct qp_stats *s;
	struct qp_key k;
	__u32 status, opcode;

	/* is_user: bool on 6.1, an int in older kernels; CO-RE relocates the
	 * offset and the flag is in the low byte either way (little endian) */
	if (BPF_CORE_READ(cq, is_user)) {
		k.qpn = BPF_CORE_READ(cqe, uibwc.qp_num);
		status = BPF_CORE_READ(cqe, uibwc.status);
		opcode = BPF_CORE_READ(cqe, uibwc.opcode);
	} else {
		k.qpn = BPF_CORE_READ(cqe, ibwc.qp, qp_num);
		status = BPF_CORE_READ(cqe, ibwc.status);
		opcode = BPF_CORE_READ(cqe, ibwc.opcode);
	}
	if (targ_qpn_set && k.qpn != targ_qpn)
		return 0;
	if (!dev_selected(BPF_CORE_READ(cq, ibcq.device), &k.ifindex))
		return 0;
	s = stats_of_key(&k);
	if (!s)
		return 0;
	cnt_add(s, QC_CQES, 1);
	if (status == IB_WC_SUCCESS)
		return 0;
	if (status == IB_WC_WR_FLUSH_ERR) {
		cnt_add(s, QC_CQE_FLUSH, 1);
		return 0;
	}
	cnt_add(s, QC_CQE_ERRS, 1);
	emit(&k, EV_CQE_ERR, s->state, s->state, 0, s->tx_psn, s->rx_psn, status, opcode);
	return 0;
}

/* rxe_verbs.c:rxe_destroy_qp(ibqp, udata) */
static __always_inline int on_destroy(struct ib_qp *ibqp)
{
	struct rxe_qp *qp = (void *)ibqp - bpf_core_field_offset(struct rxe_qp, ibqp);
	struct qp_stats *s;
	struct qp_key k;

	if (!qp_key_of(qp, &k))
		return 0;
	s = bpf_map_lookup_elem(&qps, &k);
	if (!s)
		return 0;
	qp_names(qp, s);
	s->destroyed = 1;
	emit(&k, EV_DESTROY, s->state, s->state, 0, s->tx_psn, s->rx_psn, 0, 0);
	return 0;
}

/* the hooks listed on top, each as an fentry and a kprobe program */
FENTRY_OR_KPROBE(rxeqp_xmit, rxe_xmit_packet, on_xmit(qp, pkt),
		 struct rxe_qp *qp, struct rxe_pkt_info *pkt)
FENTRY_OR_KPROBE(rxeqp_resp_queue, rxe_resp_queue_pkt, on_resp_queue(qp, skb),
		 struct rxe_qp *qp, struct sk_buff *skb)
FENTRY_OR_KPROBE(rxeqp_comp_queue, rxe_comp_queue_pkt, on_comp_queue(qp, skb),
		 struct rxe_qp *qp, struct sk_buff *skb)
/* the timers under both names; the loader attaches the one that exists */
FENTRY_OR_KPROBE(rxeqp_retx_timer, retransmit_timer, on_timer(t, false),
		 struct timer_list *t)
FENTRY_OR_KPROBE(rxeqp_rxe_retx_timer, rxe_retransmit_timer, on_timer(t, false),
		 struct timer_list *t)
FENTRY_OR_KPROBE(rxeqp_rnr_timer, rnr_nak_timer, on_timer(t, true),
		 struct timer_list *t)
FENTRY_OR_KPROBE(rxeqp_rxe_rnr_timer, rxe_rnr_nak_timer, on_timer(t, true),
		 struct timer_list *t)
FENTRY_OR_KPROBE(rxeqp_modify, rxe_qp_from_attr, on_modify(qp, attr, mask),
		 struct rxe_qp *qp, struct ib_qp_attr *attr, int mask)
FENTRY_OR_KPROBE(rxeqp_qp_error, rxe_qp_error, on_qp_error(qp),
		 struct rxe_qp *qp)
FENTRY_OR_KPROBE(rxeqp_cq_post, rxe_cq_post, on_cq_post(cq, cqe),
		 struct rxe_cq *cq, struct rxe_cqe *cqe)
FENTRY_OR_KPROBE(rxeqp_destroy, rxe_destroy_qp, on_destroy(ibqp),
		 struct ib_qp *ibqp)

char LICENSE[] SEC("license") = "Dual BSD/GPL";
