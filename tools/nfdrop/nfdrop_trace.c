// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nfdrop --trace-rules: nftables' own tracing for rule-exact answers. A
 * temporary helper table marks the packets to trace (nftrace), the trace
 * socket (NFNLGRP_NFTRACE) tells which rule or policy dropped each, and
 * those drops are taken out of the count rows the kernel side made.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <sys/socket.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <libmnl/libmnl.h>
#include <libnftnl/table.h>
#include <libnftnl/trace.h>
#include <nftables/libnftables.h>
#include "nfdrop.h"
#include "nfdrop_row.h"
#include "nfdrop_trace.h"
#include "lib/cli.h"
#include "lib/netns.h"
#include "nfrules.h"

#define TRACE_TTL_S	10

bool nfdrop_trace_is_table(const char *table)
{
	return table && !strncmp(table, NFDROP_TRACE_TABLE_PREFIX,
				 strlen(NFDROP_TRACE_TABLE_PREFIX));
}

/*
 * The helper table: inet NFDROP_TRACE_TABLE_PREFIX<pid> with a prerouting
 * and an output chain at the first priority whose rules set nftrace for
 * the packets that match match_exprs (nft syntax; none: every packet), in
 * this thread's network namespace. trace_table_cleanup() removes tables of
 * that prefix whose process is gone and returns how many (or -errno).
 */

static int nft_cmd(const char *cmd, char *err, int errlen, char **out)
{
	struct nft_ctx *nft = nfr_nft_ctx(0);
	int ret;

	if (!nft) {
		snprintf(err, errlen, "cannot create an nftables context");
		return -ENOMEM;
	}
	ret = nft_run_cmd_from_buffer(nft, cmd);
	if (ret) {
		const char *e = nft_ctx_get_error_buffer(nft);

		snprintf(err, errlen, "%.*s", (int)strcspn(e, "\n"), e);
		ret = -EINVAL;
	} else if (out) {
		*out = strdup(nft_ctx_get_output_buffer(nft));
	}
	nft_ctx_free(nft);
	return ret;
}

static int trace_table_add(int pid, const char *const *match_exprs, int nexprs,
		  char *err, int errlen)
{
	static const char *const chains[][2] = {
		{ "pre", "prerouting" }, { "out", "output" },
	};
	char *cmd = NULL, *next;
	int ret;

	if (asprintf(&cmd, "add table inet " NFDROP_TRACE_TABLE_PREFIX "%d\n", pid) < 0)
		return -ENOMEM;
	for (int c = 0; c < 2; c++) {
		/* first priority: the packet is marked before any chain sees it */
		ret = asprintf(&next, "%sadd chain inet " NFDROP_TRACE_TABLE_PREFIX
			       "%d %s { type filter hook %s priority -2147483648; }\n",
			       cmd, pid, chains[c][0], chains[c][1]);
		free(cmd);
		if (ret < 0)
			return -ENOMEM;
		cmd = next;
		for (int i = 0; i < (nexprs ? nexprs : 1); i++) {
			ret = asprintf(&next, "%sadd rule inet " NFDROP_TRACE_TABLE_PREFIX
				       "%d %s %s meta nftrace set 1\n", cmd, pid,
				       chains[c][0], nexprs ? match_exprs[i] : "");
			free(cmd);
			if (ret < 0)
				return -ENOMEM;
			cmd = next;
		}
	}
	ret = nft_cmd(cmd, err, errlen, NULL);
	free(cmd);
	return ret;
}

static int trace_table_del(int pid, char *err, int errlen)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "delete table inet " NFDROP_TRACE_TABLE_PREFIX "%d", pid);
	return nft_cmd(cmd, err, errlen, NULL);
}

/* is pid a live nfdrop (a reused pid of another program does not count) */
static bool owner_alive(int pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	if (kill(pid, 0) && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return true;	/* another pid namespace: leave it alone */
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	return !strncmp(comm, "nfdrop", 6);
}

static int trace_table_cleanup(char *err, int errlen)
{
	char *out = NULL, *line, *save = NULL;
	int removed = 0, ret;

	ret = nft_cmd("list tables inet", err, errlen, &out);
	if (ret)
		return ret;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[256];
		int pid;

		if (sscanf(line, "table inet %255s", name) != 1 || !nfdrop_trace_is_table(name))
			continue;
		pid = atoi(name + strlen(NFDROP_TRACE_TABLE_PREFIX));
		if (pid <= 0 || pid == getpid() || owner_alive(pid))
			continue;
		if (!trace_table_del(pid, err, errlen))
			removed++;
	}
	free(out);
	return removed;
}

