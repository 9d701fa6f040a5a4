// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat: passive RoCE v2 latency from XDP (ingress) and tc (egress).
 *
 * One handler, two thin wrappers. Every packet passes untouched. A request
 * that expects an answer (AckReq, READ REQUEST, atomic) is remembered with
 * its timestamp; the answer that covers its PSN (cumulative ACK, NAK's
 * implied ACK, its READ RESPONSE or ATOMIC ACKNOWLEDGE) turns it into a
 * latency sample.
 *
 * Answers are paired by queue pair, never by UDP source port: a request
 * names the responder's QPN, its answer the requester's, and the two
 * sides of a QP pair may send from different source ports (hardware RNICs
 * pick one per QP; only current rdma_rxe derives one port from both
 * QPNs). A flow is (requester, responder, responder QPN): one entry of the
 * flow table (the pending array, in sets of FLOW_WAYS) holding a FIFO ring
 * of outstanding PSNs and the flow's statistics.
 * The pairs map learns requester QPN -> responder QPN from the first
 * answer whose PSN falls inside exactly one candidate flow's window of
 * outstanding PSNs between the same two addresses (starting PSNs are
 * random 24-bit values, so windows of different QPs practically never
 * overlap; when they do, the one candidate that sends from the answer's
 * own source port wins, as rxe's symmetric port has it; failing that,
 * nothing is learned and the answer is counted as ambiguous). After that
 * an answer costs the pairs map (through a per-CPU cache of its recent
 * entries), then a look into its flow's set. The pairing is in
 * rocelat_pair.bpf.h.
 *
 * -r FILE runs this very source compiled natively (rocelat_native.c: no
 * kernel, no privileges), with the capture time as the program's clock
 * (clock_ns, targ_offline) before each packet; -r --in-kernel runs this
 * program itself through BPF_PROG_TEST_RUN instead, the same way.
 * rocelat_sweep, run by user space before each report, counts requests
 * left unanswered for --timeout on flows that went quiet.
 *
 * The parts, each of which includes what it uses: rocelat_state.bpf.h
 * (the loader's settings, the clock, the counters, the keys),
 * rocelat_flow.bpf.h (the flow table), rocelat_samples.bpf.h (latency
 * samples), rocelat_complete.bpf.h (the requests an answer completes),
 * rocelat_pair.bpf.h (which QPs pair), rocelat_sweep.bpf.h (the timeout
 * sweep). Here: the request, answer and CNP handlers, and the programs.
 */
#include "rocelat_state.bpf.h"
#include "rocelat_flow.bpf.h"
#include "rocelat_samples.bpf.h"
#include "rocelat_complete.bpf.h"
#include "rocelat_pair.bpf.h"
#include "rocelat_sweep.bpf.h"

#define AX_TC_ACT_UNSPEC	(-1)	/* also TCX_NEXT: let the next program decide */

/*
 * A request PSN seen again. Its pending slot holds the first sighting:
 * the same IPv4 ID within DUP_WINDOW_NS is that packet seen a second time
 * (returns 1); else a retransmission, whose answer becomes ambiguous.
 */
AX_GLOBAL_FUNC int rocelat_mark_retx(struct pending_flow *pf, __u32 psn,
				     __u32 ip_id, __u64 now)
{
	__u32 tail, head;
	int i;

	if (!pf)
		return 0;
	tail = pf->tail;
	head = pf->head;
	for (i = 0; i < PENDING_RING; i++) {
		struct pending_slot *s = &pf->ring[(tail + i) & (PENDING_RING - 1)];

		if (tail + i == head)
			break;
		if (!(s->flags & SLOT_VALID) || s->psn != psn)
			continue;
		if (s->ip_id == ip_id && now - s->ts_ns < DUP_WINDOW_NS)
			return 1;
		s->flags |= SLOT_RETX;
	}
	return 0;
}

/* QP k is left out: the table is full of active flows. Counted once as
 * a QP (while the untracked map has room), each request of it as one
 * not timed. */
static __always_inline void flow_refused(struct roce_qp_key *k, __u16 sport,
					 struct rocelat_counters *cnt)
{
	struct untracked_qp u = {}, *e;
	__u32 v, qpn = k->qpn;

	cnt->c[RL_UNTRACKED_REQS]++;
	e = bpf_map_lookup_elem(&untracked, k);
	if (e) {
		e->seen = now_ns();
		return;
	}
	u.seen = now_ns();
	u.sport = sport;
	if (bpf_map_update_elem(&untracked, k, &u, BPF_NOEXIST)) {
		cnt->c[RL_UNTRACKED_LOST]++;
		return;
	}
	cnt->c[RL_UNTRACKED]++;
	/* its port marked, so that its answers are not tried against the
	 * waiting QPs' windows (with PSNs alike, a wrong pairing) */
	v = qpn | WAIT_UNTRACKED;
	k->qpn = sport;
	bpf_map_update_elem(&waitport, k, &v, BPF_NOEXIST);
	k->qpn = qpn;
}

/* what one set offers a new flow: its free entries (the first one's
 * index) and its least recently active flow */
struct flow_room {
	__u32 nfree;
	__u32 free_at;
	__u32 victim;
	__u32 pad;
	__u64 oldest;
};

/* set's room for a new flow, in *r (oldest and victim carried over from
 * the sets before). A global function, verified once for all sets: the
 * 48 entries of three sets of 16 in one loop were past the verifier's
 * million instructions. */
AX_GLOBAL_FUNC int rocelat_set_room(__u32 set, struct flow_room *r)
{
	struct pending_flow *pf;
	__u32 i, idx;
	__u64 t;

	if (!r)
		return -1;
	r->nfree = 0;
	for (i = 0; i < FLOW_WAYS; i++) {
		idx = set * FLOW_WAYS + i;
		pf = bpf_map_lookup_elem(&pending, &idx);
		if (!pf)
			return -1;
		if (!pf->used) {
			if (!r->nfree++)
				r->free_at = idx;
			continue;
		}
		t = flow_active_ns(pf);
		if (t < r->oldest) {
			r->oldest = t;
			r->victim = idx;
		}
	}
	return 0;
}

/*
 * A new flow's entry: a free one of the emptiest of its three sets
 * (choices keep the sets even: with one, a table a quarter full already
 * pushed out 0.5% of its flows and a full one 19%; with two sets of 4,
 * 10,000 QPs in 16,384 entries left 7 out, with three none; three sets
 * of 16 leave none out in 11,264), else the least
 * recently active flow of both if it is idle, nothing seen for --timeout
 * (pushed out: counted as flows started minus flows live); when none is,
 * the new flow is left out (flow_refused(), returns 1): the flows timed
 * stay timed, and coverage falls to the table's share, not to nothing
 * (pushing out the least recent active flow thrashed: every flow gone
 * before its next sample). Two CPUs that start two flows of one set (or one
 * flow twice) at the same moment may pick the same entry: one flow is then
 * lost, or counted twice as started, as if pushed out.
 */
AX_GLOBAL_FUNC int rocelat_flow_new(const struct roce_qp_key *k, __u32 sport,
				    struct rocelat_counters *cnt)
{
	struct flow_room r = { .oldest = ~0ULL };
	__u32 set[FLOW_SETS], j, idx, victim = 0, best = 0;
	struct flow_tags *tags;
	struct pending_flow *pf;
	struct roce_qp_key key;
	__u64 *bits;

	if (!k || !cnt)
		return -1;
	key = *k;
	roce_flow_sets(&key, targ_flow_sets, set);
	/* the emptiest, the earlier of equals */
	for (j = 0; j < FLOW_SETS; j++) {
		if (rocelat_set_room(set[j], &r))
			return -1;
		if (r.nfree > best) {
			best = r.nfree;
			victim = r.free_at;
		}
	}
	if (!best) {
		if ((__s64)(now_ns() - r.oldest) <= (__s64)targ_timeout_ns) {
			flow_refused(&key, sport, cnt);
			return 1;
		}
		victim = r.victim;
	}
	if (bpf_map_update_elem(&pending, &victim, &zero_flow, BPF_ANY))
		return -1;
	pf = bpf_map_lookup_elem(&pending, &victim);
	if (!pf)
		return -1;
	pf->key = key;
	pf->serial = (__u64)bpf_get_smp_processor_id() << 48 | cnt->c[RL_FLOWS];
	/* a reader on another CPU matches the key only once it is whole */
	asm volatile("" ::: "memory");
	pf->used = 1;
	idx = victim / FLOW_WAYS;
	tags = bpf_map_lookup_elem(&flow_tags, &idx);
	if (tags)
		tags->tag[victim % FLOW_WAYS] = roce_flow_tag(&key);
	idx = victim / 64;
	bits = bpf_map_lookup_elem(&flows_used, &idx);
	if (bits && !(*bits & 1ULL << (victim & 63)))
		__sync_fetch_and_or(bits, 1ULL << (victim & 63));
	cnt->c[RL_FLOWS]++;
	pair_add(&key, cnt);
	return 0;
}

static __always_inline struct pending_flow *
flow_get(struct roce_qp_key *fk, __u16 sport, struct rocelat_counters *cnt)
{
	struct pending_flow *pf = flow_find(fk);

	if (pf || rocelat_flow_new(fk, sport, cnt))
		return pf;
	return flow_find(fk);
}

/*
 * A new connection on a flow's QPNs: what the old one left outstanding
 * will never be answered, and is counted as timed out.
 */
AX_GLOBAL_FUNC int rocelat_flow_forget(struct pending_flow *pf,
				       struct rocelat_counters *cnt)
{
	__u32 tail, head;
	int i;

	if (!pf || !cnt)
		return 0;
	tail = pf->tail;
	head = pf->head;
	for (i = 0; i < PENDING_RING; i++) {
		struct pending_slot *s = &pf->ring[(tail + i) & (PENDING_RING - 1)];

		if (tail + i == head)
			break;
		if (!(s->flags & SLOT_VALID))
			continue;
		s->flags = 0;
		cnt->c[RL_TIMEOUTS]++;
		__sync_fetch_and_add(&flow_stats(pf)->timeouts, 1);
	}
	pf->tail = head;
	return 0;
}

/* a full ring: its oldest request goes (timed out, or pushed out) */
static __always_inline void ring_pop_oldest(struct pending_flow *pf,
					    struct rocelat_counters *cnt, __u64 now)
{
	struct pending_slot *s = &pf->ring[pf->tail & (PENDING_RING - 1)];

	if (s->flags & SLOT_VALID) {
		if (flow_age(pf, now, s->ts_ns) > targ_timeout_ns) {
			cnt->c[RL_TIMEOUTS]++;
			__sync_fetch_and_add(&flow_stats(pf)->timeouts, 1);
		} else {
			cnt->c[RL_EVICTED]++;
		}
	}
	s->flags = 0;
	pf->tail++;
}

/*
 * A new request PSN that an ACK seen before it covers (pf->early_*,
 * handle_answer()). Stamped before that ACK, within --timeout, it is one
 * the ACK answered, shown later by a recording out of time order (a
 * capture of several queues, a mirror of two ports): a SEND or WRITE is
 * timed to the ACK, as a pending one would have been (cumulative ACK); a
 * READ or atomic, answered only by its own response, is counted as
 * reordered. Stamped after it, the ACK is older (an old connection's):
 * forgotten, as once past its PSN. Returns 1 when the request is done.
 */
AX_GLOBAL_FUNC int rocelat_early(struct pending_flow *pf, struct rocelat_counters *cnt,
				 __u32 psn, __u64 now, __u32 own_response)
{
	struct answer_ctx *ac;
	__s64 lat;

	if (!pf || !cnt)
		return 0;
	lat = (__s64)(pf->early_ts - now);
	if (lat < 0 && (pf->flags & FLOW_SWITCH_CLOCK))
		lat += pf->clock_wrap_ns;
	if (roce_psn_diff(psn, pf->early_psn & ROCE_PSN_MASK) > 0 ||
	    lat < 0 || (__u64)lat > targ_timeout_ns) {
		pf->early_ts = 0;
		return 0;
	}
	if (pf->early_psn & EARLY_UNMATCHED) {
		/* it matched after all */
		cnt->c[RL_UNMATCHED]--;
		pf->early_psn &= ROCE_PSN_MASK;
	}
	if (psn == pf->early_psn)
		pf->early_ts = 0;	/* the last it covers */
	if (own_response) {
		cnt->c[RL_REORDERED]++;
		__sync_fetch_and_add(&flow_stats(pf)->untimed, 1);
		return 1;
	}
	ac = &cnt->ac;
	__builtin_memset(ac, 0, sizeof(*ac));
	ac->now = now + lat;
	ac->sw = !!(pf->flags & FLOW_SWITCH_CLOCK);
	ac->sw_ns = ac->now;
	ac->ifindex = pf->early_ifindex;
	ac->sample_psn = psn;
	rocelat_sample(pf, ac, cnt, lat, 0);
	return 1;
}

static __always_inline void handle_request(const struct pkt_info *pi,
					   struct rocelat_counters *cnt,
					   bool ingress)
{
	__u8 op = ROCE_OP(pi->opcode);
	bool read = op == ROCE_READ_REQUEST;
	bool atomic = op == ROCE_COMPARE_SWAP || op == ROCE_FETCH_ADD;
	bool tracked = (pi->flags & PKT_F_ACKREQ) || read || atomic;
	struct roce_qp_key key;
	struct pending_flow *pf;
	struct pending_slot *s;
	__u64 now = 0, wrap = 0;
	bool sw;
	int d;

	cnt->c[RL_REQUESTS]++;
	qp_key_fill(&key, pi, false);
	pf = flow_get(&key, pi->sport, cnt);
	if (!pf)
		return;
	sw = switch_time(pi, &now, &wrap);
	if (!(pf->flags & FLOW_CLOCK_SET))
		flow_start(pf, pi, &key, sw, wrap);
	if (pf->flags & FLOW_SWITCH_CLOCK) {
		if (!sw) {
			/* a switch-timed flow's frame without the time */
			cnt->c[RL_NO_SWITCH_TIME]++;
			return;
		}
		pf->sw_last = now;
		pf->arr_last = now_ns();
	} else {
		now = now_ns();
	}
	if (pi->ecn == AX_ECN_CE)
		__sync_fetch_and_add(&flow_stats(pf)->ecn_ce, 1);
	/* not paired yet: its answers find it by its port */
	if (!(pf->flags & FLOW_PAIRED) &&
	    (!(pf->flags & FLOW_HI_VALID) || pf->sport != pi->sport))
		wait_add(&key, pi->sport, cnt);
	pf->sport = pi->sport;
	if (pf->flags & FLOW_HI_VALID) {
		d = roce_psn_diff(pi->psn, pf->hi_psn);
		if (d == 0 && pi->ip_id == pf->last_ip_id &&
		    flow_age(pf, now, pf->last_ts) < DUP_WINDOW_NS) {
			cnt->c[RL_DUPLICATES]++;
			return;
		}
		if (d < -RETX_WINDOW) {
			/* a new connection on the same QPNs: what the old
			 * one left outstanding is forgotten */
			cnt->c[RL_FLOW_RESETS]++;
			rocelat_flow_forget(pf, cnt);
			pf->una_psn = pi->psn;
		} else if (d <= 0) {
			if (rocelat_mark_retx(pf, pi->psn, pi->ip_id, now)) {
				cnt->c[RL_DUPLICATES]++;
				return;
			}
			/* a request PSN seen again: retransmission (Karn) */
			cnt->c[RL_RETRANSMITS]++;
			__sync_fetch_and_add(&flow_stats(pf)->retransmits, 1);
			return;
		}
	} else {
		pf->una_psn = pi->psn;
	}
	/* when the highest PSN was first seen, for the duplicate test */
	pf->hi_psn = pi->psn;
	pf->last_ip_id = pi->ip_id;
	pf->last_ts = now;
	/* flags are written once each, not on every request: the answer
	 * side (another CPU) sets FLOW_PAIRED in the same word */
	if (!(pf->flags & FLOW_HI_VALID))
		pf->flags |= FLOW_HI_VALID;
	if (!tracked)
		return;

	cnt->c[RL_TRACKED]++;
	if (pf->early_ts && rocelat_early(pf, cnt, pi->psn, now, read || atomic))
		return;
	if (pf->head - pf->tail >= PENDING_RING)
		ring_pop_oldest(pf, cnt, now);
	s = &pf->ring[pf->head & (PENDING_RING - 1)];
	s->ts_ns = now;
	s->psn = pi->psn;
	s->dma_len = pi->dma_len;
	s->ip_id = pi->ip_id;
	s->flags = SLOT_VALID | (read ? SLOT_READ : 0) | (atomic ? SLOT_ATOMIC : 0) |
		   (ingress ? SLOT_INGRESS : 0);
	/* publish the slot only once it is written: the answer side (another
	 * CPU on the requester host: XDP vs tc) reads up to head. A compiler
	 * barrier; x86 keeps stores in order, arm64 may not (BPF has no
	 * store barrier): there an answer racing its request can miss it. */
	asm volatile("" ::: "memory");
	pf->head++;
	if (!(pf->flags & FLOW_PAIRED))
		rocelat_wait_psn(&key, pi->psn, cnt);
}

/* an answer's AETH kind in the counters; false for a reserved one */
static __always_inline bool answer_count_kind(struct rocelat_counters *cnt,
					      __u8 kind, __u8 code)
{
	if (kind == ROCE_AETH_RNR_NAK) {
		cnt->c[RL_RNR_NAKS]++;
	} else if (kind == ROCE_AETH_NAK) {
		if (code < ROCE_NAK_CODES)
			cnt->c[RL_NAK_SEQ + code]++;
		else
			cnt->c[RL_NAK_OTHER]++;
	} else if (kind != ROCE_AETH_ACK) {
		cnt->c[RL_NAK_OTHER]++;
		return false;
	}
	return true;
}

/* a NAK, an RNR NAK or a CE mark in the flow's statistics */
static __always_inline void answer_flow_stats(struct pending_flow *pf,
					      const struct pkt_info *pi,
					      struct rocelat_counters *cnt,
					      __u8 kind, __u8 code)
{
	struct answer_marks *m = &cnt->marks;

	__builtin_memset(m, 0, sizeof(*m));
	answer_marks_add(m, pi->ecn == AX_ECN_CE, kind, code);
	flow_stats_marks(pf, m);
}

/* what an answer held as evidence answers (HELD_*) */
static __always_inline __u32 held_flags(__u8 op, __u8 kind, __u8 code, bool egress)
{
	return (kind == ROCE_AETH_ACK ? HELD_INCLUSIVE : 0) |
	       (kind == ROCE_AETH_NAK && code != ROCE_NAK_PSN_SEQ_ERR ? HELD_FATAL : 0) |
	       (op == ROCE_READ_RESP_FIRST || op == ROCE_READ_RESP_ONLY ? HELD_READ_RESP : 0) |
	       (op == ROCE_ATOMIC_ACK ? HELD_ATOMIC : 0) | (egress ? HELD_EGRESS : 0);
}

/*
 * The answer as the walk (rocelat_complete()) reads it: handle_answer()
 * set what complete_fast() reads (the time so far, the PSN, the device,
 * inclusive, egress); the rest is filled here, only for the answers the
 * fast path left to the walk (an ACK per request skips 10 stores).
 */
static __always_inline void answer_ctx_walk(struct answer_ctx *ac,
					    const struct pkt_info *pi,
					    __u8 kind, __u8 code)
{
	__u8 op = ROCE_OP(pi->opcode);

	ac->sample_psn = 0;
	ac->span_hi = 0;
	ac->has_span = 0;
	ac->untimed = 0;
	ac->held = 0;
	ac->payload_len = pi->payload_len;
	ac->fatal = kind == ROCE_AETH_NAK && code != ROCE_NAK_PSN_SEQ_ERR;
	ac->read_resp = op == ROCE_READ_RESP_FIRST || op == ROCE_READ_RESP_ONLY;
	ac->atomic_ack = op == ROCE_ATOMIC_ACK;
}

/*
 * The flow of an answer's requester QP: paired already, or paired now by
 * the answer's PSN (rocelat_learn()), what the QP held then applied first.
 * NULL when it is not paired yet: the answer is then held as evidence for
 * when it is (then unmatched if it completes nothing), with what the
 * flow's statistics count.
 */
static __always_inline struct pending_flow *
answer_pair(const struct pkt_info *pi, struct rocelat_counters *cnt,
	    __u32 ifindex, bool egress, bool first, __u8 kind, __u8 code)
{
	struct pending_flow *pf;
	struct roce_qp_key ak;
	int learned;
	__u32 at;

	qp_key_fill(&ak, pi, true);
	pf = answer_flow(&ak, cnt, true);
	if (!pf && first) {
		learned = rocelat_learn(&ak, pi->psn | (kind == ROCE_AETH_NAK) << 24,
					pi->sport, cnt);
		if (learned >= 0) {
			pf = flow_of(&ak, learned, &at);
			if (pf && held_n)
				rocelat_held_apply(&ak, pf, cnt);
		} else if (learned == LEARN_UNTRACKED) {
			return 0;	/* a QP left out: nothing to hold for */
		}
	}
	if (!pf) {
		if (first && kind != ROCE_AETH_RNR_NAK)
			rocelat_hold(&ak, pi, cnt,
				     held_flags(ROCE_OP(pi->opcode), kind, code, egress),
				     ifindex);
		else if (kind != ROCE_AETH_ACK || pi->ecn == AX_ECN_CE)
			rocelat_hold(&ak, pi, cnt, HELD_MARKS, ifindex);
		return 0;
	}
	if (!(pf->flags & FLOW_PAIRED)) {	/* paired by the CM exchange */
		pf->req_qpn = ak.qpn;
		pf->flags |= FLOW_PAIRED;
		wait_forget(&ak, pf);
		ak.qpn = pf->req_qpn;
	}
	return pf;
}

/*
 * What a flow remembers of an answer, after its walk: the last one that
 * completed requests (the same packet seen again is a duplicate, no
 * stray answer), and a first ACK past every request seen, which answers
 * requests not seen yet (rocelat_early()). first_ack: an ACK, ATOMIC
 * ACKNOWLEDGE or first READ RESPONSE whose AETH says ACK.
 */
static __always_inline void answer_remember(struct pending_flow *pf,
					    const struct pkt_info *pi,
					    struct rocelat_counters *cnt,
					    int done, bool first_ack, __u32 ifindex)
{
	struct answer_ctx *ac = &cnt->ac;
	bool stray = false;

	if (done) {
		if (!ac->now)
			ac->now = ac->sw ? ac->sw_ns : now_ns();
		pf->ans_ts = ac->now;
		pf->ans_psn = pi->psn;
		pf->ans_ip_id = pi->ip_id;
	} else if (first_ack) {
		/* the answer that just completed requests, seen again (a mirror
		 * of both directions, a bridge's two ports) is no stray one */
		if (pi->psn == pf->ans_psn && pi->ip_id == pf->ans_ip_id &&
		    flow_age(pf, ac->sw ? ac->sw_ns : now_ns(), pf->ans_ts) < DUP_WINDOW_NS) {
			cnt->c[RL_DUPLICATES]++;
		} else {
			cnt->c[RL_UNMATCHED]++;
			stray = true;
		}
	}
	if (first_ack && roce_psn_diff(pi->psn, pf->hi_psn) > 0 &&
	    (!pf->early_ts ||
	     roce_psn_diff(pi->psn, pf->early_psn & ROCE_PSN_MASK) > 0)) {
		/* it answers requests not seen yet (rocelat_early()) */
		if (!ac->now)
			ac->now = ac->sw ? ac->sw_ns : now_ns();
		pf->early_psn = pi->psn | (stray ? EARLY_UNMATCHED : 0);
		pf->early_ifindex = ifindex;
		pf->early_ts = ac->now;
	}
}

static __always_inline void handle_answer(const struct pkt_info *pi,
					  struct rocelat_counters *cnt,
					  __u32 ifindex, bool egress)
{
	__u8 op = ROCE_OP(pi->opcode);
	bool ack = op == ROCE_ACKNOWLEDGE || op == ROCE_ATOMIC_ACK;
	bool read_first = op == ROCE_READ_RESP_FIRST || op == ROCE_READ_RESP_ONLY;
	bool first = ack || read_first;
	__u8 kind = ROCE_AETH_ACK, code = 0;
	struct answer_ctx *ac = &cnt->ac;
	struct pending_flow *pf;
	int done;

	cnt->c[ack ? RL_ACKS : RL_READ_RESP]++;
	if (pi->flags & PKT_F_AETH) {
		kind = pi->syndrome >> 5;
		code = ROCE_AETH_CODE(pi->syndrome);
	}
	if (!answer_count_kind(cnt, kind, code))
		return;
	pf = answer_pair(pi, cnt, ifindex, egress, first, kind, code);
	if (!pf)
		return;
	if (kind != ROCE_AETH_ACK || pi->ecn == AX_ECN_CE)
		answer_flow_stats(pf, pi, cnt, kind, code);
	/* what complete_fast() reads of the answer; the rest for the walk
	 * (answer_ctx_walk()) when the fast path leaves it the answer */
	ac->now = 0;
	ac->sw = 0;
	ac->psn = pi->psn;
	ac->ifindex = ifindex;
	ac->inclusive = kind == ROCE_AETH_ACK;
	ac->egress = egress;
	if (pf->flags & FLOW_SWITCH_CLOCK) {
		__u64 wrap;

		ac->sw = switch_time(pi, &ac->sw_ns, &wrap);
		if (!ac->sw) {
			/* nothing to time it with: its requests wait for a
			 * later (cumulative) answer or time out */
			cnt->c[RL_NO_SWITCH_TIME]++;
			return;
		}
		pf->sw_last = ac->sw_ns;
		pf->arr_last = now_ns();
	}
	/* the responder's PSNs move on with its READ RESPONSEs: a READ
	 * resumed part-way (at a PSN above its own) is then a retransmit */
	if (op >= ROCE_READ_RESP_FIRST && op <= ROCE_READ_RESP_ONLY &&
	    roce_psn_diff(pi->psn, pf->hi_psn) > 0)
		pf->hi_psn = pi->psn;
	done = complete_fast(pf, ac, cnt, pi);
	if (done > 0)
		return;		/* it did what follows */
	if (done < 0) {
		answer_ctx_walk(ac, pi, kind, code);
		done = rocelat_complete(pf, ac, cnt);
		if (ac->has_span && roce_psn_diff(ac->span_hi, pf->hi_psn) > 0)
			pf->hi_psn = ac->span_hi & ROCE_PSN_MASK;
	}
	if (kind != ROCE_AETH_RNR_NAK)
		answer_una(pf, pi->psn, ac->inclusive);
	answer_remember(pf, pi, cnt, done, first && kind == ROCE_AETH_ACK, ifindex);
}

/*
 * A CNP goes from the receiver of CE-marked packets back to their sender,
 * naming the sender's QP: to the requester (marked requests; the QPN is
 * the requester's) or, for marked READ RESPONSEs, to the responder (the
 * QPN is the responder's, so the flow is keyed by it directly).
 */
static __always_inline void handle_cnp(const struct pkt_info *pi,
				       struct rocelat_counters *cnt)
{
	struct roce_qp_key k;
	struct pending_flow *pf;

	cnt->c[RL_CNPS]++;
	qp_key_fill(&k, pi, false);
	pf = flow_find(&k);
	if (!pf) {
		qp_key_fill(&k, pi, true);
		pf = answer_flow(&k, cnt, false);
	}
	if (pf)
		__sync_fetch_and_add(&flow_stats(pf)->cnps, 1);
}

/*
 * The CNP handler behind a global function: the verifier checks it once,
 * not once per path through the parser (with decapsulation the parser has
 * hundreds). The request and answer handlers are inlined: a call costs a
 * return thunk on CPUs that need one (7 ns here), and with the
 * histograms' logarithms free of jumps (hist.bpf.h) the verifier checks
 * them per parser path in less than it took before for the calls.
 */
AX_GLOBAL_FUNC int rocelat_cnp(const struct pkt_info *pi, struct rocelat_counters *cnt)
{
	if (!pi || !cnt)
		return 0;
	handle_cnp(pi, cnt);
	return 0;
}

/* ctx: the context for bytes beyond the first buffer (parse.bpf.h), an
 * sk_buff with ctx_skb; NULL for a frame that is all in data .. data_end */
static __always_inline void rocelat_handle_ctx(void *data, void *data_end,
					       __u32 frame_len, __u32 ifindex,
					       bool egress, void *ctx, bool ctx_skb)
{
	struct pkt_cursor c = {
		.kind = SRC_PACKET, .data = data, .data_end = data_end,
		.decap = targ_decap, .frame_len = frame_len,
		.ctx = ctx, .ctx_skb = ctx_skb,
	};
	struct rocelat_counters *cnt;
	struct pkt_info *pi;
	__u32 zero = 0;
	__u8 tr, op;
	int v;

	if (pkt_fast_not_roce_decap(data, data_end, targ_roce_port, targ_decap))
		return;
	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!cnt)
		return;
	/* the packet's fields in per-CPU memory, not on the stack: the
	 * handlers' frames below need it (512 bytes for the whole chain) */
	pi = &cnt->pi;
	if (targ_decap)
		pkt_info_clear(pi);
	else		/* one program object decaps always or never */
		pkt_info_clear_plain(pi);
	v = pkt_parse_eth(&c, targ_roce_port, pi);
	if (v != PKT_ROCE && v != PKT_MALFORMED && v != PKT_TUN_NOT_ROCE &&
	    v != PKT_TUN_UNKNOWN)
		return;
	if (v != PKT_ROCE) {
		cnt->c[v == PKT_MALFORMED ? RL_PARSE_ERRORS :
		       v == PKT_TUN_NOT_ROCE ? RL_TUN_NOT_ROCE : RL_TUN_UNKNOWN]++;
		return;
	}
	cnt->c[RL_ROCE_PKTS]++;
	if (pi->flags & PKT_F_TRUNC)
		cnt->c[RL_TRUNCATED]++;
	if (pi->ecn == AX_ECN_CE)
		cnt->c[RL_ECN_CE]++;
	if (pi->opcode == ROCE_OPCODE_CNP) {
		rocelat_cnp(pi, cnt);
		return;
	}
	tr = ROCE_TRANSPORT(pi->opcode);
	if (tr != ROCE_TR_RC && tr != ROCE_TR_XRC) {
		cnt->c[RL_OTHER_TRANSPORT]++;
		if (pi->opcode == ROCE_UD_SEND_ONLY && pi->dqpn == ROCE_CM_QPN)
			handle_cm(&c, pi, cnt);
		return;
	}
	op = ROCE_OP(pi->opcode);
	if (roce_op_is_request(pi->opcode))
		handle_request(pi, cnt, !egress);
	else if (op >= ROCE_READ_RESP_FIRST && op <= ROCE_ATOMIC_ACK)
		handle_answer(pi, cnt, ifindex, egress);
	else
		cnt->c[RL_RESERVED_OP]++;
}

