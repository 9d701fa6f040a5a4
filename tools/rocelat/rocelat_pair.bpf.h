/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocelat's pairing: which responder QP an answer's requester QP talks
 * to. The pairs map learns requester QPN -> responder QPN from the RDMA CM
 * exchange when it is seen, else from the first answer: the QP that sends
 * from the answer's UDP port (the port index: any number of QPs waiting
 * at once, one lookup), if its window of outstanding PSNs holds the
 * answer's PSN, else the one waiting QP that sent that PSN (the PSN
 * index, for answers from a port of their own), else the one candidate
 * flow whose window does (the
 * candidates: the responder QPs seen between the same two addresses), and
 * a per-CPU cache in front of it spares a paired answer its hash lookup.
 * The answers of a QP not paired yet are held, and complete what they
 * cover once it is (rocelat_held_apply()).
 */
#ifndef AGENTXDP_ROCELAT_PAIR_BPF_H
#define AGENTXDP_ROCELAT_PAIR_BPF_H

#include <bpf/bpf_endian.h>
#include "rocelat_state.bpf.h"
#include "rocelat_flow.bpf.h"
#include "rocelat_complete.bpf.h"

/* steps with every change to the pairs map: the pairing caches' entries
 * read before it are stale */
AX_GLOBAL __u32 pairs_gen = 0;

AX_GLOBAL struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ROCELAT_PAIRS_N(DEFAULT_MAX_FLOWS));
	__type(key, struct roce_qp_key);	/* qpn: the requester's */
	__type(value, __u32);			/* the responder's QPN */
} pairs SEC(".maps");

AX_GLOBAL struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ROCELAT_CANDS_N(DEFAULT_MAX_FLOWS));
	__type(key, struct roce_qp_key);	/* qpn 0: an address pair */
	__type(value, struct roce_pair_qps);
} cands SEC(".maps");

/* the QPs awaiting their first answer, by address pair and their
 * requests' UDP source port (qpn: the port): the responder's QPN; a plain
 * hash, whose refusals are counted (RL_WAIT_FULL), not an LRU's silent
 * evictions; a QP paired leaves it, and the sweep drops what a flow
 * pushed out of the table left (wait_expire()) */
AX_GLOBAL struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ROCELAT_WAIT_N(DEFAULT_MAX_FLOWS));
	__type(key, struct roce_qp_key);
	__type(value, __u32);
} waitport SEC(".maps");

/* the same QPs by address pair and the PSN of each tracked request they
 * sent while waiting (qpn: the PSN), for answers from another port than
 * the requests' (RNICs: each side picks its own): the responder's QPN,
 * WAIT_AMBIG when two waiting QPs sent that PSN (then no help) */
AX_GLOBAL struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ROCELAT_WAIT_N(DEFAULT_MAX_FLOWS));
	__type(key, struct roce_qp_key);
	__type(value, __u32);
} waitpsn SEC(".maps");

/* CM REQs waiting for their REP: qpn holds the REQ's communication ID,
 * the value the requester's QPN */
AX_GLOBAL struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct roce_qp_key);
	__type(value, __u32);
} cm_reqs SEC(".maps");

/* answers held per requester QP not paired yet (struct held_answers):
 * not an LRU, whose evictions would lose evidence without a word; a full
 * map refuses the answer, which is counted (answers_unheld) and traced in
 * unheld[], and the sweep drops entries 2 x --timeout old */
AX_GLOBAL struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ROCELAT_CANDS_N(DEFAULT_MAX_FLOWS));
	__type(key, struct roce_qp_key);	/* qpn: the requester's */
	__type(value, struct held_answers);
} held SEC(".maps");

/* answers ever held or refused: while 0, nobody looks into the held map
 * or unheld[] */
AX_GLOBAL __u32 held_n = 0;

/* traces of refused answers (struct unheld_slot) */
AX_GLOBAL struct unheld_slot unheld[UNHELD_SLOTS];

static const struct roce_pair_qps zero_qps;
static const struct held_answers zero_held;

/* where pair_add()'s search for room is: scalars only, so that a global
 * function (the bounded build's step) may take it */
struct room_pos {
	__u32 from;		/* the oldest candidate's place */
	__u32 at;		/* the place found, PAIR_QPS: none */
};

/* the candidate i places after the oldest: found (the search ends) when
 * it waits for no pairing (paired already, or its flow gone) */
static __always_inline long room_try_one(struct roce_qp_key *fk,
					 const struct roce_pair_qps *q,
					 struct room_pos *w, __u64 i)
{
	const struct pending_flow *c;
	__u32 at = (w->from + (__u32)i) & (PAIR_QPS - 1);

