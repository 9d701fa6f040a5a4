// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* nfdrop's rows on stdout: the text table and event lines, and JSON */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <linux/types.h>
#include "nfdrop.h"
#include "nfdrop_output.h"
#include "nfdrop_row.h"
#include "lib/btf_enum.h"
#include "lib/cli.h"
#include "lib/json.h"
#include "nfrules.h"

const char *const nfdrop_verdict_names[] = { "?", "DROP", "REJECT", "POLICY", "QUEUE" };
const char *const nfdrop_source_names[] = { "?", "fexit", "stack", "trace" };

const char *nfdrop_family_str(int f)
{
	const char *s = nfr_family_name(f);

	return s ? s : "?";
}

static const char *engine_str(int e)
{
	return e == NFR_ENGINE_NFT ? "nftables" : e == NFR_ENGINE_LEGACY ?
	       "iptables-legacy" : "unknown";
}

static const char *policy_str(int p)
{
	return p == NFR_POLICY_DROP ? "drop" : p == NFR_POLICY_ACCEPT ? "accept" : "-";
}

static void json_inferred(struct json_w *w, unsigned int inf)
{
	static const struct { unsigned int bit; const char *name; } f[] = {
		{ NFDROP_INF_HOOK, "hook" }, { NFDROP_INF_TABLE, "table" },
		{ NFDROP_INF_CHAIN, "chain" }, { NFDROP_INF_RULE, "rule" },
		{ NFDROP_INF_VERDICT, "verdict" },
	};

	json_arr_open(w, "inferred");
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (!(inf & f[i].bit))
			continue;
		json_key(w, NULL);
		json_escape(w->f, f[i].name);
	}
	json_arr_close(w);
}

static void json_cands(struct json_w *w, const struct nfdrop_row *r)
{
	json_arr_open(w, "candidates");
	for (int i = 0; i < r->ncands; i++) {
		const struct nfdrop_cand *c = &r->cands[i];

		json_obj_open(w, NULL);
		json_str(w, "engine", engine_str(c->engine));
		json_str(w, "table_family", nfdrop_family_str(c->family));
		json_str(w, "table", c->table);
		json_str(w, "chain", c->chain);
		json_i64(w, "priority", c->prio);
		json_str(w, "policy", policy_str(c->policy));
		if (c->policy_cand)
			json_bool(w, "policy_candidate", true);
		json_arr_open(w, "drop_rules");
		for (int j = 0; j < c->nrules && j < NFDROP_MAX_HITS; j++) {
			json_obj_open(w, NULL);
			json_str(w, "chain", c->rules[j].chain);
			json_u64(w, "handle", c->rules[j].handle);
			json_str(w, "rule", c->rules[j].text);
			json_str(w, "verdict", nfr_kind_name(c->rules[j].kind));
			json_obj_close(w);
		}
		json_arr_close(w);
		json_obj_close(w);
	}
	json_arr_close(w);
}

static void json_csv(struct json_w *w, const char *key, const char *csv)
{
	char buf[160], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", csv);
	json_arr_open(w, key);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		json_key(w, NULL);
		json_escape(w->f, t);
	}
	json_arr_close(w);
}

/* what was weighed: the packet (which matches it was checked against),
 * its conntrack where that ruled out nat chains or the chains after
 * them, the counters, the REJECT replies */
static void json_evidence(struct json_w *w, const struct nfdrop_row *r)
{
	json_arr_open(w, "evidence");
	json_key(w, NULL);
	json_escape(w->f, "packet");
	if (r->ev.ct_ruled) {
		json_key(w, NULL);
		json_escape(w->f, "conntrack");
	}
	if (r->ev.counters_ruled) {
		json_key(w, NULL);
		json_escape(w->f, "counters");
	}
	if (r->rejected) {
		json_key(w, NULL);
		json_escape(w->f, "reject_reply");
	}
	json_arr_close(w);
	json_csv(w, "matches_evaluated", r->ev.evaluated);
	json_csv(w, "matches_not_understood", r->ev.unknown);
}