#ifdef AX_NATIVE	/* a frame in user memory: all of it in data .. data_end */
static __always_inline void rocelat_handle(void *data, void *data_end,
					   __u32 frame_len, __u32 ifindex,
					   bool egress)
{
	rocelat_handle_ctx(data, data_end, frame_len, ifindex, egress, 0, false);
}
#endif

#ifndef AX_NATIVE	/* the kernel's entry points (tools/rocelat/rocelat_native.c) */
/* loaded with BPF_F_XDP_HAS_FRAGS where the kernel has it (5.18+), so
 * that a driver takes it at MTU 9000 too (veth refuses a frags-less
 * program above about 3.5 KB). The loader sets the flag and this
 * (rocelat_load.c), not SEC("xdp.frags"): before 5.18 it loads without
 * them, and every frame is then one buffer. */
AX_RODATA bool targ_xdp_frags = false;

SEC("xdp")
int rocelat_xdp(struct xdp_md *ctx)
{
	/* with frags: the later buffers readable, and for a mirror's
	 * truncation check (decap only, so that no other packet pays for
	 * the helper call) the whole frame's length, not the first's */
	rocelat_handle_ctx((void *)(long)ctx->data, (void *)(long)ctx->data_end,
			   targ_xdp_frags && targ_decap ? bpf_xdp_get_buff_len(ctx) : 0,
			   ctx->ingress_ifindex, false,
			   targ_xdp_frags ? ctx : NULL, false);
	return XDP_PASS;
}

