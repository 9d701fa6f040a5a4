// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tools/nfdrop/nfmatch.c: one packet through a ruleset built in memory
 * (iptables-save lines, a verdict map on a concatenation, interval sets),
 * jumps, gotos and returns followed, what is not understood both ways. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/xt_conntrack.h>
#include <libnftnl/expr.h>
#include "nfrules.h"
#include "nfmatch.h"
#include "tap.h"

static struct nfr_ruleset rs;

static struct nfr_chain *chain(const char *name, bool base, int policy)
{
	struct nfr_chain *c;

	rs.chains = realloc(rs.chains, (rs.nchains + 1) * sizeof(*c));
	c = &rs.chains[rs.nchains++];
	memset(c, 0, sizeof(*c));
	c->engine = NFR_ENGINE_LEGACY;
	c->family = NFR_PROTO_IPV4;
	c->table = strdup("filter");
	c->name = strdup(name);
	c->base = base;
	c->policy = base ? policy : -1;
	return c;
}

static bool is_chain(const char *name, void *arg)
{
	return nfr_chain_find(&rs, NFR_ENGINE_LEGACY, NFR_PROTO_IPV4, "filter", name);
}

/* "-A CHAIN ..." appended to its chain; returns the rule's position */
static int rule(const char *line)
{
	char name[64];
	struct nfr_chain *c;
	struct nfr_rule *r;

	sscanf(line, "-A %63s", name);
	c = nfr_chain_find(&rs, NFR_ENGINE_LEGACY, NFR_PROTO_IPV4, "filter", name);
	c->rules = realloc(c->rules, (c->nrules + 1) * sizeof(*r));
	r = &c->rules[c->nrules++];
	memset(r, 0, sizeof(*r));
	r->handle = c->nrules;
	r->text = strdup(line);
	nfm_compile_legacy(&r->prog, NFR_PROTO_IPV4, line, is_chain, NULL);
	return c->nrules;
}

static struct nfm_pkt udp(const char *src, int sport, int dport)
{
	struct nfm_pkt p = { .family = 4, .l4proto = 17, .sport = sport,
			     .dport = dport, .addrs_known = true, .iif_known = true };

	inet_pton(AF_INET, src, p.saddr);
	inet_pton(AF_INET, "10.210.0.2", p.daddr);
	strcpy(p.iifname, "veth-b");
	return p;
}

/* candidates as "CHAIN/POS,...", policy as "CHAIN/policy" */
static const char *walk(const char *base, const struct nfm_pkt *p, bool *complete)
{
	static char out[256];
	const struct nfr_chain *b = nfr_chain_find(&rs, NFR_ENGINE_LEGACY,
						   NFR_PROTO_IPV4, "filter", base);
	const struct nfm_pkt *pkts[1] = { p };
	struct nfm_walk w;
	size_t o = 0;

	nfm_walk_hook(&rs, &b, 1, pkts, &w);
	out[0] = 0;
	for (int i = 0; i < w.ncands; i++) {
		if (w.cands[i].rule)
			o += snprintf(out + o, sizeof(out) - o, "%s%s/%llu", i ? "," : "",
				      w.cands[i].chain->name, w.cands[i].rule->handle);
		else
			o += snprintf(out + o, sizeof(out) - o, "%s%s/policy", i ? "," : "",
				      w.cands[i].chain->name);
	}
	if (complete)
		*complete = w.complete;
	return out;
}

static void test_user_chain(void)
{
	struct nfm_pkt p = udp("10.77.0.1", 40000, 4791);
	bool complete;

	chain("INPUT", true, NFR_POLICY_ACCEPT);
	chain("ROCE", false, -1);
	rule("-A INPUT -s 10.99.0.0/16 -j DROP");
	rule("-A INPUT -p udp -m udp --dport 4791 -j ROCE");
	rule("-A ROCE -p udp -m udp --sport 1:1000 -j DROP");
	rule("-A ROCE -p udp -j REJECT --reject-with icmp-port-unreachable");
	tap_ok(!strcmp(walk("INPUT", &p, &complete), "ROCE/2") && complete,
	       "ephemeral sport from 10.77.0.1: only the REJECT (%s)", walk("INPUT", &p, NULL));
	p.sport = 999;
	tap_ok(!strcmp(walk("INPUT", &p, NULL), "ROCE/1"),
	       "sport 999: the range rule (%s)", walk("INPUT", &p, NULL));
	p = udp("10.99.3.4", 40000, 4791);
	tap_ok(!strcmp(walk("INPUT", &p, NULL), "INPUT/1"),
	       "10.99.3.4: the /16 rule first (%s)", walk("INPUT", &p, NULL));
	p = udp("10.77.0.1", 40000, 4792);
	tap_ok(!strcmp(walk("INPUT", &p, NULL), ""),
	       "port 4792: no rule can drop it (%s)", walk("INPUT", &p, NULL));
}

