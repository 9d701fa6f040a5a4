/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which rules of a ruleset can have dropped one packet: the packet's
 * addresses, ports, protocol and interfaces run through a small model of
 * the rules (nftables expressions as the kernel evaluates them, and
 * iptables-legacy lines in the same form), every way a chain is reached
 * followed: jump, goto, verdict maps, return. ct state (nft, and the
 * xtables conntrack/state matches) and the NAT bits of ct status are
 * evaluated where the packet's conntrack is known. What the model does not
 * understand (ct mark, limit, other xtables matches, ...) is taken both ways,
 * so the answer is a superset of the truth: one candidate means certain.
 *
 * Also here: rule counters, read as snapshots. A rule whose counter did
 * not move between two snapshots dropped nothing between them.
 */
#ifndef AGENTXDP_NFMATCH_H
#define AGENTXDP_NFMATCH_H

#include <stdbool.h>

struct nfr_ruleset;
struct nfr_chain;
struct nfr_rule;
struct nftnl_expr;

/* the packet as the drop event saw it */
struct nfm_pkt {
	int family;			/* 4 or 6; 0 unknown */
	int l4proto;			/* IPPROTO_*; -1 unknown */
	unsigned char saddr[16], daddr[16];
	bool addrs_known;		/* saddr and daddr are the packet's */
	int sport, dport;		/* -1 unknown */
	char iifname[16], oifname[16];
	bool iif_known, oif_known;	/* known: "" is "no device" */
	int iif, oif;			/* ifindex, 0 unknown */
	unsigned int mark;		/* skb->mark (meta mark) */
	bool mark_known;		/* mark is what the chain saw */
	/* conntrack as the chain saw it: one NFM_CT_* state bit, 0 unknown */
	int ct_state;
	bool ct_nat_known;		/* ct_nat is the entry's */
	unsigned int ct_nat;		/* IPS_SRC_NAT | IPS_DST_NAT of ct->status */
	bool ct_done_known;		/* ct_done is the entry's */
	unsigned int ct_done;		/* IPS_SRC_NAT_DONE | IPS_DST_NAT_DONE */
	/* the chain may not have seen the packet at all (a nat chain the
	 * packet may not have been a connection's first for, a chain bound
	 * to devices the packet's is not known to be one of): the walk goes
	 * on past it whatever it does */
	bool may_skip;
};

/* ct state bits as nft's register holds them (NF_CT_STATE_*_BIT) */
#define NFM_CT_INVALID		0x01
#define NFM_CT_ESTABLISHED	0x02
#define NFM_CT_RELATED		0x04
#define NFM_CT_NEW		0x08
#define NFM_CT_UNTRACKED	0x40
/* the xtables conntrack match's virtual states, from ct->status */
#define NFM_CT_SNAT		0x100
#define NFM_CT_DNAT		0x200

/* the state a ct state match sees (net/netfilter/nft_ct.c): an entry's
 * ctinfo (enum ip_conntrack_info), else untracked or invalid */
int nfm_ct_state_of(bool entry, int ctinfo);
/* "new", "invalid", ...; "?" for 0 */
const char *nfm_ct_state_name(int state);

enum nfm_op_type {
	NFM_OP_PAYLOAD,		/* load packet bytes into a register */
	NFM_OP_META,		/* load meta data (l4proto, iifname, ...) */
	NFM_OP_BITWISE,		/* (reg & mask) ^ xor */
	NFM_OP_CMP,
	NFM_OP_RANGE,
	NFM_OP_LOOKUP,		/* set membership, map or verdict map */
	NFM_OP_IMM_DATA,	/* constant into a register */
	NFM_OP_VERDICT,		/* the rule's verdict */
	NFM_OP_COUNTER,		/* an anonymous counter */
	NFM_OP_CT,		/* nft ct load (key: NFT_CT_STATE, _STATUS) */
	NFM_OP_XT_STATE,	/* xtables conntrack --ctstate / state --state:
				 * key a mask of NFM_CT_*, inv */
	NFM_OP_NOOP,		/* a statement that never stops the rule */
	NFM_OP_UNKNOWN,		/* may stop the rule or not, clobbers registers */
};

/* verdicts, in the walk's own terms */
enum nfm_verdict {
	NFM_V_CONTINUE,
	NFM_V_ACCEPT,
	NFM_V_DROP,
	NFM_V_REJECT,
	NFM_V_JUMP,
	NFM_V_GOTO,
	NFM_V_RETURN,
	NFM_V_MAYBE,		/* queue, nat, unknown target: may drop */
};

#define NFM_DATA_LEN 64		/* a concatenation of up to 16 registers */