static __always_inline int rocelat_tc_handle(struct __sk_buff *skb, bool egress)
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
	rocelat_handle_ctx((void *)(long)skb->data, (void *)(long)skb->data_end,
			   skb->len, skb->ifindex, egress, skb, true);
	return AX_TC_ACT_UNSPEC;
}

SEC("tc")
int rocelat_tc(struct __sk_buff *skb)
{
	return rocelat_tc_handle(skb, true);
}

/* ingress where another program holds the interface's XDP hook
 * (netattach_ingress()): the same handler, later in the stack */
SEC("tc")
int rocelat_tc_in(struct __sk_buff *skb)
{
	return rocelat_tc_handle(skb, false);
}
#endif

/* the timeout sweep (rocelat_sweep.bpf.h) and the expiry of held answers
 * (rocelat_pair.bpf.h), run by user space before each report */
SEC("tc")
int rocelat_sweep(struct __sk_buff *skb)
{
	struct sweep_ctx sc;
	__u32 zero = 0;

	sc.now = now_ns();
	sc.cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!sc.cnt)
		return 0;
	sweep_flows(&sc);
	held_sweep(sc.now);
	wait_sweep(sc.now);
	return 0;
}

#ifndef AX_NATIVE	/* the kernel's; natively the object would export it */
char LICENSE[] SEC("license") = "Dual BSD/GPL";
#endif
