// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nfmatch, the compiling half: nftables expressions (as the kernel will
 * evaluate them) and iptables-save lines turned into one small program of
 * struct nfm_op per rule; tools/nfdrop/nfmatch.c runs them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/xt_conntrack.h>
#include <linux/netfilter/xt_state.h>
#include <libnftnl/expr.h>
#include "nfmatch.h"
#include "nfrules.h"

/* ---- programs ---- */

void nfm_prog_free(struct nfm_prog *p)
{
	for (int i = 0; i < p->nops; i++)
		free(p->ops[i].name);
	free(p->ops);
	memset(p, 0, sizeof(*p));
}

void nfm_set_free(struct nfm_set *s)
{
	for (int i = 0; i < s->nelems; i++)
		free(s->elems[i].chain);
	free(s->elems);
	free(s->table);
	free(s->name);
	memset(s, 0, sizeof(*s));
}

static struct nfm_op *op_add(struct nfm_prog *p, int type, const char *name)
{
	struct nfm_op *o = realloc(p->ops, (p->nops + 1) * sizeof(*o));

	if (!o)
		return NULL;
	p->ops = o;
	o = &p->ops[p->nops++];
	memset(o, 0, sizeof(*o));
	o->type = type;
	if (name)
		o->name = strdup(name);
	return o;
}

/* register number -> byte offset: NFT_REG_1..4 are 16 bytes wide, the
 * NFT_REG32_* 4, and both start after the 16-byte verdict */
static int reg_off(unsigned int reg)
{
	if (reg >= NFT_REG32_00)
		return 16 + (reg - NFT_REG32_00) * 4;
	return reg * 16;
}

int nfm_verdict_of(int code)
{
	switch (code) {
	case NF_DROP: return NFM_V_DROP;
	case NF_ACCEPT: return NFM_V_ACCEPT;
	case NFT_JUMP: return NFM_V_JUMP;
	case NFT_GOTO: return NFM_V_GOTO;
	case NFT_RETURN: return NFM_V_RETURN;
	case NFT_CONTINUE:
	case NFT_BREAK: return NFM_V_CONTINUE;
	default: return NFM_V_MAYBE;	/* queue, stolen, ... */
	}
}

static void copy_data(unsigned char *dst, const void *src, uint32_t len)
{
	memcpy(dst, src, len < NFM_DATA_LEN ? len : NFM_DATA_LEN);
}

static bool str_in(const char *s, const char *const *list)
{
	for (; s && *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

/* statements that let the packet go on to the next expression */
static const char *const noop_exprs[] = {
	"log", "notrack", "dup", "nftrace", NULL,
};
/* xtables targets that return XT_CONTINUE */
static const char *const noop_targets[] = {
	"LOG", "NFLOG", "MARK", "CONNMARK", "CLASSIFY", "TCPMSS", "NOTRACK",
	"CT", "DSCP", "TOS", "TRACE", "AUDIT", "CHECKSUM", "SECMARK", NULL,
};
/* expressions that end the rule with a verdict that may be a drop */
static const char *const maybe_exprs[] = {
	"queue", "nat", "masq", "redir", "tproxy", "synproxy", "fwd", NULL,
};

static void compile_verdict(struct nfm_prog *p, int v, const char *chain)
{
	struct nfm_op *o = op_add(p, NFM_OP_VERDICT, chain);

	if (o)
		o->verdict = v;
}

static void compile_target(struct nfm_prog *p, struct nftnl_expr *e)
{
	const char *tg = nftnl_expr_get_str(e, NFTNL_EXPR_TG_NAME);
	char name[64];

	if (tg && !strcmp(tg, "DROP"))
		compile_verdict(p, NFM_V_DROP, NULL);
	else if (tg && !strcmp(tg, "REJECT"))
		compile_verdict(p, NFM_V_REJECT, NULL);
	else if (str_in(tg, noop_targets))
		op_add(p, NFM_OP_NOOP, tg);
	else {
		snprintf(name, sizeof(name), "target %s", tg ? tg : "?");
		compile_verdict(p, NFM_V_MAYBE, NULL);
		free(p->ops[p->nops - 1].name);
		p->ops[p->nops - 1].name = strdup(name);
	}
}

static void compile_lookup(struct nfm_prog *p, struct nftnl_expr *e)
{
	struct nfm_op *o = op_add(p, NFM_OP_LOOKUP,
				  nftnl_expr_get_str(e, NFTNL_EXPR_LOOKUP_SET));

	if (!o)
		return;
	o->sreg = reg_off(nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_SREG));
	if (nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_FLAGS))
		o->inv = nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_FLAGS) & NFT_LOOKUP_F_INV;
	if (nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_DREG)) {
		unsigned int d = nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_DREG);

		o->has_dreg = true;
		o->dreg_verdict = d == NFT_REG_VERDICT;
		o->dreg = reg_off(d);
	}
}