	fk->qpn = q->qpn[at];
	c = flow_find(fk);
	if (c && !(c->flags & FLOW_PAIRED))
		return 0;
	w->at = at;
	return 1;
}

/* places pair_add() looks at for room, from the oldest on */
#define PAIR_ROOM_TRY	8

#ifdef ROCELAT_NO_BPF_LOOP
/* the bounded-loop build: one place a call of a global function, checked
 * once (a flow-table lookup inlined PAIR_ROOM_TRY times costs 6.1's
 * verifier dearly); the pointers as arguments of their own */
AX_GLOBAL_FUNC int rocelat_room_try(struct roce_qp_key *fk, const struct roce_pair_qps *q,
				    struct room_pos *w, __u32 i)
{
	if (!fk || !q || !w)
		return 1;
	return room_try_one(fk, q, w, i);
}

static __always_inline void room_search(struct roce_qp_key *fk,
					const struct roce_pair_qps *q,
					struct room_pos *w)
{
	__u32 i;

	for (i = 0; i < PAIR_ROOM_TRY; i++)
		if (rocelat_room_try(fk, q, w, i))
			break;
}
#else
/* state of the bpf_loop() callback */
struct room_walk {
	struct roce_qp_key *fk;
	const struct roce_pair_qps *q;
	struct room_pos pos;
};

static long room_try(__u64 i, void *data)
{
	struct room_walk *w = data;

	return room_try_one(w->fk, w->q, &w->pos, i);
}

static __always_inline void room_search(struct roce_qp_key *fk,
					const struct roce_pair_qps *q,
					struct room_pos *pos)
{
	struct room_walk w = { .fk = fk, .q = q, .pos = *pos };

	bpf_loop(PAIR_ROOM_TRY, room_try, &w, 0);
	*pos = w.pos;
}
#endif

/*
 * Remember a new flow's responder QPN as a pairing candidate of its
 * address pair: the flow's key with QPN 0 keys the candidates (the key is
 * borrowed, not copied: the whole handler shares 512 bytes of stack).
 * Once: a flow pushed out of the table and started again is one
 * candidate, not two (learn_try() would match it twice, and call every
 * answer of it ambiguous). In a full list the new one takes the oldest's
 * place; an oldest that still waits for its pairing moves to the first of
 * the next places whose candidate does not, and only when there is none
 * is it dropped, counted (its answers are not paired by PSN: held, and
 * its requests time out).
 */
static __always_inline void pair_add(struct roce_qp_key *fk,
				     struct rocelat_counters *cnt)
{
	struct roce_pair_qps *q;
	struct room_pos w;
	__u32 n, qpn = fk->qpn, i, at;

	fk->qpn = 0;
	q = map_lookup_or_init(&cands, fk, &zero_qps);
	fk->qpn = qpn;
	if (!q)
		return;
	n = q->n;
	for (i = 0; i < PAIR_QPS && i < n; i++)
		if (q->qpn[i] == qpn)
			return;
	at = n & (PAIR_QPS - 1);
	if (n >= PAIR_QPS) {
		w.from = at;
		w.at = PAIR_QPS;
		room_search(fk, q, &w);
		fk->qpn = qpn;
		if (w.at >= PAIR_QPS)
			cnt->c[RL_PAIR_FULL]++;
		else if (w.at != at)
			q->qpn[w.at & (PAIR_QPS - 1)] = q->qpn[at];
	}
	q->qpn[at] = qpn;
	q->n = n + 1;
}

/*
 * A flow not paired yet sends from UDP source port sport (its first
 * request, or a port it moved to): its entry in the port index, for its
 * answers to find (rxe answers from that port). The latest QP to send
 * from a port holds it. fk: the flow's key, borrowed and given back.
 */
static __always_inline void wait_add(struct roce_qp_key *fk, __u16 sport,
				     struct rocelat_counters *cnt)
{
	__u32 qpn = fk->qpn;

	fk->qpn = sport;
	if (bpf_map_update_elem(&waitport, fk, &qpn, BPF_ANY))
		cnt->c[RL_WAIT_FULL]++;
	fk->qpn = qpn;
}

/* flow f is paired: its port's entry goes, if it is still f's (k: any
 * key of f's address pair and session, whose qpn this changes) */