/* the packet a trace message is about, from the headers it carries:
 * what nfdrop's kernel side keeps of a dropped packet (struct nfd_key) */
struct trace_pkt {
	unsigned char family;		/* 4 or 6, 0: no IP header */
	unsigned char proto;
	bool ports;
	unsigned short sport, dport;	/* host byte order */
	unsigned char saddr[16], daddr[16];	/* IPv4 in the first 4 bytes */
};

struct trace_item {
	unsigned int netns;
	int pf;			/* NFPROTO of the packet */
	int table_family;
	char table[64];
	char chain[256];
	unsigned long long handle;	/* 0: the chain's policy */
	struct trace_pkt pkt;
	unsigned long long balance;	/* drops not yet given to a count row */
	unsigned long long total;
	time_t last;
};

static struct trace_item *titems;
static int ntitems;
static struct {
	unsigned int inum;
	struct mnl_socket *nl;
	bool added;
	bool gone;		/* the kernel said our table was deleted */
	bool stopped;		/* ... and it could not be added again */
	char exprs[2][64];	/* the match expressions, to add it again */
	int nex;
	void (*on_table)(bool restored);
} tsock;
static unsigned long long trace_lost, trace_lost_seen, trace_untied, trace_nopkt;

/* the packet of a trace message; false when it carries no IP header */
static bool trace_pkt_of(const struct nftnl_trace *t, struct trace_pkt *p)
{
	const unsigned char *nh, *th;
	uint32_t nlen = 0, tlen = 0;

	memset(p, 0, sizeof(*p));
	if (!nftnl_trace_is_set(t, NFTNL_TRACE_NETWORK_HEADER))
		return false;
	nh = nftnl_trace_get_data(t, NFTNL_TRACE_NETWORK_HEADER, &nlen);
	if (!nh || nlen < 1)
		return false;
	if ((nh[0] >> 4) == 4 && nlen >= 20) {
		p->family = 4;
		p->proto = nh[9];
		memcpy(p->saddr, nh + 12, 4);
		memcpy(p->daddr, nh + 16, 4);
	} else if ((nh[0] >> 4) == 6 && nlen >= 40) {
		p->family = 6;
		p->proto = nh[6];
		memcpy(p->saddr, nh + 8, 16);
		memcpy(p->daddr, nh + 24, 16);
	} else {
		return false;
	}
	th = nftnl_trace_is_set(t, NFTNL_TRACE_TRANSPORT_HEADER) ?
	     nftnl_trace_get_data(t, NFTNL_TRACE_TRANSPORT_HEADER, &tlen) : NULL;
	if (th && tlen >= 4 && (p->proto == 17 || p->proto == 6)) {
		p->ports = true;
		p->sport = th[0] << 8 | th[1];
		p->dport = th[2] << 8 | th[3];
	}
	return true;
}

/*
 * The kernel puts the packet's headers in the first trace message of each
 * base chain's run only; the later ones (a drop in a jumped-to chain)
 * carry the trace id alone, the same for every message of that packet. The
 * last headers seen per id stand in for them (a reused id is a new packet,
 * whose first message brings its own headers first).
 */
#define TRACE_IDS	4096

static struct {
	uint32_t id;
	bool set;
	struct trace_pkt pkt;
} trace_ids[TRACE_IDS];

static bool trace_pkt_by_id(const struct nftnl_trace *t, struct trace_pkt *p)
{
	uint32_t id;
	bool have = trace_pkt_of(t, p);

	if (!nftnl_trace_is_set(t, NFTNL_TRACE_ID))
		return have;
	id = nftnl_trace_get_u32(t, NFTNL_TRACE_ID);
	if (have) {
		trace_ids[id % TRACE_IDS].id = id;
		trace_ids[id % TRACE_IDS].set = true;
		trace_ids[id % TRACE_IDS].pkt = *p;
		return true;
	}
	if (!trace_ids[id % TRACE_IDS].set || trace_ids[id % TRACE_IDS].id != id)
		return false;
	*p = trace_ids[id % TRACE_IDS].pkt;
	return true;
}

