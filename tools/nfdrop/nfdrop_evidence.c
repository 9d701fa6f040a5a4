// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nfdrop's evidence for naming the rule (nfdrop_evidence.h): the packet
 * run through the hook's rules, the rules' own counters, REJECT replies;
 * each kind of evidence narrows the candidates of a row.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include "nfdrop_row.h"
#include <linux/netfilter/nf_conntrack_common.h>
#include "lib/netns.h"

/* ---- the packet ---- */

struct ifcache {
	unsigned int netns;
	int ifindex;
	char name[IF_NAMESIZE];
	bool found;
};

static struct ifcache *ifc;
static int nifc;

/* the name of ifindex in netns (where ifindex means something) */
static bool ifname_in(unsigned int netns, int ifindex, char *out)
{
	struct ifcache *e;
	int saved;

	for (int i = 0; i < nifc; i++)
		if (ifc[i].netns == netns && ifc[i].ifindex == ifindex) {
			memcpy(out, ifc[i].name, IF_NAMESIZE);
			return ifc[i].found;
		}
	e = realloc(ifc, (nifc + 1) * sizeof(*e));
	if (!e)
		return false;
	ifc = e;
	e = &ifc[nifc];
	memset(e, 0, sizeof(*e));
	if (netns_enter(netns, &saved))
		return false;	/* gone: not cached, not known */
	e->found = if_indextoname(ifindex, e->name) != NULL;
	netns_leave(saved);
	e->netns = netns;
	e->ifindex = ifindex;
	nifc++;
	memcpy(out, e->name, IF_NAMESIZE);
	return e->found;
}

bool ev_dev_name(unsigned int netns, int ifindex, char *out)
{
	memset(out, 0, IF_NAMESIZE);
	return ifindex > 0 && ifname_in(netns, ifindex, out);
}

/* one side of the hook: a device (ifindex), none (0 known), or unknown */
static void pkt_dev(unsigned int netns, int ifindex, bool none, char *name,
		    bool *known, int *idx)
{
	memset(name, 0, IF_NAMESIZE);
	*idx = 0;
	*known = false;
	if (none) {
		*known = true;		/* nft matches "" when there is no device */
		return;
	}
	if (ifindex > 0 && ifname_in(netns, ifindex, name)) {
		*known = true;
		*idx = ifindex;
	}
}

int ev_ct_state(const struct nfd_key *k)
{
	if (!(k->ct & NFD_CT_READ))
		return 0;
	return nfm_ct_state_of(k->ct & NFD_CT_ENTRY, k->ct & NFD_CT_INFO);
}

bool ev_packet(const struct nfd_key *k, int pf, const char *hook,
	       struct nfm_pkt *pkt)
{
	bool rx, tx;

	memset(pkt, 0, sizeof(*pkt));
	pkt->l4proto = pkt->sport = pkt->dport = -1;
	if (!k->sig || (k->sig_family != 4 && k->sig_family != 6))
		return false;
	pkt->family = k->sig_family;
	pkt->l4proto = k->sig_proto;
	memcpy(pkt->saddr, k->saddr, 16);
	memcpy(pkt->daddr, k->daddr, 16);
	pkt->addrs_known = true;
	pkt->mark = k->mark;
	pkt->mark_known = true;
	if (k->sig_ports) {
		pkt->sport = k->sport;
		pkt->dport = k->dport;
	}
	/* which devices the hook has: in on receive, out on transmit. Only
	 * IP hooks: a bridge hook's skb->dev may be the bridge, not the port */
	if (pf != NFR_PROTO_IPV4 && pf != NFR_PROTO_IPV6)
		hook = NULL;
	rx = hook && (!strcmp(hook, "prerouting") || !strcmp(hook, "input") ||
		      !strcmp(hook, "forward"));
	tx = hook && (!strcmp(hook, "forward") || !strcmp(hook, "output") ||
		      !strcmp(hook, "postrouting"));
	if ((rx || tx) && (k->ct & NFD_CT_READ)) {
		pkt->ct_state = ev_ct_state(k);
		pkt->ct_nat_known = k->ct & NFD_CT_STATUS;
		pkt->ct_nat = (k->ct & NFD_CT_SNAT ? IPS_SRC_NAT : 0) |
			      (k->ct & NFD_CT_DNAT ? IPS_DST_NAT : 0);
		pkt->ct_done_known = k->ct & NFD_CT_STATUS;
		pkt->ct_done = (k->flags & NFD_F_SNAT_DONE ? IPS_SRC_NAT_DONE : 0) |
			       (k->flags & NFD_F_DNAT_DONE ? IPS_DST_NAT_DONE : 0);
	}
	if (rx || tx) {
		pkt_dev(k->netns, k->dev_ifindex, !rx, pkt->iifname,
			&pkt->iif_known, &pkt->iif);
		pkt_dev(k->netns, !strcmp(hook, "postrouting") ? k->dev_ifindex :
			k->dst_ifindex, !tx, pkt->oifname, &pkt->oif_known, &pkt->oif);
	}
	return true;
}

