// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel symbols from /proc/kallsyms (ksyms.h): read once, sorted by
 * address, an address found by binary search and printed as
 * function+offset; why a kallsyms without addresses is empty, in words.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ksyms.h"

struct ksyms {
	struct ksym *syms;
	int n;
	int cap;
};

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void ksyms_free(struct ksyms *ks)
{
	if (!ks)
		return;
	for (int i = 0; i < ks->n; i++) {
		free(ks->syms[i].name);
		free(ks->syms[i].module);
	}
	free(ks->syms);
	free(ks);
}

struct ksyms *ksyms_load(void)
{
	char line[512], name[256], mod[128], type;
	unsigned long addr;
	struct ksyms *ks;
	FILE *f;
	int nonzero = 0;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		goto fail;
	while (fgets(line, sizeof(line), f)) {
		int n;

		mod[0] = 0;
		n = sscanf(line, "%lx %c %255s [%127[^]]]", &addr, &type, name, mod);
		if (n < 3)
			continue;
		if (type != 't' && type != 'T' && type != 'W' && type != 'w')
			continue;
		if (ks->n == ks->cap) {
			int cap = ks->cap ? ks->cap * 2 : 65536;
			struct ksym *s = realloc(ks->syms, cap * sizeof(*s));

			if (!s)
				goto fail;
			ks->syms = s;
			ks->cap = cap;
		}
		ks->syms[ks->n].addr = addr;
		ks->syms[ks->n].name = strdup(name);
		ks->syms[ks->n].module = n == 4 && mod[0] ? strdup(mod) : NULL;
		nonzero += addr != 0;
		ks->n++;
	}
	fclose(f);
	if (!nonzero) {
		ksyms_free(ks);
		errno = EPERM;
		return NULL;
	}
	qsort(ks->syms, ks->n, sizeof(*ks->syms), by_addr);
	return ks;
fail:
	fclose(f);
	ksyms_free(ks);
	errno = ENOMEM;
	return NULL;
}

const struct ksym *ksyms_find(const struct ksyms *ks, unsigned long addr)
{
	int lo = 0, hi, mid;

	if (!ks || !ks->n || addr < ks->syms[0].addr)
		return NULL;
	hi = ks->n - 1;
	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (ks->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid - 1;
	}
	return &ks->syms[lo];
}

static const struct ksym *ksyms_by_name(const struct ksyms *ks, const char *name)
{
	for (int i = 0; ks && i < ks->n; i++)
		if (!strcmp(ks->syms[i].name, name))
			return &ks->syms[i];
	return NULL;
}

bool ksyms_range(const struct ksyms *ks, const char *name, __u64 *start, __u64 *end)
{
	const struct ksym *s = ksyms_by_name(ks, name);
	int i;

	if (!s)
		return false;
	*start = s->addr;
	*end = s->addr + 1;
	for (i = s - ks->syms + 1; i < ks->n; i++)
		if (ks->syms[i].addr > s->addr) {
			*end = ks->syms[i].addr;
			break;
		}
	return true;
}

const char *ksyms_format(const struct ksyms *ks, unsigned long addr,
			 char *buf, int len, bool with_offset)
{
	const struct ksym *s = ksyms_find(ks, addr);

	if (!s)
		snprintf(buf, len, "0x%lx", addr);
	else if (with_offset)
		snprintf(buf, len, "%s+0x%lx", s->name, addr - s->addr);
	else
		snprintf(buf, len, "%s", s->name);
	return buf;
}

const char *ksyms_strerror(int err)
{
	static char buf[256];
	int restrict_level = -1;
	FILE *f;

	if (err != EPERM) {
		snprintf(buf, sizeof(buf), "cannot read kernel symbols from "
			 "/proc/kallsyms: %s", strerror(err));
		return buf;
	}
	f = fopen("/proc/sys/kernel/kptr_restrict", "r");
	if (f) {
		if (fscanf(f, "%d", &restrict_level) != 1)
			restrict_level = -1;
		fclose(f);
	}
	if (restrict_level == 2)
		return "cannot read kernel symbols: kernel.kptr_restrict is 2, "
		       "which hides their addresses in /proc/kallsyms from every "
		       "process (set it to 1)";
	return geteuid() == 0 ?
	       "cannot read kernel symbols: /proc/kallsyms hides their "
	       "addresses from this process, which lacks CAP_SYSLOG" :
	       "cannot read kernel symbols: /proc/kallsyms hides their "
	       "addresses without CAP_SYSLOG: run as root, or grant it";
}
