// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nfmatch, the evaluating half: a packet run through the programs that
 * tools/nfdrop/nfmatch_compile.c made of the rules, sets looked up, every way
 * through the chains followed; and rule counters as snapshots.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <libnftnl/expr.h>
#include "nfmatch.h"
#include "nfrules.h"

#define REGS_LEN	80	/* NFT_REG32_NUM (20) x 4 bytes, verdict first */
#define MAX_DEPTH	16	/* NFT_JUMP_STACK_SIZE */
#define MAX_STEPS	20000	/* rules evaluated per walk */
#define MAX_OUTS	64

/* ---- sets ---- */

static const struct nfm_set *set_find(const struct nfr_ruleset *rs,
				      const struct nfr_chain *c, const char *name)
{
	for (int i = 0; name && i < rs->nsets; i++) {
		const struct nfm_set *s = &rs->sets[i];

		if (s->family == c->family && !strcmp(s->table, c->table) &&
		    !strcmp(s->name, name))
			return s;
	}
	return NULL;
}

static bool elem_range_match(const struct nfm_set *s, const struct nfm_elem *e,
			     const unsigned char *k)
{
	int nf = s->nfields > 0 ? s->nfields : 1, o = 0;

	for (int f = 0; f < nf; f++) {
		int len = s->nfields > 0 ? (s->field_len[f] + 3) / 4 * 4 : s->key_len;

		if (o + len > s->key_len)
			len = s->key_len - o;
		if (memcmp(e->key + o, k + o, len) > 0 ||
		    memcmp(k + o, e->key_end + o, len) > 0)
			return false;
		o += len;
	}
	return true;
}

/* the element that matches key k, or NULL */
static const struct nfm_elem *set_lookup(const struct nfm_set *s,
					 const unsigned char *k)
{
	const struct nfm_elem *best = NULL, *any = NULL;

	for (int i = 0; i < s->nelems; i++) {
		const struct nfm_elem *e = &s->elems[i];

		if (e->catchall) {
			any = e;
			continue;
		}
		if (e->has_end) {
			if (elem_range_match(s, e, k))
				return e;
			continue;
		}
		if (!(s->flags & NFT_SET_INTERVAL)) {
			if (!memcmp(e->key, k, s->key_len))
				return e;
			continue;
		}
		/* intervals: the greatest boundary at or below k decides */
		if (memcmp(e->key, k, s->key_len) <= 0 &&
		    (!best || memcmp(e->key, best->key, s->key_len) > 0 ||
		     (!memcmp(e->key, best->key, s->key_len) && !e->interval_end)))
			best = e;
	}
	return best && !best->interval_end ? best : any;
}

int nfm_targets(const struct nfr_ruleset *rs, const struct nfr_chain *c,
		const struct nfm_prog *p, const char **out, int max)
{
	int n = 0;

	for (int i = 0; i < p->nops; i++) {
		const struct nfm_op *o = &p->ops[i];
		const struct nfm_set *s;

		if (o->type == NFM_OP_VERDICT && o->name &&
		    (o->verdict == NFM_V_JUMP || o->verdict == NFM_V_GOTO)) {
			if (n < max)
				out[n] = o->name;
			n++;
		}
		if (o->type != NFM_OP_LOOKUP || !o->dreg_verdict ||
		    !(s = set_find(rs, c, o->name)))
			continue;
		for (int j = 0; j < s->nelems; j++) {
			if (!s->elems[j].chain)
				continue;
			if (n < max)
				out[n] = s->elems[j].chain;
			n++;
		}
	}
	return n;
}

bool nfm_can_drop(const struct nfr_ruleset *rs, const struct nfr_chain *c,
		  const struct nfm_prog *p)
{
	for (int i = 0; i < p->nops; i++) {
		const struct nfm_op *o = &p->ops[i];
		const struct nfm_set *s;

		if (o->type == NFM_OP_VERDICT &&
		    (o->verdict == NFM_V_DROP || o->verdict == NFM_V_REJECT ||
		     o->verdict == NFM_V_MAYBE))
			return true;
		if (o->type != NFM_OP_LOOKUP || !o->dreg_verdict)
			continue;
		s = set_find(rs, c, o->name);
		if (!s)
			return true;
		for (int j = 0; j < s->nelems; j++)
			if (s->elems[j].verdict == NFM_V_DROP ||
			    s->elems[j].verdict == NFM_V_MAYBE)
				return true;
	}
	return false;
}

