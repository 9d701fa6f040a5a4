/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One row of nfdrop's output: a drop named as far as the kernel, the
 * ruleset and the evidence tell (tools/nfdrop.c builds and prints them,
 * tools/nfdrop_evidence.c settles rule and verdict from the evidence).
 */
#ifndef AGENTXDP_NFDROP_ROW_H
#define AGENTXDP_NFDROP_ROW_H

#include "nfdrop_evidence.h"

#define NFDROP_MAX_CANDS	8
#define NFDROP_MAX_HITS		8

enum nfdrop_verdict { NFDROP_V_UNKNOWN, NFDROP_V_DROP, NFDROP_V_REJECT, NFDROP_V_POLICY };

/* where a row's names came from (nfdrop_source_names has their words) */
enum nfdrop_row_source {
	NFDROP_SRC_NONE, NFDROP_SRC_FEXIT, NFDROP_SRC_STACK, NFDROP_SRC_TRACE
};

/* inferred-field bits */
#define NFDROP_INF_TABLE	0x1
#define NFDROP_INF_CHAIN	0x2
#define NFDROP_INF_RULE		0x4
#define NFDROP_INF_VERDICT	0x8
#define NFDROP_INF_HOOK		0x10

struct nfdrop_cand_rule {
	char chain[NFD_CHAIN_LEN * 4];
	unsigned long long handle;
	int kind;
	char text[512];
};

struct nfdrop_cand {
	int engine;
	int family;
	char table[64];
	char chain[256];
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
	char table[64];
	char chain[256];
	char rule_chain[256];
	unsigned long long handle;	/* 0: none */
	int verdict;
	unsigned int inferred;
	int source;		/* enum nfdrop_row_source */
	/* details */
	char netns_name[64];
	char hook_fn[64];
	char location[64];
	char rule_text[512];
	int prio;
	int policy;
	int settle_policy;	/* policy of the chain settle() looks at */
	bool chain_known;
	bool rule_known;
	const char *note;
	int ncands;
	struct nfdrop_cand cands[NFDROP_MAX_CANDS];
	struct ev_set ev;	/* the packet run through the rules, weighed */
	/* counts */
	unsigned long long packets;
	unsigned long long rejected;
	int ct_states;		/* NFM_CT_* the packets had at the drop, 0 none read */
};
/* 72,896 bytes on x86_64, mostly candidates' rule texts: the comments
 * that keep rows off the stack say 73 KB */
_Static_assert(sizeof(struct nfdrop_row) > 64 * 1024 && sizeof(struct nfdrop_row) < 80 * 1024,
	       "a row is no longer about 73 KB: correct the comments that say so");

/* rule and verdict of r from its evidence (r->ev), for packets of which
 * rejected were answered with a REJECT reply */
void ev_settle_row(struct nfdrop_row *r, unsigned long long packets,
		   unsigned long long rejected, bool reject_complete);
/* certain rows whose rule's counter moved less than their packets
 * together made inferred (rows of one report) */
void ev_check_rows(struct nfdrop_row *rows, int n);

#endif