static __always_inline void wait_forget(struct roce_qp_key *k,
					const struct pending_flow *f)
{
	__u32 *v;

	k->qpn = f->sport;
	v = bpf_map_lookup_elem(&waitport, k);
	if (v && *v == f->id.qpn)
		bpf_map_delete_elem(&waitport, k);
}

/* the sweep: an entry whose flow was pushed out of the table, or is
 * paired by now, goes */
static long wait_expire(struct bpf_map *map, struct roce_qp_key *k,
			__u32 *qpn, void *unused)
{
	struct roce_qp_key fk = *k;
	const struct pending_flow *f;

	fk.qpn = *qpn & ROCE_QPN_MASK;
	f = flow_find(&fk);
	/* a QP left out keeps its mark until it has a flow (room made) */
	if (*qpn & WAIT_UNTRACKED ? !!f : !f || (f->flags & FLOW_PAIRED))
		bpf_map_delete_elem(map, k);
	return 0;
}

/* the sweep: a PSN entry whose (first) QP's flow was pushed out of the
 * table, or is paired by now, goes */
static long wait_psn_expire(struct bpf_map *map, struct roce_qp_key *k,
			    __u32 *qpn, void *unused)
{
	struct roce_qp_key fk = *k;
	const struct pending_flow *f;

	fk.qpn = *qpn & ROCE_QPN_MASK;
	f = flow_find(&fk);
	if (!f || (f->flags & FLOW_PAIRED))
		bpf_map_delete_elem(map, k);
	return 0;
}

/* the sweep: a QP left out and quiet for 2 x --timeout goes, and the
 * mark of its port with it */
static long untracked_expire(struct bpf_map *map, struct roce_qp_key *k,
			     struct untracked_qp *u, __u64 *now)
{
	struct roce_qp_key pk = *k;
	__u32 *v;

	if (*now <= u->seen || *now - u->seen <= 2 * targ_timeout_ns)
		return 0;
	pk.qpn = u->sport;
	v = bpf_map_lookup_elem(&waitport, &pk);
	if (v && *v == (k->qpn | WAIT_UNTRACKED))
		bpf_map_delete_elem(&waitport, &pk);
	bpf_map_delete_elem(map, k);
	return 0;
}

static __always_inline void wait_sweep(__u64 now)
{
	bpf_for_each_map_elem(&waitport, wait_expire, 0, 0);
	bpf_for_each_map_elem(&waitpsn, wait_psn_expire, 0, 0);
	bpf_for_each_map_elem(&untracked, untracked_expire, &now, 0);
}

/*
 * A tracked request of flow k (not paired yet) with PSN psn: its entry in
 * the PSN index. Another waiting QP's entry for the PSN makes it
 * ambiguous; one whose QP is paired by now or gone is taken over.
 */
AX_GLOBAL_FUNC int rocelat_wait_psn(const struct roce_qp_key *fk, __u32 psn,
				    struct rocelat_counters *cnt)
{
	const struct pending_flow *f;
	struct roce_qp_key k;
	__u32 *v, qpn, old;

	if (!fk || !cnt)
		return 0;
	k = *fk;
	qpn = k.qpn;
	k.qpn = psn & ROCE_PSN_MASK;
	v = bpf_map_lookup_elem(&waitpsn, &k);
	if (!v) {
		/* a race with another CPU (EEXIST, 17) is no refusal */
		if (bpf_map_update_elem(&waitpsn, &k, &qpn, BPF_NOEXIST) &&
		    bpf_map_lookup_elem(&waitpsn, &k) == 0)
			cnt->c[RL_WAIT_FULL]++;
		return 0;
	}
	old = *v;
	if ((old & ROCE_QPN_MASK) == qpn)
		return 0;
	k.qpn = old & ROCE_QPN_MASK;
	f = flow_find(&k);
	if (!f || (f->flags & FLOW_PAIRED))
		*v = qpn;
	else if (!(old & WAIT_AMBIG))
		*v = old | WAIT_AMBIG;
	return 0;
}

/* does an answer's PSN fall into this flow's window of outstanding PSNs
 * (a NAK may name the next PSN to send) */
static __always_inline bool flow_covers(const struct pending_flow *c, __u32 psn,
					int slack, __u32 req_qpn)
{
	if (!(c->flags & FLOW_HI_VALID) || c->head == c->tail)
		return false;
	if ((c->flags & FLOW_PAIRED) && c->req_qpn != req_qpn)
		return false;
	return roce_psn_diff(psn, c->una_psn) >= 0 &&
	       roce_psn_diff(psn, c->hi_psn) <= slack;
}

