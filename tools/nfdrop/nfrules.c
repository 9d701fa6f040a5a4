// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ruleset model of nfrules.h read from the kernel: nftables over
 * netlink (libnftnl) with the text libnftables prints, and the legacy
 * iptables tables through nfrules_legacy.c; counters read again on demand.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/gen.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <nftables/libnftables.h>
#include "nfrules.h"
#include "nfrules_int.h"

#define MAX_JUMP_DEPTH 16	/* NFT_JUMP_STACK_SIZE */

static const struct {
	int family;
	const char *name;
	const char *alias;
} families[] = {
	{ NFR_PROTO_IPV4, "ip", "ipv4" },
	{ NFR_PROTO_IPV6, "ip6", "ipv6" },
	{ NFR_PROTO_INET, "inet", NULL },
	{ NFR_PROTO_ARP, "arp", NULL },
	{ NFR_PROTO_BRIDGE, "bridge", NULL },
	{ NFR_PROTO_NETDEV, "netdev", NULL },
};

static const char *const inet_hooks[] = {
	"prerouting", "input", "forward", "output", "postrouting", "ingress",
};
static const char *const arp_hooks[] = { "input", "output", "forward" };
static const char *const netdev_hooks[] = { "ingress", "egress" };

const char *nfr_family_name(int family)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (families[i].family == family)
			return families[i].name;
	return NULL;
}

int nfr_family_by_name(const char *name)
{
	for (size_t i = 0; name && i < sizeof(families) / sizeof(families[0]); i++)
		if (!strcasecmp(families[i].name, name) ||
		    (families[i].alias && !strcasecmp(families[i].alias, name)))
			return families[i].family;
	return -1;
}

static const char *const *hook_names(int family, int *n)
{
	switch (family) {
	case NFR_PROTO_ARP:
		*n = 3;
		return arp_hooks;
	case NFR_PROTO_NETDEV:
		*n = 2;
		return netdev_hooks;
	case NFR_PROTO_INET:
	case NFR_PROTO_IPV4:
	case NFR_PROTO_IPV6:
		/* an inet table's ingress chain runs with the packet's own
		 * family (nft_do_chain_inet_ingress()): ip or ip6, hook 5 */
		*n = 6;
		return inet_hooks;
	default:	/* bridge: NF_BR_* numbering, the first five alike */
		*n = 5;
		return inet_hooks;
	}
}

const char *nfr_hook_name(int family, int hook)
{
	int n;
	const char *const *names = hook_names(family, &n);

	return hook >= 0 && hook < n ? names[hook] : NULL;
}

static int nfr_hook_by_name(int family, const char *name)
{
	int n;
	const char *const *names = hook_names(family, &n);

	for (int i = 0; name && i < n; i++)
		if (!strcasecmp(names[i], name))
			return i;
	return -1;
}

bool nfr_hook_name_valid(const char *name)
{
	return nfr_hook_by_name(NFR_PROTO_INET, name) >= 0 ||
	       nfr_hook_by_name(NFR_PROTO_NETDEV, name) >= 0;
}

bool nfr_family_covers(int table_family, int hook_family)
{
	if (table_family == hook_family)
		return true;
	return table_family == NFR_PROTO_INET &&
	       (hook_family == NFR_PROTO_IPV4 || hook_family == NFR_PROTO_IPV6);
}

const char *nfr_kind_name(int kind)
{
	switch (kind) {
	case NFR_KIND_DROP: return "DROP";
	case NFR_KIND_REJECT: return "REJECT";
	case NFR_KIND_JUMP: return "jump";
	case NFR_KIND_MAYBE: return "may drop";
	default: return "none";
	}
}

/* ---- the model ---- */

void nfr_set_err(struct nfr_ruleset *rs, const char *fmt, const char *arg)
{
	if (!rs->err[0])
		snprintf(rs->err, sizeof(rs->err), fmt, arg);
}

struct nfr_chain *nfr_add_chain(struct nfr_ruleset *rs)
{
	struct nfr_chain *c;

	c = realloc(rs->chains, (rs->nchains + 1) * sizeof(*c));
	if (!c)
		return NULL;
	rs->chains = c;
	c = &rs->chains[rs->nchains++];
	memset(c, 0, sizeof(*c));
	c->policy = -1;
	return c;
}

