/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocelat's flow table: the flows (one responder QP seen from one
 * requester address, through one mirror session), each with its ring of
 * outstanding requests and its statistics of the reporting interval,
 * found by key in one of three sets of FLOW_WAYS entries. Starting a flow
 * (rocelat_flow_new()) is in rocelat.bpf.c, beside the request handler:
 * it makes the flow a pairing candidate (rocelat_pair.bpf.h), and the
 * pairing looks flows up here.
 */
#ifndef AGENTXDP_ROCELAT_FLOW_BPF_H
#define AGENTXDP_ROCELAT_FLOW_BPF_H

#include "rocelat_state.bpf.h"

/*
 * The flow table, sized by the loader from --max-flows: targ_flow_sets
 * sets of FLOW_WAYS entries, a flow in one of its three sets. Not a hash
 * map: the kernel hashes a hash map's key and walks its bucket on every
 * lookup, which was a third of a request's cost (about 40 ns here); a
 * set's entries are array slots, their keys compared in place.
 */
AX_GLOBAL struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DEFAULT_MAX_FLOWS);
	__type(key, __u32);
	__type(value, struct pending_flow);
} pending SEC(".maps");

/* bit i: flow-table entry i has held a flow (set once: entries are
 * replaced, never freed), so that user space reads only those, not the
 * whole table (51 MB at the default size) each interval */
AX_GLOBAL struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DEFAULT_MAX_FLOWS / 64);
	__type(key, __u32);
	__type(value, __u64);
} flows_used SEC(".maps");

/* the tags of each set's entries (struct flow_tags): set when a flow
 * starts in an entry, after its key (rocelat_flow_new()); a stale tag
 * only costs a key compare */
AX_GLOBAL struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DEFAULT_MAX_FLOWS / FLOW_WAYS);
	__type(key, __u32);
	__type(value, struct flow_tags);
} flow_tags SEC(".maps");

/* the QPs a full table of active flows left out (rocelat_flow_new()),
 * each counted once (RL_UNTRACKED) while this holds them: as many as
 * the pairing index (ROCELAT_WAIT_N); past that, their requests are
 * still counted (RL_UNTRACKED_REQS), the QPs no more (RL_UNTRACKED_LOST).
 * The sweep drops a QP quiet for 2 x --timeout (one back later counts
 * again), so that a long run keeps counting. */
AX_GLOBAL struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ROCELAT_WAIT_N(DEFAULT_MAX_FLOWS));
	__type(key, struct roce_qp_key);
	__type(value, struct untracked_qp);
} untracked SEC(".maps");

static const struct pending_flow zero_flow;

#define ST_WORDS	(sizeof(struct roce_flow_stats) / sizeof(__u64))

/* a buffer's epoch word while one CPU zeroes it */
#define ST_RESETTING	0xFFFFFFFFu
/* how long a CPU waits for another one's zeroing (a few us; it takes
 * well under one) */
#define ST_WAIT		1024

/* where buffer buf's epoch word sits in both as one 64-bit word */
static __always_inline __u32 st_epoch_shift(__u32 buf)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (buf & 1) ? 0 : 32;
#else
	return (buf & 1) * 32;
#endif
}

/* both buffers' epoch words as one 64-bit word, buffer buf's set to v */
static __always_inline __u64 st_epochs_with(__u64 old, __u32 buf, __u32 v)
{
	__u32 sh = st_epoch_shift(buf);

	return (old & ~(0xFFFFFFFFULL << sh)) | (__u64)v << sh;
}

/*
 * Interval epoch begins in buffer epoch & 1 of flow pf: zeroed by one
 * CPU, which claims it with a compare-and-swap of the epoch words (the
 * request side and the answer side of one flow run on different CPUs:
 * XDP and tc, RSS), while another that wants it meanwhile waits until it
 * is done: no update of the new interval is lost to the zeroing.
 * Zeroing 5 KiB is too much for an inline memset: a word per step of a
 * bounded loop (once per flow and reporting interval). Not a bpf_loop():
 * its callback would be one more frame at the bottom of the deepest call
 * chain (6.1 counts 512 bytes of stack over it). The volatile store keeps
 * clang from turning the loop back into memset.
 */
AX_GLOBAL_FUNC int rocelat_stats_reset(struct pending_flow *pf, __u32 epoch)
{
	__u32 buf = epoch & 1, i, cur;
	volatile __u64 *w;
	__u64 *ep, old;

	if (!pf)
		return 0;
	ep = (__u64 *)pf->st_epoch;
	for (i = 0; i < ST_WAIT; i++) {
		old = *(volatile __u64 *)ep;
		cur = old >> st_epoch_shift(buf);
		if (cur == epoch + 1)
			return 0;	/* another CPU zeroed it meanwhile */
		if (cur == ST_RESETTING)
			continue;	/* another CPU zeroes it now */
		if (__sync_val_compare_and_swap(ep, old,
				st_epochs_with(old, buf, ST_RESETTING)) == old)
			break;
	}
	if (i == ST_WAIT)
		return 0;
	w = (volatile __u64 *)&pf->st[buf];
	for (i = 0; i < ST_WORDS; i++)
		w[i] = 0;
	/* the zeroes before the epoch (x86 keeps stores in order); the other
	 * buffer's word may change meanwhile, hence a swap again */
	asm volatile("" ::: "memory");
	for (i = 0; i < 64; i++) {
		old = *(volatile __u64 *)ep;
		if (__sync_val_compare_and_swap(ep, old,
				st_epochs_with(old, buf, epoch + 1)) == old)
			break;
	}
	return 0;
}

/* the flow's statistics of the current reporting interval, in the buffer
 * of its parity, zeroed first when the interval is new to it */