/* ---- candidates ---- */

bool ev_is_nat(const struct nfr_chain *c)
{
	return c->engine == NFR_ENGINE_NFT ? c->type && !strcmp(c->type, "nat") :
	       !strcmp(c->table, "nat");
}

/*
 * Nat chains (nft type nat, iptables' nat table) are no hooks of their
 * own: the first one at a hook registers the nat core's hook there
 * (nf_nat_register_fn(), net/netfilter/nf_nat_core.c, since 4.18), at
 * NF_IP_PRI_NAT_DST (-100) on prerouting and output and NF_IP_PRI_NAT_SRC
 * (100) on input and postrouting, the same for IPv6; the chains run
 * inside it (nf_nat_inet_fn()) in their own priority order. So among the
 * other chains of the hook a nat chain runs at the core's priority.
 */
int ev_nat_core_prio(const char *hook)
{
	if (hook && (!strcmp(hook, "prerouting") || !strcmp(hook, "output")))
		return -100;
	if (hook && (!strcmp(hook, "input") || !strcmp(hook, "postrouting")))
		return 100;
	return INT_MIN;
}

static int run_prio(const struct nfr_chain *c)
{
	int core = ev_is_nat(c) ? ev_nat_core_prio(nfr_hook_name(c->family, c->hook)) : INT_MIN;

	return core != INT_MIN ? core : c->prio;
}

/*
 * The order the kernel runs the base chains of one hook in: by priority
 * (run_prio()), and among equal priorities the hook registered last first
 * (nf_hook_entries_grow() puts a new hook before every entry of its
 * priority; nf_hook_entries_insert_raw() does the same for the nat
 * chains in the nat core). nftables registers a chain's hook when it
 * creates the chain and dumps a table's chains in creation order, and the
 * ruleset lists tables in creation order too, so within a table the later
 * in rs->chains (one array: the pointers compare) ran first. Across
 * tables that is only the likely order: a chain added later to an older
 * table was registered after the newer table's (see tie_unknown()); so is
 * the nat core against a chain at its priority.
 */
static int cmp_prio(const void *a, const void *b)
{
	const struct nfr_chain *x = *(const struct nfr_chain *const *)a;
	const struct nfr_chain *y = *(const struct nfr_chain *const *)b;

	if (run_prio(x) != run_prio(y))
		return run_prio(x) < run_prio(y) ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	return x > y ? -1 : x < y;
}

/* do bases[from..to) (one run priority) run in an order the dump cannot
 * tell: chains of more than one table or engine, or nat chains with
 * others */
static bool tie_unknown(const struct nfr_chain *const *bases, int from, int to)
{
	for (int i = from + 1; i < to; i++)
		if (bases[i]->engine != bases[from]->engine ||
		    bases[i]->family != bases[from]->family ||
		    strcmp(bases[i]->table, bases[from]->table) ||
		    ev_is_nat(bases[i]) != ev_is_nat(bases[from]))
			return true;
	return false;
}

static int kind_of(int verdict)
{
	return verdict == NFM_V_REJECT ? NFR_KIND_REJECT :
	       verdict == NFM_V_DROP ? NFR_KIND_DROP : NFR_KIND_MAYBE;
}

#define CONNTRACK_PRIO	(-200)	/* NF_IP_PRI_CONNTRACK, NF_IP6_PRI_CONNTRACK */

/*
 * What the packet's conntrack at the drop says of the nat chains at hook,
 * by nf_nat_inet_fn() (net/netfilter/nf_nat_core.c): the nat core runs
 * them only for a packet with a conntrack entry whose ctinfo is new or
 * related (a connection's first packets) and whose binding for the
 * hook's manip (destination at prerouting and output, source at input
 * and postrouting) is not made yet; when none of them binds it, the core
 * makes a null binding before any chain after it runs, and no chain sets
 * ct status at a drop. 1: the chains ran and left the binding unmade
 * (the packet was dropped in one of them or before the core); 0: they
 * did not run, or bound it; -1: not known.
 */