static void test_not_understood(void)
{
	struct nfm_pkt p = udp("10.77.0.1", 40000, 4791);
	bool complete;

	chain("IN2", true, NFR_POLICY_DROP);
	chain("SUB", false, -1);
	rule("-A IN2 -i veth-x -j DROP");
	rule("-A IN2 -m conntrack --ctstate NEW -j SUB");
	rule("-A IN2 -i veth+ -p udp -j ACCEPT");
	rule("-A SUB -p tcp -j DROP");
	rule("-A SUB -j RETURN");
	rule("-A SUB -j DROP");
	tap_ok(!strcmp(walk("IN2", &p, &complete), "") && complete,
	       "ctstate both ways, RETURN back, veth+ accepts: no drop (%s)",
	       walk("IN2", &p, NULL));
	strcpy(p.iifname, "eth0");
	tap_ok(!strcmp(walk("IN2", &p, NULL), "IN2/policy"),
	       "eth0 is not veth+: the policy (%s)", walk("IN2", &p, NULL));
	strcpy(p.iifname, "veth-x");
	tap_ok(!strcmp(walk("IN2", &p, NULL), "IN2/1"),
	       "veth-x: the first rule, certain (%s)", walk("IN2", &p, NULL));
	chain("IN3", true, NFR_POLICY_ACCEPT);
	rule("-A IN3 -m conntrack --ctstate INVALID -j DROP");
	rule("-A IN3 -p udp -j DROP");
	p = udp("10.77.0.1", 40000, 4791);
	tap_ok(!strcmp(walk("IN3", &p, NULL), "IN3/1,IN3/2"),
	       "a match not understood leaves both (%s)", walk("IN3", &p, NULL));
}

/* the two sets of test_vmap_and_intervals: a verdict map "svc" on
 * meta l4proto . th dport (udp 4791: goto VROCE, udp 5000: drop) and an
 * interval set "low" of ports 1-1000 */
static void vmap_sets(void)
{
	struct nfm_set *s;

	rs.sets = calloc(2, sizeof(*rs.sets));
	rs.nsets = 2;
	s = &rs.sets[0];
	s->family = NFR_PROTO_IPV4;
	s->table = strdup("filter");
	s->name = strdup("svc");
	s->flags = NFT_SET_MAP | NFT_SET_CONCAT;
	s->key_len = 8;
	s->vmap = true;
	s->nelems = 2;
	s->elems = calloc(2, sizeof(*s->elems));
	s->elems[0].key[0] = 17;
	s->elems[0].key[4] = 4791 >> 8;
	s->elems[0].key[5] = 4791 & 0xff;
	s->elems[0].verdict = NFM_V_GOTO;
	s->elems[0].chain = strdup("VROCE");
	s->elems[1].key[0] = 17;
	s->elems[1].key[4] = 5000 >> 8;
	s->elems[1].key[5] = 5000 & 0xff;
	s->elems[1].verdict = NFM_V_DROP;
	s = &rs.sets[1];
	s->family = NFR_PROTO_IPV4;
	s->table = strdup("filter");
	s->name = strdup("low");
	s->flags = NFT_SET_INTERVAL;
	s->key_len = 2;
	s->nelems = 2;
	s->elems = calloc(2, sizeof(*s->elems));
	s->elems[0].key[1] = 1;				/* 1 */
	s->elems[1].key[0] = 1001 >> 8;			/* 1001, exclusive end */
	s->elems[1].key[1] = 1001 & 0xff;
	s->elems[1].interval_end = true;
}