struct nfr_rule *nfr_add_rule(struct nfr_chain *c)
{
	struct nfr_rule *r;

	r = realloc(c->rules, (c->nrules + 1) * sizeof(*r));
	if (!r)
		return NULL;
	c->rules = r;
	r = &c->rules[c->nrules++];
	memset(r, 0, sizeof(*r));
	return r;
}

void nfr_free(struct nfr_ruleset *rs)
{
	for (int i = 0; i < rs->nchains; i++) {
		struct nfr_chain *c = &rs->chains[i];

		for (int j = 0; j < c->nrules; j++) {
			free(c->rules[j].target);
			free(c->rules[j].counter_obj);
			free(c->rules[j].text);
			nfm_prog_free(&c->rules[j].prog);
		}
		free(c->rules);
		free(c->table);
		free(c->name);
		free(c->type);
		free(c->devs);
	}
	free(rs->chains);
	for (int i = 0; i < rs->nsets; i++)
		nfm_set_free(&rs->sets[i]);
	free(rs->sets);
	memset(rs, 0, sizeof(*rs));
}

struct nfr_chain *nfr_chain_find(const struct nfr_ruleset *rs, int engine,
				 int family, const char *table, const char *name)
{
	for (int i = 0; i < rs->nchains; i++) {
		struct nfr_chain *c = &rs->chains[i];

		if (c->engine == engine && c->family == family &&
		    !strcmp(c->table, table) && !strcmp(c->name, name))
			return c;
	}
	return NULL;
}

#define MAX_TARGETS 64

/* chains rule r of c can jump or go to: its target, verdict map elements */
static int rule_targets(const struct nfr_ruleset *rs, const struct nfr_chain *c,
			const struct nfr_rule *r, const struct nfr_chain **out)
{
	const char *names[MAX_TARGETS];
	int n = nfm_targets(rs, c, &r->prog, names, MAX_TARGETS), m = 0;

	if (!r->prog.nops && r->kind == NFR_KIND_JUMP && r->target) {
		names[0] = r->target;
		n = 1;
	}
	for (int i = 0; i < n && i < MAX_TARGETS; i++) {
		const struct nfr_chain *t = nfr_chain_find(rs, c->engine, c->family,
							   c->table, names[i]);
		bool dup = false;

		for (int j = 0; j < m; j++)
			dup |= out[j] == t;
		if (t && !dup)
			out[m++] = t;
	}
	return m;
}

static bool rule_can_drop(const struct nfr_ruleset *rs, const struct nfr_chain *c,
			  const struct nfr_rule *r)
{
	if (r->kind == NFR_KIND_DROP || r->kind == NFR_KIND_REJECT)
		return true;
	if (r->kind != NFR_KIND_MAYBE)
		return false;
	return !r->prog.nops || nfm_can_drop(rs, c, &r->prog);
}

static int drop_rules_rec(const struct nfr_ruleset *rs, const struct nfr_chain *c,
			  struct nfr_hit *out, int max, int n,
			  const struct nfr_chain **path, int depth)
{
	if (depth >= MAX_JUMP_DEPTH)
		return n;
	for (int i = 0; i < depth; i++)
		if (path[i] == c)
			return n;	/* a loop: the kernel refuses those anyway */
	path[depth] = c;
	for (int i = 0; i < c->nrules; i++) {
		const struct nfr_rule *r = &c->rules[i];
		const struct nfr_chain *t[MAX_TARGETS];
		int nt = rule_targets(rs, c, r, t);

		for (int j = 0; j < nt; j++)
			n = drop_rules_rec(rs, t[j], out, max, n, path, depth + 1);
		if (!rule_can_drop(rs, c, r))
			continue;
		/* the same rule reached twice (two jumps to one chain) once */
		bool seen = false;

		for (int j = 0; j < n && j < max; j++)
			seen |= out[j].rule == r;
		if (seen)
			continue;
		if (n < max) {
			out[n].chain = c;
			out[n].rule = r;
		}
		n++;
	}
	return n;
}

