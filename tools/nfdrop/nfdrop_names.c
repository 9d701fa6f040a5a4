// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nfdrop: from a kernel key to a named hook, table, chain, rule and
 * verdict. The fexit path names the table and chain from the key itself;
 * the inferred path reads the hook from the kernel stack and the chains
 * registered there from the namespace's ruleset, marking what it had to
 * infer. Rulesets are read per network namespace, in that namespace.
 */
#include <limits.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/types.h>
#include "nfdrop.h"
#include "nfdrop_names.h"
#include "nfdrop_row.h"
#include "nfdrop_trace.h"
#include "lib/cli.h"
#include "lib/ksyms.h"
#include "lib/netns.h"
#include "nfrules.h"
#include "strpool.h"

#define RULESET_TTL_S	1
#define MAX_BASES	32

/* ---- what the kernel stack means ---- */

/* the function that ran the hook (the caller of nf_hook_slow) */
static const struct {
	const char *fn;
	int family;
	const char *hook;
	const char *hook2;	/* the same call site serves two hooks */
} hook_fns[] = {
	{ "ip_rcv", NFR_PROTO_IPV4, "prerouting", NULL },
	{ "ip_sublist_rcv", NFR_PROTO_IPV4, "prerouting", NULL },
	{ "ip_local_deliver", NFR_PROTO_IPV4, "input", NULL },
	{ "ip_forward", NFR_PROTO_IPV4, "forward", NULL },
	{ "__ip_local_out", NFR_PROTO_IPV4, "output", NULL },
	{ "ip_local_out", NFR_PROTO_IPV4, "output", NULL },
	{ "raw_send_hdrinc", NFR_PROTO_IPV4, "output", NULL },
	{ "ip_output", NFR_PROTO_IPV4, "postrouting", NULL },
	{ "ip_mc_output", NFR_PROTO_IPV4, "postrouting", NULL },
	{ "ipv6_rcv", NFR_PROTO_IPV6, "prerouting", NULL },
	{ "ip6_sublist_rcv", NFR_PROTO_IPV6, "prerouting", NULL },
	{ "ip6_input", NFR_PROTO_IPV6, "input", NULL },
	{ "ip6_forward", NFR_PROTO_IPV6, "forward", NULL },
	{ "__ip6_local_out", NFR_PROTO_IPV6, "output", NULL },
	{ "ip6_local_out", NFR_PROTO_IPV6, "output", NULL },
	{ "ip6_xmit", NFR_PROTO_IPV6, "output", NULL },
	{ "rawv6_send_hdrinc", NFR_PROTO_IPV6, "output", NULL },
	{ "ndisc_send_skb", NFR_PROTO_IPV6, "output", NULL },
	{ "mld_sendpack", NFR_PROTO_IPV6, "output", NULL },
	{ "igmp6_send", NFR_PROTO_IPV6, "output", NULL },
	{ "ip6_output", NFR_PROTO_IPV6, "postrouting", NULL },
	{ "arp_rcv", NFR_PROTO_ARP, "input", NULL },
	{ "arp_xmit", NFR_PROTO_ARP, "output", NULL },
	{ "br_handle_frame", NFR_PROTO_BRIDGE, "prerouting", NULL },
	{ "br_pass_frame_up", NFR_PROTO_BRIDGE, "input", NULL },
	{ "__br_forward", NFR_PROTO_BRIDGE, "forward", "output" },
	{ "br_forward_finish", NFR_PROTO_BRIDGE, "postrouting", NULL },
	/* bridge-netfilter (bridge-nf-call-iptables and friends): bridge
	 * hooks that run the IP and ARP hooks for bridged packets; family 0:
	 * the packet's */
	{ "br_nf_pre_routing", NFR_PROTO_IPV4, "prerouting", NULL },
	{ "br_nf_pre_routing_ipv6", NFR_PROTO_IPV6, "prerouting", NULL },
	{ "br_nf_forward_ip", 0, "forward", NULL },
	{ "br_nf_forward", 0, "forward", NULL },
	{ "br_nf_forward_arp", NFR_PROTO_ARP, "forward", NULL },
	{ "br_nf_post_routing", 0, "postrouting", NULL },
	/* ... and back to the bridge's own later hooks */
	{ "br_nf_hook_thresh", NFR_PROTO_BRIDGE, "prerouting", "forward" },
	{ "__netif_receive_skb_core", NFR_PROTO_NETDEV, "ingress", NULL },
	{ "__dev_queue_xmit", NFR_PROTO_NETDEV, "egress", NULL },
};