/* ---- evaluating one rule ---- */

/* known: a bit mask per byte (ct status: only its NAT bits are known) */
struct regs {
	unsigned char v[REGS_LEN], known[REGS_LEN];
	const char *src[REGS_LEN];	/* what was loaded there, for reports */
};

struct outcome {
	int verdict;
	const char *chain;
};

struct eval {
	const struct nfr_ruleset *rs;
	const struct nfr_chain *chain;
	const struct nfm_pkt *pkt;
	struct nfm_walk *w;
	struct outcome outs[MAX_OUTS];
	int nouts;
	bool overflow;
};

static void note(char *list, size_t size, const char *what)
{
	size_t n = strlen(what), len = strlen(list);
	const char *p = list;

	while ((p = strstr(p, what))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return;
		p++;
	}
	if (len + n + 2 < size)
		snprintf(list + len, size - len, "%s%s", len ? "," : "", what);
}

static void out_add(struct eval *ev, int verdict, const char *chain)
{
	for (int i = 0; i < ev->nouts; i++)
		if (ev->outs[i].verdict == verdict &&
		    (ev->outs[i].chain == chain ||
		     (chain && ev->outs[i].chain && !strcmp(ev->outs[i].chain, chain))))
			return;
	if (ev->nouts == MAX_OUTS) {
		ev->overflow = true;
		return;
	}
	ev->outs[ev->nouts].verdict = verdict;
	ev->outs[ev->nouts++].chain = chain;
}

static void reg_store(struct regs *r, int off, const void *data, int len,
		      bool known, const char *src)
{
	int padded = (len + 3) / 4 * 4;

	if (off < 0 || off + padded > REGS_LEN)
		return;
	memset(r->v + off, 0, padded);
	if (data)
		memcpy(r->v + off, data, len);
	memset(r->known + off, known ? 0xff : 0, padded);
	r->src[off] = src;
}

static bool reg_known(const struct regs *r, int off, int len)
{
	if (off < 0 || off + len > REGS_LEN)
		return false;
	for (int i = 0; i < len; i++)
		if (r->known[off + i] != 0xff)
			return false;
	return true;
}

/* (reg & mask) ^ xor: a bit is known where it was or where the mask
 * clears it */
static void eval_bitwise(struct regs *r, const struct nfm_op *o)
{
	unsigned char v[NFM_DATA_LEN], k[NFM_DATA_LEN];
	const char *src = o->sreg < REGS_LEN ? r->src[o->sreg] : NULL;
	int len = o->len;

	if (len > NFM_DATA_LEN || o->sreg + len > REGS_LEN || o->dreg + len > REGS_LEN) {
		reg_store(r, o->dreg, NULL, len, false, src);
		return;
	}
	for (int j = 0; j < len; j++) {
		v[j] = (r->v[o->sreg + j] & o->data[j]) ^ o->data2[j];
		k[j] = r->known[o->sreg + j] | (unsigned char)~o->data[j];
	}
	reg_store(r, o->dreg, v, len, true, src);
	memcpy(r->known + o->dreg, k, len);
}

/* ---- conntrack ---- */

#define CT_ENTRY (NFM_CT_ESTABLISHED | NFM_CT_RELATED | NFM_CT_NEW)
#define IPS_NAT_BITS (IPS_SRC_NAT | IPS_DST_NAT)
#define CT_INFO_UNTRACKED 7	/* IP_CT_UNTRACKED: kernel-internal, no uapi */

int nfm_ct_state_of(bool entry, int ctinfo)
{
	/* NF_CT_STATE_BIT(): both directions of a state share its bit */
	if (entry)
		return 1 << (ctinfo % IP_CT_IS_REPLY + 1);
	return ctinfo == CT_INFO_UNTRACKED ? NFM_CT_UNTRACKED : NFM_CT_INVALID;
}

const char *nfm_ct_state_name(int state)
{
	switch (state) {
	case NFM_CT_INVALID: return "invalid";
	case NFM_CT_ESTABLISHED: return "established";
	case NFM_CT_RELATED: return "related";
	case NFM_CT_NEW: return "new";
	case NFM_CT_UNTRACKED: return "untracked";
	default: return "?";
	}
}

