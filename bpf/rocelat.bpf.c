// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat: passive RoCE v2 latency from XDP (ingress) and tc (egress).
 *
 * One handler, two thin wrappers. Every packet passes untouched. A request
 * that expects an answer (AckReq, READ REQUEST, atomic) is remembered with
 * its timestamp; the answer that covers its PSN (cumulative ACK, NAK's
 * implied ACK, first READ RESPONSE) turns it into a latency sample.
 *
 * Pending state is keyed as DESIGN.md says, by (addresses, UDP source port,
 * PSN), but stored as one LRU entry per (requester, responder, sport) path
 * holding a FIFO ring of outstanding PSNs with their timestamps: an ACK
 * then completes everything up to its PSN by walking the ring from its
 * oldest entry (at most PENDING_RING steps, usually one or two), instead
 * of one hash lookup per PSN. The answer direction reverses the
 * addresses; the responder QPN is kept from the request (an ACK carries the
 * requester's QPN). The same entry holds the statistics of the path's
 * flow, so an answer costs one lookup (see struct pending_path).
 *
 * -r FILE runs this very program through BPF_PROG_TEST_RUN with the capture
 * time written to clock_ns before each packet (targ_offline).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "lib/parse.bpf.h"
#include "lib/hist.bpf.h"
#include "lib/maps.bpf.h"
#include "rocelat.h"

#define AX_TC_ACT_UNSPEC	(-1)	/* also TCX_NEXT: let the next program decide */

const volatile __u16 targ_roce_port = ROCE_V2_PORT;
const volatile __u64 targ_unit_ns = 1000;	/* histogram unit: us */
const volatile __u64 targ_timeout_ns = 1000000000ULL;
const volatile bool targ_offline = false;

/* offline mode: capture timestamp of the packet about to run, in ns */
__u64 clock_ns = 0;
/* reporting interval; user space steps it to start a new one (flow stats
 * held in pending-map entries are zeroed lazily, at their next update) */
__u32 stats_epoch = 0;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);	/* ~1.5 KiB each */
	__type(key, struct roce_path_key);
	__type(value, struct pending_path);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct roce_flow_key);
	__type(value, struct roce_flow_stats);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rocelat_counters);
} counters SEC(".maps");

static const struct pending_path zero_path;
static const struct roce_flow_stats zero_flow;

static __always_inline __u64 now_ns(void)
{
	return targ_offline ? clock_ns : bpf_ktime_get_ns();
}

/* answer: the packet travels responder -> requester */
static __always_inline void path_key_fill(struct roce_path_key *k,
					  const struct pkt_info *pi, bool answer)
{
	k->family = pi->family;
	k->pad = 0;
	k->sport = pi->sport;
	if (answer) {
		__builtin_memcpy(k->req, pi->daddr, 16);
		__builtin_memcpy(k->resp, pi->saddr, 16);
	} else {
		__builtin_memcpy(k->req, pi->saddr, 16);
		__builtin_memcpy(k->resp, pi->daddr, 16);
	}
}

static __always_inline struct roce_flow_stats *
flow_get(const struct roce_path_key *path, __u32 resp_qpn)
{
	struct roce_flow_key fk;

	__builtin_memcpy(&fk.path, path, sizeof(fk.path));
	fk.resp_qpn = resp_qpn;
	return map_lookup_or_init(&flows, &fk, &zero_flow);
}

/*
 * The statistics of flow (path, resp_qpn): in the path's pending entry
 * when it is the path's own QPN (or the path has none yet), else in the
 * flows map. Zeroed first when a new reporting interval has begun.
 */
static __always_inline struct roce_flow_stats *
path_flow(struct pending_path *pp, const struct roce_path_key *key, __u32 resp_qpn)
{
	__u32 epoch = stats_epoch;

	if ((pp->flags & PATH_ST_VALID) && pp->st_qpn != resp_qpn)
		return flow_get(key, resp_qpn);
	if (!(pp->flags & PATH_ST_VALID) || pp->st_epoch != epoch) {
		__builtin_memset(&pp->st, 0, sizeof(pp->st));
		pp->st_qpn = resp_qpn;
		pp->st_epoch = epoch;
		pp->flags |= PATH_ST_VALID;
	}
	return &pp->st;
}

/* what an answer completes, passed to the out-of-line helpers below */
struct answer_ctx {
	struct roce_path_key key;	/* requester -> responder */
	__u64 now;			/* 0 until first needed */
	__u32 psn;
	__u32 ifindex;
	__u32 sample_psn;		/* PSN of the request being sampled */
	__u8 inclusive;			/* the PSN itself is answered */
	__u8 drop_exact;		/* a fatal NAK ends the PSN it names */
	__u8 pad[2];
};