static void compile_data_op(struct nfm_prog *p, struct nftnl_expr *e, const char *name)
{
	struct nfm_op *o;
	const void *d;
	uint32_t len = 0;

	if (!strcmp(name, "payload")) {
		if (nftnl_expr_is_set(e, NFTNL_EXPR_PAYLOAD_SREG)) {
			op_add(p, NFM_OP_UNKNOWN, "payload set");
			return;
		}
		o = op_add(p, NFM_OP_PAYLOAD, NULL);
		if (!o)
			return;
		o->dreg = reg_off(nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_DREG));
		o->base = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_BASE);
		o->off = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET);
		o->len = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_LEN);
	} else if (!strcmp(name, "meta")) {
		if (nftnl_expr_is_set(e, NFTNL_EXPR_META_SREG)) {
			/* the mark set: a rewrite for chains before it */
			op_add(p, NFM_OP_NOOP,
			       nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY) == NFT_META_MARK ?
			       "meta mark set" : "meta set");
			return;
		}
		o = op_add(p, NFM_OP_META, NULL);
		if (!o)
			return;
		o->key = nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY);
		o->dreg = reg_off(nftnl_expr_get_u32(e, NFTNL_EXPR_META_DREG));
	} else if (!strcmp(name, "bitwise")) {
		if (nftnl_expr_is_set(e, NFTNL_EXPR_BITWISE_OP) &&
		    nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_OP) != NFT_BITWISE_BOOL) {
			op_add(p, NFM_OP_UNKNOWN, "bitwise shift");
			return;
		}
		o = op_add(p, NFM_OP_BITWISE, NULL);
		if (!o)
			return;
		o->sreg = reg_off(nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_SREG));
		o->dreg = reg_off(nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_DREG));
		o->len = nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_LEN);
		if ((d = nftnl_expr_get_data(e, NFTNL_EXPR_BITWISE_MASK, &len)))
			copy_data(o->data, d, len);
		if ((d = nftnl_expr_get_data(e, NFTNL_EXPR_BITWISE_XOR, &len)))
			copy_data(o->data2, d, len);
	} else if (!strcmp(name, "cmp")) {
		o = op_add(p, NFM_OP_CMP, NULL);
		if (!o)
			return;
		o->sreg = reg_off(nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_SREG));
		o->op = nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_OP);
		if ((d = nftnl_expr_get_data(e, NFTNL_EXPR_CMP_DATA, &len)))
			copy_data(o->data, d, len);
		o->len = len;
	} else if (!strcmp(name, "range")) {
		o = op_add(p, NFM_OP_RANGE, NULL);
		if (!o)
			return;
		o->sreg = reg_off(nftnl_expr_get_u32(e, NFTNL_EXPR_RANGE_SREG));
		o->op = nftnl_expr_get_u32(e, NFTNL_EXPR_RANGE_OP);
		if ((d = nftnl_expr_get_data(e, NFTNL_EXPR_RANGE_FROM_DATA, &len)))
			copy_data(o->data, d, len);
		o->len = len;
		if ((d = nftnl_expr_get_data(e, NFTNL_EXPR_RANGE_TO_DATA, &len)))
			copy_data(o->data2, d, len);
	}
}

/* ct state and ct status (its NAT bits) are evaluated, other keys not */
static void compile_ct(struct nfm_prog *p, struct nftnl_expr *e)
{
	unsigned int key = nftnl_expr_get_u32(e, NFTNL_EXPR_CT_KEY);
	struct nfm_op *o;

	if ((key != NFT_CT_STATE && key != NFT_CT_STATUS) ||
	    nftnl_expr_is_set(e, NFTNL_EXPR_CT_DIR)) {
		op_add(p, NFM_OP_UNKNOWN, "ct");
		return;
	}
	o = op_add(p, NFM_OP_CT, NULL);
	if (!o)
		return;
	o->key = key;
	o->dreg = reg_off(nftnl_expr_get_u32(e, NFTNL_EXPR_CT_DREG));
}