/* the packets' conntrack states at the drop, as nft names them */
static void json_ct_states(struct json_w *w, int states)
{
	json_arr_open(w, "ct_states");
	for (int bit = 1; bit <= NFM_CT_UNTRACKED; bit <<= 1) {
		if (!(states & bit))
			continue;
		json_key(w, NULL);
		json_escape(w->f, nfm_ct_state_name(bit));
	}
	json_arr_close(w);
}

/* the fields every record about a drop carries */
void nfdrop_json_row_fields(struct json_w *w, const struct nfdrop_ctx *ctx,
			    const struct nfdrop_row *r)
{
	char reason[64];

	json_u64(w, "netns", r->netns);
	json_str(w, "netns_name", r->netns_name);
	json_str(w, "hook_family", r->pf ? nfdrop_family_str(r->pf) : "?");
	json_str(w, "hook", r->hook[0] ? r->hook : "?");
	json_str(w, "engine", engine_str(r->engine));
	if (r->chain_known) {
		json_str(w, "table_family", nfdrop_family_str(r->table_family));
		json_str(w, "table", r->table);
		json_str(w, "chain", r->chain);
		if (r->ncands || r->source == NFDROP_SRC_TRACE)
			json_i64(w, "chain_priority", r->prio);
		json_str(w, "chain_policy", policy_str(r->policy));
	}
	if (r->rule_known) {
		json_str(w, "rule_chain", r->rule_chain);
		json_u64(w, "rule_handle", r->handle);
		json_str(w, "rule", r->rule_text);
	}
	json_str(w, "verdict", nfdrop_verdict_names[r->verdict]);
	json_str(w, "reason", drop_reason_name(r->queue ? ctx->not_specified : ctx->nf_drop,
					       reason, sizeof(reason)));
	json_u64(w, "reason_code", r->queue ? ctx->not_specified : ctx->nf_drop);
	json_str(w, "source", nfdrop_source_names[r->source]);
	if (r->ct_states)
		json_ct_states(w, r->ct_states);
	json_inferred(w, r->inferred);
	if (r->hook_fn[0])
		json_str(w, "hook_function", r->hook_fn);
	json_str(w, "location", r->location);
	if (r->note)
		json_str(w, "note", r->note);
	if (r->ev.used)
		json_evidence(w, r);
	if (r->ncands > 1 || (r->inferred & NFDROP_INF_RULE))
		json_cands(w, r);
}

/* "a,b" of the inferred fields, as json_inferred() names them */
static void inferred_csv(unsigned int inf, char *buf, size_t len)
{
	static const struct { unsigned int bit; const char *name; } f[] = {
		{ NFDROP_INF_HOOK, "hook" }, { NFDROP_INF_TABLE, "table" },
		{ NFDROP_INF_CHAIN, "chain" }, { NFDROP_INF_RULE, "rule" },
		{ NFDROP_INF_VERDICT, "verdict" },
	};
	size_t o = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]) && o < len; i++)
		if (inf & f[i].bit)
			o += snprintf(buf + o, len - o, "%s%s", o ? "," : "", f[i].name);
}

void nfdrop_row_comment(const struct nfdrop_row *r, const char *unsettled, char *buf,
			size_t len)
{
	char inferred[64];
	size_t o;

	o = snprintf(buf, len, "hook_family=%s hook=%s", r->pf ? nfdrop_family_str(r->pf) : "?",
		     r->hook[0] ? r->hook : "?");
	if (r->chain_known && o < len)
		o += snprintf(buf + o, len - o, " table_family=%s table=%s chain=%s",
			      nfdrop_family_str(r->table_family), r->table, r->chain);
	/* in words where JSON has "?" */
	if (o < len)
		o += snprintf(buf + o, len - o, " verdict=%s", r->verdict == NFDROP_V_UNKNOWN ?
			      "unknown" : nfdrop_verdict_names[r->verdict]);
	inferred_csv(r->inferred, inferred, sizeof(inferred));
	if (inferred[0] && o < len)
		o += snprintf(buf + o, len - o, " inferred=%s", inferred);
	if (unsettled && o < len)
		o += snprintf(buf + o, len - o, " unsettled=\"%s\"", unsettled);
	/* the rule's text has spaces: last */
	if (r->rule_known && o < len)
		snprintf(buf + o, len - o, " rule_chain=%s rule_handle=%llu rule=%s",
			 r->rule_chain, r->handle, r->rule_text);
}