/* a vmap on meta l4proto . th dport, and an interval set of ports */
static void test_vmap_and_intervals(void)
{
	struct nfr_chain *in, *roce;
	struct nfm_set *s;
	struct nfm_op *o;
	struct nfm_pkt p = udp("10.77.0.1", 40000, 4791);

	in = chain("VIN", true, NFR_POLICY_ACCEPT);
	roce = chain("VROCE", false, -1);
	(void)roce;
	vmap_sets();
	/* VIN: meta l4proto . th dport vmap @svc */
	rs.chains[rs.nchains - 2].rules = calloc(1, sizeof(struct nfr_rule));
	in = &rs.chains[rs.nchains - 2];
	in->nrules = 1;
	in->rules[0].handle = 1;
	o = calloc(3, sizeof(*o));
	o[0] = (struct nfm_op){ .type = NFM_OP_META, .key = NFT_META_L4PROTO, .dreg = 16 };
	o[1] = (struct nfm_op){ .type = NFM_OP_PAYLOAD, .base = NFT_PAYLOAD_TRANSPORT_HEADER,
				.off = 2, .len = 2, .dreg = 20 };
	o[2] = (struct nfm_op){ .type = NFM_OP_LOOKUP, .sreg = 16, .has_dreg = true,
				.dreg_verdict = true, .name = strdup("svc") };
	in->rules[0].prog.ops = o;
	in->rules[0].prog.nops = 3;
	/* VROCE: th sport @low drop */
	roce = &rs.chains[rs.nchains - 1];
	roce->rules = calloc(1, sizeof(struct nfr_rule));
	roce->nrules = 1;
	roce->rules[0].handle = 1;
	o = calloc(2, sizeof(*o));
	o[0] = (struct nfm_op){ .type = NFM_OP_PAYLOAD, .base = NFT_PAYLOAD_TRANSPORT_HEADER,
				.off = 0, .len = 2, .dreg = 16 };
	o[1] = (struct nfm_op){ .type = NFM_OP_LOOKUP, .sreg = 16, .name = strdup("low") };
	roce->rules[0].prog.ops = o;
	roce->rules[0].prog.nops = 2;
	o = realloc(o, 3 * sizeof(*o));
	o[2] = (struct nfm_op){ .type = NFM_OP_VERDICT, .verdict = NFM_V_DROP };
	roce->rules[0].prog.ops = o;
	roce->rules[0].prog.nops = 3;

	tap_ok(!strcmp(walk("VIN", &p, NULL), ""),
	       "vmap goto, sport 40000 not in 1-1000: no drop (%s)", walk("VIN", &p, NULL));
	p.sport = 1000;
	tap_ok(!strcmp(walk("VIN", &p, NULL), "VROCE/1"),
	       "sport 1000: the interval's last port (%s)", walk("VIN", &p, NULL));
	p.sport = 1001;
	tap_ok(!strcmp(walk("VIN", &p, NULL), ""),
	       "sport 1001: the exclusive end (%s)", walk("VIN", &p, NULL));
	p.dport = 5000;
	tap_ok(!strcmp(walk("VIN", &p, NULL), "VIN/1"),
	       "dport 5000: the vmap's own drop (%s)", walk("VIN", &p, NULL));
	p.sport = p.dport = -1;
	tap_ok(!strcmp(walk("VIN", &p, NULL), "VROCE/1,VIN/1"),
	       "ports unknown: every element (%s)", walk("VIN", &p, NULL));

	/* a catch-all element: "* : accept" takes what no other element does */
	s = &rs.sets[0];
	s->elems = realloc(s->elems, 3 * sizeof(*s->elems));
	memset(&s->elems[2], 0, sizeof(s->elems[2]));
	s->elems[2].catchall = true;
	s->elems[2].verdict = NFM_V_ACCEPT;
	s->nelems = 3;
	s->elems[1].verdict = NFM_V_DROP;
	p.sport = 40000;
	p.dport = 6000;
	tap_ok(!strcmp(walk("VIN", &p, NULL), ""),
	       "dport 6000: the catch-all accepts (%s)", walk("VIN", &p, NULL));
	s->elems[2].verdict = NFM_V_DROP;
	tap_ok(!strcmp(walk("VIN", &p, NULL), "VIN/1"),
	       "dport 6000, catch-all drop: the vmap rule (%s)", walk("VIN", &p, NULL));
	/* a set the rules update: its elements then are no evidence */
	rs.sets[1].flags |= NFT_SET_EVAL;
	p.dport = 4791;
	tap_ok(!strcmp(walk("VIN", &p, NULL), "VROCE/1"),
	       "sport 40000, set updated from the rules: both ways (%s)",
	       walk("VIN", &p, NULL));
}