static __always_inline struct roce_flow_stats *flow_stats(struct pending_flow *pf)
{
	__u32 epoch = stats_epoch, buf = epoch & 1;

	if (pf->st_epoch[buf] != epoch + 1)
		rocelat_stats_reset(pf, epoch);
	return &pf->st[buf];
}

/* an answer's AETH kind and code and its CE mark, counted in m */
static __always_inline void answer_marks_add(struct answer_marks *m, bool ce,
					     __u8 kind, __u8 code)
{
	m->ecn_ce += ce;
	if (kind == ROCE_AETH_RNR_NAK) {
		m->rnr_naks++;
		m->rnr_timer = code;
	} else if (kind == ROCE_AETH_NAK) {
		m->naks++;
		if (code < ROCE_NAK_CODES)
			m->nak[code]++;
	}
}

/* answers' marks (one answer's, or all a QP held before it was paired)
 * in the flow's statistics */
static __always_inline void flow_stats_marks(struct pending_flow *pf,
					     const struct answer_marks *m)
{
	struct roce_flow_stats *fs = flow_stats(pf);
	__u32 i;

	if (m->ecn_ce)
		__sync_fetch_and_add(&fs->ecn_ce, m->ecn_ce);
	if (m->rnr_naks) {
		fs->rnr_naks += m->rnr_naks;
		fs->rnr_timer = m->rnr_timer;
	}
	if (!m->naks)
		return;
	fs->naks += m->naks;
	for (i = 0; i < ROCE_NAK_CODES; i++)
		fs->nak[i] += m->nak[i];
}

/* now - then on the flow's clock (a switch's wraps) */
static __always_inline __u64 flow_age(const struct pending_flow *pf, __u64 now,
				      __u64 then)
{
	__s64 d = now - then;

	if (d < 0 && (pf->flags & FLOW_SWITCH_CLOCK))
		d += pf->clock_wrap_ns;
	return d < 0 ? 0 : d;
}

/* a new flow: whose (key k of request pi), which mirror session, which
 * clock times it */
static __always_inline void flow_start(struct pending_flow *pf,
				       const struct pkt_info *pi,
				       const struct roce_qp_key *k, bool sw,
				       __u64 wrap)
{
	pf->id.family = pi->family;
	pf->id.qpn = pi->dqpn;
	pf->id.session = k->session;
	__builtin_memcpy(pf->id.req, pi->saddr, 16);
	__builtin_memcpy(pf->id.resp, pi->daddr, 16);
	pf->tun_kind = pi->tun_kind;
	pf->tun_family = pi->tun_family;
	pf->tun_id = pi->tun_id;
	__builtin_memcpy(pf->tun_saddr, pi->tun_saddr, 16);
	pf->clock_wrap_ns = wrap;
	pf->flags |= FLOW_CLOCK_SET | (sw ? FLOW_SWITCH_CLOCK : 0);
}

static __always_inline bool qp_key_eq(const struct roce_qp_key *a,
				      const struct roce_qp_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;
	__u32 d = 0, i;

#pragma unroll
	for (i = 0; i < sizeof(*a) / 4; i++)
		d |= x[i] ^ y[i];
	return !d;
}

/* the flow-table entry of the flow of key k (its first set, then its
 * second, then its third: the entries whose tag is k's), PAIR_NO_FLOW
 * when not there. A global
 * function, verified once: inlined, its 48 looks (three sets of 16) at
 * every caller took the XDP program past the verifier's million
 * instructions. */
AX_GLOBAL_FUNC __u32 rocelat_flow_at(const struct roce_qp_key *k)
{
	__u32 set[FLOW_SETS], i, j, idx, tag;
	const struct flow_tags *tags;
	struct roce_qp_key key;
	struct pending_flow *pf;

	if (!k)
		return PAIR_NO_FLOW;
	key = *k;
	tag = roce_flow_tag(&key);
	roce_flow_sets(&key, targ_flow_sets, set);
	for (j = 0; j < FLOW_SETS; j++) {
		tags = bpf_map_lookup_elem(&flow_tags, &set[j]);
		if (!tags)
			continue;
		for (i = 0; i < FLOW_WAYS; i++) {
			if (tags->tag[i] != tag)
				continue;
			idx = set[j] * FLOW_WAYS + i;
			pf = bpf_map_lookup_elem(&pending, &idx);
			if (pf && pf->used && qp_key_eq(&pf->key, &key))
				return idx;
		}
	}
	return PAIR_NO_FLOW;
}

/* the flow of key k in the flow table, if there, and its entry's index
 * in *at */
static __always_inline struct pending_flow *flow_find_at(const struct roce_qp_key *k,
							 __u32 *at)
{
	__u32 idx = rocelat_flow_at(k);

	if (idx == PAIR_NO_FLOW)
		return 0;
	*at = idx;
	return bpf_map_lookup_elem(&pending, &idx);
}

static __always_inline struct pending_flow *flow_find(const struct roce_qp_key *k)
{
	__u32 at;

	return flow_find_at(k, &at);
}

/* the oldest PSN flow pf may still wait for, past an answer */
static __always_inline void answer_una(struct pending_flow *pf, __u32 psn,
				       bool inclusive)
{
	__u32 una = inclusive ? psn + 1 : psn;

	if (roce_psn_diff(una, pf->una_psn) > 0)
		pf->una_psn = una & ROCE_PSN_MASK;
}

/* when a flow last saw a request or an answer, on this host's clock */
static __always_inline __u64 flow_active_ns(const struct pending_flow *pf)
{
	if (pf->flags & FLOW_SWITCH_CLOCK)
		return pf->arr_last;
	return pf->last_ts > pf->ans_ts ? pf->last_ts : pf->ans_ts;
}

#endif