/*
 * The helpers below are global (non-static, noinline) functions: the
 * verifier checks each once, on its own, instead of once per parser path
 * times per ring slot. Their pointer arguments may be NULL to the
 * verifier, hence the checks.
 */
__noinline int rocelat_sample(struct pending_path *pp, struct answer_ctx *ac,
			      struct rocelat_counters *cnt, __u32 qpn, __u64 lat)
{
	struct roce_flow_stats *fs;
	__u64 v;
	__u32 slot;

	if (!pp || !ac || !cnt)
		return 0;
	v = lat / targ_unit_ns;
	slot = hist_slot_bounded(v);
	cnt->c[RL_SAMPLES]++;
	cnt->hist.slots[slot]++;
	fs = path_flow(pp, &ac->key, qpn);
	if (!fs)
		return 0;
	/*
	 * Plain adds, no atomics: a path's answers arrive through one queue
	 * (RSS hashes its 5-tuple), hence one CPU at a time; the ring above
	 * is updated the same way. The steady-state bench: 101 -> 88 ns an
	 * answer (lock-prefixed adds cost ~4 ns each here).
	 */
	fs->samples++;
	fs->sum += lat;
	if (lat > fs->max)
		fs->max = lat;
	fs->ifindex = ac->ifindex;
	fs->last_psn = ac->sample_psn;
	fs->hist.slots[slot]++;
	return 1;
}

/*
 * Complete the pending requests an answer covers: every PSN before its
 * own, and its own when inclusive (ACK, READ RESPONSE). A NAK acknowledges
 * only the PSNs before its own; a fatal NAK (not a sequence error) also
 * ends the request it names (drop_exact), without a sample. Returns how
 * many requests were completed.
 */
/* state of one completion walk, shared with the bpf_loop() callback */
struct complete_walk {
	struct pending_path *pp;
	struct answer_ctx *ac;
	struct rocelat_counters *cnt;
	__u32 tail, head, pop;
	int completed;
	__u32 front, mixed;	/* not bool: the verifier wants 0/1 returns */
};

/* one ring slot, oldest first; 1 ends the walk */
static long complete_slot(__u64 i, void *data)
{
	struct complete_walk *w = data;
	struct pending_path *pp = w->pp;
	struct answer_ctx *ac = w->ac;
	struct pending_slot *s;
	__u32 at = w->tail + (__u32)i, qf;
	__s64 lat;
	int d;

	if (at == w->head)
		return 1;
	s = &pp->ring[at & (PENDING_RING - 1)];
	qf = s->qpn_flags;
	if (!(qf & SLOT_VALID)) {
		if (w->front)		/* a hole at the front: pop it */
			w->pop++;
		return 0;
	}
	d = roce_psn_diff(s->psn, ac->psn);
	if (d > 0 || (d == 0 && !ac->inclusive && !ac->drop_exact)) {
		w->front = 0;
		/* PSN order: nothing later is covered, unless another QP's
		 * PSNs are interleaved on this path */
		if (w->mixed)
			return 0;
		return 1;
	}
	s->qpn_flags = 0;
	w->completed++;
	if (w->front)
		w->pop++;
	if (d == 0 && !ac->inclusive)
		return 0;		/* fatal NAK: no sample */
	if (qf & SLOT_RETX) {
		w->cnt->c[RL_KARN_DISCARDED]++;
		return 0;
	}
	if (!ac->now)
		ac->now = now_ns();
	lat = (__s64)(ac->now - s->ts_ns);
	if (lat < 0)			/* capture timestamps out of order */
		lat = 0;
	if ((__u64)lat > targ_timeout_ns) {
		w->cnt->c[RL_TIMEOUTS]++;
		return 0;
	}
	ac->sample_psn = s->psn;
	rocelat_sample(pp, ac, w->cnt, qf >> 8, lat);
	return 0;
}

/*
 * Complete the pending requests an answer covers: every PSN before its
 * own, and its own when inclusive (ACK, READ RESPONSE). A NAK acknowledges
 * only the PSNs before its own; a fatal NAK (not a sequence error) also
 * ends the request it names (drop_exact), without a sample. The ring walk
 * is a bpf_loop() (5.17+): the verifier checks the body once, which the
 * 6.1 verifier needs for PENDING_RING steps. Returns how many requests
 * were completed.
 */
__noinline int rocelat_complete(struct pending_path *pp, struct answer_ctx *ac,
				struct rocelat_counters *cnt)
{
	struct complete_walk w = {};

	if (!pp || !ac || !cnt)
		return 0;
	w.pp = pp;
	w.ac = ac;
	w.cnt = cnt;
	w.tail = pp->tail;
	w.head = pp->head;
	w.front = 1;
	w.mixed = pp->flags & PATH_QP_MIXED;
	bpf_loop(PENDING_RING, complete_slot, &w, 0);
	pp->tail = w.tail + w.pop;
	return w.completed;
}