static void xt_state_op(struct nfm_prog *p, unsigned int mask, bool inv)
{
	struct nfm_op *o = op_add(p, NFM_OP_XT_STATE, NULL);

	if (o) {
		o->key = mask;
		o->inv = inv;
	}
}

/* xt_conntrack's state bits as NFM_CT_* (its SNAT, DNAT and UNTRACKED
 * sit above IP_CT_NUMBER, where nft has other meanings) */
static unsigned int xt_conntrack_states(unsigned int m)
{
	return (m & (NFM_CT_INVALID | NFM_CT_ESTABLISHED | NFM_CT_RELATED | NFM_CT_NEW)) |
	       (m & XT_CONNTRACK_STATE_SNAT ? NFM_CT_SNAT : 0) |
	       (m & XT_CONNTRACK_STATE_DNAT ? NFM_CT_DNAT : 0) |
	       (m & XT_CONNTRACK_STATE_UNTRACKED ? NFM_CT_UNTRACKED : 0);
}

/*
 * iptables-nft's -m conntrack / -m state, run by nft_compat: the match's
 * info as the kernel reads it. Only the state test is evaluated; with
 * other conditions the rest is not understood (and taken both ways: an
 * over-approximation, also where no entry makes xt_conntrack skip them).
 */
static void compile_xt_ct(struct nfm_prog *p, struct nftnl_expr *e)
{
	const char *mt = nftnl_expr_get_str(e, NFTNL_EXPR_MT_NAME);
	unsigned int rev = nftnl_expr_get_u32(e, NFTNL_EXPR_MT_REV);
	uint32_t len = 0;
	const void *info = nftnl_expr_get_data(e, NFTNL_EXPR_MT_INFO, &len);
	unsigned int flags, inv, mask;

	if (!strcmp(mt, "state") && info && len >= sizeof(struct xt_state_info)) {
		/* XT_STATE_*: nft's bits, UNTRACKED included */
		xt_state_op(p, ((const struct xt_state_info *)info)->statemask, false);
		return;
	}
	if (!strcmp(mt, "conntrack") && info && rev == 1 &&
	    len >= sizeof(struct xt_conntrack_mtinfo1)) {
		const struct xt_conntrack_mtinfo1 *m = info;

		flags = m->match_flags, inv = m->invert_flags, mask = m->state_mask;
	} else if (!strcmp(mt, "conntrack") && info && (rev == 2 || rev == 3) &&
		   len >= sizeof(struct xt_conntrack_mtinfo2)) {
		const struct xt_conntrack_mtinfo2 *m = info;

		flags = m->match_flags, inv = m->invert_flags, mask = m->state_mask;
	} else {
		op_add(p, NFM_OP_UNKNOWN, !strcmp(mt, "state") ? "xt state" : "xt conntrack");
		return;
	}
	if (flags & XT_CONNTRACK_STATE)
		xt_state_op(p, xt_conntrack_states(mask), inv & XT_CONNTRACK_STATE);
	if (flags & ~XT_CONNTRACK_STATE)
		op_add(p, NFM_OP_UNKNOWN, "xt conntrack");
}