/* nft ct load; false: the rule ends here (ct status without an entry
 * breaks the rule, nft_ct_get_eval) */
static bool eval_ct(struct eval *ev, struct regs *r, const struct nfm_op *o)
{
	const struct nfm_pkt *pk = ev->pkt;
	unsigned int v = pk->ct_state, known = IPS_NAT_BITS;

	if (o->key == NFT_CT_STATE) {
		reg_store(r, o->dreg, &v, 4, pk->ct_state != 0, "ct state");
		return true;
	}
	if (pk->ct_state && !(pk->ct_state & CT_ENTRY)) {
		note(ev->w->evaluated, sizeof(ev->w->evaluated), "ct status");
		out_add(ev, NFM_V_CONTINUE, NULL);
		return false;
	}
	v = pk->ct_nat & IPS_NAT_BITS;
	reg_store(r, o->dreg, &v, 4, false, "ct status");
	/* only the NAT bits: the others change with the traffic */
	if (pk->ct_state && pk->ct_nat_known && o->dreg + 4 <= REGS_LEN)
		memcpy(r->known + o->dreg, &known, 4);
	return true;
}

/* xtables conntrack --ctstate / state --state (xt_conntrack.c,
 * xt_state.c): 1 true, 0 false, -1 unknown */
static int eval_xt_state(struct eval *ev, const struct nfm_op *o)
{
	const struct nfm_pkt *pk = ev->pkt;
	int st = pk->ct_state;

	if (st && (st & CT_ENTRY) && (o->key & (NFM_CT_SNAT | NFM_CT_DNAT))) {
		if (!pk->ct_nat_known)
			st = 0;
		else
			st |= (pk->ct_nat & IPS_SRC_NAT ? NFM_CT_SNAT : 0) |
			      (pk->ct_nat & IPS_DST_NAT ? NFM_CT_DNAT : 0);
	}
	if (!st) {
		note(ev->w->unknown, sizeof(ev->w->unknown), "ct state");
		return -1;
	}
	note(ev->w->evaluated, sizeof(ev->w->evaluated), "ct state");
	return !!(o->key & st) != o->inv;
}

/* the bytes of header base at off..off+len, if the event had them */
static bool pkt_bytes(const struct nfm_pkt *pk, int base, unsigned int off,
		      int len, unsigned char *out, const char **src)
{
	unsigned char nh[40] = {}, known[40] = {}, th[4];
	int nlen = 0;

	if (base == NFT_PAYLOAD_TRANSPORT_HEADER) {
		if (pk->sport < 0 || pk->dport < 0 || off + len > 4)
			return false;
		th[0] = pk->sport >> 8;
		th[1] = pk->sport;
		th[2] = pk->dport >> 8;
		th[3] = pk->dport;
		memcpy(out, th + off, len);
		*src = off == 0 && len == 2 ? "th sport" : off == 2 && len == 2 ?
		       "th dport" : "th ports";
		return true;
	}
	if (base != NFT_PAYLOAD_NETWORK_HEADER)
		return false;
	if (pk->family == 4) {
		nlen = 20;
		nh[9] = pk->l4proto;
		known[9] = pk->l4proto >= 0;
		memcpy(nh + 12, pk->saddr, 4);
		memcpy(nh + 16, pk->daddr, 4);
		memset(known + 12, pk->addrs_known, 8);
		*src = off >= 12 && off < 16 ? "ip saddr" : off >= 16 && off < 20 ?
		       "ip daddr" : "ip protocol";
	} else if (pk->family == 6) {
		nlen = 40;
		memcpy(nh + 8, pk->saddr, 16);
		memcpy(nh + 24, pk->daddr, 16);
		memset(known + 8, pk->addrs_known, 32);
		*src = off >= 8 && off < 24 ? "ip6 saddr" : "ip6 daddr";
	}
	if (off + len > (unsigned int)nlen)
		return false;
	for (int i = 0; i < len; i++)
		if (!known[off + i])
			return false;
	memcpy(out, nh + off, len);
	return true;
}