/* the function that called nft_do_chain: the table's family and type */
static const struct {
	const char *fn;
	int table_family;	/* 0: any family covering the hook's */
	const char *type;	/* NULL: any */
} chain_fns[] = {
	{ "nft_do_chain_ipv4", NFR_PROTO_IPV4, NULL },
	{ "nft_do_chain_ipv6", NFR_PROTO_IPV6, NULL },
	{ "nft_do_chain_inet", NFR_PROTO_INET, NULL },
	{ "nft_do_chain_inet_ingress", NFR_PROTO_INET, NULL },
	{ "nft_do_chain_arp", NFR_PROTO_ARP, NULL },
	{ "nft_do_chain_bridge", NFR_PROTO_BRIDGE, NULL },
	{ "nft_do_chain_netdev", NFR_PROTO_NETDEV, NULL },
	{ "nft_nat_do_chain", 0, "nat" },
	{ "nf_route_table_hook4", NFR_PROTO_IPV4, "route" },
	{ "nf_route_table_hook6", NFR_PROTO_IPV6, "route" },
	{ "nf_route_table_inet", NFR_PROTO_INET, "route" },
};

/* ---- rulesets, per network namespace, read in that namespace ---- */


static struct nfdrop_ns_rules *nsr;
static int nnsr;


static double since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - t->tv_sec + (now.tv_nsec - t->tv_nsec) / 1e9;
}

struct nfdrop_ns_rules *nfdrop_rules_for(const struct nfdrop_ctx *ctx, unsigned int inum,
					 enum nfdrop_rs_when when)
{
	struct nfdrop_ns_rules *e = NULL;
	int saved, err;

	for (int i = 0; i < nnsr; i++)
		if (nsr[i].inum == inum)
			e = &nsr[i];
	if (!e) {
		struct nfdrop_ns_rules *n = realloc(nsr, (nnsr + 1) * sizeof(*n));

		if (!n)
			return NULL;
		nsr = n;
		e = &nsr[nnsr++];
		memset(e, 0, sizeof(*e));
		e->inum = inum;
	}
	if (e->loaded && (when == NFDROP_RS_CACHED ||
			  since(&e->when) < (when == NFDROP_RS_TTL ? RULESET_TTL_S : 0.1)))
		return e;
	if (!inum || netns_enter(inum, &saved)) {
		e->stale = e->loaded;
		return e->loaded ? e : NULL;
	}
	if (e->loaded)
		nfr_free(&e->rs);
	err = nfr_load(&e->rs);
	netns_leave(saved);
	if (err && ctx->cli->verbose)
		cli_err("reading the ruleset of netns %u: %s", inum, e->rs.err);
	e->loaded = true;
	e->stale = false;
	clock_gettime(CLOCK_MONOTONIC, &e->when);
	return e;
}

/* ---- the candidates' strings (nfdrop_row.h) ---- */

static struct strpool strs;

const char *nfdrop_str(const char *s, size_t size)
{
	return strpool_get(&strs, s, size);
}

void nfdrop_strs_free(void)
{
	strpool_free(&strs);
}

/* ---- from a kernel key to a named hook, table, chain, rule, verdict ---- */


static const char *sym_name(const struct ksyms *ks, unsigned long addr, char *buf, int len)
{
	const struct ksym *s = addr ? ksyms_find(ks, addr - 1) : NULL;

	snprintf(buf, len, "%s", s ? s->name : "");
	return buf;
}

