/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One row of nfdrop's output: a drop named as far as the kernel, the
 * ruleset and the evidence tell (tools/nfdrop.c builds and prints them,
 * tools/nfdrop_evidence.c settles rule and verdict from the evidence).
 */
#ifndef AGENTXDP_NFDROP_ROW_H
#define AGENTXDP_NFDROP_ROW_H

#include "nfdrop_evidence.h"

#define MAX_CANDS	8
#define MAX_HITS	8

enum verdict { V_UNKNOWN, V_DROP, V_REJECT, V_POLICY };

/* where a row's names came from (nfdrop_source_names has their words) */
enum row_source { SRC_NONE, SRC_FEXIT, SRC_STACK, SRC_TRACE };

/* inferred-field bits */
#define INF_TABLE	0x1
#define INF_CHAIN	0x2
#define INF_RULE	0x4
#define INF_VERDICT	0x8
#define INF_HOOK	0x10

struct cand_rule {
	char chain[NFD_CHAIN_LEN * 4];
	unsigned long long handle;
	int kind;
	char text[512];
};

struct cand {
	int engine;
	int family;
	char table[64];
	char chain[256];
	int prio;
	int policy;
	int nrules;		/* rules that can drop, jumps followed */
	struct cand_rule rules[MAX_HITS];
	bool policy_cand;	/* its policy may have dropped it */
};

struct row {
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
	int source;		/* enum row_source */
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
	struct cand cands[MAX_CANDS];
	struct ev_set ev;	/* the packet run through the rules, weighed */
	/* counts */
	unsigned long long packets;
	unsigned long long rejected;
	int ct_states;		/* NFM_CT_* the packets had at the drop, 0 none read */
};
/* 72,896 bytes on x86_64, mostly candidates' rule texts: the comments
 * that keep rows off the stack say 73 KB */
_Static_assert(sizeof(struct row) > 64 * 1024 && sizeof(struct row) < 80 * 1024,
	       "a row is no longer about 73 KB: correct the comments that say so");

/* rule and verdict of r from its evidence (r->ev), for packets of which
 * rejected were answered with a REJECT reply */
void ev_settle_row(struct row *r, unsigned long long packets,
		   unsigned long long rejected, bool reject_complete);
/* certain rows whose rule's counter moved less than their packets
 * together made inferred (rows of one report) */
void ev_check_rows(struct row *rows, int n);

#endif