static void eval_meta(struct eval *ev, struct regs *r, const struct nfm_op *o)
{
	const struct nfm_pkt *pk = ev->pkt;
	unsigned char b[16] = {};
	unsigned int u;
	unsigned short be;

	switch (o->key) {
	case NFT_META_L4PROTO:
		b[0] = pk->l4proto;
		reg_store(r, o->dreg, b, 1, pk->l4proto >= 0, "meta l4proto");
		return;
	case NFT_META_NFPROTO:
		b[0] = pk->family == 4 ? NFPROTO_IPV4 : NFPROTO_IPV6;
		reg_store(r, o->dreg, b, 1, pk->family != 0, "meta nfproto");
		return;
	case NFT_META_PROTOCOL:
		be = htons(pk->family == 4 ? 0x0800 : 0x86dd);
		reg_store(r, o->dreg, &be, 2, pk->family != 0, "meta protocol");
		return;
	case NFT_META_IIFNAME:
	case NFT_META_OIFNAME: {
		bool in = o->key == NFT_META_IIFNAME;

		memcpy(b, in ? pk->iifname : pk->oifname, 16);
		reg_store(r, o->dreg, b, 16, in ? pk->iif_known : pk->oif_known,
			  in ? "iifname" : "oifname");
		return;
	}
	case NFT_META_MARK:
		u = pk->mark;
		reg_store(r, o->dreg, &u, 4, pk->mark_known, "meta mark");
		return;
	case NFT_META_IIF:
	case NFT_META_OIF:
		u = o->key == NFT_META_IIF ? pk->iif : pk->oif;
		reg_store(r, o->dreg, &u, 4, u != 0, o->key == NFT_META_IIF ? "iif" : "oif");
		return;
	default:
		reg_store(r, o->dreg, NULL, 4, false, "meta");
		note(ev->w->unknown, sizeof(ev->w->unknown), "meta");
	}
}

/* 1 true, 0 false, -1 unknown */
static int eval_test(struct eval *ev, const struct regs *r, const struct nfm_op *o)
{
	const char *src = r->src[o->sreg] ? r->src[o->sreg] : "register";
	int d, lo, hi;

	if (!reg_known(r, o->sreg, o->len)) {
		/* loaded by an expression not understood: that one is noted */
		if (r->src[o->sreg])
			note(ev->w->unknown, sizeof(ev->w->unknown), src);
		return -1;
	}
	note(ev->w->evaluated, sizeof(ev->w->evaluated), src);
	if (o->type == NFM_OP_RANGE) {
		lo = memcmp(o->data, r->v + o->sreg, o->len);
		hi = memcmp(r->v + o->sreg, o->data2, o->len);
		return (lo <= 0 && hi <= 0) == (o->op == NFT_RANGE_EQ);
	}
	d = memcmp(r->v + o->sreg, o->data, o->len);
	switch (o->op) {
	case NFT_CMP_EQ: return d == 0;
	case NFT_CMP_NEQ: return d != 0;
	case NFT_CMP_LT: return d < 0;
	case NFT_CMP_LTE: return d <= 0;
	case NFT_CMP_GT: return d > 0;
	case NFT_CMP_GTE: return d >= 0;
	default: return -1;
	}
}

static void set_verdicts(struct eval *ev, const struct nfm_set *s)
{
	for (int i = 0; i < s->nelems; i++)
		out_add(ev, s->elems[i].verdict, s->elems[i].chain);
}

/* false: the rule ends here (outcomes added) */
static bool eval_lookup(struct eval *ev, struct regs *r, const struct nfm_op *o)
{
	const struct nfm_set *s = set_find(ev->rs, ev->chain, o->name);
	const struct nfm_elem *e;
	char what[96];

	if (s && (s->flags & NFT_SET_ANONYMOUS))
		snprintf(what, sizeof(what), "anonymous %s", s->vmap ? "vmap" : "set");
	else
		snprintf(what, sizeof(what), "@%s", o->name ? o->name : "?");
	/* elements that come and go with the traffic (timeouts, updates
	 * from the rules) may differ from when the packet met them */
	if (!s || !reg_known(r, o->sreg, s->key_len) ||
	    (s->flags & (NFT_SET_TIMEOUT | NFT_SET_EVAL))) {
		note(ev->w->unknown, sizeof(ev->w->unknown), s ? (r->src[o->sreg] ?: what) : what);
		out_add(ev, NFM_V_CONTINUE, NULL);
		if (!o->has_dreg)
			return true;
		if (!o->dreg_verdict) {
			reg_store(r, o->dreg, NULL, s ? s->data_len : 4, false, what);
			return true;
		}
		if (s)
			set_verdicts(ev, s);
		else
			out_add(ev, NFM_V_MAYBE, NULL);
		return false;
	}
	note(ev->w->evaluated, sizeof(ev->w->evaluated), what);
	e = set_lookup(s, r->v + o->sreg);
	if (!e != o->inv) {
		out_add(ev, NFM_V_CONTINUE, NULL);	/* no match: the rule breaks */
		return false;
	}
	if (o->dreg_verdict) {
		out_add(ev, e->verdict, e->chain);
		return false;
	}
	if (o->has_dreg)
		reg_store(r, o->dreg, e->data, e->dlen, true, what);
	return true;
}