static void fill_cand(struct nfdrop_cand *c, const struct nfr_ruleset *rs,
		      const struct nfr_chain *ch)
{
	struct nfr_hit hits[NFDROP_MAX_HITS];
	int n = nfr_drop_rules(rs, ch, hits, NFDROP_MAX_HITS);

	memset(c, 0, sizeof(*c));
	c->engine = ch->engine;
	c->family = ch->family;
	c->table = nfdrop_str(ch->table, NFDROP_TABLE_SIZE);
	c->chain = nfdrop_str(ch->name, NFDROP_CHAIN_SIZE);
	c->prio = ch->prio;
	c->policy = ch->policy;
	c->nrules = n;
	for (int i = 0; i < n && i < NFDROP_MAX_HITS; i++) {
		c->rules[i].chain = nfdrop_str(hits[i].chain->name, NFDROP_CHAIN_SIZE);
		c->rules[i].handle = hits[i].rule->handle;
		c->rules[i].kind = hits[i].rule->kind;
		c->rules[i].text = nfdrop_str(hits[i].rule->text, NFDROP_TEXT_SIZE);
	}
}

static bool can_drop(const struct nfdrop_cand *c)
{
	return c->policy == NFR_POLICY_DROP || c->nrules > 0;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct nfdrop_cand *x = a, *y = b;

	return x->prio < y->prio ? -1 : x->prio > y->prio;
}

/* the chain the kernel named (fexit), found in the ruleset; nft names
 * longer than NFD_CHAIN_LEN - 1 were cut, so a prefix identifies them */
static const struct nfr_chain *find_named(const struct nfr_ruleset *rs,
					  int engine, int family,
					  const char *table, const char *chain)
{
	for (int i = 0; i < rs->nchains; i++) {
		const struct nfr_chain *c = &rs->chains[i];

		if (c->engine != engine || (family && c->family != family) || !c->base)
			continue;
		if (strncmp(c->table, table, NFD_TABLE_LEN - 1) ||
		    strncmp(c->name, chain, NFD_CHAIN_LEN - 1))
			continue;
		return c;
	}
	return NULL;
}

/* rule and verdict within one chain that certainly or probably dropped */
static void settle_chain(struct nfdrop_row *r, const struct nfdrop_cand *c, int policy,
			 bool reject_complete)
{
	int keep[NFDROP_MAX_HITS], nkeep = 0;
	int n = c->nrules < NFDROP_MAX_HITS ? c->nrules : NFDROP_MAX_HITS;
	bool all_rejected = r->rejected && r->rejected == r->packets;

	/* the kernel saw a reply for every packet: only REJECT rules fit;
	 * none at all where every REJECT is seen: no REJECT rule did it */
	for (int i = 0; i < n; i++) {
		int k = c->rules[i].kind;

		if (all_rejected && k == NFR_KIND_DROP)
			continue;
		if (reject_complete && !r->rejected && k == NFR_KIND_REJECT)
			continue;
		keep[nkeep++] = i;
	}
	if (c->nrules > NFDROP_MAX_HITS)
		nkeep = c->nrules;	/* too many to tell */
	r->policy = policy;
	if (nkeep == 0 && policy == NFR_POLICY_DROP && !all_rejected) {
		r->verdict = NFDROP_V_POLICY;
		return;
	}
	if (nkeep >= 1 && nkeep <= NFDROP_MAX_HITS) {
		const struct nfdrop_cand_rule *cr = &c->rules[keep[0]];

		r->rule_known = true;
		snprintf(r->rule_chain, sizeof(r->rule_chain), "%s", cr->chain);
		r->handle = cr->handle;
		snprintf(r->rule_text, sizeof(r->rule_text), "%s", cr->text);
		r->verdict = cr->kind == NFR_KIND_REJECT ? NFDROP_V_REJECT :
			     cr->kind == NFR_KIND_DROP ? NFDROP_V_DROP : NFDROP_V_UNKNOWN;
		if (nkeep > 1 || policy == NFR_POLICY_DROP || cr->kind == NFR_KIND_MAYBE)
			r->inferred |= NFDROP_INF_RULE | NFDROP_INF_VERDICT;
		if (all_rejected) {
			r->verdict = NFDROP_V_REJECT;
			r->inferred &= ~NFDROP_INF_VERDICT;
		}
		return;
	}
	r->verdict = all_rejected ? NFDROP_V_REJECT : NFDROP_V_UNKNOWN;
	if (r->verdict == NFDROP_V_UNKNOWN)
		r->inferred |= NFDROP_INF_VERDICT;	/* not even inferred: unknown */
}