/* a retransmitted request: its pending slot's answer becomes ambiguous */
__noinline int rocelat_mark_retx(struct pending_path *pp, __u32 psn)
{
	__u32 tail, head;
	int i;

	if (!pp)
		return 0;
	tail = pp->tail;
	head = pp->head;
	for (i = 0; i < PENDING_RING; i++) {
		struct pending_slot *s = &pp->ring[(tail + i) & (PENDING_RING - 1)];

		if (tail + i == head)
			break;
		if ((s->qpn_flags & SLOT_VALID) && s->psn == psn)
			s->qpn_flags |= SLOT_RETX;
	}
	return 0;
}

static __always_inline void handle_request(const struct pkt_info *pi,
					   struct rocelat_counters *cnt)
{
	__u8 op = ROCE_OP(pi->opcode);
	bool read = op == ROCE_READ_REQUEST;
	bool tracked = (pi->flags & PKT_F_ACKREQ) || read ||
		       op == ROCE_COMPARE_SWAP || op == ROCE_FETCH_ADD;
	struct roce_path_key key;
	struct pending_path *pp;
	struct pending_slot *s;
	struct roce_flow_stats *fs;
	__u64 now;

	cnt->c[RL_REQUESTS]++;
	path_key_fill(&key, pi, false);
	pp = map_lookup_or_init(&pending, &key, &zero_path);
	if (!pp)
		return;
	if (pi->ecn == AX_ECN_CE) {
		fs = path_flow(pp, &key, pi->dqpn);
		if (fs)
			__sync_fetch_and_add(&fs->ecn_ce, 1);
	}
	if (pp->flags & PATH_HI_VALID) {
		if (pi->dqpn != pp->resp_qpn) {
			/* two QPs share addresses and source port: their PSN
			 * spaces differ, so no retransmit verdict here */
			cnt->c[RL_QP_SWITCH]++;
			pp->flags |= PATH_QP_MIXED;
		} else if (roce_psn_diff(pi->psn, pp->hi_psn) <= 0) {
			/* a request PSN seen again: retransmission (Karn) */
			cnt->c[RL_RETRANSMITS]++;
			rocelat_mark_retx(pp, pi->psn);
			fs = path_flow(pp, &key, pi->dqpn);
			if (fs)
				__sync_fetch_and_add(&fs->retransmits, 1);
			return;
		}
	}
	pp->hi_psn = pi->psn;
	pp->resp_qpn = pi->dqpn;
	pp->flags |= PATH_HI_VALID;
	if (!tracked)
		return;

	cnt->c[RL_TRACKED]++;
	now = now_ns();
	if (pp->head - pp->tail >= PENDING_RING) {
		/* full: the oldest goes */
		s = &pp->ring[pp->tail & (PENDING_RING - 1)];
		if (s->qpn_flags & SLOT_VALID) {
			if (now - s->ts_ns > targ_timeout_ns)
				cnt->c[RL_TIMEOUTS]++;
			else
				cnt->c[RL_EVICTED]++;
		}
		pp->tail++;
	}
	s = &pp->ring[pp->head & (PENDING_RING - 1)];
	pp->head++;
	s->ts_ns = now;
	s->psn = pi->psn;
	s->qpn_flags = (pi->dqpn << 8) | SLOT_VALID | (read ? SLOT_READ : 0);
}

