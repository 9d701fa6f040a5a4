/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Interned strings: each distinct string stored once, at an address that
 * stays valid until strpool_free(). For records that name things from
 * data which is freed and read again under them (nfdrop's rows name
 * rules of a ruleset re-read while the rows wait for their report): they
 * keep a pointer where they kept a copy, and a pool that is never emptied
 * while they live grows only with the strings that are new.
 */
#ifndef AGENTXDP_STRPOOL_H
#define AGENTXDP_STRPOOL_H

#include <stddef.h>

struct strpool {
	char **slots;		/* open-addressed, NULL empty */
	unsigned int nslots;	/* a power of two, or 0 */
	unsigned int n;
};

/*
 * s as snprintf(buf, size, "%s", s) would leave it in buf (at most
 * size - 1 bytes of it), interned in p: the same pointer for the same
 * string. NULL s is "". Out of memory: "" (static), never NULL.
 */
const char *strpool_get(struct strpool *p, const char *s, size_t size);
/* every string of p freed: pointers strpool_get() gave are dangling */
void strpool_free(struct strpool *p);

#endif
