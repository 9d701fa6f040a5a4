/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Inside the ruleset reader (tools/lib/nfrules*.c): the model's builders,
 * shared by the nftables part (nfrules.c) and the iptables-legacy part
 * (nfrules_legacy.c). Not for the reader's users.
 */
#ifndef AGENTXDP_NFRULES_INT_H
#define AGENTXDP_NFRULES_INT_H

#include "nfrules.h"

/* rs->err = fmt with arg, unless an earlier error is kept */
void nfr_set_err(struct nfr_ruleset *rs, const char *fmt, const char *arg);
/* a new zeroed chain (policy -1) or rule; NULL when out of memory */
struct nfr_chain *nfr_add_chain(struct nfr_ruleset *rs);
struct nfr_rule *nfr_add_rule(struct nfr_chain *c);
/* the legacy tables of family (NFR_PROTO_IPV4/6) when the names file
 * (/proc/self/net/ip_tables_names) lists some, read from cmd's output
 * (iptables-legacy-save -c); 0 or -errno */
int nfr_load_legacy_family(struct nfr_ruleset *rs, int family,
			   const char *names, const char *cmd);

#endif