int nfr_drop_rules(const struct nfr_ruleset *rs, const struct nfr_chain *base,
		   struct nfr_hit *out, int max)
{
	const struct nfr_chain *path[MAX_JUMP_DEPTH];

	return drop_rules_rec(rs, base, out, max, 0, path, 0);
}

static bool reaches_rec(const struct nfr_ruleset *rs, const struct nfr_chain *c,
			const struct nfr_chain *to, int depth)
{
	if (c == to)
		return true;
	if (depth >= MAX_JUMP_DEPTH)
		return false;
	for (int i = 0; i < c->nrules; i++) {
		const struct nfr_chain *t[MAX_TARGETS];
		int nt = rule_targets(rs, c, &c->rules[i], t);

		for (int j = 0; j < nt; j++)
			if (reaches_rec(rs, t[j], to, depth + 1))
				return true;
	}
	return false;
}

bool nfr_reaches(const struct nfr_ruleset *rs, const struct nfr_chain *from,
		 const struct nfr_chain *to)
{
	return reaches_rec(rs, from, to, 0);
}

/* ---- nftables over netlink (libmnl + libnftnl) ---- */

/* a dump request (flags NLM_F_DUMP) or a get (NLM_F_ACK); set: the elements of
 * that set */
static int nft_req(int msg_type, int family, int flags, struct nftnl_set *set,
		   mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE * 4];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	unsigned int seq = time(NULL), portid;
	int ret;

	nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		mnl_socket_close(nl);
		return ret;
	}
	portid = mnl_socket_get_portid(nl);
	nlh = nftnl_nlmsg_build_hdr(buf, msg_type, family, flags, seq);
	if (set)
		nftnl_set_elems_nlmsg_build_payload(nlh, set);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		ret = -errno;
		mnl_socket_close(nl);
		return ret;
	}
	while ((ret = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, ret, seq, portid, cb, data);
		if (ret <= 0)
			break;
	}
	if (ret < 0)
		ret = -errno;
	mnl_socket_close(nl);
	return ret;
}

static int nft_dump(int msg_type, mnl_cb_t cb, void *data)
{
	return nft_req(msg_type, NFPROTO_UNSPEC, NLM_F_DUMP, NULL, cb, data);
}

static int gen_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_gen *g = nftnl_gen_alloc();

	if (g && nftnl_gen_nlmsg_parse(nlh, g) == 0 && nftnl_gen_is_set(g, NFTNL_GEN_ID))
		*(long long *)data = nftnl_gen_get_u32(g, NFTNL_GEN_ID);
	nftnl_gen_free(g);
	return MNL_CB_OK;
}

long long nfr_nft_gen(void)
{
	long long gen = -1;

	/* the ACK ends the exchange: a get has no NLMSG_DONE */
	if (nft_req(NFT_MSG_GETGEN, NFPROTO_UNSPEC, NLM_F_ACK, NULL, gen_cb, &gen) < 0)
		return -1;
	return gen;
}

static char *dup_attr(const char *s)
{
	return strdup(s ? s : "");
}

/* NFTA_DEVICE_PREFIX (6.16+, a wildcard device spec): newer than the
 * uapi header this builds against */
#define NFR_NFTA_DEVICE_PREFIX	2
#define NFR_INET_INGRESS	5	/* NF_INET_INGRESS */

static void chain_add_dev(struct nfr_chain *c, const struct nlattr *a, bool prefix)
{
	struct nfr_dev *d;

	if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0 ||
	    !(d = realloc(c->devs, (c->ndevs + 1) * sizeof(*d)))) {
		c->devs_unknown = true;
		return;
	}
	c->devs = d;
	d = &c->devs[c->ndevs++];
	snprintf(d->name, sizeof(d->name), "%s", mnl_attr_get_str(a));
	d->prefix = prefix;
}

/*
 * The devices of a base chain's hook, read from the message itself:
 * libnftnl of this vintage drops device specs it does not know (the
 * 6.16+ prefix), and a chain that looked bound to fewer devices than it
 * is would be ruled out for packets it did see.
 */
