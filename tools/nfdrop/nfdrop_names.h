/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* nfdrop's naming of a drop (tools/nfdrop/nfdrop_names.c): rulesets per network
 * namespace, the fexit and the inferred path, rule and verdict settled */
#ifndef AGENTXDP_NFDROP_NAMES_H
#define AGENTXDP_NFDROP_NAMES_H

#include <stdbool.h>
#include <linux/types.h>
#include <time.h>
#include "nfdrop.h"
#include "nfdrop_load.h"
#include "nfdrop_row.h"
#include "nfrules.h"

/* one network namespace's ruleset, as last read */
struct nfdrop_ns_rules {
	unsigned int inum;
	bool loaded;		/* rs holds a read ruleset */
	bool stale;		/* the namespace is gone: rs is from earlier */
	struct timespec when;
	struct nfr_ruleset rs;
};

/*
 * When to read a namespace's ruleset again. Counts are resolved at report
 * time against the ruleset read when their first drop was seen (CACHED),
 * so a rule removed right after it dropped is still named; events against
 * one at most a second old (TTL); a new kind of drop re-reads (FRESH).
 */
enum nfdrop_rs_when { NFDROP_RS_CACHED, NFDROP_RS_TTL, NFDROP_RS_FRESH };

/* the ruleset of namespace inum, read in it (with ctx's -v, why not);
 * NULL when it cannot be */
struct nfdrop_ns_rules *nfdrop_rules_for(const struct nfdrop_ctx *ctx, unsigned int inum,
					 enum nfdrop_rs_when when);
/*
 * Names everything the key and the ruleset tell (hook, engine, candidate
 * chains and their drop rules); nfdrop_settle() then picks rule and
 * verdict with the counts. Split so that names can be taken while the
 * ruleset is the one the drop met, and counts added at report time.
 */
void nfdrop_names(const struct nfdrop_ctx *ctx, const struct nfd_key *k,
		  enum nfdrop_rs_when when, struct nfdrop_row *r);
/* rule and verdict, now that the counts are known */
void nfdrop_settle(const struct nfdrop_ctx *ctx, struct nfdrop_row *r, unsigned long long packets,
		   unsigned long long rejected);
/* both */
void nfdrop_resolve(const struct nfdrop_ctx *ctx, const struct nfd_key *k,
		    unsigned long long packets, unsigned long long rejected,
		    enum nfdrop_rs_when when, struct nfdrop_row *r);

#endif
