/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one byte hash of the tools' small tables (FNV-1a), and the probe of
 * an open-addressed table whose slots hold an entry's index + 1 (0: empty)
 * and whose entries begin with their key: nfdrop's packet signatures
 * (seen and held), rocediag's drops, rocelat --svg's flows.
 */
#ifndef AGENTXDP_HASH_H
#define AGENTXDP_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* FNV-1a of len bytes at p, from seed (0: FNV's own offset basis) */
static inline uint32_t hash_bytes(const void *p, size_t len, uint32_t seed)
{
	const unsigned char *b = p;
	uint32_t h = 2166136261u ^ seed;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* the slot of key (klen bytes) in slots[nslots] (a power of two): where
 * its entry is, or the empty slot where it would go; entry i is at
 * entries + i * stride and begins with its key */
static inline unsigned int hash_slot(const short *slots, unsigned int nslots,
				     const void *entries, size_t stride,
				     const void *key, size_t klen)
{
	unsigned int i = hash_bytes(key, klen, 0) & (nslots - 1);

	while (slots[i] && memcmp((const char *)entries + (size_t)(slots[i] - 1) * stride,
				  key, klen))
		i = (i + 1) & (nslots - 1);
	return i;
}

#endif