static int nat_unbound(const struct nfm_pkt *p, const char *hook)
{
	int core = ev_nat_core_prio(hook);
	unsigned int manip = core < 0 ? IPS_DST_NAT_DONE : IPS_SRC_NAT_DONE;

	if (core == INT_MIN || !p->ct_state)
		return -1;
	/* no entry (invalid, untracked) or not a first packet */
	if (!(p->ct_state & (NFM_CT_NEW | NFM_CT_RELATED)))
		return 0;
	if (!p->ct_done_known)
		return -1;
	return !(p->ct_done & manip);
}

/* is a drop in base ruled out by the packet's conntrack at the drop
 * (pkt), with nat chains at its hook (nat_prio, INT_MIN none) */
static bool ct_rules_out(const struct nfr_chain *base, const struct nfm_pkt *pkt,
			 int nat_prio)
{
	const char *h = nfr_hook_name(base->family, base->hook);
	int unbound = nat_unbound(pkt, h);

	if (ev_is_nat(base))
		return unbound == 0;
	return unbound == 1 && nat_prio != INT_MIN && run_prio(base) > nat_prio;
}

/*
 * The packet as base chain c saw it, from what the event saw at the drop.
 * NAT: the chains up to the nat core at this hook (nat_prio, the core's
 * priority where a nat chain is, or the last chain that may rewrite the
 * packet, rewrite_prio()) may have seen other addresses and ports,
 * and ct status without the NAT bit it set; the nat chains themselves run
 * only for a connection's first packets (nat_unbound()), so the packet
 * may have passed them unseen. Conntrack: skb->_nfct is set at prerouting
 * and output priority -200 and then stays for the packet's way through
 * the later hooks; a chain at or before -200 there (raw, or tied with
 * conntrack) saw another, so its ct matches are taken both ways. Chains
 * after the drop never ran: for them only the hypothesis "the drop was
 * here" counts, where the state at the drop is theirs. Mark: the chains
 * up to the last that may set it (mark_prio, rewrite_prio()) saw
 * another, not known. notrack_later:
 * late_notrack(). hookdev: the device the hook ran for, NULL unknown.
 */
static void ev_pkt_at_chain(const struct nfr_chain *c, int nat_prio, int mark_prio,
			    bool notrack_later, const char *hookdev,
			    struct nfm_pkt *p)
{
	const char *h = nfr_hook_name(c->family, c->hook);
	bool ct_set_here = h && (!strcmp(h, "prerouting") || !strcmp(h, "output"));

	if (nat_prio != INT_MIN && run_prio(c) <= nat_prio) {
		p->addrs_known = false;
		p->sport = p->dport = -1;
		p->ct_nat_known = false;
	}
	if (mark_prio != INT_MIN && run_prio(c) <= mark_prio)
		p->mark_known = false;
	if (ct_set_here && (c->prio <= CONNTRACK_PRIO || notrack_later)) {
		p->ct_state = 0;
		p->ct_nat_known = false;
		p->ct_done_known = false;
	}
	p->may_skip = ev_is_nat(c) || nfr_chain_sees_dev(c, hookdev) < 0;
}

/*
 * notrack after conntrack turns a packet without an entry from invalid
 * into untracked (nft_notrack_eval; prerouting and output only): chains
 * before it saw invalid where the drop shows untracked. True when some
 * rule may do that: a notrack in a base chain after conntrack, or in a
 * regular chain (reached from anywhere).
 */
static bool late_notrack(const struct nfr_ruleset *rs)
{
	for (int i = 0; i < rs->nchains; i++) {
		const struct nfr_chain *c = &rs->chains[i];
		const char *h = c->base ? nfr_hook_name(c->family, c->hook) : NULL;

		if (c->base && (!h || (strcmp(h, "prerouting") && strcmp(h, "output")) ||
				c->prio <= CONNTRACK_PRIO))
			continue;
		for (int j = 0; j < c->nrules; j++)
			for (int k = 0; k < c->rules[j].prog.nops; k++) {
				const struct nfm_op *o = &c->rules[j].prog.ops[k];

				if (o->type == NFM_OP_NOOP && o->name &&
				    (!strcmp(o->name, "notrack") || !strcmp(o->name, "NOTRACK") ||
				     !strcmp(o->name, "CT")))
					return true;
			}
	}
	return false;
}

/* does the rule end with a queue verdict (nft queue, xtables NFQUEUE) */
static bool rule_queues(const struct nfr_rule *r)
{
	for (int k = 0; k < r->prog.nops; k++) {
		const struct nfm_op *o = &r->prog.ops[k];

		if (o->type == NFM_OP_VERDICT && o->verdict == NFM_V_MAYBE && o->name &&
		    (!strcmp(o->name, "queue") || !strcmp(o->name, "target NFQUEUE") ||
		     !strcmp(o->name, "NFQUEUE")))
			return true;
	}
	return false;
}