/* the ways a rule can end for the packet; each may be the real one */
static void eval_rule(struct eval *ev, const struct nfm_prog *p)
{
	struct regs r;
	unsigned char buf[NFM_DATA_LEN];
	const char *src = NULL;

	memset(&r, 0, sizeof(r));
	ev->nouts = 0;
	ev->overflow = false;
	for (int i = 0; i < p->nops; i++) {
		const struct nfm_op *o = &p->ops[i];
		bool ok;
		int t;

		switch (o->type) {
		case NFM_OP_PAYLOAD:
			ok = o->len <= NFM_DATA_LEN &&
			     pkt_bytes(ev->pkt, o->base, o->off, o->len, buf, &src);
			reg_store(&r, o->dreg, buf, o->len, ok, ok ? src : "payload");
			break;
		case NFM_OP_META:
			eval_meta(ev, &r, o);
			break;
		case NFM_OP_IMM_DATA:
			reg_store(&r, o->dreg, o->data, o->len, true, "immediate");
			break;
		case NFM_OP_BITWISE:
			eval_bitwise(&r, o);
			break;
		case NFM_OP_CT:
			if (!eval_ct(ev, &r, o))
				return;
			break;
		case NFM_OP_CMP:
		case NFM_OP_RANGE:
		case NFM_OP_XT_STATE:
			t = o->type == NFM_OP_XT_STATE ? eval_xt_state(ev, o) :
			    eval_test(ev, &r, o);
			if (t == 0) {
				out_add(ev, NFM_V_CONTINUE, NULL);
				return;
			}
			if (t < 0)
				out_add(ev, NFM_V_CONTINUE, NULL);
			break;
		case NFM_OP_LOOKUP:
			if (!eval_lookup(ev, &r, o))
				return;
			break;
		case NFM_OP_VERDICT:
			if (o->verdict == NFM_V_MAYBE && o->name)
				note(ev->w->unknown, sizeof(ev->w->unknown), o->name);
			out_add(ev, o->verdict, o->name);
			return;
		case NFM_OP_UNKNOWN:
			note(ev->w->unknown, sizeof(ev->w->unknown), o->name ? o->name : "?");
			out_add(ev, NFM_V_CONTINUE, NULL);
			memset(r.known, 0, sizeof(r.known));
			memset(r.src, 0, sizeof(r.src));
			break;
		default:
			break;
		}
	}
	out_add(ev, NFM_V_CONTINUE, NULL);	/* matched, no verdict */
}

/* ---- walking chains ---- */

struct frame {
	const struct nfr_chain *chain;
	int next;
};

struct walker {
	const struct nfr_ruleset *rs;
	const struct nfm_pkt *pkt;
	struct nfm_walk *w;
	const struct nfr_chain *base;
	bool passes;		/* some path leaves the base chain accepted */
};

static void cand_add(struct walker *k, const struct nfr_chain *c,
		     const struct nfr_rule *rule, int verdict)
{
	struct nfm_walk *w = k->w;

	for (int i = 0; i < w->ncands; i++)
		if (w->cands[i].base == k->base && w->cands[i].rule == rule &&
		    w->cands[i].chain == c && w->cands[i].verdict == verdict)
			return;
	if (w->ncands == NFM_MAX_CANDS) {
		w->complete = false;
		return;
	}
	w->cands[w->ncands++] = (struct nfm_cand){ k->base, c, rule, verdict };
}

static void walk_chain(struct walker *k, const struct nfr_chain *c, int from,
		       struct frame *stack, int depth);

