/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nfdrop's evidence for naming the rule: the packet itself (its addresses,
 * ports, protocol and interfaces run through the rules of the hook,
 * tools/nfdrop/nfmatch.c), the rules' own counters (a rule whose counter did
 * not move dropped nothing), and whether a REJECT reply was seen. A row is
 * certain only when exactly one candidate survives all of it.
 */
#ifndef AGENTXDP_NFDROP_EVIDENCE_H
#define AGENTXDP_NFDROP_EVIDENCE_H

#include <stdbool.h>
#include <linux/types.h>
#include "nfdrop.h"
#include "nfrules.h"

#define EV_MAX_CANDS	NFM_MAX_CANDS

/* the strings are interned (nfdrop_str(), nfdrop_row.h says why) */
struct ev_cand {
	int engine, family;
	const char *table;
	const char *base;	/* the base chain it was reached from */
	int base_prio, base_policy;
	const char *chain;	/* the chain of the rule */
	unsigned long long handle;	/* 0: the base chain's policy */
	unsigned long long table_handle;	/* nfr_chain's, 0 unknown */
	int kind;		/* NFR_KIND_DROP, _REJECT, _MAYBE */
	bool policy;
	bool has_counter;
	bool queue;		/* its verdict is a queue (nft queue, NFQUEUE) */
	long long delta;	/* counter movement in the window, -1 unknown */
	bool alive;
	const char *text;
};

struct ev_set {
	bool used;		/* the packet was run through the rules */
	bool complete;		/* the walk followed every path */
	bool order_unknown;	/* chains of one priority in more than one
				 * table, whose order the ruleset does not
				 * tell, gave candidates of their own */
	bool counters;		/* counter evidence was applied */
	bool counters_ruled;	/* ... and eliminated a candidate */
	bool changed;		/* the ruleset changed inside the window */
	bool ct_ruled;		/* the packet's conntrack ruled a chain out
				 * (nat chains and the chains after them) */
	bool dev_unknown;	/* a chain bound to devices was walked without
				 * knowing whether the packet's is one of them */
	bool contradicted;	/* evidence ruled out every candidate (the drop
				 * came from elsewhere: conntrack, a changed
				 * ruleset): not used, nothing certain */
	int n;
	struct ev_cand c[EV_MAX_CANDS];
	char evaluated[160];
	char unknown[160];
};

/* the packet of a key as the rules at hook (family pf) see it; false
 * when the key has no packet signature */
bool ev_packet(const struct nfd_key *k, int pf, const char *hook,
	       struct nfm_pkt *pkt);

/* the state a ct state match saw for the packet (at the drop), one
 * NFM_CT_* bit; 0 when the kernel had none to read */
int ev_ct_state(const struct nfd_key *k);

/*
 * Run pkt through bases (sorted here in the order the kernel runs them)
 * into s. dropper_type: the nftables chain type the kernel stack says
 * dropped (nat chains run under nft_nat_do_chain, route chains under
 * nf_route_table_hook*, filter chains under nft_do_chain_<family>), NULL
 * when not known. nat_prio: the nat core's priority at the hook
 * (ev_nat_core_prio()) where a nat chain of any table is there, INT_MIN
 * for none: chains up to it may have seen other addresses. hookdev: the
 * device a device-bound hook (ingress, egress) ran for, NULL unknown;
 * bases must not hold chains bound to other devices.
 */
void ev_walk(const struct nfr_ruleset *rs, const struct nfr_chain **bases,
	     int nbases, const struct nfm_pkt *pkt, const char *dropper_type,
	     int nat_prio, const char *hookdev, struct ev_set *s);
/* only the candidates whose verdict is a queue kept in s (a drop by
 * nf_queue(): no listener) */
void ev_keep_queue(struct ev_set *s);
/* is c a nat chain (nft type nat, the legacy nat table) */
bool ev_is_nat(const struct nfr_chain *c);
/* the priority the nat core runs the nat chains of hook at, INT_MIN
 * where there are none (not an IP hook with NAT) */
int ev_nat_core_prio(const char *hook);
/* the name of ifindex in network namespace netns into out (IF_NAMESIZE);
 * false when it cannot be known (0, gone) */
bool ev_dev_name(unsigned int netns, int ifindex, char *out);

/*
 * Counter snapshots per network namespace. The window of a report runs
 * from a snapshot taken before the previous drain of the counts (or
 * before tracing started) to one taken after this drain, so every drop
 * drained now moved its rule's counter inside it.
 */
void ev_counters_start(unsigned int netns);	/* before attaching */
void ev_counters_pre(unsigned int netns);	/* before a drain */
void ev_counters_post(unsigned int netns);	/* after it */
void ev_counters_pre_all(void);		/* before, for every netns known */
void ev_counters_advance(void);			/* after the report */

#endif