static void chain_devs(struct nfr_chain *c, const struct nlmsghdr *nlh)
{
	const struct nlattr *a, *h, *d;

	c->dev_bound = c->family == NFR_PROTO_NETDEV ||
		       (c->family == NFR_PROTO_INET && c->hook == NFR_INET_INGRESS);
	if (!c->dev_bound)
		return;
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) != NFTA_CHAIN_HOOK)
			continue;
		mnl_attr_for_each_nested(h, a) {
			if (mnl_attr_get_type(h) == NFTA_HOOK_DEV) {
				chain_add_dev(c, h, false);
			} else if (mnl_attr_get_type(h) == NFTA_HOOK_DEVS) {
				mnl_attr_for_each_nested(d, h) {
					if (mnl_attr_get_type(d) == NFTA_DEVICE_NAME)
						chain_add_dev(c, d, false);
					else if (mnl_attr_get_type(d) == NFR_NFTA_DEVICE_PREFIX)
						chain_add_dev(c, d, true);
					else
						c->devs_unknown = true;
				}
			}
		}
	}
	if (!c->ndevs)
		c->devs_unknown = true;
}

int nfr_chain_sees_dev(const struct nfr_chain *c, const char *ifname)
{
	if (!c->base || !c->dev_bound)
		return 1;
	for (int i = 0; ifname && i < c->ndevs; i++) {
		const struct nfr_dev *d = &c->devs[i];

		if (d->prefix ? !strncmp(ifname, d->name, strlen(d->name)) :
		    !strcmp(ifname, d->name))
			return 1;
	}
	return !ifname || c->devs_unknown ? -1 : 0;
}

static int chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nfr_ruleset *rs = data;
	struct nftnl_chain *nc = nftnl_chain_alloc();
	struct nfr_chain *c;

	if (!nc)
		return MNL_CB_ERROR;
	if (nftnl_chain_nlmsg_parse(nlh, nc) < 0 || !(c = nfr_add_chain(rs))) {
		nftnl_chain_free(nc);
		return MNL_CB_ERROR;
	}
	c->engine = NFR_ENGINE_NFT;
	c->family = nftnl_chain_get_u32(nc, NFTNL_CHAIN_FAMILY);
	c->table = dup_attr(nftnl_chain_get_str(nc, NFTNL_CHAIN_TABLE));
	c->name = dup_attr(nftnl_chain_get_str(nc, NFTNL_CHAIN_NAME));
	if (nftnl_chain_is_set(nc, NFTNL_CHAIN_HOOKNUM)) {
		c->base = true;
		c->hook = nftnl_chain_get_u32(nc, NFTNL_CHAIN_HOOKNUM);
		c->prio = nftnl_chain_get_s32(nc, NFTNL_CHAIN_PRIO);
		c->policy = nftnl_chain_is_set(nc, NFTNL_CHAIN_POLICY) ?
			    (int)nftnl_chain_get_u32(nc, NFTNL_CHAIN_POLICY) :
			    NFR_POLICY_ACCEPT;
		c->type = dup_attr(nftnl_chain_get_str(nc, NFTNL_CHAIN_TYPE));
		chain_devs(c, nlh);
	}
	/* base chains created with counters (iptables-nft's) count policy hits */
	if (nftnl_chain_is_set(nc, NFTNL_CHAIN_PACKETS)) {
		c->has_counter = true;
		c->policy_packets = nftnl_chain_get_u64(nc, NFTNL_CHAIN_PACKETS);
	}
	nftnl_chain_free(nc);
	return MNL_CB_OK;
}

struct rule_scan {
	int kind;
	const char *target;
	struct nfm_prog *prog;
	bool has_packets;
	unsigned long long packets;
	const char *counter_obj;
};

static int rank(int kind)
{
	static const int r[] = {
		[NFR_KIND_NONE] = 0, [NFR_KIND_JUMP] = 1, [NFR_KIND_MAYBE] = 2,
		[NFR_KIND_DROP] = 3, [NFR_KIND_REJECT] = 4,
	};
	return r[kind];
}

static void scan_set(struct rule_scan *s, int kind, const char *target)
{
	if (rank(kind) > rank(s->kind)) {
		s->kind = kind;
		s->target = target;
	}
}