/* state of one pairing search, shared with the bpf_loop() callback */
struct learn_walk {
	struct roce_qp_key fk;		/* qpn: the candidate's */
	const struct roce_pair_qps *q;
	__u32 n, psn, req_qpn, sport;
	int slack, matches, port_matches;
	__u32 found_qpn, port_qpn;
};

/* candidate i of q, the address pair's responder QPs */
static __always_inline long learn_try_one(struct learn_walk *w,
					  const struct roce_pair_qps *q, __u64 i)
{
	const struct pending_flow *c;
	__u64 at = i;

	if (i >= w->n || i >= PAIR_QPS)
		return 1;
	/* the mask for the verifier: clang drops one it proves redundant */
	asm volatile("" : "+r"(at));
	w->fk.qpn = q->qpn[at & (PAIR_QPS - 1)];
	c = flow_find(&w->fk);
	if (!c || !flow_covers(c, w->psn, w->slack, w->req_qpn))
		return 0;
	w->matches++;
	w->found_qpn = w->fk.qpn;
	if (c->sport == w->sport) {
		w->port_matches++;
		w->port_qpn = w->fk.qpn;
	}
	return 0;
}

#ifdef ROCELAT_NO_BPF_LOOP
/*
 * The bounded-loop build (kernels before 5.17): one candidate a call of a
 * global function, which the verifier checks once; the search inlined 64
 * times went past 6.1's million instructions (6.18 counted 403K). A
 * global function reads no pointer out of its memory: the candidates
 * come as an argument of their own.
 */
AX_GLOBAL_FUNC int rocelat_learn_try(struct learn_walk *w,
				     const struct roce_pair_qps *q, __u32 i)
{
	if (!w || !q)
		return 1;
	return learn_try_one(w, q, i);
}

static __always_inline void learn_search(struct learn_walk *w)
{
	/* kept apart from *w, which each call may change (the verifier
	 * then knows no pointer in it) */
	const struct roce_pair_qps *q = w->q;
	__u32 i;

	for (i = 0; i < PAIR_QPS; i++)
		if (rocelat_learn_try(w, q, i))
			break;
}
#else
/* the bpf_loop() callback: one candidate */
static long learn_try(__u64 i, void *data)
{
	struct learn_walk *w = data;

	return learn_try_one(w, w->q, i);
}

static __always_inline void learn_search(struct learn_walk *w)
{
	bpf_loop(PAIR_QPS, learn_try, w, 0);
}
#endif

/*
 * An RC QP pair carries requests both ways: once requester QP req_qpn is
 * known to talk to responder QP resp_qpn (flow f), the answers to
 * resp_qpn belong to the requests the other way, to req_qpn. A direction
 * whose answers' PSNs fall into no window (the sniffer lost the requests
 * between) is paired by the other one.
 */
static __always_inline void pair_reverse(const struct pending_flow *f,
					 __u32 resp_qpn, __u32 req_qpn)
{
	struct roce_qp_key k;

	roce_qp_key_addrs(&k, f->id.family, f->id.resp, f->id.req);
	k.session = f->id.session;
	k.qpn = resp_qpn;
	bpf_map_update_elem(&pairs, &k, &req_qpn, BPF_ANY);
}

/*
 * An answer of a requester QP not paired yet: the one candidate flow
 * between the two addresses whose outstanding PSNs it covers. Windows
 * that overlap (QPs started at the same PSN, as test generators do) are
 * told apart by rxe's symmetric source port when exactly one candidate
 * sends from the answer's port. Learns the pairing and returns the
 * responder's QPN (24 bits); LEARN_NONE when no candidate matches,
 * LEARN_AMBIGUOUS when several do (nothing learned), LEARN_UNTRACKED when
 * it comes from the port of a QP the full flow table left out. A global function
 * may not return a map value, and takes five arguments at most: the PSN's
 * top byte carries the slack a NAK gets (it may name the next PSN to
 * send). The QPN comes back as the return value, not through a pointer:
 * a variable of the caller's would be one more stack slot in the deepest
 * call chain (6.1 counts 512 bytes over it).
 */
#define LEARN_NONE	(-1)
#define LEARN_AMBIGUOUS	(-2)
#define LEARN_UNTRACKED	(-3)	/* from the port of a QP left out */