/* the nat core's priority at r's hook where a nat chain of any table
 * serves it, else INT_MIN (see ev_walk()) */
static int nat_at_hook(const struct nfr_ruleset *rs, const struct nfdrop_row *r)
{
	for (int i = 0; i < rs->nchains; i++) {
		const struct nfr_chain *c = &rs->chains[i];
		const char *h = c->base ? nfr_hook_name(c->family, c->hook) : NULL;

		if (h && !strcmp(h, r->hook) && ev_is_nat(c) &&
		    (!r->pf || nfr_family_covers(c->family, r->pf)))
			return ev_nat_core_prio(r->hook);
	}
	return INT_MIN;
}

/* the device a per-device hook (ingress, egress) ran for: skb->dev at
 * the drop, by its name in the packet's namespace; NULL when not known
 * or not such a hook */
static const char *hook_dev(const struct nfd_key *k, const struct nfdrop_row *r,
			    char *buf)
{
	if (strcmp(r->hook, "ingress") && strcmp(r->hook, "egress"))
		return NULL;
	return ev_dev_name(k->netns, k->dev_ifindex, buf) ? buf : NULL;
}

/* the packet's own way through the chains of its hook (r->ev) */
static void walk_packet(const struct nfd_key *k, const struct nfr_ruleset *rs,
			const struct nfr_chain **bases, int nbases,
			const char *dropper_type, struct nfdrop_row *r)
{
	char dev[IF_NAMESIZE];
	struct nfm_pkt pkt;

	r->ev.used = false;
	r->unwalked = NFDROP_UNWALKED_NO;
	if (!nbases)
		return;
	if (!ev_packet(k, r->pf, r->hook, &pkt)) {
		/* an IP packet without its signature (the map was full) */
		r->unwalked = k->sig ? NFDROP_UNWALKED_NO : NFDROP_UNWALKED_NOSIG;
		return;
	}
	ev_walk(rs, bases, nbases, &pkt, dropper_type, nat_at_hook(rs, r),
		hook_dev(k, r, dev), &r->ev);
	if (r->queue)
		ev_keep_queue(&r->ev);
	if (!r->ev.n) {
		/* the ruleset has changed: old method, nothing certain */
		r->ev.used = false;
		r->unwalked = NFDROP_UNWALKED_NOMATCH;
	}
}

/* what the stack told of the chain for the inferred path */
struct stack_hint {
	const char *hook2;	/* a second hook the call site serves */
	const char *need_type;	/* the table type nft_do_chain's caller runs */
	int need_family;	/* ... and its family (0: any) */
	bool chain_fn_known;
	bool any_engine;	/* the stack was an earlier packet's: chains of
				 * both engines are candidates */
	int engine;		/* NFR_ENGINE_NFT: nft_do_chain was on the stack */
};