static int expr_cb(struct nftnl_expr *e, void *data)
{
	struct rule_scan *s = data;
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

	if (!name)
		return MNL_CB_OK;
	nfm_compile_nft(s->prog, e);
	if (!strcmp(name, "counter") && !s->has_packets) {
		s->has_packets = true;
		s->packets = nftnl_expr_get_u64(e, NFTNL_EXPR_CTR_PACKETS);
	}
	if (!strcmp(name, "objref") && !s->has_packets && !s->counter_obj &&
	    nftnl_expr_is_set(e, NFTNL_EXPR_OBJREF_IMM_NAME) &&
	    nftnl_expr_get_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE) == NFT_OBJECT_COUNTER)
		s->counter_obj = nftnl_expr_get_str(e, NFTNL_EXPR_OBJREF_IMM_NAME);
	if (!strcmp(name, "immediate") && nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT)) {
		int v = (int)nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT);

		if (v == NF_DROP)
			scan_set(s, NFR_KIND_DROP, NULL);
		else if (v == NFT_JUMP || v == NFT_GOTO)
			scan_set(s, NFR_KIND_JUMP,
				 nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN));
		else if (v == NF_QUEUE)
			scan_set(s, NFR_KIND_MAYBE, NULL);
	} else if (!strcmp(name, "reject")) {
		scan_set(s, NFR_KIND_REJECT, NULL);
	} else if (!strcmp(name, "target")) {
		/* iptables-nft keeps some targets as xtables extensions */
		const char *tg = nftnl_expr_get_str(e, NFTNL_EXPR_TG_NAME);

		if (tg && !strcmp(tg, "REJECT"))
			scan_set(s, NFR_KIND_REJECT, NULL);
		else if (tg && !strcmp(tg, "DROP"))
			scan_set(s, NFR_KIND_DROP, NULL);
	} else if (!strcmp(name, "lookup") &&
		   nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_DREG) &&
		   nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_DREG) == NFT_REG_VERDICT) {
		scan_set(s, NFR_KIND_MAYBE, NULL);	/* verdict map */
	} else if (!strcmp(name, "queue")) {
		scan_set(s, NFR_KIND_MAYBE, NULL);
	}
	return MNL_CB_OK;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nfr_ruleset *rs = data;
	struct nftnl_rule *nr = nftnl_rule_alloc();
	struct rule_scan scan = {};
	struct nfr_chain *c;
	struct nfr_rule *r;

	if (!nr)
		return MNL_CB_ERROR;
	if (nftnl_rule_nlmsg_parse(nlh, nr) < 0) {
		nftnl_rule_free(nr);
		return MNL_CB_ERROR;
	}
	c = nfr_chain_find(rs, NFR_ENGINE_NFT,
			   nftnl_rule_get_u32(nr, NFTNL_RULE_FAMILY),
			   nftnl_rule_get_str(nr, NFTNL_RULE_TABLE),
			   nftnl_rule_get_str(nr, NFTNL_RULE_CHAIN));
	if (c && (r = nfr_add_rule(c))) {
		r->handle = nftnl_rule_get_u64(nr, NFTNL_RULE_HANDLE);
		scan.prog = &r->prog;
		nftnl_expr_foreach(nr, expr_cb, &scan);
		r->kind = scan.kind;
		r->has_packets = scan.has_packets;
		r->packets = scan.packets;
		if (scan.counter_obj)
			r->counter_obj = strdup(scan.counter_obj);
		if (scan.target)
			r->target = strdup(scan.target);
	}
	nftnl_rule_free(nr);
	return MNL_CB_OK;
}

/* "udp dport 4791 drop # handle 2" -> the text and 2; false otherwise */
static bool split_handle(char *line, unsigned long long *handle)
{
	char *h = strstr(line, " # handle ");
	char *next;

	while (h && (next = strstr(h + 1, " # handle ")))
		h = next;
	if (!h)
		return false;
	*handle = strtoull(h + 10, NULL, 10);
	*h = 0;
	return true;
}

static int brace_delta(const char *s)
{
	bool quoted = false;
	int d = 0;

	for (; *s; s++) {
		if (*s == '"')
			quoted = !quoted;
		else if (!quoted && *s == '{')
			d++;
		else if (!quoted && *s == '}')
			d--;
	}
	return d;
}