AX_GLOBAL_FUNC int rocelat_learn(const struct roce_qp_key *ak, __u32 psn_slack,
				 __u32 sport, struct rocelat_counters *cnt)
{
	struct learn_walk w = {};
	struct pending_flow *found;
	const __u32 *q;

	if (!ak || !cnt)
		return LEARN_NONE;
	__builtin_memcpy(&w.fk, ak, sizeof(w.fk));
	w.psn = psn_slack & ROCE_PSN_MASK;
	w.slack = psn_slack >> 24;
	w.req_qpn = ak->qpn;
	w.sport = sport;
	/* the QP that sends from the answer's port, if its PSNs fit: the
	 * one a scan of the candidates would pick among several, found at
	 * one lookup however many wait */
	w.fk.qpn = sport;
	q = bpf_map_lookup_elem(&waitport, &w.fk);
	if (q && (*q & WAIT_UNTRACKED))
		return LEARN_UNTRACKED;
	if (q) {
		w.fk.qpn = *q;
		found = flow_find(&w.fk);
		if (found && flow_covers(found, w.psn, w.slack, w.req_qpn)) {
			w.found_qpn = w.fk.qpn;
			w.port_matches = -1;	/* found by its port */
			goto learned;
		}
	}
	/* the QP that sent the PSN the answer names, if only one did */
	w.fk.qpn = w.psn;
	q = bpf_map_lookup_elem(&waitpsn, &w.fk);
	if (q && !(*q & WAIT_AMBIG)) {
		w.fk.qpn = *q;
		found = flow_find(&w.fk);
		if (found && flow_covers(found, w.psn, w.slack, w.req_qpn)) {
			w.found_qpn = w.fk.qpn;
			w.port_matches = -2;	/* found by its PSN */
			goto learned;
		}
	}
	w.fk.qpn = 0;			/* the address pair's candidates */
	w.q = bpf_map_lookup_elem(&cands, &w.fk);
	if (!w.q)
		return LEARN_NONE;
	w.n = w.q->n;
	learn_search(&w);
	if (w.matches > 1 && w.port_matches == 1) {
		w.matches = 1;
		w.found_qpn = w.port_qpn;
	}
	if (w.matches > 1) {
		cnt->c[RL_AMBIGUOUS]++;
		return LEARN_AMBIGUOUS;
	}
	if (!w.matches)
		return LEARN_NONE;
	w.fk.qpn = w.found_qpn;
	found = flow_find(&w.fk);
	if (!found)
		return LEARN_NONE;
learned:
	/* a key on the stack: 6.1 takes no argument memory as a map key */
	w.fk.qpn = ak->qpn;
	bpf_map_update_elem(&pairs, &w.fk, &w.found_qpn, BPF_ANY);
	pair_reverse(found, w.found_qpn, ak->qpn);
	__sync_fetch_and_add(&pairs_gen, 1);
	/* two CPUs may learn one pair at once: it is paired once */
	if (!(found->flags & FLOW_PAIRED) || found->req_qpn != ak->qpn) {
		found->req_qpn = ak->qpn;
		found->flags |= FLOW_PAIRED;
		cnt->c[RL_LEARNED]++;
		if (w.port_matches == -1)
			cnt->c[RL_PAIRED_PORT]++;
		else if (w.port_matches == -2)
			cnt->c[RL_PAIRED_PSN]++;
	}
	wait_forget(&w.fk, found);
	return w.found_qpn & ROCE_QPN_MASK;
}

/* a requester QP key's hash for unheld[] (never 0) */
static __always_inline __u32 held_key_hash(const struct roce_qp_key *k)
{
	const __u32 *w = (const __u32 *)k;
	__u32 h = 0, i;

#pragma unroll
	for (i = 0; i < sizeof(*k) / 4; i++)
		h = (h ^ w[i]) * 0x9e3779b1;
	return h | 1;
}

/* requester QP k's slot in unheld[] if it holds k's trace */
static __always_inline struct unheld_slot *unheld_of(const struct roce_qp_key *k)
{
	__u32 kh = held_key_hash(k);
	struct unheld_slot *u = &unheld[kh & (UNHELD_SLOTS - 1)];

	return u->arrived && u->key_hash == kh ? u : 0;
}

/* the pairing cache's entry for requester QP ak, whichever it holds */
static __always_inline struct pair_cache_ent *
pair_cache_slot(const struct roce_qp_key *ak, struct rocelat_counters *cnt)
{
	__u32 h = ak->qpn ^ ak->session ^ ak->req;

	return &cnt->pair_cache[(h ^ h >> 8) & (PAIR_CACHE - 1)];
}

/* an answer the full held map refused: counted, and traced for when its
 * QP is paired (psn: the last PSN it covers) */
static __always_inline void held_refused(const struct roce_qp_key *k, __u32 psn,
					 struct rocelat_counters *cnt)
{
	__u32 kh = held_key_hash(k);
	struct unheld_slot *u = &unheld[kh & (UNHELD_SLOTS - 1)];