void nfm_compile_nft(struct nfm_prog *p, struct nftnl_expr *e)
{
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	char buf[64];

	if (!name)
		return;
	if (str_in(name, (const char *const[]){ "payload", "meta", "bitwise",
						"cmp", "range", NULL })) {
		compile_data_op(p, e, name);
	} else if (!strcmp(name, "immediate")) {
		if (nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT)) {
			compile_verdict(p, nfm_verdict_of((int)nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT)),
					nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN));
		} else {
			struct nfm_op *o = op_add(p, NFM_OP_IMM_DATA, NULL);
			uint32_t len = 0;
			const void *d = nftnl_expr_get_data(e, NFTNL_EXPR_IMM_DATA, &len);

			if (o && d) {
				o->dreg = reg_off(nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_DREG));
				copy_data(o->data, d, len);
				o->len = len;
			}
		}
	} else if (!strcmp(name, "lookup")) {
		compile_lookup(p, e);
	} else if (!strcmp(name, "counter") ||
		   (!strcmp(name, "objref") && nftnl_expr_is_set(e, NFTNL_EXPR_OBJREF_IMM_TYPE) &&
		    nftnl_expr_get_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE) == NFT_OBJECT_COUNTER)) {
		/* counter name "x": a named counter counts the same way */
		op_add(p, NFM_OP_COUNTER, NULL);
	} else if (!strcmp(name, "reject")) {
		compile_verdict(p, NFM_V_REJECT, NULL);
	} else if (!strcmp(name, "target")) {
		compile_target(p, e);
	} else if (!strcmp(name, "ct") && nftnl_expr_is_set(e, NFTNL_EXPR_CT_SREG)) {
		op_add(p, NFM_OP_NOOP, "ct set");
	} else if (!strcmp(name, "ct")) {
		compile_ct(p, e);
	} else if (!strcmp(name, "match") &&
		   str_in(nftnl_expr_get_str(e, NFTNL_EXPR_MT_NAME),
			  (const char *const[]){ "conntrack", "state", NULL })) {
		compile_xt_ct(p, e);
	} else if (str_in(name, noop_exprs)) {
		op_add(p, NFM_OP_NOOP, name);
	} else if (str_in(name, maybe_exprs)) {
		compile_verdict(p, NFM_V_MAYBE, NULL);
		free(p->ops[p->nops - 1].name);
		p->ops[p->nops - 1].name = strdup(name);
	} else {
		if (!strcmp(name, "match"))
			snprintf(buf, sizeof(buf), "xt %s",
				 nftnl_expr_get_str(e, NFTNL_EXPR_MT_NAME) ?: "?");
		else
			snprintf(buf, sizeof(buf), "%s", name);
		op_add(p, NFM_OP_UNKNOWN, buf);
	}
	/* a counter counts every packet that gets to the verdict after it */
	if (p->nops && p->ops[p->nops - 1].type == NFM_OP_COUNTER) {
		bool verdict_before = false;

		for (int i = 0; i < p->nops - 1; i++)
			verdict_before |= p->ops[i].type == NFM_OP_VERDICT ||
					  (p->ops[i].type == NFM_OP_LOOKUP && p->ops[i].dreg_verdict);
		if (!verdict_before)
			p->counter = true;
	}
}

/* ---- iptables-save lines ---- */

/* the next token of an iptables-save line, quotes removed */
static char *next_token(char **s)
{
	char *p = *s, *start, *w;

	while (*p == ' ')
		p++;
	if (!*p)
		return NULL;
	start = w = p;
	for (bool q = false; *p && (q || *p != ' '); p++) {
		if (*p == '"') {
			q = !q;
			continue;
		}
		if (*p == '\\' && p[1])
			p++;
		*w++ = *p;
	}
	if (*p)
		p++;
	*w = 0;
	*s = p;
	return start;
}

static void legacy_addr(struct nfm_prog *p, int family, bool src, bool inv,
			const char *arg)
{
	unsigned char addr[16] = {}, mask[16] = {};
	int alen = family == NFR_PROTO_IPV6 ? 16 : 4, bits = alen * 8;
	char buf[64], *slash;
	struct nfm_op *o;

	snprintf(buf, sizeof(buf), "%s", arg);
	slash = strchr(buf, '/');
	if (slash) {
		*slash++ = 0;
		if (strchr(slash, '.') || strchr(slash, ':')) {
			if (inet_pton(alen == 4 ? AF_INET : AF_INET6, slash, mask) != 1)
				goto unknown;
			bits = -1;
		} else {
			bits = atoi(slash);
		}
	}
	if (inet_pton(alen == 4 ? AF_INET : AF_INET6, buf, addr) != 1)
		goto unknown;
	for (int i = 0; bits >= 0 && i < alen; i++) {
		int b = bits - i * 8;

		mask[i] = b >= 8 ? 0xff : b <= 0 ? 0 : (0xff << (8 - b)) & 0xff;
	}
	for (int i = 0; i < alen; i++)
		addr[i] &= mask[i];
	if (!(o = op_add(p, NFM_OP_PAYLOAD, NULL)))
		return;
	o->base = NFT_PAYLOAD_NETWORK_HEADER;
	o->off = alen == 4 ? (src ? 12 : 16) : (src ? 8 : 24);
	o->len = alen;
	o->dreg = 16;
	if (!(o = op_add(p, NFM_OP_BITWISE, NULL)))
		return;
	o->sreg = o->dreg = 16;
	o->len = alen;
	memcpy(o->data, mask, alen);
	if (!(o = op_add(p, NFM_OP_CMP, NULL)))
		return;
	o->sreg = 16;
	o->op = inv ? NFT_CMP_NEQ : NFT_CMP_EQ;
	o->len = alen;
	memcpy(o->data, addr, alen);
	return;
unknown:
	op_add(p, NFM_OP_UNKNOWN, src ? "-s" : "-d");
}