static void unquote(char *s)
{
	size_t n = strlen(s);

	if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
		memmove(s, s + 1, n - 2);
		s[n - 2] = 0;
	}
}

/* rule texts from `list ruleset` with handles, as nft prints them */
static void attach_texts(struct nfr_ruleset *rs, const char *out)
{
	char *buf = strdup(out), *save = NULL, *line;
	char table[256] = "", chain[256] = "";
	int family = -1, depth = 0;

	if (!buf)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *s = line, word[32], name[256];
		int d;

		while (*s == '\t' || *s == ' ')
			s++;
		d = brace_delta(s);
		if (depth == 0 && sscanf(s, "table %31s %255s", word, name) == 2) {
			family = nfr_family_by_name(word);
			unquote(name);
			snprintf(table, sizeof(table), "%s", name);
		} else if (depth == 1 && sscanf(s, "chain %255s", name) == 1) {
			unquote(name);
			snprintf(chain, sizeof(chain), "%s", name);
		} else if (depth == 2 && chain[0] && d == 0) {
			unsigned long long handle;
			struct nfr_chain *c;

			if (split_handle(s, &handle) &&
			    (c = nfr_chain_find(rs, NFR_ENGINE_NFT, family, table, chain))) {
				for (int i = 0; i < c->nrules; i++)
					if (c->rules[i].handle == handle && !c->rules[i].text)
						c->rules[i].text = strdup(s);
			}
		}
		depth += d;
		if (depth <= 1)
			chain[0] = 0;
		if (depth <= 0) {
			depth = 0;
			table[0] = 0;
		}
	}
	free(buf);
}

struct nft_ctx *nfr_nft_ctx(unsigned int flags)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);

	if (!nft)
		return NULL;
	nft_ctx_output_set_flags(nft, flags);
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	return nft;
}

static void load_nft_texts(struct nfr_ruleset *rs)
{
	struct nft_ctx *nft = nfr_nft_ctx(NFT_CTX_OUTPUT_HANDLE |
					    NFT_CTX_OUTPUT_STATELESS);

	if (!nft)
		return;
	if (!nft_run_cmd_from_buffer(nft, "list ruleset"))
		attach_texts(rs, nft_ctx_get_output_buffer(nft));
	nft_ctx_free(nft);
}

/* ---- nftables sets and maps, with their elements ---- */

static int set_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nfr_ruleset *rs = data;
	struct nftnl_set *ns = nftnl_set_alloc();
	struct nfm_set *s;

	if (!ns)
		return MNL_CB_ERROR;
	if (nftnl_set_nlmsg_parse(nlh, ns) < 0 ||
	    !(s = realloc(rs->sets, (rs->nsets + 1) * sizeof(*s)))) {
		nftnl_set_free(ns);
		return MNL_CB_ERROR;
	}
	rs->sets = s;
	s = &rs->sets[rs->nsets++];
	memset(s, 0, sizeof(*s));
	s->family = nftnl_set_get_u32(ns, NFTNL_SET_FAMILY);
	s->table = dup_attr(nftnl_set_get_str(ns, NFTNL_SET_TABLE));
	s->name = dup_attr(nftnl_set_get_str(ns, NFTNL_SET_NAME));
	s->flags = nftnl_set_get_u32(ns, NFTNL_SET_FLAGS);
	s->key_len = nftnl_set_get_u32(ns, NFTNL_SET_KEY_LEN);
	if (s->key_len > NFM_DATA_LEN)
		s->key_len = NFM_DATA_LEN;
	if (nftnl_set_is_set(ns, NFTNL_SET_DATA_LEN))
		s->data_len = nftnl_set_get_u32(ns, NFTNL_SET_DATA_LEN);
	s->vmap = (s->flags & NFT_SET_MAP) &&
		  nftnl_set_is_set(ns, NFTNL_SET_DATA_TYPE) &&
		  nftnl_set_get_u32(ns, NFTNL_SET_DATA_TYPE) == NFT_DATA_VERDICT;
	if (nftnl_set_is_set(ns, NFTNL_SET_DESC_CONCAT)) {
		uint32_t n = 0;
		const uint8_t *fl = nftnl_set_get_data(ns, NFTNL_SET_DESC_CONCAT, &n);

		for (uint32_t i = 0; fl && i < n && i < 16; i++)
			s->field_len[s->nfields++] = fl[i];
	}
	nftnl_set_free(ns);
	return MNL_CB_OK;
}