/* is the trace's packet the one of key k (its signature) */
static bool trace_pkt_is(const struct trace_pkt *p, const struct nfd_key *k)
{
	if (!k->sig || !p->family || k->sig_family != p->family || k->sig_proto != p->proto)
		return false;
	if (memcmp(k->saddr, p->saddr, 16) || memcmp(k->daddr, p->daddr, 16))
		return false;
	return !k->sig_ports || (p->ports && k->sport == p->sport && k->dport == p->dport);
}

static void trace_record(const struct nftnl_trace *t)
{
	unsigned int type = nftnl_trace_get_u32(t, NFTNL_TRACE_TYPE);
	const char *table = nftnl_trace_get_str(t, NFTNL_TRACE_TABLE);
	const char *chain = nftnl_trace_get_str(t, NFTNL_TRACE_CHAIN);
	unsigned long long handle = 0;
	struct trace_item *it = NULL;
	struct trace_pkt pkt;
	int pf, fam;

	if (!table || !chain || nfdrop_trace_is_table(table))
		return;
	/* every message may bring the packet's headers */
	if (!trace_pkt_by_id(t, &pkt))
		pkt.family = 0;
	if (type == NFT_TRACETYPE_RULE) {
		if (!nftnl_trace_is_set(t, NFTNL_TRACE_VERDICT) ||
		    (nftnl_trace_get_u32(t, NFTNL_TRACE_VERDICT) & NF_VERDICT_MASK) != NF_DROP)
			return;
		handle = nftnl_trace_get_u64(t, NFTNL_TRACE_RULE_HANDLE);
	} else if (type == NFT_TRACETYPE_POLICY) {
		if (!nftnl_trace_is_set(t, NFTNL_TRACE_POLICY) ||
		    nftnl_trace_get_u32(t, NFTNL_TRACE_POLICY) != NF_DROP)
			return;
	} else {
		return;
	}
	pf = nftnl_trace_is_set(t, NFTNL_TRACE_NFPROTO) ?
	     (int)nftnl_trace_get_u32(t, NFTNL_TRACE_NFPROTO) : 0;
	fam = nftnl_trace_get_u32(t, NFTNL_TRACE_FAMILY);
	if (!pf)
		pf = fam;
	/* a drop that cannot be tied to its packet goes to no row */
	if (!pkt.family) {
		trace_nopkt++;
		return;
	}
	for (int i = 0; i < ntitems && !it; i++) {
		struct trace_item *x = &titems[i];

		if (x->netns == tsock.inum && x->pf == pf && x->table_family == fam &&
		    x->handle == handle && !strcmp(x->table, table) &&
		    !strcmp(x->chain, chain) && !memcmp(&x->pkt, &pkt, sizeof(pkt)))
			it = x;
	}
	if (!it) {
		struct trace_item *n = realloc(titems, (ntitems + 1) * sizeof(*n));

		if (!n)
			return;
		titems = n;
		it = &titems[ntitems++];
		memset(it, 0, sizeof(*it));
		it->netns = tsock.inum;
		it->pf = pf;
		it->table_family = fam;
		snprintf(it->table, sizeof(it->table), "%s", table);
		snprintf(it->chain, sizeof(it->chain), "%s", chain);
		it->handle = handle;
		it->pkt = pkt;
	}
	it->balance++;
	it->total++;
	it->last = time(NULL);
}

/* a table deleted (NFNLGRP_NFTABLES): ours, by `nft flush ruleset` or
 * another hand, while we still keep it */
static void table_deleted(const struct nlmsghdr *nlh)
{
	struct nftnl_table *t = nftnl_table_alloc();
	char ours[64];
	const char *name;

	if (!t)
		return;
	snprintf(ours, sizeof(ours), NFDROP_TRACE_TABLE_PREFIX "%d", getpid());
	if (nftnl_table_nlmsg_parse(nlh, t) == 0 &&
	    nftnl_table_get_u32(t, NFTNL_TABLE_FAMILY) == NFPROTO_INET) {
		name = nftnl_table_get_str(t, NFTNL_TABLE_NAME);
		if (name && !strcmp(name, ours) && tsock.added)
			tsock.gone = true;
	}
	nftnl_table_free(t);
}

static int trace_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_trace *t;

	if (NFNL_MSG_TYPE(nlh->nlmsg_type) == NFT_MSG_DELTABLE)
		table_deleted(nlh);
	if (NFNL_MSG_TYPE(nlh->nlmsg_type) != NFT_MSG_TRACE)
		return MNL_CB_OK;
	t = nftnl_trace_alloc();
	if (!t)
		return MNL_CB_OK;
	if (nftnl_trace_nlmsg_parse(nlh, t) == 0)
		trace_record(t);
	nftnl_trace_free(t);
	return MNL_CB_OK;
}

