/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocelat's completion of requests by an answer: the walk over a flow's
 * ring of outstanding requests that completes those the answer covers,
 * timing each request it answers into a latency sample
 * (rocelat_complete()), and the fast path of the common answer, an ACK of
 * the oldest request (complete_fast()). Used by the answer handler
 * (rocelat.bpf.c) and by the pairing, for the answers a QP held until it
 * was paired (rocelat_pair.bpf.h).
 */
#ifndef AGENTXDP_ROCELAT_COMPLETE_BPF_H
#define AGENTXDP_ROCELAT_COMPLETE_BPF_H

#include "rocelat_state.bpf.h"
#include "rocelat_flow.bpf.h"
#include "rocelat_samples.bpf.h"

/*
 * How long the answer took to come for the request in slot s, which it
 * answers; -1 when that was over --timeout (counted as one), or when the
 * answer is stamped before its request (a recording out of time order):
 * no time to measure, counted as reordered and untimed
 */
static __always_inline __s64 slot_latency(struct pending_flow *pf,
					  struct answer_ctx *ac,
					  struct rocelat_counters *cnt,
					  const struct pending_slot *s)
{
	__s64 lat;

	if (!ac->now)
		ac->now = ac->sw ? ac->sw_ns : now_ns();
	lat = (__s64)(ac->now - s->ts_ns);
	if (lat < 0 && (pf->flags & FLOW_SWITCH_CLOCK))
		lat += pf->clock_wrap_ns;	/* the switch's 32-bit ticks wrapped */
	if (lat < 0) {
		cnt->c[RL_REORDERED]++;
		__sync_fetch_and_add(&flow_stats(pf)->untimed, 1);
		return -1;
	}
	if ((__u64)lat > targ_timeout_ns) {
		cnt->c[RL_TIMEOUTS]++;
		__sync_fetch_and_add(&flow_stats(pf)->timeouts, 1);
		return -1;
	}
	ac->sample_psn = s->psn;
	return lat;
}

/* where a completion walk is: scalars only, so that a global function
 * (the bounded build's step) may take it */
struct complete_pos {
	__u32 tail, head, pop;
	int completed;
	__u32 front;		/* not bool: the verifier wants 0/1 returns */
};

/* ring slot i of the walk, oldest first; 1 ends the walk */
static __always_inline long complete_slot(struct pending_flow *pf, struct answer_ctx *ac,
					  struct rocelat_counters *cnt,
					  struct complete_pos *w, __u64 i)
{
	struct pending_slot *s;
	__u32 at = w->tail + (__u32)i, fl;
	bool answered;
	__s64 lat;
	int d;

	if (at == w->head)
		return 1;
	s = &pf->ring[at & (PENDING_RING - 1)];
	fl = s->flags;
	if (!(fl & SLOT_VALID)) {
		if (w->front)		/* a hole at the front: pop it */
			w->pop++;
		return 0;
	}
	d = roce_psn_diff(s->psn, ac->psn);
	if (!ac->fatal && (d > 0 || (d == 0 && !ac->inclusive)))
		return 1;		/* PSN order: nothing later is covered */
	if (ac->held && s->ts_ns > ac->now && !(pf->flags & FLOW_SWITCH_CLOCK))
		return 1;		/* a held answer covers no later request
					 * (an old connection's, on these QPNs) */
	s->flags = 0;
	w->completed++;
	if (w->front)
		w->pop++;
	if (ac->fatal && d >= 0) {
		/* the QP is in error: its named request and all later
		 * ones will never be answered */
		cnt->c[RL_FATAL_ENDED]++;
		return 0;
	}
	if (ac->untimed) {
		/* answered, by an answer whose time is lost */
		cnt->c[RL_UNTIMED]++;
		__sync_fetch_and_add(&flow_stats(pf)->untimed, 1);
		return 0;
	}
	/* a READ is answered by its own READ RESPONSE, an atomic by its
	 * ATOMIC ACKNOWLEDGE; a later answer passing one means its response
	 * was lost (or not seen here): no sample */
	answered = true;
	if (fl & SLOT_READ) {
		answered = ac->read_resp && d == 0;
		if (answered && ac->payload_len) {
			/* the READ's PSNs run on to its last response */
			ac->span_hi = s->psn + (s->dma_len + ac->payload_len - 1) /
					       ac->payload_len - 1;
			ac->has_span = 1;
		}
	} else if (fl & SLOT_ATOMIC) {
		answered = ac->atomic_ack && d == 0;
	}
	if (!answered) {
		cnt->c[RL_RESP_MISSING]++;
		flow_stats(pf)->resp_missing++;
		return 0;
	}
	if (fl & SLOT_RETX) {
		cnt->c[RL_KARN_DISCARDED]++;
		return 0;
	}
	lat = slot_latency(pf, ac, cnt, s);
	if (lat >= 0)
		rocelat_sample(pf, ac, cnt, lat,
			       (fl & SLOT_INGRESS) && ac->egress);
	return 0;
}

#ifdef ROCELAT_NO_BPF_LOOP
/*
 * The bounded-loop build (kernels before 5.17): one slot a call of a
 * global function, which the verifier checks once; the walk inlined 62
 * times went past 6.1's million instructions. A global function reads no
 * pointer out of its memory: the pointers come as arguments of their own.
 */