static int elems_cb(const struct nlmsghdr *nlh, void *data)
{
	return nftnl_set_elems_nlmsg_parse(nlh, data) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
}

static int elem_cb(struct nftnl_set_elem *e, void *data)
{
	struct nfm_set *s = data;
	struct nfm_elem *x = realloc(s->elems, (s->nelems + 1) * sizeof(*x));
	const void *d;
	uint32_t len = 0;

	if (!x)
		return -1;
	s->elems = x;
	x = &s->elems[s->nelems++];
	memset(x, 0, sizeof(*x));
	if ((d = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &len))) {
		x->klen = len < NFM_DATA_LEN ? len : NFM_DATA_LEN;
		memcpy(x->key, d, x->klen);
	}
	if ((d = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY_END, &len))) {
		memcpy(x->key_end, d, len < NFM_DATA_LEN ? len : NFM_DATA_LEN);
		x->has_end = true;
	}
	if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_FLAGS)) {
		uint32_t f = nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_FLAGS);

		x->interval_end = f & NFT_SET_ELEM_INTERVAL_END;
		x->catchall = f & NFT_SET_ELEM_CATCHALL;
	}
	if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_VERDICT))
		x->verdict = nfm_verdict_of((int)nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_VERDICT));
	else
		x->verdict = NFM_V_CONTINUE;
	if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_CHAIN))
		x->chain = strdup(nftnl_set_elem_get_str(e, NFTNL_SET_ELEM_CHAIN));
	if ((d = nftnl_set_elem_get(e, NFTNL_SET_ELEM_DATA, &len))) {
		x->dlen = len < NFM_DATA_LEN ? len : NFM_DATA_LEN;
		memcpy(x->data, d, x->dlen);
	}
	return 0;
}

static int load_set_elems(struct nfm_set *s)
{
	struct nftnl_set *ns = nftnl_set_alloc();
	int err;

	if (!ns)
		return -ENOMEM;
	nftnl_set_set_str(ns, NFTNL_SET_TABLE, s->table);
	nftnl_set_set_str(ns, NFTNL_SET_NAME, s->name);
	nftnl_set_set_u32(ns, NFTNL_SET_FAMILY, s->family);
	err = nft_req(NFT_MSG_GETSETELEM, s->family, NLM_F_DUMP, ns, elems_cb, ns);
	if (err >= 0)
		nftnl_set_elem_foreach(ns, elem_cb, s);
	nftnl_set_free(ns);
	return err < 0 ? err : 0;
}

static void load_nft_sets(struct nfr_ruleset *rs)
{
	if (nft_dump(NFT_MSG_GETSET, set_cb, rs) < 0) {
		nfr_set_err(rs, "nftables sets: %s", strerror(errno));
		return;
	}
	for (int i = 0; i < rs->nsets; i++)
		if (load_set_elems(&rs->sets[i]) < 0)
			nfr_set_err(rs, "nftables set %s: cannot read elements",
				rs->sets[i].name);
}

/* a named counter's packets to every rule that counts with it */
static int obj_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nfr_ruleset *rs = data;
	struct nftnl_obj *o = nftnl_obj_alloc();
	const char *table, *name;
	int family;

	if (!o)
		return MNL_CB_OK;
	if (nftnl_obj_nlmsg_parse(nlh, o) < 0 ||
	    nftnl_obj_get_u32(o, NFTNL_OBJ_TYPE) != NFT_OBJECT_COUNTER)
		goto out;
	family = nftnl_obj_get_u32(o, NFTNL_OBJ_FAMILY);
	table = nftnl_obj_get_str(o, NFTNL_OBJ_TABLE);
	name = nftnl_obj_get_str(o, NFTNL_OBJ_NAME);
	for (int i = 0; table && name && i < rs->nchains; i++) {
		struct nfr_chain *c = &rs->chains[i];

		if (c->engine != NFR_ENGINE_NFT || c->family != family || strcmp(c->table, table))
			continue;
		for (int j = 0; j < c->nrules; j++) {
			struct nfr_rule *r = &c->rules[j];

			if (r->counter_obj && !strcmp(r->counter_obj, name)) {
				r->has_packets = true;
				r->packets = nftnl_obj_get_u64(o, NFTNL_OBJ_CTR_PKTS);
			}
		}
	}