	cnt->c[RL_UNHELD]++;
	u->key_hash = kh;
	u->psn = psn & ROCE_PSN_MASK;
	u->arrived = now_ns() | 1;
}

/*
 * An answer of requester QP ak, which is not paired yet: its marks (NAK,
 * RNR NAK, CE) counted for the flow's statistics, and the answer (ACK,
 * NAK, first READ RESPONSE, ATOMIC ACKNOWLEDGE) held with its time, to
 * complete what it covers once the pairing is known (rocelat_held_apply);
 * with HELD_MARKS (an RNR NAK, a later READ RESPONSE) only its marks.
 * flags: HELD_* but HELD_SW, which is found here.
 */
AX_GLOBAL_FUNC int rocelat_hold(const struct roce_qp_key *ak, const struct pkt_info *pi,
				struct rocelat_counters *cnt, __u32 flags, __u32 ifindex)
{
	struct pair_cache_ent *e;
	struct roce_qp_key k;
	struct held_answers *h;
	struct held_answer *a;
	__u64 ts, wrap;
	__u32 n, lost;

	if (!ak || !pi || !cnt)
		return 0;
	k = *ak;
	if (!held_n)
		__sync_fetch_and_add(&held_n, 1);
	/* a QP paired whose flow was not found (no request seen yet): its
	 * cached pairing must look into the held map again */
	e = pair_cache_slot(&k, cnt);
	if (qp_key_eq(&e->key, &k))
		e->held = 1;
	h = map_lookup_or_init(&held, &k, &zero_held);
	if (!h) {
		if (!(flags & HELD_MARKS))
			held_refused(&k, flags & HELD_INCLUSIVE ? pi->psn : pi->psn - 1, cnt);
		return 0;
	}
	answer_marks_add(&h->marks, pi->ecn == AX_ECN_CE,
			 pi->flags & PKT_F_AETH ? pi->syndrome >> 5 : ROCE_AETH_ACK,
			 ROCE_AETH_CODE(pi->syndrome));
	if (flags & HELD_MARKS) {
		h->arrived = now_ns();
		return 0;
	}
	if (switch_time(pi, &ts, &wrap))
		flags |= HELD_SW;
	else
		ts = now_ns();
	n = h->n;
	a = &h->a[n & (HELD_ANSWERS - 1)];
	if (n >= HELD_ANSWERS) {
		/* the oldest is forgotten: what it covered is untimed */
		lost = a->flags & HELD_INCLUSIVE ? a->psn : a->psn - 1;
		if (!h->lost || roce_psn_diff(lost, h->lost_psn) > 0)
			h->lost_psn = lost & ROCE_PSN_MASK;
		h->lost = 1;
	}
	a->ts = ts ? ts : 1;
	a->psn = pi->psn;
	a->ifindex = ifindex;
	a->payload_len = pi->payload_len;
	a->flags = flags;
	h->n = n + 1;
	h->arrived = now_ns();
	cnt->c[RL_HELD]++;
	return 0;
}

/*
 * The pairing of requester QP k is known now (flow pf): what its answers
 * refused by the full held map covered, sent before the last of them, is
 * untimed (past 2 x --timeout, the sweep counted those as timeouts).
 */
static __always_inline void held_unheld_apply(const struct roce_qp_key *k,
					      struct pending_flow *pf,
					      struct rocelat_counters *cnt)
{
	struct unheld_slot *u = unheld_of(k);
	struct answer_ctx *ac = &cnt->ac;
	__u64 arrived;

	if (!u)
		return;
	arrived = u->arrived;
	u->arrived = 0;
	if (now_ns() - arrived > 2 * targ_timeout_ns)
		return;
	__builtin_memset(ac, 0, sizeof(*ac));
	ac->now = arrived;
	ac->held = 1;
	ac->psn = u->psn;
	ac->inclusive = 1;
	ac->untimed = 1;
	rocelat_complete(pf, ac, cnt);
	__builtin_memset(ac, 0, sizeof(*ac));
}

/* the sweep: a QP's held answers 2 x --timeout old go, unapplied (its
 * requests they would cover are timeouts by now) */
static long held_expire(struct bpf_map *map, struct roce_qp_key *k,
			struct held_answers *h, __u64 *now)
{
	if (*now > h->arrived && *now - h->arrived > 2 * targ_timeout_ns)
		bpf_map_delete_elem(map, k);
	return 0;
}