/* fexit: the kernel named the table and chain */
static void names_fexit(const struct nfd_key *k, struct nfdrop_row *r)
{
	const char *h = nfr_hook_name(k->pf, k->hook);

	r->source = NFDROP_SRC_FEXIT;
	r->pf = k->pf;
	snprintf(r->hook, sizeof(r->hook), "%s", h ? h : "");
	r->engine = k->source == NFD_SRC_NFT ? NFR_ENGINE_NFT : NFR_ENGINE_LEGACY;
	r->table_family = k->table_family;
	snprintf(r->table, sizeof(r->table), "%.*s", NFD_TABLE_LEN, k->table);
	if (r->engine == NFR_ENGINE_NFT) {
		snprintf(r->chain, sizeof(r->chain), "%.*s", NFD_CHAIN_LEN, k->chain);
	} else {
		/* legacy base chains are named after their hook */
		snprintf(r->chain, sizeof(r->chain), "%s", h ? h : "?");
		for (char *p = r->chain; *p; p++)
			*p = *p >= 'a' && *p <= 'z' ? *p - 32 : *p;
	}
	r->chain_known = true;
}

/* kfree_skb + stack: the hook from nf_hook_slow's caller, the table's
 * family and type from nft_do_chain's */
static void names_stack(const struct nfdrop_ctx *ctx, const struct nfd_key *k, struct nfdrop_row *r,
			struct stack_hint *sh)
{
	char fn[64];

	r->source = NFDROP_SRC_STACK;
	sym_name(ctx->ksyms, k->hook_ret, r->hook_fn, sizeof(r->hook_fn));
	/* the compiler's copies (br_nf_forward_ip.part.0, .cold, .isra.0)
	 * are the function's */
	r->hook_fn[strcspn(r->hook_fn, ".")] = 0;
	for (size_t i = 0; i < sizeof(hook_fns) / sizeof(hook_fns[0]); i++) {
		if (strcmp(hook_fns[i].fn, r->hook_fn))
			continue;
		r->pf = hook_fns[i].family;
		snprintf(r->hook, sizeof(r->hook), "%s", hook_fns[i].hook);
		sh->hook2 = hook_fns[i].hook2;
		if (sh->hook2)
			r->inferred |= NFDROP_INF_HOOK;
	}
	if (!r->pf)
		r->pf = k->pf == 4 ? NFR_PROTO_IPV4 : k->pf == 6 ? NFR_PROTO_IPV6 : 0;
	if (k->chain_ret) {
		sh->engine = NFR_ENGINE_NFT;
		sym_name(ctx->ksyms, k->chain_ret, fn, sizeof(fn));
		for (size_t i = 0; i < sizeof(chain_fns) / sizeof(chain_fns[0]); i++) {
			if (strcmp(chain_fns[i].fn, fn))
				continue;
			sh->need_family = chain_fns[i].table_family;
			sh->need_type = chain_fns[i].type;
			sh->chain_fn_known = true;
		}
	}
	/* no nft_do_chain on the stack: iptables-legacy (its traversal
	 * returned before nf_hook_slow freed), or conntrack/queue */
	r->engine = sh->engine;
}

/* the fexit path in the ruleset: the named chain and its drop rules */
static void names_named_chain(const struct nfd_key *k, const struct nfr_ruleset *rs,
			      struct nfdrop_row *r)
{
	const struct nfr_chain *ch = find_named(rs, r->engine, r->table_family,
						 r->table, r->chain);

	if (!ch) {
		r->note = "chain no longer in the ruleset";
		r->settle_policy = r->engine == NFR_ENGINE_NFT ? k->policy : -1;
		return;
	}
	r->ncands = 1;
	fill_cand(&r->cands[0], rs, ch);
	r->prio = ch->prio;
	r->settle_policy = r->engine == NFR_ENGINE_NFT ? k->policy : ch->policy;
	walk_packet(k, rs, &ch, 1, NULL, r);
}

/* the inferred path: base chains at this hook that could have dropped the
 * packet, the first by priority named, the others candidates */