static void text_cands(const struct nfdrop_row *r, const char *indent)
{
	if (r->ev.used && (r->inferred & NFDROP_INF_RULE))
		printf("%srule?: the packet and the counters leave these:\n", indent);
	for (int i = 0; i < r->ncands; i++) {
		const struct nfdrop_cand *c = &r->cands[i];

		if (r->ncands > 1)
			printf("%scandidate: %s %s %s (priority %d, policy %s)\n", indent,
			       nfdrop_family_str(c->family), c->table, c->chain, c->prio,
			       policy_str(c->policy));
		for (int j = 0; j < c->nrules && j < NFDROP_MAX_HITS; j++)
			printf("%s  rule? %s handle %llu: %s\n", indent, c->rules[j].chain,
			       c->rules[j].handle, c->rules[j].text);
		if (c->policy_cand)
			printf("%s  rule? policy drop of %s\n", indent, c->chain);
	}
	if (r->ev.used)
		printf("%s  evaluated on the packet: %s; not understood: %s\n", indent,
		       r->ev.evaluated[0] ? r->ev.evaluated : "-",
		       r->ev.unknown[0] ? r->ev.unknown : "-");
}

void nfdrop_text_row(const struct nfdrop_row *r)
{
	char hook[32], table[96], chain[272], verdict[16];
	bool q_tab = r->inferred & NFDROP_INF_TABLE, q_chain = r->inferred & NFDROP_INF_CHAIN;

	snprintf(hook, sizeof(hook), "%s %s%s", r->pf ? nfdrop_family_str(r->pf) : "?",
		 r->hook[0] ? r->hook : "?", r->inferred & NFDROP_INF_HOOK ? "?" : "");
	if (r->chain_known) {
		if (r->engine == NFR_ENGINE_LEGACY)
			snprintf(table, sizeof(table), "%s%s", r->table, q_tab ? "?" : "");
		else
			snprintf(table, sizeof(table), "%s %s%s", nfdrop_family_str(r->table_family),
				 r->table, q_tab ? "?" : "");
		snprintf(chain, sizeof(chain), "%s%s", r->chain, q_chain ? "?" : "");
	} else {
		snprintf(table, sizeof(table), "?");
		snprintf(chain, sizeof(chain), "?");
	}
	snprintf(verdict, sizeof(verdict), "%s%s", nfdrop_verdict_names[r->verdict],
		 r->verdict != NFDROP_V_UNKNOWN && (r->inferred & NFDROP_INF_VERDICT) ? "?" : "");
	printf("%-10s %-15s %-16s %-16s %-7s %9llu\n", r->netns_name, hook, table,
	       chain, verdict, r->packets);
	if (r->rule_known && !(r->inferred & NFDROP_INF_RULE))
		printf("  rule: %s handle %llu: %s%s\n", r->rule_chain, r->handle,
		       r->rule_text, r->source == NFDROP_SRC_TRACE ? " (traced)" : "");
	else if (r->ncands > 1 || (r->inferred & NFDROP_INF_RULE))
		text_cands(r, "  ");
	if (r->verdict == NFDROP_V_POLICY && !(r->inferred & NFDROP_INF_VERDICT))
		printf("  policy drop of %s (no rule matched)\n", r->chain);
	if (r->rejected && r->verdict != NFDROP_V_REJECT)
		printf("  %llu of these were answered with a REJECT reply\n", r->rejected);
	if (r->note)
		printf("  note: %s\n", r->note);
}

void nfdrop_trace_table_line(bool restored, bool json)
{
	struct json_w w;

	cli_err(restored ? "the --trace-rules table was deleted (flush ruleset?): added "
		"again; drops in between were not traced" :
		"the --trace-rules table was deleted and cannot be added again: "
		"tracing stopped");
	if (!json)
		return;
	json_begin(&w, stdout);
	json_str(&w, "type", "nf_trace_table");
	json_time(&w, cli_now_epoch());
	json_str(&w, "state", restored ? "restored" : "stopped");
	json_end(&w);
	fflush(stdout);
}