static void legacy_proto(struct nfm_prog *p, bool inv, const char *arg)
{
	static const struct { const char *name; int num; } protos[] = {
		{ "tcp", 6 }, { "udp", 17 }, { "icmp", 1 }, { "ipv6-icmp", 58 },
		{ "icmpv6", 58 }, { "sctp", 132 }, { "udplite", 136 },
	};
	struct nfm_op *o;
	int num = -1;

	if (!strcmp(arg, "all") || !strcmp(arg, "0"))
		return;
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (!strcmp(protos[i].name, arg))
			num = protos[i].num;
	if (num < 0 && arg[0] >= '0' && arg[0] <= '9')
		num = atoi(arg);
	if (num < 0) {
		op_add(p, NFM_OP_UNKNOWN, "-p");
		return;
	}
	if (!(o = op_add(p, NFM_OP_META, NULL)))
		return;
	o->key = NFT_META_L4PROTO;
	o->dreg = 16;
	if (!(o = op_add(p, NFM_OP_CMP, NULL)))
		return;
	o->sreg = 16;
	o->op = inv ? NFT_CMP_NEQ : NFT_CMP_EQ;
	o->len = 1;
	o->data[0] = num;
}

static void legacy_port(struct nfm_prog *p, bool dst, bool inv, const char *arg)
{
	unsigned int lo, hi;
	struct nfm_op *o;
	char *colon = strchr(arg, ':');

	lo = colon == arg ? 0 : strtoul(arg, NULL, 10);
	hi = colon ? (colon[1] ? strtoul(colon + 1, NULL, 10) : 65535) : lo;
	if (!(o = op_add(p, NFM_OP_PAYLOAD, NULL)))
		return;
	o->base = NFT_PAYLOAD_TRANSPORT_HEADER;
	o->off = dst ? 2 : 0;
	o->len = 2;
	o->dreg = 16;
	if (!(o = op_add(p, NFM_OP_RANGE, NULL)))
		return;
	o->sreg = 16;
	o->op = inv ? NFT_RANGE_NEQ : NFT_RANGE_EQ;
	o->len = 2;
	o->data[0] = lo >> 8;
	o->data[1] = lo;
	o->data2[0] = hi >> 8;
	o->data2[1] = hi;
}

static void legacy_iface(struct nfm_prog *p, bool in, bool inv, const char *arg)
{
	struct nfm_op *o;
	size_t n = strlen(arg);

	if (!(o = op_add(p, NFM_OP_META, NULL)))
		return;
	o->key = in ? NFT_META_IIFNAME : NFT_META_OIFNAME;
	o->dreg = 16;
	if (!(o = op_add(p, NFM_OP_CMP, NULL)))
		return;
	o->sreg = 16;
	o->op = inv ? NFT_CMP_NEQ : NFT_CMP_EQ;
	if (n && arg[n - 1] == '+') {
		o->len = n - 1;		/* a prefix */
	} else {
		o->len = 16;		/* IFNAMSIZ, zero padded */
	}
	memcpy(o->data, arg, n < 16 ? n : 15);
	if (n && arg[n - 1] == '+')
		o->data[n - 1] = 0;
	if (o->len == 0)
		p->nops--;		/* "-i +": any interface */
}