static void chain_end(struct walker *k, struct frame *stack, int depth)
{
	if (depth > 0) {
		/* each way back walks on with its own copy of the frames: the
		 * caller's later jumps write theirs, which another way out of
		 * this chain (a return that may match, then its end) still
		 * needs as they were */
		struct frame mine[MAX_DEPTH];

		memcpy(mine, stack, depth * sizeof(*stack));
		walk_chain(k, mine[depth - 1].chain, mine[depth - 1].next, mine, depth - 1);
		return;
	}
	if (k->base->policy == NFR_POLICY_DROP)
		cand_add(k, k->base, NULL, NFM_V_DROP);
	else
		k->passes = true;
}

static const struct nfr_chain *target_chain(struct walker *k,
					    const struct nfr_chain *c,
					    const char *name)
{
	const struct nfr_chain *t = name ? nfr_chain_find(k->rs, c->engine, c->family,
							   c->table, name) : NULL;

	if (!t)
		k->w->complete = false;
	return t;
}

/* one outcome of rule i of c; true when the walk goes on to rule i + 1 */
static bool follow(struct walker *k, const struct nfr_chain *c, int i,
		   const struct outcome *o, struct frame *stack, int depth)
{
	const struct nfr_chain *t;

	switch (o->verdict) {
	case NFM_V_CONTINUE:
		return true;
	case NFM_V_DROP:
	case NFM_V_REJECT:
		cand_add(k, c, &c->rules[i], o->verdict);
		return false;
	case NFM_V_MAYBE:
		cand_add(k, c, &c->rules[i], NFM_V_MAYBE);
		k->passes = true;
		return true;
	case NFM_V_ACCEPT:
		k->passes = true;
		return false;
	case NFM_V_RETURN:
		chain_end(k, stack, depth);
		return false;
	case NFM_V_JUMP:
		if (!(t = target_chain(k, c, o->chain)))
			return false;
		if (depth >= MAX_DEPTH) {
			k->w->complete = false;
			return false;
		}
		stack[depth] = (struct frame){ c, i + 1 };
		walk_chain(k, t, 0, stack, depth + 1);
		return false;
	case NFM_V_GOTO:
		if ((t = target_chain(k, c, o->chain)))
			walk_chain(k, t, 0, stack, depth);
		return false;
	}
	return false;
}

static void walk_chain(struct walker *k, const struct nfr_chain *c, int from,
		       struct frame *stack, int depth)
{
	struct eval *ev = malloc(sizeof(*ev));

	if (!ev) {
		k->w->complete = false;
		return;
	}
	for (int i = from; i < c->nrules; i++) {
		bool cont = false;

		if (++k->w->steps > MAX_STEPS) {
			k->w->complete = false;
			break;
		}
		memset(ev, 0, sizeof(*ev));
		ev->rs = k->rs;
		ev->chain = c;
		ev->pkt = k->pkt;
		ev->w = k->w;
		eval_rule(ev, &c->rules[i].prog);
		if (ev->overflow)
			k->w->complete = false;
		for (int j = 0; j < ev->nouts; j++)
			cont |= follow(k, c, i, &ev->outs[j], stack, depth);
		if (!cont)
			goto out;
	}
	chain_end(k, stack, depth);
out:
	free(ev);
}

void nfm_walk_hook(const struct nfr_ruleset *rs,
		   const struct nfr_chain *const *bases, int nbases,
		   const struct nfm_pkt *const *pkts, struct nfm_walk *w)
{
	struct frame stack[MAX_DEPTH];
	struct walker k = { rs, NULL, w, NULL, false };

	memset(w, 0, sizeof(*w));
	w->complete = true;
	for (int b = 0; b < nbases; b++) {
		k.base = bases[b];
		k.pkt = pkts[b];
		k.passes = false;
		walk_chain(&k, bases[b], 0, stack, 0);
		if (!k.passes && !pkts[b]->may_skip)
			break;	/* no later base chain sees the packet */
	}
}

/* ---- counters ---- */

static void count_add(struct nfm_counters *c, const struct nfr_chain *ch,
		      unsigned long long handle, unsigned long long packets)
{
	struct nfm_count *n = realloc(c->c, (c->n + 1) * sizeof(*n));

	if (!n)
		return;
	c->c = n;
	n = &c->c[c->n++];
	n->engine = ch->engine;
	n->family = ch->family;
	n->table = strdup(ch->table ? ch->table : "");
	n->chain = strdup(ch->name ? ch->name : "");
	n->table_handle = ch->table_handle;
	n->handle = handle;
	n->packets = packets;
}