static __always_inline void held_sweep(__u64 now)
{
	if (held_n)
		bpf_for_each_map_elem(&held, held_expire, &now, 0);
}

/*
 * The pairing of requester QP ak is known now (flow pf): its held answers
 * complete, in order and each at its own time, what they cover; first
 * what forgotten ones covered, untimed. Leaves cnt->ac zeroed.
 */
AX_GLOBAL_FUNC int rocelat_held_apply(const struct roce_qp_key *ak,
				      struct pending_flow *pf,
				      struct rocelat_counters *cnt)
{
	struct answer_ctx *ac;
	struct held_answers *h;
	struct held_answer *a;
	struct roce_qp_key k;
	__u32 i, j, n, sw;

	if (!ak || !pf || !cnt)
		return 0;
	k = *ak;
	ac = &cnt->ac;
	held_unheld_apply(&k, pf, cnt);
	h = bpf_map_lookup_elem(&held, &k);
	if (!h)
		return 0;
	flow_stats_marks(pf, &h->marks);
	__builtin_memset(ac, 0, sizeof(*ac));
	if (h->lost) {
		ac->psn = h->lost_psn;
		ac->inclusive = 1;
		ac->untimed = 1;
		rocelat_complete(pf, ac, cnt);
	}
	n = h->n;
	sw = pf->flags & FLOW_SWITCH_CLOCK ? HELD_SW : 0;
	for (j = 0; j < HELD_ANSWERS; j++) {
		i = (n > HELD_ANSWERS ? n - HELD_ANSWERS : 0) + j;
		if (i >= n)
			break;
		a = &h->a[i & (HELD_ANSWERS - 1)];
		__builtin_memset(ac, 0, sizeof(*ac));
		ac->now = a->ts;
		ac->held = 1;
		ac->psn = a->psn;
		ac->ifindex = a->ifindex;
		ac->payload_len = a->payload_len;
		ac->inclusive = !!(a->flags & HELD_INCLUSIVE);
		ac->fatal = !!(a->flags & HELD_FATAL);
		ac->read_resp = !!(a->flags & HELD_READ_RESP);
		ac->atomic_ack = !!(a->flags & HELD_ATOMIC);
		ac->egress = !!(a->flags & HELD_EGRESS);
		/* timed on another clock than the flow's: no time to give */
		ac->untimed = (a->flags & HELD_SW) != sw;
		if (!rocelat_complete(pf, ac, cnt) && ac->inclusive)
			cnt->c[RL_UNMATCHED]++;
		if (ac->has_span && roce_psn_diff(ac->span_hi, pf->hi_psn) > 0)
			pf->hi_psn = ac->span_hi & ROCE_PSN_MASK;
		answer_una(pf, a->psn, ac->inclusive);
	}
	__builtin_memset(ac, 0, sizeof(*ac));
	bpf_map_delete_elem(&held, &k);
	return 0;
}

/* the flow of responder QP resp_qpn that requester QP ak talks to, and
 * its flow-table entry in *at (ak is borrowed as the key and given back) */
static __always_inline struct pending_flow *
flow_of(struct roce_qp_key *ak, __u32 resp_qpn, __u32 *at)
{
	struct pending_flow *pf;
	__u32 req_qpn = ak->qpn;

	ak->qpn = resp_qpn;
	pf = flow_find_at(ak, at);
	ak->qpn = req_qpn;
	return pf;
}

/*
 * The pairing of requester QP ak (NULL: not paired) as this CPU's pairing
 * cache holds it: its entry when current, else read from the pairs map
 * into it. pairs_gen is read before the map: a pairing that changes
 * meanwhile steps it after its update, which makes the entry stale.
 */
static __always_inline struct pair_cache_ent *
pair_cached(const struct roce_qp_key *ak, struct rocelat_counters *cnt)
{
	struct pair_cache_ent *e = pair_cache_slot(ak, cnt);
	__u32 gen = *(volatile __u32 *)&pairs_gen + 1, *q;

	if (e->gen == gen && qp_key_eq(&e->key, ak))
		return e;
	q = bpf_map_lookup_elem(&pairs, ak);
	if (!q)
		return 0;
	e->key = *ak;
	e->resp_qpn = *q;
	e->flow_at = PAIR_NO_FLOW;
	e->held = *(volatile __u32 *)&held_n &&
		  (bpf_map_lookup_elem(&held, ak) || unheld_of(ak));
	e->gen = gen;
	return e;
}