/* --ctstate / --state NAME[,NAME]... as NFM_CT_* */
static void legacy_ct_state(struct nfm_prog *p, bool inv, const char *arg)
{
	static const struct { const char *name; unsigned int bit; } states[] = {
		{ "INVALID", NFM_CT_INVALID }, { "ESTABLISHED", NFM_CT_ESTABLISHED },
		{ "RELATED", NFM_CT_RELATED }, { "NEW", NFM_CT_NEW },
		{ "UNTRACKED", NFM_CT_UNTRACKED }, { "SNAT", NFM_CT_SNAT },
		{ "DNAT", NFM_CT_DNAT },
	};
	char buf[128], *save = NULL;
	unsigned int mask = 0;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned int bit = 0;

		for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
			if (!strcmp(states[i].name, t))
				bit = states[i].bit;
		if (!bit) {
			op_add(p, NFM_OP_UNKNOWN, "--ctstate");
			return;
		}
		mask |= bit;
	}
	xt_state_op(p, mask, inv);
}

static void legacy_target(struct nfm_prog *p, const char *tg, bool jump,
			  bool (*is_chain)(const char *, void *), void *arg)
{
	if (!strcmp(tg, "DROP"))
		compile_verdict(p, NFM_V_DROP, NULL);
	else if (!strcmp(tg, "REJECT"))
		compile_verdict(p, NFM_V_REJECT, NULL);
	else if (!strcmp(tg, "ACCEPT"))
		compile_verdict(p, NFM_V_ACCEPT, NULL);
	else if (!strcmp(tg, "RETURN"))
		compile_verdict(p, NFM_V_RETURN, NULL);
	else if (is_chain(tg, arg))
		compile_verdict(p, jump ? NFM_V_JUMP : NFM_V_GOTO, tg);
	else if (str_in(tg, noop_targets))
		op_add(p, NFM_OP_NOOP, tg);
	else
		compile_verdict(p, NFM_V_MAYBE, tg);
}

void nfm_compile_legacy(struct nfm_prog *p, int family, const char *line,
			bool (*is_chain)(const char *name, void *arg), void *arg)
{
	char *copy = strdup(line), *s = copy, *t, *v;
	bool inv = false, target_seen = false;
	char unk[64];

	if (!copy)
		return;
	p->counter = true;	/* x_tables counts every rule */
	next_token(&s);		/* -A */
	next_token(&s);		/* the chain */
	while ((t = next_token(&s))) {
		if (!strcmp(t, "!")) {
			inv = true;
			continue;
		}
		if (target_seen) {
			inv = false;
			continue;	/* target options */
		}
		v = NULL;
		if (t[0] == '-' && strcmp(t, "-j") && strcmp(t, "-g") &&
		    s[0] && s[0] != '-')
			v = next_token(&s);
		else if (!strcmp(t, "-j") || !strcmp(t, "-g") || !strcmp(t, "-m"))
			v = next_token(&s);
		if (!strcmp(t, "-s") || !strcmp(t, "--source"))
			legacy_addr(p, family, true, inv, v ? v : "");
		else if (!strcmp(t, "-d") || !strcmp(t, "--destination"))
			legacy_addr(p, family, false, inv, v ? v : "");
		else if (!strcmp(t, "-p") || !strcmp(t, "--protocol"))
			legacy_proto(p, inv, v ? v : "");
		else if (!strcmp(t, "--dport") || !strcmp(t, "--destination-port"))
			legacy_port(p, true, inv, v ? v : "0");
		else if (!strcmp(t, "--sport") || !strcmp(t, "--source-port"))
			legacy_port(p, false, inv, v ? v : "0");
		else if (!strcmp(t, "-i") || !strcmp(t, "--in-interface"))
			legacy_iface(p, true, inv, v ? v : "");
		else if (!strcmp(t, "-o") || !strcmp(t, "--out-interface"))
			legacy_iface(p, false, inv, v ? v : "");
		else if (!strcmp(t, "-m") && v && str_in(v, (const char *const[]){
				"udp", "tcp", "comment", "conntrack", "state", NULL }))
			;	/* the options follow; a comment matches all */
		else if (!strcmp(t, "--comment"))
			;
		else if (!strcmp(t, "--ctstate") || !strcmp(t, "--state"))
			legacy_ct_state(p, inv, v ? v : "");
		else if (!strcmp(t, "-j") || !strcmp(t, "-g")) {
			legacy_target(p, v ? v : "", !strcmp(t, "-j"), is_chain, arg);
			target_seen = true;
		} else {
			snprintf(unk, sizeof(unk), "%s%s%s", t, v ? " " : "", v ? v : "");
			op_add(p, NFM_OP_UNKNOWN, unk);
		}
		inv = false;
	}
	free(copy);
}