struct nfm_op {
	unsigned char type;	/* enum nfm_op_type */
	unsigned char base;	/* payload base */
	unsigned char op;	/* cmp / range operator */
	bool inv;		/* lookup: NFT_LOOKUP_F_INV */
	unsigned char sreg, dreg;	/* byte offsets in the register file */
	bool dreg_verdict;	/* lookup: into the verdict (a vmap) */
	bool has_dreg;
	unsigned char len;
	unsigned int off;	/* payload offset */
	unsigned int key;	/* meta key */
	int verdict;		/* NFM_OP_VERDICT: enum nfm_verdict */
	char *name;		/* set, chain, or the expression not understood */
	unsigned char data[NFM_DATA_LEN], data2[NFM_DATA_LEN];
};

struct nfm_prog {
	struct nfm_op *ops;
	int nops;
	bool counter;		/* a counter runs before every verdict */
};

/* a set or map of an nftables table */
struct nfm_elem {
	unsigned char key[NFM_DATA_LEN], key_end[NFM_DATA_LEN];
	unsigned char data[NFM_DATA_LEN];
	int klen, dlen;
	bool has_end;		/* key..key_end (concatenated ranges) */
	bool interval_end;	/* an interval's exclusive end */
	bool catchall;		/* "*": whatever no other element matches */
	int verdict;		/* vmap: enum nfm_verdict */
	char *chain;		/* vmap: jump/goto target */
};

struct nfm_set {
	int family;
	char *table, *name;
	unsigned int flags;	/* NFT_SET_* */
	int key_len, data_len;
	bool vmap;
	int nfields;
	unsigned char field_len[16];
	struct nfm_elem *elems;
	int nelems;
};

/* NF_DROP, NFT_JUMP, ... as enum nfm_verdict */
int nfm_verdict_of(int code);
void nfm_prog_free(struct nfm_prog *p);
void nfm_set_free(struct nfm_set *s);
/* compile one nftables expression into p */
void nfm_compile_nft(struct nfm_prog *p, struct nftnl_expr *e);
/* compile an iptables-save "-A CHAIN ..." line; is_chain(name) says
 * whether a target is a chain of the table */
void nfm_compile_legacy(struct nfm_prog *p, int family, const char *line,
			bool (*is_chain)(const char *name, void *arg), void *arg);
/* chains a rule can jump or go to (verdict maps included) */
int nfm_targets(const struct nfr_ruleset *rs, const struct nfr_chain *c,
		const struct nfm_prog *p, const char **out, int max);
/* can the rule end in a drop (a drop element in a vmap included) */
bool nfm_can_drop(const struct nfr_ruleset *rs, const struct nfr_chain *c,
		  const struct nfm_prog *p);

/* one way the packet can have been dropped */
struct nfm_cand {
	const struct nfr_chain *base;	/* the base chain it was in */
	const struct nfr_chain *chain;	/* the chain of the rule */
	const struct nfr_rule *rule;	/* NULL: base's policy */
	int verdict;			/* NFM_V_DROP, _REJECT, _MAYBE */
};

#define NFM_MAX_CANDS 16

struct nfm_walk {
	struct nfm_cand cands[NFM_MAX_CANDS];
	int ncands;
	bool complete;		/* every path followed, all candidates kept */
	char evaluated[160];	/* matches evaluated on the packet */
	char unknown[160];	/* expressions not understood on the way */
	int steps;
};

/*
 * Walk the base chains of one hook, in priority order, base i for pkts[i]
 * (the packet as that chain saw it: NAT before the drop may have changed
 * it): a chain after the first is reached only if one before can accept
 * the packet, or may not have seen it (nfm_pkt.may_skip).
 */
void nfm_walk_hook(const struct nfr_ruleset *rs,
		   const struct nfr_chain *const *bases, int nbases,
		   const struct nfm_pkt *const *pkts, struct nfm_walk *w);

/* ---- counters ---- */

struct nfm_count {
	int engine, family;
	char *table, *chain;
	unsigned long long table_handle;	/* 0 unknown (legacy) */
	unsigned long long handle;	/* 0: the chain's policy */
	unsigned long long packets;
};

struct nfm_counters {
	struct nfm_count *c;
	int n;
	bool valid;
	long long gen;		/* nfr_nft_gen() before the read, -1 unknown */
};

/* the counters of this thread's network namespace (nftables rules with a
 * counter, base chains with counters, every iptables-legacy rule) */
int nfm_counters_read(struct nfm_counters *out);
void nfm_counters_free(struct nfm_counters *c);
/* did the ruleset change between snapshots a and b: the nftables
 * generation moved, or a counted rule is in one and not the other */
bool nfm_counters_changed(const struct nfm_counters *a, const struct nfm_counters *b);
/* packets counted by a rule (handle 0: policy) between a and b; -1 when
 * either snapshot lacks it. table_handle (0: unknown) tells a table added
 * again under its name, whose rule handles start again, from the table
 * the rule is in */
long long nfm_counter_delta(const struct nfm_counters *a,
			    const struct nfm_counters *b, int engine, int family,
			    const char *table, const char *chain,
			    unsigned long long handle, unsigned long long table_handle);

#endif
