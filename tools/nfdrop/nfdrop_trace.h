/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* nfdrop --trace-rules (tools/nfdrop/nfdrop_trace.c): the helper table and the
 * nftables trace socket */
#ifndef AGENTXDP_NFDROP_TRACE_H
#define AGENTXDP_NFDROP_TRACE_H

#include <stdbool.h>
#include <linux/types.h>
#include "nfdrop_row.h"
#include "nfrules.h"

#define NFDROP_TRACE_TABLE_PREFIX "agentxdp_nfdrop_trace_"

/*
 * In network namespace inum (ns_name for the error): remove the tables a
 * killed nfdrop left, listen for trace events, add ours, limited to UDP to
 * roce_port (--roce) or from or to port (-P), else every packet (a
 * warning). Dies with one line when it cannot. When our table is deleted
 * while we run (`nft flush ruleset`), it is added again and on_table is
 * called: restored false when that failed (tracing has stopped).
 */
void nfdrop_trace_setup(unsigned int inum, const char *ns_name, int roce_port,
			int port, void (*on_table)(bool restored));
/* our table was deleted and could not be added again */
bool nfdrop_trace_stopped(void);
/* our helper table removed (again: a no-op) */
void nfdrop_trace_remove(void);
/* the table removed and the socket closed */
void nfdrop_trace_close(void);
/* the trace socket, -1 without --trace-rules */
int nfdrop_trace_fd(void);
/* everything queued on the socket, without blocking */
void nfdrop_trace_drain(void);
/* drops traced long ago no count row took are given up */
void nfdrop_trace_expire(void);
/* what the trace could not give to a row since the last call */
struct nfdrop_trace_stats {
	/* the socket buffer overran (ENOBUFS): trace messages, how many
	 * unknown, were lost; since the last call and since the start */
	unsigned long long overruns, overruns_total;
	/* traced drops given to no row: no IP header in the message, or no
	 * row of their packet within TRACE_TTL_S */
	unsigned long long untied;
};
void nfdrop_trace_stats(struct nfdrop_trace_stats *st);
/* the trace watches netns */
bool nfdrop_trace_covers(unsigned int netns);
/* is table one of the helper tables (which the ruleset reader skips) */
bool nfdrop_trace_is_table(const char *table);
/* rule-exact counts from the trace, taken out of row r (an nft drop in a
 * namespace the trace covers, of key k; rs its ruleset, or NULL) into at
 * most max new rows: only drops traced for k's packet (addresses, protocol
 * and ports as the trace message's headers show them); returns how many */
struct nfd_key;
int nfdrop_trace_split(const struct nfd_key *k, struct nfdrop_row *r,
		       const struct nfr_ruleset *rs, struct nfdrop_row *out, int max);

#endif
