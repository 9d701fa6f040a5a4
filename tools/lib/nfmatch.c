// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <libnftnl/expr.h>
#include "nfmatch.h"
#include "nfrules.h"

#define REGS_LEN	80	/* NFT_REG32_NUM (20) x 4 bytes, verdict first */
#define MAX_DEPTH	16	/* NFT_JUMP_STACK_SIZE */
#define MAX_STEPS	20000	/* rules evaluated per walk */
#define MAX_OUTS	64

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
			op_add(p, NFM_OP_NOOP, "meta set");
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
	} else if (!strcmp(name, "counter")) {
		op_add(p, NFM_OP_COUNTER, NULL);
	} else if (!strcmp(name, "reject")) {
		compile_verdict(p, NFM_V_REJECT, NULL);
	} else if (!strcmp(name, "target")) {
		compile_target(p, e);
	} else if (!strcmp(name, "ct") && nftnl_expr_is_set(e, NFTNL_EXPR_CT_SREG)) {
		op_add(p, NFM_OP_NOOP, "ct set");
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
				"udp", "tcp", "comment", NULL }))
			;	/* the options follow; a comment matches all */
		else if (!strcmp(t, "--comment"))
			;
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
	memset(r->known + off, known, padded);
	r->src[off] = src;
}

static bool reg_known(const struct regs *r, int off, int len)
{
	if (off < 0 || off + len > REGS_LEN)
		return false;
	for (int i = 0; i < len; i++)
		if (!r->known[off + i])
			return false;
	return true;
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
			ok = reg_known(&r, o->sreg, o->len);
			src = r.src[o->sreg];
			for (int j = 0; j < o->len && j < NFM_DATA_LEN; j++)
				buf[j] = (r.v[o->sreg + j] & o->data[j]) ^ o->data2[j];
			reg_store(&r, o->dreg, buf, o->len, ok, src);
			break;
		case NFM_OP_CMP:
		case NFM_OP_RANGE:
			t = eval_test(ev, &r, o);
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
		walk_chain(k, stack[depth - 1].chain, stack[depth - 1].next,
			   stack, depth - 1);
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
		if (!k.passes)
			break;	/* no later base chain sees the packet */
	}
}

/* ---- counters ---- */

static void count_add(struct nfm_counters *c, int engine, int family,
		      const char *table, const char *chain,
		      unsigned long long handle, unsigned long long packets)
{
	struct nfm_count *n = realloc(c->c, (c->n + 1) * sizeof(*n));

	if (!n)
		return;
	c->c = n;
	n = &c->c[c->n++];
	n->engine = engine;
	n->family = family;
	n->table = strdup(table ? table : "");
	n->chain = strdup(chain ? chain : "");
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
			count_add(out, c->engine, c->family, c->table, c->name, 0,
				  c->policy_packets);
		for (int j = 0; j < c->nrules; j++)
			if (c->rules[j].prog.counter && c->rules[j].has_packets)
				count_add(out, c->engine, c->family, c->table, c->name,
					  c->rules[j].handle, c->rules[j].packets);
	}
}

int nfm_counters_read(struct nfm_counters *out)
{
	struct nfr_ruleset rs;
	int err;

	memset(out, 0, sizeof(*out));
	err = nfr_load_counters(&rs);
	counters_from_ruleset(out, &rs);
	out->valid = !err;
	nfr_free(&rs);
	return err;
}

long long nfm_counter_delta(const struct nfm_counters *a,
			    const struct nfm_counters *b, int engine, int family,
			    const char *table, const char *chain,
			    unsigned long long handle)
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
	if (!x || !y || y->packets < x->packets)
		return -1;
	return (long long)(y->packets - x->packets);
}