/* the packet with conntrack state st (NFM_CT_*), NAT bits nat (-1 unknown) */
static struct nfm_pkt ct_pkt(int st, int nat)
{
	struct nfm_pkt p = udp("10.77.0.1", 40000, 4791);

	p.ct_state = st;
	p.ct_nat_known = nat >= 0;
	p.ct_nat = nat >= 0 ? nat : 0;
	return p;
}

/* -m conntrack / -m state as iptables-save prints them */
static void test_ct_state_legacy(void)
{
	struct nfm_pkt p;

	tap_ok(nfm_ct_state_of(true, 0) == NFM_CT_ESTABLISHED &&
	       nfm_ct_state_of(true, 3) == NFM_CT_ESTABLISHED &&
	       nfm_ct_state_of(true, 1) == NFM_CT_RELATED &&
	       nfm_ct_state_of(true, 4) == NFM_CT_RELATED &&
	       nfm_ct_state_of(true, 2) == NFM_CT_NEW &&
	       nfm_ct_state_of(false, 7) == NFM_CT_UNTRACKED &&
	       nfm_ct_state_of(false, 0) == NFM_CT_INVALID,
	       "ctinfo to state: replies share the bit, no entry is invalid unless untracked");
	chain("CT1", true, NFR_POLICY_ACCEPT);
	rule("-A CT1 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT");
	rule("-A CT1 -m state --state INVALID -j DROP");
	rule("-A CT1 -m conntrack ! --ctstate NEW -j DROP");
	rule("-A CT1 -m conntrack --ctstate DNAT -j DROP");
	rule("-A CT1 -p udp -j DROP");
	p = ct_pkt(NFM_CT_NEW, 0);
	tap_ok(!strcmp(walk("CT1", &p, NULL), "CT1/5"), "new, no NAT: the udp rule (%s)",
	       walk("CT1", &p, NULL));
	p = ct_pkt(NFM_CT_INVALID, -1);
	tap_ok(!strcmp(walk("CT1", &p, NULL), "CT1/2"), "invalid: --state INVALID (%s)",
	       walk("CT1", &p, NULL));
	p = ct_pkt(NFM_CT_ESTABLISHED, -1);
	tap_ok(!strcmp(walk("CT1", &p, NULL), ""), "established: accepted (%s)",
	       walk("CT1", &p, NULL));
	p = ct_pkt(NFM_CT_UNTRACKED, -1);
	tap_ok(!strcmp(walk("CT1", &p, NULL), "CT1/3"), "untracked: ! --ctstate NEW (%s)",
	       walk("CT1", &p, NULL));
	p = ct_pkt(NFM_CT_NEW, IPS_DST_NAT);
	tap_ok(!strcmp(walk("CT1", &p, NULL), "CT1/4"), "new, DNAT: --ctstate DNAT (%s)",
	       walk("CT1", &p, NULL));
	p = ct_pkt(NFM_CT_NEW, -1);
	tap_ok(!strcmp(walk("CT1", &p, NULL), "CT1/4,CT1/5"),
	       "new, NAT bits unknown: DNAT both ways (%s)", walk("CT1", &p, NULL));
	p = ct_pkt(0, -1);
	tap_ok(!strcmp(walk("CT1", &p, NULL), "CT1/2,CT1/3,CT1/4,CT1/5"),
	       "state unknown: every ct rule both ways (%s)", walk("CT1", &p, NULL));
}

