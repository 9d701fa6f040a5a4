/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One row of nfdrop's output: a drop named as far as the kernel, the
 * ruleset and the evidence tell (tools/nfdrop/nfdrop.c builds and prints them,
 * tools/nfdrop/nfdrop_evidence.c settles rule and verdict from the evidence).
 */
#ifndef AGENTXDP_NFDROP_ROW_H
#define AGENTXDP_NFDROP_ROW_H

#include <stddef.h>
#include "nfdrop_evidence.h"

#define NFDROP_MAX_CANDS	8
#define NFDROP_MAX_HITS		8

/* QUEUE: a queue verdict (nft queue, NFQUEUE) found no listener and
 * nf_queue() dropped the packet */
enum nfdrop_verdict {
	NFDROP_V_UNKNOWN, NFDROP_V_DROP, NFDROP_V_REJECT, NFDROP_V_POLICY, NFDROP_V_QUEUE
};

/* where a row's names came from (nfdrop_source_names has their words) */
enum nfdrop_row_source {
	NFDROP_SRC_NONE, NFDROP_SRC_FEXIT, NFDROP_SRC_STACK, NFDROP_SRC_TRACE
};

/* why an IP packet's walk vouches for nothing */
enum nfdrop_unwalked {
	NFDROP_UNWALKED_NO,		/* walked, or not an IP packet */
	NFDROP_UNWALKED_NOSIG,		/* its signature was not kept */
	NFDROP_UNWALKED_NOMATCH,	/* it met no drop rule */
};

/* inferred-field bits */
#define NFDROP_INF_TABLE	0x1
#define NFDROP_INF_CHAIN	0x2
#define NFDROP_INF_RULE		0x4
#define NFDROP_INF_VERDICT	0x8
#define NFDROP_INF_HOOK		0x10

/*
 * Names in rows and candidates, and the candidates' rule texts, with the
 * lengths they had when rows held copies of them (longer ones are cut
 * where snprintf() into such a buffer would cut them).
 */
#define NFDROP_TABLE_SIZE	64
#define NFDROP_CHAIN_SIZE	256
#define NFDROP_TEXT_SIZE	512

/*
 * The strings of candidates (struct nfdrop_cand here, struct ev_cand of
 * nfdrop_evidence.h) are not copies but pointers, and not into the cached
 * ruleset whose chains and rules they name: nfdrop_rules_for() frees a
 * namespace's ruleset when it reads it again, and rows outlive that (a
 * key's row is named when the key is first seen, and settled and printed
 * at the next report; rows are merged over the drains up to it; rows are
 * copied by value). So they point into one pool of interned strings
 * (nfdrop_str(), kept by tools/nfdrop/nfdrop_names.c), which nothing empties
 * while rows may exist: nfdrop and rocediag free it at exit, after their
 * last row (nfdrop_strs_free()), so no row ever points at freed memory.
 * It holds each distinct table name, chain name and rule text ever named
 * as a candidate once: a re-read of an unchanged ruleset adds nothing,
 * and it grows only with rules that are new.
 */
const char *nfdrop_str(const char *s, size_t size);
/* at exit, after the last row: every string nfdrop_str() gave freed */
void nfdrop_strs_free(void);

struct nfdrop_cand_rule {
	const char *chain;	/* nfdrop_str() */
	unsigned long long handle;
	int kind;
	const char *text;	/* nfdrop_str() */
};

struct nfdrop_cand {
	int engine;
	int family;
	const char *table;	/* nfdrop_str() */
	const char *chain;	/* nfdrop_str() */
	int prio;
	int policy;
	int nrules;		/* rules that can drop, jumps followed */
	struct nfdrop_cand_rule rules[NFDROP_MAX_HITS];
	bool policy_cand;	/* its policy may have dropped it */
};

struct nfdrop_row {
	/* identity */
	unsigned int netns;
	int pf;			/* NFR_PROTO_* of the hook, 0 unknown */
	char hook[16];		/* "" unknown */
	int engine;
	int table_family;
	char table[NFDROP_TABLE_SIZE];
	char chain[NFDROP_CHAIN_SIZE];
	char rule_chain[NFDROP_CHAIN_SIZE];
	unsigned long long handle;	/* 0: none */
	int verdict;
	unsigned int inferred;
	int source;		/* enum nfdrop_row_source */
	/* details */
	char netns_name[64];
	char hook_fn[64];
	char location[64];
	char rule_text[NFDROP_TEXT_SIZE];
	int prio;
	int policy;
	int settle_policy;	/* policy of the chain settle() looks at */
	bool chain_known;
	bool rule_known;
	bool dev_unknown;	/* chains bound to devices are candidates, and
				 * whether the packet's is one is not known */
	int unwalked;		/* enum nfdrop_unwalked */
	bool queue;		/* freed by nf_queue(): a queue verdict, no listener */
	const char *note;
	int ncands;
	struct nfdrop_cand cands[NFDROP_MAX_CANDS];
	struct ev_set ev;	/* the packet run through the rules, weighed */
	/* counts */
	unsigned long long packets;
	unsigned long long rejected;
	int ct_states;		/* NFM_CT_* the packets had at the drop, 0 none read */
};
/* 5,440 bytes on x86_64 (72,896 while candidates held copies of their
 * strings): the comments that keep rows off the stack say 5 KB */
_Static_assert(sizeof(struct nfdrop_row) > 4 * 1024 && sizeof(struct nfdrop_row) < 7 * 1024,
	       "a row is no longer about 5 KB: correct the comments that say so");

/* rule and verdict of r from its evidence (r->ev), for packets of which
 * rejected were answered with a REJECT reply */
void ev_settle_row(struct nfdrop_row *r, unsigned long long packets,
		   unsigned long long rejected, bool reject_complete);
/* certain rows whose rule's counter moved less than their packets
 * together made inferred (rows of one report) */
void ev_check_rows(struct nfdrop_row *rows, int n);

#endif