out:
	nftnl_obj_free(o);
	return MNL_CB_OK;
}

/* the tables' handles, dumped before the chains: a table added again in
 * between leaves its chains with the old handle, which matches no later
 * counter snapshot (the safe way round) */
struct table_ids {
	struct { int family; char name[256]; unsigned long long handle; } *t;
	int n;
};

static int table_cb(const struct nlmsghdr *nlh, void *data)
{
	struct table_ids *ids = data;
	struct nftnl_table *t = nftnl_table_alloc();
	const char *name;

	if (!t)
		return MNL_CB_ERROR;
	if (nftnl_table_nlmsg_parse(nlh, t) == 0 && nftnl_table_is_set(t, NFTNL_TABLE_HANDLE) &&
	    (name = nftnl_table_get_str(t, NFTNL_TABLE_NAME))) {
		void *n = realloc(ids->t, (ids->n + 1) * sizeof(*ids->t));

		if (n) {
			ids->t = n;
			ids->t[ids->n].family = nftnl_table_get_u32(t, NFTNL_TABLE_FAMILY);
			snprintf(ids->t[ids->n].name, sizeof(ids->t[ids->n].name), "%s", name);
			ids->t[ids->n++].handle = nftnl_table_get_u64(t, NFTNL_TABLE_HANDLE);
		}
	}
	nftnl_table_free(t);
	return MNL_CB_OK;
}

static void table_ids_apply(struct nfr_ruleset *rs, struct table_ids *ids)
{
	for (int i = 0; i < rs->nchains; i++)
		for (int k = 0; k < ids->n; k++) {
			struct nfr_chain *c = &rs->chains[i];

			if (c->engine == NFR_ENGINE_NFT && c->family == ids->t[k].family &&
			    c->table && !strcmp(c->table, ids->t[k].name))
				c->table_handle = ids->t[k].handle;
		}
	free(ids->t);
	ids->t = NULL;
	ids->n = 0;
}

static int load_nft(struct nfr_ruleset *rs, bool counters_only)
{
	struct table_ids ids = {};
	int err;

	/* without table handles a rule's identity is its handle alone */
	nft_dump(NFT_MSG_GETTABLE, table_cb, &ids);
	err = nft_dump(NFT_MSG_GETCHAIN, chain_cb, rs);
	table_ids_apply(rs, &ids);
	if (err < 0) {
		nfr_set_err(rs, "nftables: %s", strerror(-err));
		return err;
	}
	err = nft_dump(NFT_MSG_GETRULE, rule_cb, rs);
	if (err < 0) {
		nfr_set_err(rs, "nftables rules: %s", strerror(-err));
		return err;
	}
	/* named counters: their rules count with them */
	nft_dump(NFT_MSG_GETOBJ, obj_cb, rs);
	rs->have_nft = true;
	if (counters_only)
		return 0;
	load_nft_sets(rs);
	load_nft_texts(rs);
	return 0;
}

static int load_all(struct nfr_ruleset *rs, bool counters_only)
{
	int err, err2, err3;

	memset(rs, 0, sizeof(*rs));
	err = load_nft(rs, counters_only);
	/* -c: every rule's and built-in chain's counters */
	err2 = nfr_load_legacy_family(rs, NFR_PROTO_IPV4, "/proc/self/net/ip_tables_names",
				  "iptables-legacy-save -c 2>/dev/null");
	err3 = nfr_load_legacy_family(rs, NFR_PROTO_IPV6, "/proc/self/net/ip6_tables_names",
				  "ip6tables-legacy-save -c 2>/dev/null");
	return err ?: err2 ?: err3;
}

int nfr_load(struct nfr_ruleset *rs)
{
	return load_all(rs, false);
}

int nfr_load_counters(struct nfr_ruleset *rs)
{
	return load_all(rs, true);
}