/*
 * Our table was deleted (`nft flush ruleset` deletes every table): add
 * it again, in its namespace, and say so; packets dropped in between
 * were not traced (their rows say so by the usual method).
 */
static void trace_table_restore(void)
{
	const char *ex[2] = { tsock.exprs[0], tsock.exprs[1] };
	char err[256];
	int saved;
	bool ok;

	tsock.gone = false;
	tsock.added = false;
	ok = !netns_enter(tsock.inum, &saved);
	if (ok) {
		ok = !trace_table_add(getpid(), ex, tsock.nex, err, sizeof(err));
		netns_leave(saved);
	}
	tsock.added = ok;
	tsock.stopped = !ok;
	if (tsock.on_table)
		tsock.on_table(ok);
}

bool nfdrop_trace_stopped(void)
{
	return tsock.stopped;
}

/* everything queued on the trace socket, without blocking */
void nfdrop_trace_drain(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE * 4];
	int n;

	if (!tsock.nl)
		return;
	for (;;) {
		n = recv(mnl_socket_get_fd(tsock.nl), buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			trace_lost++;
			continue;
		}
		if (n <= 0)
			break;
		mnl_cb_run(buf, n, 0, 0, trace_cb, NULL);
	}
	if (tsock.gone)
		trace_table_restore();
}

void nfdrop_trace_expire(void)
{
	time_t now = time(NULL);

	for (int i = 0; i < ntitems; i++)
		if (titems[i].balance && now - titems[i].last > TRACE_TTL_S) {
			trace_untied += titems[i].balance;
			titems[i].balance = 0;
		}
}

void nfdrop_trace_remove(void)
{
	char err[256];
	int saved;

	if (!tsock.added)
		return;
	if (netns_enter(tsock.inum, &saved)) {
		cli_err("cannot enter netns %u to remove table inet "
			NFDROP_TRACE_TABLE_PREFIX "%d", tsock.inum, getpid());
		return;
	}
	if (trace_table_del(getpid(), err, sizeof(err)))
		cli_err("removing table inet " NFDROP_TRACE_TABLE_PREFIX "%d: %s",
			getpid(), err);
	else
		tsock.added = false;
	netns_leave(saved);
}

void nfdrop_trace_setup(unsigned int inum, const char *ns_name, int roce_port,
			int port, void (*on_table)(bool restored))
{
	char err[256], (*exprs)[64] = tsock.exprs;
	const char *ex[2];
	int nex = 0, saved, removed, rcvbuf = 8 << 20;
	unsigned int group = NFNLGRP_NFTRACE, tables = NFNLGRP_NFTABLES;

	tsock.inum = inum;
	tsock.on_table = on_table;
	if (netns_enter(tsock.inum, &saved))
		cli_die("cannot enter network namespace %s", ns_name);
	removed = trace_table_cleanup(err, sizeof(err));
	if (removed > 0)
		cli_err("removed %d trace table(s) left by a killed nfdrop", removed);
	if (roce_port) {
		snprintf(exprs[nex], sizeof(exprs[nex]), "udp dport %d", roce_port);
		ex[nex] = exprs[nex];
		nex++;
	} else if (port) {
		snprintf(exprs[0], sizeof(exprs[0]), "udp sport %d", port);
		snprintf(exprs[1], sizeof(exprs[1]), "udp dport %d", port);
		ex[0] = exprs[0];
		ex[1] = exprs[1];
		nex = 2;
	} else {
		cli_err("--trace-rules with -A and without -P traces every packet");
	}
	/* listen first: no trace event of the first packets is missed */
	tsock.nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!tsock.nl || mnl_socket_bind(tsock.nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_setsockopt(tsock.nl, NETLINK_ADD_MEMBERSHIP, &group,
				  sizeof(group)) < 0 ||
	    mnl_socket_setsockopt(tsock.nl, NETLINK_ADD_MEMBERSHIP, &tables,
				  sizeof(tables)) < 0) {
		netns_leave(saved);
		cli_die("cannot listen for nftables trace events: %s", strerror(errno));
	}
	setsockopt(mnl_socket_get_fd(tsock.nl), SOL_SOCKET, SO_RCVBUFFORCE,
		   &rcvbuf, sizeof(rcvbuf));
	tsock.nex = nex;
	if (trace_table_add(getpid(), ex, nex, err, sizeof(err))) {
		netns_leave(saved);
		cli_die("cannot add the trace table: %s", err);
	}
	tsock.added = true;
	netns_leave(saved);
}