/* "ct <key> & mask != 0 drop", as nft compiles ct state / ct status */
static void nft_ct_rule(struct nfr_chain *c, unsigned int key, unsigned int mask)
{
	struct nfr_rule *r;
	struct nfm_op *o = calloc(4, sizeof(*o));
	unsigned int zero = 0;

	c->rules = realloc(c->rules, (c->nrules + 1) * sizeof(*r));
	r = &c->rules[c->nrules++];
	memset(r, 0, sizeof(*r));
	r->handle = c->nrules;
	o[0] = (struct nfm_op){ .type = NFM_OP_CT, .key = key, .dreg = 16 };
	o[1] = (struct nfm_op){ .type = NFM_OP_BITWISE, .sreg = 16, .dreg = 16, .len = 4 };
	memcpy(o[1].data, &mask, 4);
	o[2] = (struct nfm_op){ .type = NFM_OP_CMP, .sreg = 16, .op = NFT_CMP_NEQ, .len = 4 };
	memcpy(o[2].data, &zero, 4);
	o[3] = (struct nfm_op){ .type = NFM_OP_VERDICT, .verdict = NFM_V_DROP };
	r->prog.ops = o;
	r->prog.nops = 4;
}

static void test_ct_nft(void)
{
	struct nfr_chain *c = chain("NCT", true, NFR_POLICY_ACCEPT);
	struct nfm_pkt p;

	nft_ct_rule(c, NFT_CT_STATUS, IPS_DST_NAT);	/* ct status dnat drop */
	c = nfr_chain_find(&rs, NFR_ENGINE_LEGACY, NFR_PROTO_IPV4, "filter", "NCT");
	nft_ct_rule(c, NFT_CT_STATE, NFM_CT_INVALID);	/* ct state invalid drop */
	nft_ct_rule(c, NFT_CT_STATUS, IPS_ASSURED);	/* ct status assured drop */
	p = ct_pkt(NFM_CT_NEW, 0);
	tap_ok(!strcmp(walk("NCT", &p, NULL), "NCT/3"),
	       "new, no NAT: only 'assured' (a bit not known) remains (%s)", walk("NCT", &p, NULL));
	p = ct_pkt(NFM_CT_INVALID, -1);
	tap_ok(!strcmp(walk("NCT", &p, NULL), "NCT/2"),
	       "invalid: ct status breaks without an entry, ct state invalid drops (%s)",
	       walk("NCT", &p, NULL));
	p = ct_pkt(NFM_CT_ESTABLISHED, IPS_DST_NAT);
	tap_ok(!strcmp(walk("NCT", &p, NULL), "NCT/1"), "DNAT: ct status dnat (%s)",
	       walk("NCT", &p, NULL));
	p = ct_pkt(0, -1);
	tap_ok(!strcmp(walk("NCT", &p, NULL), "NCT/1,NCT/2,NCT/3"),
	       "conntrack unknown: all three (%s)", walk("NCT", &p, NULL));
}

/* libnftnl keeps (and frees) the match info it is given */
static void *mt_info(const struct xt_conntrack_mtinfo3 *m)
{
	void *d = malloc(sizeof(*m));

	memcpy(d, m, sizeof(*m));
	return d;
}

/* what iptables-nft hands the kernel for -m conntrack / -m state, and
 * nft's ct load: compiled into the ops the walk evaluates */