AX_GLOBAL_FUNC int rocelat_complete_step(struct pending_flow *pf, struct answer_ctx *ac,
					 struct rocelat_counters *cnt,
					 struct complete_pos *w, __u32 i)
{
	if (!pf || !ac || !cnt || !w)
		return 1;
	return complete_slot(pf, ac, cnt, w, i);
}

/* the walk from its third slot on */
static __always_inline void complete_slots_rest(struct pending_flow *pf,
						struct answer_ctx *ac,
						struct rocelat_counters *cnt,
						struct complete_pos *w)
{
	__u32 i;

	for (i = 2; i < PENDING_RING; i++)
		if (rocelat_complete_step(pf, ac, cnt, w, i))
			break;
}
#else
/* state of the walk's bpf_loop() callback */
struct complete_walk {
	struct pending_flow *pf;
	struct answer_ctx *ac;
	struct rocelat_counters *cnt;
	struct complete_pos pos;
};

/* the walk's bpf_loop() callback, from its third slot on */
static long complete_slots_on(__u64 i, void *data)
{
	struct complete_walk *w = data;

	return complete_slot(w->pf, w->ac, w->cnt, &w->pos, i + 2);
}

static __always_inline void complete_slots_rest(struct pending_flow *pf,
						struct answer_ctx *ac,
						struct rocelat_counters *cnt,
						struct complete_pos *pos)
{
	struct complete_walk w = { .pf = pf, .ac = ac, .cnt = cnt, .pos = *pos };

	bpf_loop(PENDING_RING - 2, complete_slots_on, &w, 0);
	*pos = w.pos;
}
#endif

/*
 * Complete the pending requests an answer covers: every PSN before its
 * own, and its own when inclusive (ACK, READ RESPONSE). A NAK acknowledges
 * only the PSNs before its own; a fatal NAK (not a sequence error, not
 * RNR) also ends the request it names and every later one, without a
 * sample. The ring walk is a bpf_loop() (5.17+): the verifier checks the
 * body once, which the 6.1 verifier needs for PENDING_RING steps. Returns
 * how many requests were completed.
 *
 * tail has one writer per side: this walk (answers) and, when the ring is
 * full, the request path evicting its oldest. Should both move it at the
 * same moment on two CPUs, one pop is lost: the freed slot stays a hole
 * and the next walk pops it. Nothing is counted twice.
 */
AX_GLOBAL_FUNC int rocelat_complete(struct pending_flow *pf, struct answer_ctx *ac,
				    struct rocelat_counters *cnt)
{
	struct complete_pos w = {};

	if (!pf || !ac || !cnt)
		return 0;
	w.tail = pf->tail;
	w.head = pf->head;
	w.front = 1;
	/* the common answer covers the oldest request and stops at the next
	 * one (an ACK per AckReq, in order): two steps inline, no loop */
	if (!complete_slot(pf, ac, cnt, &w, 0) && !complete_slot(pf, ac, cnt, &w, 1))
		complete_slots_rest(pf, ac, cnt, &w);
	pf->tail = w.tail + w.pop;
	return w.completed;
}

/*
 * The common answer without the walk's calls (each costs a return thunk
 * on CPUs that need one, 7 ns here): an ACK of the oldest outstanding
 * request, a SEND or WRITE, when the next one (if any) is later than the
 * ACK. Returns what rocelat_complete() would, or -1 for anything else,
 * having changed nothing: then the walk does it.
 */
static __always_inline int complete_fast(struct pending_flow *pf,
					 struct answer_ctx *ac,
					 struct rocelat_counters *cnt,
					 const struct pkt_info *pi)
{
	__u32 tail = pf->tail, head = pf->head, fl, turn;
	struct pending_slot *s, *next;
	struct roce_flow_stats *fs;
	__s64 lat;
	int d;

	if (tail == head)
		return 0;
	if (!ac->inclusive)
		return -1;
	s = &pf->ring[tail & (PENDING_RING - 1)];
	fl = s->flags;
	if ((fl & ~SLOT_INGRESS) != SLOT_VALID)
		return -1;
	d = roce_psn_diff(s->psn, ac->psn);
	if (d > 0)
		return 0;		/* PSN order: nothing is covered */
	/* the ring's PSNs rise (handle_request() adds only a PSN past the
	 * highest): an ACK of the oldest's own PSN covers no later one */
	if (d < 0) {
		/* past every request seen: it answers some not seen yet
		 * (handle_answer() remembers it) */
		if (tail + 1 == head && roce_psn_diff(ac->psn, pf->hi_psn) > 0)
			return -1;
		next = &pf->ring[(tail + 1) & (PENDING_RING - 1)];
		if (tail + 1 != head && (!(next->flags & SLOT_VALID) ||
		    roce_psn_diff(next->psn, ac->psn) <= 0))
			return -1;
	}
	s->flags = 0;
	pf->tail = tail + 1;
	/* what handle_answer() does after a completion, done here: the
	 * fast path returns without its checks for the slow one's cases */
	answer_una(pf, ac->psn, true);
	pf->ans_psn = ac->psn;
	pf->ans_ip_id = pi->ip_id;
	fs = flow_stats(pf);
	turn = (fl & SLOT_INGRESS) && ac->egress;
	lat = slot_latency(pf, ac, cnt, s);
	pf->ans_ts = ac->now;
	if (lat >= 0)
		sample_add(pf, fs, ac, cnt, lat, turn);
	return 1;
}

#endif
