// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * iptables-legacy tables for the ruleset model (nfrules.h): only the legacy
 * tools can decode them, so they come from iptables-legacy-save, and only
 * when the namespace has them, so that reading never creates a table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "nfrules.h"
#include "nfrules_int.h"

/* ---- iptables-legacy, through its own save tool ---- */

static const struct {
	const char *table;
	int prio[5];		/* per NF_INET_* hook; 0x7fffffff: not there */
} legacy_prios[] = {
#define NO 0x7fffffff
	{ "raw", { -300, NO, NO, -300, NO } },
	{ "mangle", { -150, -150, -150, -150, -150 } },
	{ "nat", { -100, 100, NO, -100, 100 } },
	{ "filter", { NO, 0, 0, 0, NO } },
	{ "security", { NO, 50, 50, 50, NO } },
#undef NO
};

static const char *const legacy_hooks[] = {
	"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING",
};

static int legacy_prio(const char *table, int hook)
{
	for (size_t i = 0; i < sizeof(legacy_prios) / sizeof(legacy_prios[0]); i++)
		if (!strcmp(legacy_prios[i].table, table))
			return legacy_prios[i].prio[hook];
	return 0;
}

static bool file_has_lines(const char *path)
{
	char line[64];
	FILE *f = fopen(path, "r");
	bool any;

	if (!f)
		return false;
	any = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	return any;
}

struct legacy_ctx {
	const struct nfr_ruleset *rs;
	int family;
	const char *table;
};

static bool legacy_is_chain(const char *name, void *arg)
{
	const struct legacy_ctx *x = arg;

	return nfr_chain_find(x->rs, NFR_ENGINE_LEGACY, x->family, x->table, name);
}

static void legacy_rule(struct nfr_ruleset *rs, int family, const char *table,
			char *line, unsigned long long packets)
{
	struct legacy_ctx lx = { rs, family, table };
	char chain[256], *p, *tok, *save = NULL, *copy;
	struct nfr_chain *c;
	struct nfr_rule *r;
	bool jump_next = false, goto_next = false;

	if (sscanf(line, "-A %255s", chain) != 1)
		return;
	c = nfr_chain_find(rs, NFR_ENGINE_LEGACY, family, table, chain);
	if (!c || !(r = nfr_add_rule(c)))
		return;
	r->handle = c->nrules;
	r->text = strdup(line);
	r->has_packets = true;
	r->packets = packets;
	nfm_compile_legacy(&r->prog, family, line, legacy_is_chain, &lx);
	copy = strdup(line);
	for (tok = copy ? strtok_r(copy, " ", &save) : NULL; tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (jump_next || goto_next) {
			if (!strcmp(tok, "DROP"))
				r->kind = NFR_KIND_DROP;
			else if (!strcmp(tok, "REJECT"))
				r->kind = NFR_KIND_REJECT;
			else if (!strcmp(tok, "NFQUEUE") || !strcmp(tok, "QUEUE"))
				r->kind = NFR_KIND_MAYBE;
			else if (nfr_chain_find(rs, NFR_ENGINE_LEGACY, family, table, tok)) {
				r->kind = NFR_KIND_JUMP;
				free(r->target);
				r->target = strdup(tok);
			}
			jump_next = goto_next = false;
			continue;
		}
		jump_next = !strcmp(tok, "-j") || !strcmp(tok, "--jump");
		goto_next = !strcmp(tok, "-g") || !strcmp(tok, "--goto");
	}
	free(copy);
	p = r->text ? strchr(r->text, '\n') : NULL;
	if (p)
		*p = 0;
}

int nfr_load_legacy_family(struct nfr_ruleset *rs, int family,
			   const char *names, const char *cmd)
{
	char line[4096], table[64] = "";
	char **lines = NULL;
	int nlines = 0, status;
	FILE *f;

	if (!file_has_lines(names))
		return 0;
	f = popen(cmd, "r");
	if (!f) {
		nfr_set_err(rs, "cannot run %s", cmd);
		return -errno;
	}
	/* chains first (a rule may jump to a chain declared after it) */
	while (fgets(line, sizeof(line), f)) {
		char name[256], policy[32];
		unsigned long long pk = 0, by = 0;
		struct nfr_chain *c;
		char *rule = line;

		line[strcspn(line, "\n")] = 0;
		/* -c: "[packets:bytes] -A ..." */
		if (line[0] == '[' && sscanf(line, "[%llu:%llu]", &pk, &by) == 2 &&
		    strchr(line, ']'))
			rule = strchr(line, ']') + 1 + (strchr(line, ']')[1] == ' ');
		if (line[0] == '*') {
			snprintf(table, sizeof(table), "%.63s", line + 1);
		} else if (line[0] == ':' && table[0] &&
			   sscanf(line + 1, "%255s %31s", name, policy) == 2 &&
			   (c = nfr_add_chain(rs))) {
			c->engine = NFR_ENGINE_LEGACY;
			c->family = family;
			c->table = strdup(table);
			c->name = strdup(name);
			for (int h = 0; h < 5; h++) {
				if (strcmp(name, legacy_hooks[h]) || !strcmp(policy, "-"))
					continue;
				c->base = true;
				c->hook = h;
				c->prio = legacy_prio(table, h);
				c->policy = !strcmp(policy, "DROP") ?
					    NFR_POLICY_DROP : NFR_POLICY_ACCEPT;
				/* ":INPUT ACCEPT [packets:bytes]": policy hits */
				if (strchr(line, '[') &&
				    sscanf(strchr(line, '['), "[%llu:%llu]", &pk, &by) == 2) {
					c->has_counter = true;
					c->policy_packets = pk;
				}
			}
		} else if (!strncmp(rule, "-A ", 3)) {
			char **l = realloc(lines, (nlines + 1) * sizeof(*l));

			if (!l)
				break;
			lines = l;
			/* remember the table with the line */
			if (asprintf(&lines[nlines], "%s\t%llu\t%s", table, pk, rule) > 0)
				nlines++;
		}
	}
	status = pclose(f);
	for (int i = 0; i < nlines; i++) {
		char *tab = strchr(lines[i], '\t'), *tab2;

		*tab = 0;
		tab2 = strchr(tab + 1, '\t');
		*tab2 = 0;
		legacy_rule(rs, family, lines[i], tab2 + 1, strtoull(tab + 1, NULL, 10));
		free(lines[i]);
	}
	free(lines);
	if (status) {
		nfr_set_err(rs, "%s failed", cmd);
		return -EIO;
	}
	rs->have_legacy = true;
	return 0;
}