static void names_inferred(const struct nfd_key *k, const struct nfr_ruleset *rs,
			   const struct stack_hint *hint, struct nfdrop_row *r)
{
	const struct nfr_chain *bases[MAX_BASES];
	struct stack_hint shc = *hint, *sh = &shc;
	char dev[IF_NAMESIZE];
	const char *hookdev = hook_dev(k, r, dev);
	int nbases = 0;

	/*
	 * A path taken from the cache (NFD_F_PATH_CACHED) is an earlier
	 * packet's: its hook is this packet's (the path signature tells
	 * hooks apart), but which table dropped depends on the packet, and
	 * nothing in the signature names it. So nft_do_chain's caller (the
	 * table's family and type, nftables or iptables-legacy) is not this
	 * packet's to tell: every chain of the hook is a candidate and the
	 * packet's own walk and the counters decide.
	 */
	if ((k->flags & NFD_F_PATH_CACHED) || r->queue) {
		sh->need_type = NULL;
		sh->need_family = 0;
		sh->chain_fn_known = false;
		sh->any_engine = true;
	}

	for (int i = 0; i < rs->nchains; i++) {
		const struct nfr_chain *ch = &rs->chains[i];
		const char *h;
		struct nfdrop_cand *c = &r->cands[r->ncands];

		if (!ch->base || nfdrop_trace_is_table(ch->table))
			continue;
		if (!sh->any_engine &&
		    (sh->engine ? ch->engine != sh->engine : ch->engine != NFR_ENGINE_LEGACY))
			continue;
		/* without the stack's word: the families whose chains run
		 * at the hook (inet ingress chains at netdev ingress) */
		if (sh->need_family ? ch->family != sh->need_family :
		    r->pf && !nfr_family_covers(ch->family, r->pf) &&
		    !(r->pf == NFR_PROTO_NETDEV && ch->family == NFR_PROTO_INET))
			continue;
		if (sh->need_type && (!ch->type || strcmp(ch->type, sh->need_type)))
			continue;
		h = nfr_hook_name(ch->family, ch->hook);
		if (r->hook[0] && (!h || (strcmp(h, r->hook) &&
					  (!sh->hook2 || strcmp(h, sh->hook2)))))
			continue;
		/* bound to other devices: it never saw the packet */
		if (nfr_chain_sees_dev(ch, hookdev) == 0)
			continue;
		r->dev_unknown |= nfr_chain_sees_dev(ch, hookdev) < 0;
		if (nbases < MAX_BASES)
			bases[nbases++] = ch;
		if (r->ncands == NFDROP_MAX_CANDS)
			continue;
		fill_cand(c, rs, ch);
		if (can_drop(c))
			r->ncands++;
	}
	qsort(r->cands, r->ncands, sizeof(r->cands[0]), cmp_cand);
	/* two hooks share the call site (bridge forward/output): no walk */
	if (!sh->hook2)
		walk_packet(k, rs, bases, nbases, sh->chain_fn_known ?
			    (sh->need_type ? sh->need_type : "filter") : NULL, r);
	if (!r->ncands) {
		r->note = sh->engine ? "no chain at this hook can drop now (ruleset changed?)" :
			  "no nftables traversal on the stack and no iptables-legacy "
			  "chain that drops: conntrack, queue or a changed ruleset";
		r->inferred |= NFDROP_INF_TABLE | NFDROP_INF_CHAIN;
		return;
	}
	r->engine = r->cands[0].engine;
	r->table_family = r->cands[0].family;
	snprintf(r->table, sizeof(r->table), "%s", r->cands[0].table);
	snprintf(r->chain, sizeof(r->chain), "%s", r->cands[0].chain);
	r->prio = r->cands[0].prio;
	r->chain_known = true;
	r->settle_policy = r->cands[0].policy;
	if (r->ncands > 1)
		r->inferred |= NFDROP_INF_TABLE | NFDROP_INF_CHAIN;
}

void nfdrop_names(const struct nfdrop_ctx *ctx, const struct nfd_key *k,
		  enum nfdrop_rs_when when, struct nfdrop_row *r)
{
	struct stack_hint sh = {};
	struct nfdrop_ns_rules *nr;