static void test_ct_compile(void)
{
	struct xt_conntrack_mtinfo3 m3 = {
		.match_flags = XT_CONNTRACK_STATE, .invert_flags = XT_CONNTRACK_STATE,
		.state_mask = XT_CONNTRACK_STATE_BIT(IP_CT_ESTABLISHED) |
			      XT_CONNTRACK_STATE_UNTRACKED | XT_CONNTRACK_STATE_DNAT,
	};
	struct nftnl_expr *e = nftnl_expr_alloc("match");
	struct nfm_prog p = {};

	nftnl_expr_set_str(e, NFTNL_EXPR_MT_NAME, "conntrack");
	nftnl_expr_set_u32(e, NFTNL_EXPR_MT_REV, 3);
	nftnl_expr_set(e, NFTNL_EXPR_MT_INFO, mt_info(&m3), sizeof(m3));
	nfm_compile_nft(&p, e);
	tap_ok(p.nops == 1 && p.ops[0].type == NFM_OP_XT_STATE && p.ops[0].inv &&
	       p.ops[0].key == (NFM_CT_ESTABLISHED | NFM_CT_UNTRACKED | NFM_CT_DNAT),
	       "conntrack rev 3 ! --ctstate ESTABLISHED,UNTRACKED,DNAT: one state op (key 0x%x)",
	       p.nops ? p.ops[0].key : 0);
	nfm_prog_free(&p);
	m3.match_flags |= XT_CONNTRACK_ORIGSRC;
	nftnl_expr_set(e, NFTNL_EXPR_MT_INFO, mt_info(&m3), sizeof(m3));
	nfm_compile_nft(&p, e);
	tap_ok(p.nops == 2 && p.ops[0].type == NFM_OP_XT_STATE &&
	       p.ops[1].type == NFM_OP_UNKNOWN && !strcmp(p.ops[1].name, "xt conntrack"),
	       "... with --ctorigsrc: the state op and the rest not understood");
	nfm_prog_free(&p);
	nftnl_expr_free(e);

	e = nftnl_expr_alloc("ct");
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	nfm_compile_nft(&p, e);
	tap_ok(p.nops == 1 && p.ops[0].type == NFM_OP_CT && p.ops[0].key == NFT_CT_STATE &&
	       p.ops[0].dreg == 16, "nft ct state load into reg 1");
	nfm_prog_free(&p);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_MARK);
	nfm_compile_nft(&p, e);
	tap_ok(p.nops == 1 && p.ops[0].type == NFM_OP_UNKNOWN && !strcmp(p.ops[0].name, "ct"),
	       "ct mark: not understood");
	nfm_prog_free(&p);
	nftnl_expr_free(e);

	/* meta mark set: a rewrite of the mark for chains before it */
	e = nftnl_expr_alloc("meta");
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, NFT_META_MARK);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_SREG, NFT_REG_1);
	nfm_compile_nft(&p, e);
	tap_ok(p.nops == 1 && p.ops[0].type == NFM_OP_NOOP && !strcmp(p.ops[0].name, "meta mark set"),
	       "meta mark set: a no-op the walk knows as a mark rewrite");
	nfm_prog_free(&p);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, NFT_META_PRIORITY);
	nfm_compile_nft(&p, e);
	tap_ok(p.nops == 1 && p.ops[0].type == NFM_OP_NOOP && !strcmp(p.ops[0].name, "meta set"),
	       "meta priority set: a plain no-op");
	nfm_prog_free(&p);
	nftnl_expr_free(e);
}

/* a rule's counter across a table added again under its name: the
 * handles start again, the table's handle does not */
static void test_counter_table_life(void)
{
	struct nfm_count ca = { NFR_ENGINE_NFT, NFR_PROTO_INET, "t", "in", 5, 2, 10 };
	struct nfm_count cb = ca;
	struct nfm_counters a = { &ca, 1, true, 1 }, b = { &cb, 1, true, 1 };

	cb.packets = 16;
	tap_ok(nfm_counter_delta(&a, &b, NFR_ENGINE_NFT, NFR_PROTO_INET, "t", "in", 2, 5) == 6,
	       "one table's life: the counter's movement");
	tap_ok(nfm_counter_delta(&a, &b, NFR_ENGINE_NFT, NFR_PROTO_INET, "t", "in", 2, 0) == 6,
	       "the rule's table handle unknown: taken as the same table");
	tap_ok(nfm_counter_delta(&a, &b, NFR_ENGINE_NFT, NFR_PROTO_INET, "t", "in", 2, 7) == -1,
	       "the rule of another life of table t: no movement known");
	cb.table_handle = 9;
	tap_ok(nfm_counter_delta(&a, &b, NFR_ENGINE_NFT, NFR_PROTO_INET, "t", "in", 2, 9) == -1,
	       "t added again inside the window: its counter not for the whole window");
}

int main(void)
{
	test_user_chain();
	test_not_understood();
	test_vmap_and_intervals();
	test_ct_state_legacy();
	test_ct_nft();
	test_ct_compile();
	test_counter_table_life();
	nfr_free(&rs);
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