/*
 * The flow an answer (or CNP) to requester QP ak belongs to, if paired:
 * first the flow-table entry where the cache last found it, if that still
 * holds the same flow (its serial: a flow pushed out and its entry taken
 * by another has a new one), else the flow's two sets
 * (and, with apply_held, what it held applied first: not from the CNP
 * handler, a frame deeper, where the walk would take 6.1's combined stack
 * of the chain over 512 bytes)
 */
static __always_inline struct pending_flow *
answer_flow(struct roce_qp_key *ak, struct rocelat_counters *cnt, bool apply_held)
{
	struct pair_cache_ent *e = pair_cached(ak, cnt);
	struct pending_flow *pf;
	__u32 at;

	if (!e)
		return 0;
	/* a copy on the stack as the key: 6.1 takes none in the map
	 * value (&e->flow_at is refused) */
	at = e->flow_at;
	pf = bpf_map_lookup_elem(&pending, &at);
	if (pf && pf->used && pf->serial == e->flow_serial)
		return pf;
	pf = flow_of(ak, e->resp_qpn, &at);
	e->flow_at = PAIR_NO_FLOW;
	if (!pf)
		return 0;
	if (e->held) {
		/* a CNP leaves the entry unfound: the QP's next answer comes
		 * this way and applies them (were the entry kept, that answer
		 * would take the path above, which never applies them) */
		if (!apply_held)
			return pf;
		e->held = 0;
		rocelat_held_apply(ak, pf, cnt);
	}
	e->flow_at = at;
	e->flow_serial = pf->serial;
	return pf;
}

/*
 * RDMA CM, when the connection set-up is seen: the REQ names the
 * requester's QPN, its REP (matched by communication ID) the responder's.
 * An RC QP pair carries requests both ways, so both directions are paired.
 * attr is the MAD's attribute, id the REQ's communication ID or the REP's
 * remote one, qpn the sender's QPN.
 */
AX_GLOBAL_FUNC int rocelat_cm(const struct pkt_info *pi, struct rocelat_counters *cnt,
			      __u32 attr, __u32 id, __u32 qpn)
{
	struct roce_qp_key k;
	__u32 *req_qpn, rq;

	if (!pi || !cnt)
		return 0;
	if (attr == ROCE_CM_ATTR_REQ) {
		cnt->c[RL_CM_REQS]++;
		qp_key_fill(&k, pi, false);
		k.qpn = id;
		bpf_map_update_elem(&cm_reqs, &k, &qpn, BPF_ANY);
		return 0;
	}
	/* the REP goes responder -> requester */
	qp_key_fill(&k, pi, true);
	k.qpn = id;
	req_qpn = bpf_map_lookup_elem(&cm_reqs, &k);
	if (!req_qpn)
		return 0;
	rq = *req_qpn;
	bpf_map_delete_elem(&cm_reqs, &k);
	k.qpn = rq;			/* requester QP -> responder QP */
	bpf_map_update_elem(&pairs, &k, &qpn, BPF_ANY);
	qp_key_fill(&k, pi, false);	/* and the other way round */
	k.qpn = qpn;
	bpf_map_update_elem(&pairs, &k, &rq, BPF_ANY);
	__sync_fetch_and_add(&pairs_gen, 1);
	cnt->c[RL_CM_PAIRED]++;
	return 0;
}

/* a CM MAD's fields, read here where the packet is: small loads into
 * scalars, so the handler's stack holds no key (6.1 counts 512 bytes over
 * the whole call chain) */
static __always_inline void handle_cm(const struct pkt_cursor *c,
				      const struct pkt_info *pi,
				      struct rocelat_counters *cnt)
{
	__u32 off = pi->payload_off, id;
	__be16 attr;
	__u8 class, b[4];

	if (pkt_load(c, off + 1, &class, 1) || class != ROCE_MAD_CLASS_CM ||
	    pkt_load(c, off + 16, &attr, sizeof(attr)))
		return;
	off += ROCE_MAD_HDR_LEN;
	if (attr == bpf_htons(ROCE_CM_ATTR_REQ)) {
		if (pkt_load(c, off, &id, 4) || pkt_load(c, off + ROCE_CM_REQ_QPN, b, 4))
			return;
	} else if (attr == bpf_htons(ROCE_CM_ATTR_REP)) {
		if (pkt_load(c, off + ROCE_CM_REP_REMOTE_ID, &id, 4) ||
		    pkt_load(c, off + ROCE_CM_REP_QPN, b, 4))
			return;
	} else {
		return;
	}
	rocelat_cm(pi, cnt, bpf_ntohs(attr), bpf_ntohl(id), be24(b));
}

#endif