void nfm_counters_free(struct nfm_counters *c)
{
	for (int i = 0; i < c->n; i++) {
		free(c->c[i].table);
		free(c->c[i].chain);
	}
	free(c->c);
	memset(c, 0, sizeof(*c));
}

static void counters_from_ruleset(struct nfm_counters *out,
				  const struct nfr_ruleset *rs)
{
	for (int i = 0; i < rs->nchains; i++) {
		const struct nfr_chain *c = &rs->chains[i];

		if (c->has_counter)
			count_add(out, c, 0, c->policy_packets);
		for (int j = 0; j < c->nrules; j++)
			if (c->rules[j].prog.counter && c->rules[j].has_packets)
				count_add(out, c, c->rules[j].handle, c->rules[j].packets);
	}
}

int nfm_counters_read(struct nfm_counters *out)
{
	struct nfr_ruleset rs;
	int err;

	memset(out, 0, sizeof(*out));
	out->gen = nfr_nft_gen();
	err = nfr_load_counters(&rs);
	counters_from_ruleset(out, &rs);
	out->valid = !err;
	nfr_free(&rs);
	return err;
}

static bool count_in(const struct nfm_count *x, const struct nfm_counters *b)
{
	for (int i = 0; i < b->n; i++)
		if (b->c[i].engine == x->engine && b->c[i].family == x->family &&
		    b->c[i].handle == x->handle && !strcmp(b->c[i].table, x->table) &&
		    !strcmp(b->c[i].chain, x->chain))
			return true;
	return false;
}

bool nfm_counters_changed(const struct nfm_counters *a, const struct nfm_counters *b)
{
	if (!a->valid || !b->valid)
		return false;
	bool gen = a->gen >= 0 && b->gen >= 0;

	if (gen && a->gen != b->gen)
		return true;
	/* the generation covers nftables; iptables-legacy has none */
	for (int i = 0; i < a->n; i++)
		if ((!gen || a->c[i].engine == NFR_ENGINE_LEGACY) && !count_in(&a->c[i], b))
			return true;
	for (int i = 0; i < b->n; i++)
		if ((!gen || b->c[i].engine == NFR_ENGINE_LEGACY) && !count_in(&b->c[i], a))
			return true;
	return false;
}

/* is x the rule of table_handle (either unknown: taken as it) */
static bool same_table(const struct nfm_count *x, unsigned long long table_handle)
{
	return !x || !x->table_handle || !table_handle || x->table_handle == table_handle;
}

long long nfm_counter_delta(const struct nfm_counters *a,
			    const struct nfm_counters *b, int engine, int family,
			    const char *table, const char *chain,
			    unsigned long long handle, unsigned long long table_handle)
{
	const struct nfm_count *x = NULL, *y = NULL;

	if (!a || !b || !a->valid || !b->valid)
		return -1;
	for (int i = 0; i < a->n && !x; i++)
		if (a->c[i].engine == engine && a->c[i].family == family &&
		    a->c[i].handle == handle && !strcmp(a->c[i].table, table) &&
		    !strcmp(a->c[i].chain, chain))
			x = &a->c[i];
	for (int i = 0; i < b->n && !y; i++)
		if (b->c[i].engine == engine && b->c[i].family == family &&
		    b->c[i].handle == handle && !strcmp(b->c[i].table, table) &&
		    !strcmp(b->c[i].chain, chain))
			y = &b->c[i];
	if (!y)
		return -1;
	/* the rule named is another table's (added again since), or the
	 * table was added again in the window: its counter is not this
	 * rule's, or not for the whole window */
	if (!same_table(y, table_handle) ||
	    (x && y->table_handle && x->table_handle && x->table_handle != y->table_handle))
		return -1;
	/* not there before, there now: an nftables rule added in between
	 * (handles are never reused in a table) counted from zero, every
	 * packet in the window; iptables-legacy numbers rules by position,
	 * so there an insert only renumbers */
	if (!x)
		return y->engine == NFR_ENGINE_LEGACY ? -1 : (long long)y->packets;
	if (y->packets < x->packets)
		return -1;
	return (long long)(y->packets - x->packets);
}
