// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Interned strings (strpool.h): an open-addressed hash table of the
 * stored strings, grown as it fills; a string's address never changes.
 */
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include "lib/hash.h"
#include "strpool.h"

#define STRPOOL_MIN_SLOTS 256

/* the slot of the string of len bytes at s: where it is, or the empty
 * slot where it would go */
static unsigned int strpool_find(const struct strpool *p, const char *s, size_t len)
{
	unsigned int i = hash_bytes(s, len, 0) & (p->nslots - 1);

	while (p->slots[i] && (strncmp(p->slots[i], s, len) || p->slots[i][len]))
		i = (i + 1) & (p->nslots - 1);
	return i;
}

/* twice the slots (at least STRPOOL_MIN_SLOTS): false when out of memory */
static bool strpool_grow(struct strpool *p)
{
	unsigned int n = p->nslots ? p->nslots * 2 : STRPOOL_MIN_SLOTS;
	struct strpool g = { calloc(n, sizeof(char *)), n, p->n };

	if (!g.slots)
		return false;
	for (unsigned int i = 0; i < p->nslots; i++)
		if (p->slots[i])
			g.slots[strpool_find(&g, p->slots[i], strlen(p->slots[i]))] = p->slots[i];
	free(p->slots);
	*p = g;
	return true;
}

const char *strpool_get(struct strpool *p, const char *s, size_t size)
{
	size_t len;
	unsigned int i;

	if (!s || !size)
		return "";
	len = strnlen(s, size - 1);
	/* at most half full: probes stay short */
	if ((p->n + 1) * 2 > p->nslots && !strpool_grow(p))
		return "";
	i = strpool_find(p, s, len);
	if (!p->slots[i]) {
		p->slots[i] = strndup(s, len);
		if (!p->slots[i])
			return "";
		p->n++;
	}
	return p->slots[i];
}

void strpool_free(struct strpool *p)
{
	for (unsigned int i = 0; i < p->nslots; i++)
		free(p->slots[i]);
	free(p->slots);
	memset(p, 0, sizeof(*p));
}