static __always_inline void handle_answer(const struct pkt_info *pi,
					  struct rocelat_counters *cnt,
					  __u32 ifindex)
{
	__u8 op = ROCE_OP(pi->opcode);
	bool ack = op == ROCE_ACKNOWLEDGE || op == ROCE_ATOMIC_ACK;
	bool first = ack || op == ROCE_READ_RESP_FIRST || op == ROCE_READ_RESP_ONLY;
	__u8 kind = ROCE_AETH_ACK, code = 0;
	struct roce_flow_stats *fs = NULL;
	struct pending_path *pp;
	struct answer_ctx ac;
	int done;

	cnt->c[ack ? RL_ACKS : RL_READ_RESP]++;
	if (pi->flags & PKT_F_AETH) {
		kind = pi->syndrome >> 5;
		code = ROCE_AETH_CODE(pi->syndrome);
	}
	if (kind == ROCE_AETH_RNR_NAK) {
		cnt->c[RL_RNR_NAKS]++;
	} else if (kind == ROCE_AETH_NAK) {
		if (code < ROCE_NAK_CODES)
			cnt->c[RL_NAK_SEQ + code]++;
		else
			cnt->c[RL_NAK_OTHER]++;
	} else if (kind != ROCE_AETH_ACK) {
		cnt->c[RL_NAK_OTHER]++;
		return;
	}

	path_key_fill(&ac.key, pi, true);
	pp = bpf_map_lookup_elem(&pending, &ac.key);
	if (!pp) {
		if (first && kind == ROCE_AETH_ACK)
			cnt->c[RL_UNMATCHED]++;
		return;
	}
	if (kind != ROCE_AETH_ACK || pi->ecn == AX_ECN_CE)
		fs = path_flow(pp, &ac.key, pp->resp_qpn);
	if (fs) {
		if (pi->ecn == AX_ECN_CE)
			__sync_fetch_and_add(&fs->ecn_ce, 1);
		if (kind == ROCE_AETH_RNR_NAK) {
			__sync_fetch_and_add(&fs->rnr_naks, 1);
			fs->rnr_timer = code;
		} else if (kind == ROCE_AETH_NAK) {
			__sync_fetch_and_add(&fs->naks, 1);
			if (code < ROCE_NAK_CODES)
				__sync_fetch_and_add(&fs->nak[code], 1);
		}
	}
	ac.now = 0;		/* read the clock only when a slot completes */
	ac.psn = pi->psn;
	ac.ifindex = ifindex;
	ac.inclusive = kind == ROCE_AETH_ACK;
	ac.drop_exact = kind == ROCE_AETH_NAK && code != ROCE_NAK_PSN_SEQ_ERR;
	done = rocelat_complete(pp, &ac, cnt);
	if (!done && first && kind == ROCE_AETH_ACK)
		cnt->c[RL_UNMATCHED]++;
}

/* a CNP goes from the notification point (the receiver of CE-marked
 * packets, here the responder) back to the requester */
static __always_inline void handle_cnp(const struct pkt_info *pi,
				       struct rocelat_counters *cnt)
{
	struct roce_path_key key;
	struct pending_path *pp;
	struct roce_flow_stats *fs;

	cnt->c[RL_CNPS]++;
	path_key_fill(&key, pi, true);
	pp = bpf_map_lookup_elem(&pending, &key);
	if (!pp)
		return;
	fs = path_flow(pp, &key, pp->resp_qpn);
	if (fs)
		__sync_fetch_and_add(&fs->cnps, 1);
}

static __always_inline void rocelat_handle(void *data, void *data_end,
					   __u32 ifindex)
{
	struct pkt_cursor c = {
		.kind = SRC_PACKET, .data = data, .data_end = data_end,
	};
	struct rocelat_counters *cnt;
	struct pkt_info pi = {};
	__u32 zero = 0;
	__u8 tr;
	int v;

	if (pkt_fast_not_roce(data, data_end, targ_roce_port))
		return;
	v = pkt_parse_eth(&c, targ_roce_port, &pi);
	if (v != PKT_ROCE && v != PKT_MALFORMED)
		return;
	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!cnt)
		return;
	if (v == PKT_MALFORMED) {
		cnt->c[RL_PARSE_ERRORS]++;
		return;
	}
	cnt->c[RL_ROCE_PKTS]++;
	if (pi.ecn == AX_ECN_CE)
		cnt->c[RL_ECN_CE]++;
	if (pi.opcode == ROCE_OPCODE_CNP) {
		handle_cnp(&pi, cnt);
		return;
	}
	tr = ROCE_TRANSPORT(pi.opcode);
	if (tr != ROCE_TR_RC && tr != ROCE_TR_XRC) {
		cnt->c[RL_OTHER_TRANSPORT]++;
		return;
	}
	if (roce_op_is_request(pi.opcode))
		handle_request(&pi, cnt);
	else if (ROCE_OP(pi.opcode) >= ROCE_READ_RESP_FIRST &&
		 ROCE_OP(pi.opcode) <= ROCE_ATOMIC_ACK)
		handle_answer(&pi, cnt, ifindex);
}

SEC("xdp")
int rocelat_xdp(struct xdp_md *ctx)
{
	rocelat_handle((void *)(long)ctx->data, (void *)(long)ctx->data_end,
		       ctx->ingress_ifindex);
	return XDP_PASS;
}

SEC("tc")
int rocelat_tc(struct __sk_buff *skb)
{
	__u32 linear = skb->data_end - skb->data;

	/* headers in a paged fragment (rare on egress): make them readable;
	 * this moves no byte of the packet */
	if (linear < 128 && skb->len > linear) {
		bpf_skb_pull_data(skb, skb->len < 128 ? skb->len : 128);
	}
	/* keep clang from merging ctx field addresses across the branch:
	 * the verifier wants ctx loads at a constant offset */
	asm volatile("" : "+r"(skb));
	rocelat_handle((void *)(long)skb->data, (void *)(long)skb->data_end,
		       skb->ifindex);
	return AX_TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