void ev_keep_queue(struct ev_set *s)
{
	int n = 0;

	for (int i = 0; i < s->n; i++)
		if (s->c[i].queue)
			s->c[n++] = s->c[i];
	s->n = n;
}

static bool same_ev_cand(const struct ev_cand *a, const struct ev_cand *b)
{
	return a->engine == b->engine && a->family == b->family &&
	       !strcmp(a->table, b->table) && !strcmp(a->base, b->base) &&
	       !strcmp(a->chain, b->chain) && a->handle == b->handle &&
	       a->policy == b->policy;
}

/* the candidates of one walk into s, each once; how many were new.
 * pkt: the packet at the drop */
static int add_walk(const struct nfm_walk *w, const char *dropper_type,
		    const struct nfm_pkt *pkt, int nat_prio, struct ev_set *s)
{
	int added = 0;

	for (int i = 0; i < w->ncands && s->n < EV_MAX_CANDS; i++) {
		const struct nfm_cand *m = &w->cands[i];
		struct ev_cand *c = &s->c[s->n];
		bool dup = false;

		/* walked for the way on, but not where the verdict fell */
		if (dropper_type && m->base->engine == NFR_ENGINE_NFT &&
		    (!m->base->type || strcmp(m->base->type, dropper_type)))
			continue;
		if (ct_rules_out(m->base, pkt, nat_prio)) {
			s->ct_ruled = true;
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->engine = m->base->engine;
		c->family = m->base->family;
		c->table = nfdrop_str(m->base->table, NFDROP_TABLE_SIZE);
		c->base = nfdrop_str(m->base->name, NFDROP_CHAIN_SIZE);
		c->base_prio = m->base->prio;
		c->base_policy = m->base->policy;
		c->chain = nfdrop_str(m->chain->name, NFDROP_CHAIN_SIZE);
		c->policy = !m->rule;
		c->handle = m->rule ? m->rule->handle : 0;
		c->table_handle = m->chain->table_handle;
		c->kind = kind_of(m->verdict);
		c->has_counter = m->rule ? m->rule->prog.counter : m->base->has_counter;
		c->queue = m->rule && rule_queues(m->rule);
		c->delta = -1;
		c->text = nfdrop_str(!m->rule ? "policy drop" : m->rule->text,
				     NFDROP_TEXT_SIZE);
		for (int j = 0; j < s->n && !dup; j++)
			dup = same_ev_cand(&s->c[j], c);
		if (!dup) {
			s->n++;
			added++;
		}
	}
	return added;
}

/* walk bases in the order ord (indexes into bases and pkts) */
static int walk_order(const struct nfr_ruleset *rs, const struct nfr_chain **bases,
		      const struct nfm_pkt **pkts, const int *ord, int nbases,
		      const char *dropper_type, const struct nfm_pkt *pkt, int nat_prio,
		      struct nfm_walk *w, struct ev_set *s)
{
	const struct nfr_chain *b[nbases ? nbases : 1];
	const struct nfm_pkt *p[nbases ? nbases : 1];

	for (int i = 0; i < nbases; i++) {
		b[i] = bases[ord[i]];
		p[i] = pkts[ord[i]];
	}
	nfm_walk_hook(rs, b, nbases, p, w);
	s->complete &= w->complete;
	return add_walk(w, dropper_type, pkt, nat_prio, s);
}

/*
 * Chains of one priority whose order is unknown (tie_unknown()): any of
 * them may have run first. Whether the packet passes the group does not
 * depend on its order, and a chain sees the packet most often when it
 * runs first, so walking once with each of them first gives every
 * candidate of every order.
 */
static void walk_ties(const struct nfr_ruleset *rs, const struct nfr_chain **bases,
		      const struct nfm_pkt **pkts, int nbases,
		      const char *dropper_type, const struct nfm_pkt *pkt, int nat_prio,
		      struct nfm_walk *w, struct ev_set *s)
{
	int ord[nbases ? nbases : 1];

	for (int g = 0, e; g < nbases; g = e) {
		for (e = g + 1; e < nbases && run_prio(bases[e]) == run_prio(bases[g]); e++)
			;
		if (!tie_unknown(bases, g, e))
			continue;
		for (int first = g + 1; first < e; first++) {
			int n = 0;

			for (int i = 0; i < g; i++)
				ord[n++] = i;
			ord[n++] = first;
			for (int i = g; i < nbases; i++)
				if (i != first)
					ord[n++] = i;
			if (walk_order(rs, bases, pkts, ord, nbases, dropper_type, pkt,
				       nat_prio, w, s))
				s->order_unknown = true;
		}
	}
}

/*
 * May the nat core at hook have changed the packet's addresses or ports
 * before the drop: not when the packet had no conntrack entry (invalid,
 * untracked: nothing to bind), nor when the entry's status, read at the
 * drop, has no NAT bit of the hook's manip (destination at prerouting
 * and output, source at input and postrouting): a binding that changes
 * the tuple sets it (nf_nat_setup_info()), and a null one changes nothing.
 */
static bool nat_may_rewrite(const struct nfm_pkt *p, const char *hook)
{
	bool dst = hook && (!strcmp(hook, "prerouting") || !strcmp(hook, "output"));

	if (p->ct_state & (NFM_CT_INVALID | NFM_CT_UNTRACKED))
		return false;
	if (p->ct_nat_known && !(p->ct_nat & (dst ? IPS_DST_NAT : IPS_SRC_NAT)))
		return false;
	return true;
}

/* does a rule of c rewrite the packet's headers (`ip daddr set`, any
 * payload statement: stateless NAT); mark: its mark instead (`meta mark
 * set`, xtables MARK, CONNMARK --restore-mark, TPROXY --tproxy-mark) */
static bool chain_rewrites(const struct nfr_chain *c, bool mark)
{
	static const char *const mark_ops[] = {
		"meta mark set", "MARK", "CONNMARK", "target TPROXY", NULL,
	};

	for (int j = 0; j < c->nrules; j++)
		for (int k = 0; k < c->rules[j].prog.nops; k++) {
			const struct nfm_op *o = &c->rules[j].prog.ops[k];

			if (!o->name)
				continue;
			if (!mark && o->type == NFM_OP_UNKNOWN && !strcmp(o->name, "payload set"))
				return true;
			for (int m = 0; mark && mark_ops[m]; m++)
				if (!strcmp(o->name, mark_ops[m]))
					return true;
		}
	return false;
}

/*
 * The last run priority among bases whose packets a rule may rewrite
 * (the base chain or a chain it reaches), INT_MIN for none. The event
 * saw the packet as rewritten: the chains up to that one (and the
 * rules of it before the rewrite) saw it as it was, which is not known.
 * mark: the same for the packet's mark.
 */
static int rewrite_prio(const struct nfr_ruleset *rs, const struct nfr_chain **bases,
			int nbases, bool mark)
{
	int last = INT_MIN;

	for (int i = 0; i < rs->nchains; i++) {
		if (!chain_rewrites(&rs->chains[i], mark))
			continue;
		for (int b = 0; b < nbases; b++)
			if (run_prio(bases[b]) > last && nfr_reaches(rs, bases[b], &rs->chains[i]))
				last = run_prio(bases[b]);
	}
	return last;
}

void ev_walk(const struct nfr_ruleset *rs, const struct nfr_chain **bases,
	     int nbases, const struct nfm_pkt *pkt, const char *dropper_type,
	     int nat_prio, const char *hookdev, struct ev_set *s)
{
	struct nfm_walk *w = calloc(1, sizeof(*w));
	const struct nfm_pkt *pkts[nbases ? nbases : 1];
	struct nfm_pkt pk[nbases ? nbases : 1];
	int ord[nbases ? nbases : 1];
	int rewritten, marked;
	bool notrack;

	memset(s, 0, sizeof(*s));
	if (!w)
		return;
	qsort(bases, nbases, sizeof(*bases), cmp_prio);
	ord[0] = 0;
	notrack = pkt->ct_state == NFM_CT_UNTRACKED && late_notrack(rs);
	rewritten = rewrite_prio(rs, bases, nbases, false);
	marked = rewrite_prio(rs, bases, nbases, true);
	if (nbases && nat_may_rewrite(pkt, nfr_hook_name(bases[0]->family, bases[0]->hook)) &&
	    rewritten < nat_prio)
		rewritten = nat_prio;

	for (int i = 0; i < nbases; i++) {
		pk[i] = *pkt;
		pkts[i] = &pk[i];
		ev_pkt_at_chain(bases[i], rewritten, marked, notrack, hookdev, &pk[i]);
		s->dev_unknown |= nfr_chain_sees_dev(bases[i], hookdev) < 0;
		ord[i] = i;
	}
	s->used = true;
	s->complete = true;
	walk_order(rs, bases, pkts, ord, nbases, dropper_type, pkt, nat_prio, w, s);
	snprintf(s->evaluated, sizeof(s->evaluated), "%s", w->evaluated);
	snprintf(s->unknown, sizeof(s->unknown), "%s", w->unknown);
	walk_ties(rs, bases, pkts, nbases, dropper_type, pkt, nat_prio, w, s);
	free(w);
}

/* ---- counters ---- */

struct ns_counters {
	unsigned int netns;
	bool have_lower, have_pre, have_post;
	struct nfm_counters lower, pre, post;
};

static struct ns_counters *nsc;
static int nnsc;

static struct ns_counters *nsc_get(unsigned int netns)
{
	struct ns_counters *n;

	for (int i = 0; i < nnsc; i++)
		if (nsc[i].netns == netns)
			return &nsc[i];
	n = realloc(nsc, (nnsc + 1) * sizeof(*n));
	if (!n)
		return NULL;
	nsc = n;
	n = &nsc[nnsc++];
	memset(n, 0, sizeof(*n));
	n->netns = netns;
	return n;
}

static bool snap(unsigned int netns, struct nfm_counters *out)
{
	int saved;

	nfm_counters_free(out);
	if (!netns || netns_enter(netns, &saved))
		return false;
	nfm_counters_read(out);
	netns_leave(saved);
	return out->valid;
}

void ev_counters_start(unsigned int netns)
{
	struct ns_counters *n = nsc_get(netns);

	if (n)
		n->have_lower = snap(netns, &n->lower);
}

void ev_counters_pre(unsigned int netns)
{
	struct ns_counters *n = nsc_get(netns);

	if (n && !n->have_pre)
		n->have_pre = snap(netns, &n->pre);
}

void ev_counters_pre_all(void)
{
	for (int i = 0; i < nnsc; i++)
		ev_counters_pre(nsc[i].netns);
}

void ev_counters_post(unsigned int netns)
{
	struct ns_counters *n = nsc_get(netns);

	if (n)
		n->have_post = snap(netns, &n->post);
}

void ev_counters_advance(void)
{
	for (int i = 0; i < nnsc; i++) {
		struct ns_counters *n = &nsc[i];

		if (n->have_pre) {
			nfm_counters_free(&n->lower);
			n->lower = n->pre;
			memset(&n->pre, 0, sizeof(n->pre));
			n->have_lower = true;
			n->have_pre = false;
		}
		nfm_counters_free(&n->post);
		n->have_post = false;
	}
}

/* ---- weighing ---- */

static int alive(const struct ev_set *s)
{
	int n = 0;

	for (int i = 0; i < s->n; i++)
		n += s->c[i].alive;
	return n;
}

/* keep the candidates keep() accepts, unless none would be left */
static bool narrow(struct ev_set *s, bool (*keep)(const struct ev_cand *, void *),
		   void *arg)
{
	bool was[EV_MAX_CANDS], any = false, changed = false;

	for (int i = 0; i < s->n; i++) {
		was[i] = s->c[i].alive;
		if (was[i] && keep(&s->c[i], arg))
			any = true;
	}
	if (!any) {
		s->contradicted = true;	/* not used, and nothing is certain */
		return false;
	}
	for (int i = 0; i < s->n; i++)
		if (was[i] && !keep(&s->c[i], arg)) {
			s->c[i].alive = false;
			changed = true;
		}
	return changed;
}

static bool keep_reject(const struct ev_cand *c, void *arg)
{
	return c->kind == NFR_KIND_REJECT || c->kind == NFR_KIND_MAYBE;
}

static bool keep_not_reject(const struct ev_cand *c, void *arg)
{
	return c->kind != NFR_KIND_REJECT;
}

static bool keep_counted(const struct ev_cand *c, void *arg)
{
	return !c->has_counter || c->delta != 0;
}

/* counters of every survivor must hold at least the packets seen */
static bool counters_consistent(const struct ev_set *s, unsigned long long packets)
{
	unsigned long long sum = 0;

	for (int i = 0; i < s->n; i++) {
		if (!s->c[i].alive || !keep_counted(&s->c[i], NULL))
			continue;
		if (!s->c[i].has_counter || s->c[i].delta < 0)
			return true;	/* an uncounted survivor may hold the rest */
		sum += s->c[i].delta;
	}
	return sum >= packets;
}

static void weigh_counters(struct ev_set *s, unsigned int netns,
			   unsigned long long packets)
{
	struct ns_counters *n = nsc_get(netns);

	if (!n || !n->have_lower || !n->have_post)
		return;
	s->changed = nfm_counters_changed(&n->lower, &n->post);
	for (int i = 0; i < s->n; i++) {
		struct ev_cand *c = &s->c[i];

		if (c->has_counter)
			c->delta = nfm_counter_delta(&n->lower, &n->post, c->engine,
						     c->family, c->table, c->chain,
						     c->handle, c->table_handle);
	}
	s->counters = true;
	if (!counters_consistent(s, packets))
		return;
	s->counters_ruled = narrow(s, keep_counted, NULL);
}

/*
 * Weigh the evidence for packets (rejected of them with a seen REJECT
 * reply; reject_complete: every REJECT is seen) dropped in netns: marks
 * the candidates still alive, returns how many.
 */
static int ev_weigh(struct ev_set *s, unsigned int netns, unsigned long long packets,
	     unsigned long long rejected, bool reject_complete)
{
	for (int i = 0; i < s->n; i++) {
		s->c[i].alive = true;
		s->c[i].delta = -1;
	}
	s->counters = s->counters_ruled = s->contradicted = s->changed = false;
	/* a reply was seen for every packet: a REJECT did it; none, where
	 * every REJECT is seen: no REJECT did (the rate limiter only stops
	 * replies, not REJECTs, so no reply proves nothing elsewhere) */
	if (rejected && rejected == packets)
		narrow(s, keep_reject, NULL);
	else if (!rejected && reject_complete)
		narrow(s, keep_not_reject, NULL);
	weigh_counters(s, netns, packets);
	if (s->counters && !counters_consistent(s, packets))
		s->contradicted = true;
	return alive(s);
}

/* ---- the row ---- */

/* the candidates still alive, as the output lists them */
static void cands_from_ev(struct nfdrop_row *r)
{
	r->ncands = 0;
	for (int i = 0; i < r->ev.n; i++) {
		const struct ev_cand *e = &r->ev.c[i];
		struct nfdrop_cand *c = NULL;
		struct nfdrop_cand_rule *cr;

		if (!e->alive)
			continue;
		for (int j = 0; j < r->ncands && !c; j++)
			if (r->cands[j].engine == e->engine && r->cands[j].family == e->family &&
			    !strcmp(r->cands[j].table, e->table) &&
			    !strcmp(r->cands[j].chain, e->base))
				c = &r->cands[j];
		if (!c) {
			if (r->ncands == NFDROP_MAX_CANDS)
				continue;
			c = &r->cands[r->ncands++];
			memset(c, 0, sizeof(*c));
			c->engine = e->engine;
			c->family = e->family;
			c->table = e->table;
			c->chain = e->base;
			c->prio = e->base_prio;
			c->policy = e->base_policy;
		}
		if (e->policy) {
			c->policy_cand = true;
			continue;
		}
		if (c->nrules == NFDROP_MAX_HITS)
			continue;
		cr = &c->rules[c->nrules++];
		cr->chain = e->chain;
		cr->handle = e->handle;
		cr->kind = e->kind;
		cr->text = e->text;
	}
}

/* rule and verdict from the evidence: certain only with one survivor */
void ev_settle_row(struct nfdrop_row *r, unsigned long long packets,
		   unsigned long long rejected, bool reject_complete)
{
	int n = ev_weigh(&r->ev, r->netns, packets, rejected, reject_complete);
	const struct ev_cand *f = NULL;
	bool one_base = true, one_kind = true;

	for (int i = 0; i < r->ev.n; i++) {
		const struct ev_cand *c = &r->ev.c[i];

		if (!c->alive)
			continue;
		if (!f) {
			f = c;
			continue;
		}
		one_base &= c->engine == f->engine && c->family == f->family &&
			    !strcmp(c->table, f->table) && !strcmp(c->base, f->base);
		one_kind &= c->kind == f->kind && c->policy == f->policy;
	}
	r->engine = f->engine;
	r->table_family = f->family;
	snprintf(r->table, sizeof(r->table), "%s", f->table);
	snprintf(r->chain, sizeof(r->chain), "%s", f->base);
	r->prio = f->base_prio;
	r->policy = f->base_policy;
	r->chain_known = true;
	r->rule_known = !f->policy;
	snprintf(r->rule_chain, sizeof(r->rule_chain), "%s", f->policy ? "" : f->chain);
	r->handle = f->handle;
	snprintf(r->rule_text, sizeof(r->rule_text), "%s", f->policy ? "" : f->text);
	r->verdict = f->policy ? NFDROP_V_POLICY : f->queue ? NFDROP_V_QUEUE :
		     f->kind == NFR_KIND_REJECT ? NFDROP_V_REJECT :
		     f->kind == NFR_KIND_DROP ? NFDROP_V_DROP : NFDROP_V_UNKNOWN;
	r->inferred &= NFDROP_INF_HOOK;
	r->note = NULL;
	if (r->ev.contradicted)
		r->note = "the counters or REJECT replies fit no rule the packet can meet";
	if (n > 1 || !r->ev.complete || r->ev.contradicted) {
		r->inferred |= NFDROP_INF_RULE;
		if (!one_base || !r->ev.complete || r->ev.contradicted)
			r->inferred |= NFDROP_INF_TABLE | NFDROP_INF_CHAIN;
		if (!one_kind || !r->ev.complete || r->ev.contradicted)
			r->inferred |= NFDROP_INF_VERDICT;
		if (!r->ev.complete)
			r->note = "not every way through the ruleset could be followed";
		else if (r->ev.order_unknown && !r->ev.contradicted)
			r->note = "chains of one priority in several tables: the kernel "
				  "runs the one registered last first, which the ruleset "
				  "does not show";
	}
	/* a chain bound to devices the packet's is not known to be one of
	 * may not have seen it: the walk went past it, nothing is certain */
	if (r->ev.dev_unknown && r->source != NFDROP_SRC_FEXIT) {
		r->inferred |= NFDROP_INF_TABLE | NFDROP_INF_CHAIN | NFDROP_INF_RULE |
			       NFDROP_INF_VERDICT;
		r->note = "the packet's device is not known, and chains bound to "
			  "devices see only theirs";
	}
	/* a rule changed while these packets were dropped: only its own
	 * counter can still vouch for the survivor */
	if (r->ev.changed && !(r->inferred & NFDROP_INF_RULE) &&
	    (!f->has_counter || f->delta < 0)) {
		r->inferred |= NFDROP_INF_TABLE | NFDROP_INF_CHAIN | NFDROP_INF_RULE |
			       NFDROP_INF_VERDICT;
		r->note = "the ruleset changed while these packets were dropped";
	}
	/* rows across a reload say so, also where a counter vouches */
	if (r->ev.changed && (!r->note || r->ev.contradicted))
		r->note = r->inferred & NFDROP_INF_RULE ?
			  "the ruleset changed (reloaded?) while these packets were dropped" :
			  "the ruleset changed (reloaded?) while these packets were dropped; "
			  "the rule's own counter vouches for it";
	if (r->verdict == NFDROP_V_UNKNOWN)
		r->inferred |= NFDROP_INF_VERDICT;
	if (r->source == NFDROP_SRC_FEXIT)
		r->inferred &= ~(NFDROP_INF_TABLE | NFDROP_INF_CHAIN);	/* the kernel named them */
	if (rejected && rejected == packets) {
		r->verdict = NFDROP_V_REJECT;
		r->inferred &= ~NFDROP_INF_VERDICT;
	}
	cands_from_ev(r);
}

/* ---- across rows ---- */

/* the counted candidate a certain row names, NULL when none */
static const struct ev_cand *named_counted(const struct nfdrop_row *r)
{
	if (!r->ev.used || !r->ev.counters || (r->inferred & NFDROP_INF_RULE))
		return NULL;
	for (int i = 0; i < r->ev.n; i++) {
		const struct ev_cand *c = &r->ev.c[i];

		if (c->alive && c->has_counter && c->delta >= 0)
			return c;
	}
	return NULL;
}

/*
 * Each row's counters are checked for its own packets only; rows of other
 * packets can name the same rule (a rule deleted while tracing leaves its
 * packets to the policy). A rule whose counter moved less than the
 * packets of all certain rows naming it is not certain for any of them.
 */
void ev_check_rows(struct nfdrop_row *rows, int n)
{
	for (int i = 0; i < n; i++) {
		const struct ev_cand *a = named_counted(&rows[i]);
		unsigned long long sum = 0;

		if (!a)
			continue;
		for (int j = 0; j < n; j++) {
			const struct ev_cand *b = named_counted(&rows[j]);

			if (b && rows[j].netns == rows[i].netns && same_ev_cand(a, b))
				sum += rows[j].packets;
		}
		if (sum <= (unsigned long long)a->delta)
			continue;
		for (int j = n - 1; j >= 0; j--) {
			const struct ev_cand *b = named_counted(&rows[j]);
			struct nfdrop_row *r = &rows[j];

			if (!b || r->netns != rows[i].netns || !same_ev_cand(a, b))
				continue;
			r->inferred |= NFDROP_INF_RULE | NFDROP_INF_VERDICT;
			if (r->source != NFDROP_SRC_FEXIT)
				r->inferred |= NFDROP_INF_TABLE | NFDROP_INF_CHAIN;
			r->note = "the rule's counter moved less than the packets named for "
				  "it: the ruleset changed while tracing?";
		}
	}
}