int nfdrop_trace_split(const struct nfd_key *k, struct nfdrop_row *r,
		       const struct nfr_ruleset *rs, struct nfdrop_row *out, int max)
{
	int n = 0;

	for (int i = 0; i < ntitems && r->packets && n < max; i++) {
		struct trace_item *it = &titems[i];
		const struct nfr_chain *tc, *base = NULL;
		unsigned long long take;
		struct nfdrop_row *o;

		if (!it->balance || it->netns != r->netns || it->pf != r->pf ||
		    !trace_pkt_is(&it->pkt, k))
			continue;
		tc = rs ? nfr_chain_find(rs, NFR_ENGINE_NFT, it->table_family,
					 it->table, it->chain) : NULL;
		/* the base chain the row's packets traversed and this chain is in */
		for (int c = 0; tc && c < (r->ncands ? r->ncands : 0); c++) {
			const struct nfr_chain *bc = nfr_chain_find(rs, NFR_ENGINE_NFT,
				r->cands[c].family, r->cands[c].table, r->cands[c].chain);

			if (bc && r->cands[c].engine == NFR_ENGINE_NFT &&
			    nfr_reaches(rs, bc, tc)) {
				base = bc;
				break;
			}
		}
		if (!base)
			continue;
		take = it->balance < r->packets ? it->balance : r->packets;
		o = &out[n++];
		*o = *r;
		o->packets = take;
		o->rejected = r->rejected < take ? r->rejected : take;
		r->packets -= take;
		r->rejected -= o->rejected;
		it->balance -= take;
		o->source = NFDROP_SRC_TRACE;
		/* the trace named the rule: the walk's candidates and
		 * counters are the original row's, not this one's */
		o->ev.used = false;
		o->inferred &= ~(NFDROP_INF_TABLE | NFDROP_INF_CHAIN | NFDROP_INF_RULE |
				 NFDROP_INF_VERDICT);
		o->engine = NFR_ENGINE_NFT;
		o->table_family = base->family;
		snprintf(o->table, sizeof(o->table), "%s", base->table);
		snprintf(o->chain, sizeof(o->chain), "%s", base->name);
		o->prio = base->prio;
		o->policy = base->policy;
		o->chain_known = true;
		o->ncands = 0;
		o->note = NULL;
		if (!it->handle) {
			o->verdict = NFDROP_V_POLICY;
			o->rule_known = false;
			o->handle = 0;
			o->rule_chain[0] = o->rule_text[0] = 0;
			continue;
		}
		o->rule_known = true;
		o->handle = it->handle;
		snprintf(o->rule_chain, sizeof(o->rule_chain), "%s", it->chain);
		o->rule_text[0] = 0;
		o->verdict = NFDROP_V_DROP;
		for (int j = 0; j < tc->nrules; j++) {
			if (tc->rules[j].handle != it->handle)
				continue;
			snprintf(o->rule_text, sizeof(o->rule_text), "%s",
				 tc->rules[j].text ? tc->rules[j].text : "");
			if (tc->rules[j].kind == NFR_KIND_REJECT)
				o->verdict = NFDROP_V_REJECT;
		}
		/* the trace names a handle; across a reload the same handle
		 * may be another rule in the ruleset read now */
		if (r->ev.changed) {
			o->inferred |= NFDROP_INF_RULE | NFDROP_INF_VERDICT;
			o->note = "the ruleset changed (reloaded?) while tracing: the "
				  "handle the trace named may be another rule's now";
		}
	}
	return n;
}

int nfdrop_trace_fd(void)
{
	return tsock.nl ? mnl_socket_get_fd(tsock.nl) : -1;
}

bool nfdrop_trace_covers(unsigned int netns)
{
	return tsock.nl && netns == tsock.inum;
}

void nfdrop_trace_stats(struct nfdrop_trace_stats *st)
{
	st->overruns = trace_lost - trace_lost_seen;
	st->overruns_total = trace_lost;
	st->untied = trace_untied + trace_nopkt;
	trace_lost_seen = trace_lost;
	trace_untied = trace_nopkt = 0;
}

void nfdrop_trace_close(void)
{
	nfdrop_trace_remove();
	if (tsock.nl)
		mnl_socket_close(tsock.nl);
	tsock.nl = NULL;
}
