/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* nfdrop's rows on stdout (tools/nfdrop/nfdrop_output.c) */
#ifndef AGENTXDP_NFDROP_OUTPUT_H
#define AGENTXDP_NFDROP_OUTPUT_H

#include "nfdrop_load.h"
#include "nfdrop_row.h"
#include "lib/json.h"

/* by enum nfdrop_verdict */
extern const char *const nfdrop_verdict_names[];
/* enum nfdrop_row_source: "?", "fexit", "stack", "trace" */
extern const char *const nfdrop_source_names[];

/* "ip", "ip6", ... of an NFR_PROTO_* */
const char *nfdrop_family_str(int f);
/* the JSON fields of a row (a count line or an event); the reason is
 * ctx->nf_drop, SKB_DROP_REASON_NETFILTER_DROP (7 on 6.1, 12 on 6.18) */
void nfdrop_json_row_fields(struct json_w *w, const struct nfdrop_ctx *ctx,
			    const struct nfdrop_row *r);
/* -w: a packet's comment, its row as JSON names it: "hook_family=ip
 * hook=input table_family=inet table=t chain=c verdict=DROP
 * [inferred=rule,...] [unsettled="WHY"] [rule_chain=c rule_handle=4
 * rule=TEXT]", the verdict "unknown" where JSON says "?"; unsettled (NULL:
 * none) says why the packet was written before a report settled it */
void nfdrop_row_comment(const struct nfdrop_row *r, const char *unsettled, char *buf,
			size_t len);
/* one row of the counts table, with its candidates and notes */
void nfdrop_text_row(const struct nfdrop_row *r);
/* our --trace-rules table was deleted (flush ruleset) and added again
 * (restored) or not: one line on stderr, and with json one JSON line
 * {"type":"nf_trace_table","state":"restored"|"stopped"} on stdout */
void nfdrop_trace_table_line(bool restored, bool json);

#endif