	memset(r, 0, sizeof(*r));
	r->ct_states = ev_ct_state(k);
	r->netns = k->netns;
	r->policy = -1;
	netns_name(k->netns, r->netns_name, sizeof(r->netns_name));
	sym_name(ctx->ksyms, k->location, r->location, sizeof(r->location));
	/* the BPF side takes nf_queue()'s frees only of queue verdicts */
	r->queue = !strcmp(r->location, "nf_queue");
	if (k->source == NFD_SRC_NFT || k->source == NFD_SRC_IPT ||
	    k->source == NFD_SRC_IP6T)
		names_fexit(k, r);
	else
		names_stack(ctx, k, r, &sh);

	nr = nfdrop_rules_for(ctx, k->netns, when);
	if (!nr) {
		r->note = "network namespace not found: ruleset unknown";
		if (!r->chain_known)
			r->inferred |= NFDROP_INF_TABLE | NFDROP_INF_CHAIN;
		return;
	}
	if (nr->stale)
		r->note = "network namespace gone: ruleset as read earlier";
	if (r->chain_known)
		names_named_chain(k, &nr->rs, r);
	else
		names_inferred(k, &nr->rs, &sh, r);
}

/* rule and verdict, now that the counts are known */
void nfdrop_settle(const struct nfdrop_ctx *ctx, struct nfdrop_row *r, unsigned long long packets,
		   unsigned long long rejected)
{
	bool all_rejected = rejected && rejected == packets;

	r->packets = packets;
	r->rejected = rejected;
	if (r->ev.used) {
		ev_settle_row(r, packets, rejected, ctx->reject_complete);
		return;
	}
	if (!r->ncands) {
		/* chain unknown, or named by the kernel but gone from the ruleset */
		r->verdict = all_rejected ? NFDROP_V_REJECT :
			     r->chain_known && r->settle_policy == NFR_POLICY_ACCEPT ?
			     NFDROP_V_DROP : NFDROP_V_UNKNOWN;
		if (!all_rejected)
			r->inferred |= NFDROP_INF_VERDICT;
		return;
	}
	settle_chain(r, &r->cands[0], r->settle_policy, ctx->reject_complete);
	if (r->queue) {
		/* no queue rule the packet meets: which one is not known */
		r->verdict = NFDROP_V_QUEUE;
		r->rule_known = false;
		r->inferred |= NFDROP_INF_RULE;
	}
	/* no walk vouches for it: the rule is what the ruleset as read now
	 * has there, not what dropped (a reload, a packet without its
	 * signature) */
	if (r->unwalked) {
		r->inferred |= NFDROP_INF_RULE | NFDROP_INF_VERDICT;
		if (r->source != NFDROP_SRC_FEXIT)
			r->inferred |= NFDROP_INF_TABLE | NFDROP_INF_CHAIN;
		if (all_rejected)
			r->inferred &= ~NFDROP_INF_VERDICT;
		r->note = r->unwalked == NFDROP_UNWALKED_NOSIG ?
			  "the packet was not kept (too many signatures): its rule is a guess" :
			  "the packet meets no drop rule of the ruleset as read now: it changed?";
	}
	if (r->queue)
		r->inferred &= ~NFDROP_INF_VERDICT;	/* nf_queue() freed it */
	if (r->ncands > 1) {
		r->inferred |= NFDROP_INF_VERDICT;
		if (r->rule_known)
			r->inferred |= NFDROP_INF_RULE;
		if (all_rejected)
			r->inferred &= ~NFDROP_INF_VERDICT;
	}
	if (r->dev_unknown) {
		r->inferred |= NFDROP_INF_TABLE | NFDROP_INF_CHAIN | NFDROP_INF_RULE |
			       NFDROP_INF_VERDICT;
		r->note = "the packet's device is not known, and chains bound to "
			  "devices see only theirs";
	}
}

void nfdrop_resolve(const struct nfdrop_ctx *ctx, const struct nfd_key *k,
		    unsigned long long packets, unsigned long long rejected,
		    enum nfdrop_rs_when when, struct nfdrop_row *r)
{
	nfdrop_names(ctx, k, when, r);
	nfdrop_settle(ctx, r, packets, rejected);
}

