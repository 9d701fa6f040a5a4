// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* BPF maps in user memory (bpfnative.h) */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include "bpfnative.h"

#define BPFNATIVE_NONE	UINT32_MAX	/* no node: end of a chain or list */

enum bpfnative_kind { BN_ARRAY, BN_HASH, BN_LRU, BN_RINGBUF };

/*
 * A hash map is a pool of max_entries nodes, chained from a power-of-two
 * array of buckets (at least two per node, so chains stay short); a node
 * never moves, so a value's address holds until its key is deleted, as
 * in the kernel. Free nodes are a list through next; an LRU map keeps its
 * nodes in use on a second list, most recent first.
 */
struct bpfnative_node {
	uint32_t next;		/* in its bucket's chain, or the free list */
	uint32_t prev_lru, next_lru;
	uint32_t hash;
};

struct bpfnative_map {
	enum bpfnative_kind kind;
	uint32_t key_size, value_size, max_entries;
	uint32_t node_size;	/* node header, key, value: 8-byte aligned */
	unsigned char *mem;	/* array: the values; hash: the nodes */
	/* hash */
	uint32_t *buckets, nbuckets, free, used, lru_head, lru_tail;
	uint32_t fresh;		/* nodes from here on never used: untouched
				 * memory (calloc's), no page of it faulted in */
	/* ring buffer: one record reserved at a time (a BPF program holds
	 * at most one of ours) */
	int (*rb_cb)(void *ctx, void *data, unsigned long size);
	void *rb_ctx;
};

/* a ring buffer record's header, just before the data handed out */
struct bpfnative_rec {
	struct bpfnative_map *m;
	uint64_t size;
};

static uint32_t bn_align8(uint32_t n)
{
	return (n + 7) & ~7u;
}

static struct bpfnative_node *bn_node(const struct bpfnative_map *m, uint32_t i)
{
	return (struct bpfnative_node *)(m->mem + (size_t)i * m->node_size);
}

static unsigned char *bn_key(struct bpfnative_node *n)
{
	return (unsigned char *)(n + 1);
}

static unsigned char *bn_value(const struct bpfnative_map *m, struct bpfnative_node *n)
{
	return bn_key(n) + bn_align8(m->key_size);
}

static int bn_hash_init(struct bpfnative_map *m)
{
	m->node_size = sizeof(struct bpfnative_node) + bn_align8(m->key_size) +
		       bn_align8(m->value_size);
	for (m->nbuckets = 2; m->nbuckets < 2 * m->max_entries; m->nbuckets *= 2)
		;
	m->mem = calloc(m->max_entries, m->node_size);
	m->buckets = malloc(m->nbuckets * sizeof(*m->buckets));
	if (!m->mem || !m->buckets)
		return -ENOMEM;
	memset(m->buckets, 0xff, m->nbuckets * sizeof(*m->buckets));
	m->free = BPFNATIVE_NONE;
	m->fresh = 0;
	m->lru_head = m->lru_tail = BPFNATIVE_NONE;
	return 0;
}

struct bpfnative_map *bpfnative_map_new(unsigned int type, unsigned int key_size,
					unsigned int value_size,
					unsigned int max_entries)
{
	struct bpfnative_map *m = calloc(1, sizeof(*m));

	if (!m || !max_entries)
		goto fail;
	m->key_size = key_size;
	m->value_size = value_size;
	m->max_entries = max_entries;
	switch (type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		m->kind = BN_ARRAY;
		m->mem = calloc(max_entries, bn_align8(value_size));
		if (!m->mem || key_size != 4)
			goto fail;
		return m;
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
		m->kind = type == BPF_MAP_TYPE_HASH ? BN_HASH : BN_LRU;
		if (bn_hash_init(m))
			goto fail;
		return m;
	case BPF_MAP_TYPE_RINGBUF:
		m->kind = BN_RINGBUF;
		return m;
	}
fail:
	bpfnative_map_free(m);
	return NULL;
}

void bpfnative_map_free(struct bpfnative_map *m)
{
	if (!m)
		return;
	free(m->mem);
	free(m->buckets);
	free(m);
}

/* the key's words mixed (a multiply-xorshift per 8 bytes) */
static uint32_t bn_hash(const void *key, uint32_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0x9E3779B97F4A7C15ULL ^ len, w;

	for (; len >= 8; len -= 8, p += 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
		h ^= h >> 31;
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		h = (h ^ w) * 0x94D049BB133111EBULL;
	}
	h ^= h >> 29;
	return (uint32_t)h;
}

static void bn_lru_unlink(struct bpfnative_map *m, uint32_t i)
{
	struct bpfnative_node *n = bn_node(m, i);

	if (n->prev_lru != BPFNATIVE_NONE)
		bn_node(m, n->prev_lru)->next_lru = n->next_lru;
	else
		m->lru_head = n->next_lru;
	if (n->next_lru != BPFNATIVE_NONE)
		bn_node(m, n->next_lru)->prev_lru = n->prev_lru;
	else
		m->lru_tail = n->prev_lru;
}

static void bn_lru_front(struct bpfnative_map *m, uint32_t i)
{
	struct bpfnative_node *n = bn_node(m, i);

	n->prev_lru = BPFNATIVE_NONE;
	n->next_lru = m->lru_head;
	if (m->lru_head != BPFNATIVE_NONE)
		bn_node(m, m->lru_head)->prev_lru = i;
	m->lru_head = i;
	if (m->lru_tail == BPFNATIVE_NONE)
		m->lru_tail = i;
}

/* the node holding key (hash h), and where its chain points at it */
static uint32_t bn_find(struct bpfnative_map *m, const void *key, uint32_t h,
			uint32_t **link)
{
	uint32_t *l = &m->buckets[h & (m->nbuckets - 1)], i;

	for (i = *l; i != BPFNATIVE_NONE; l = &bn_node(m, i)->next, i = *l) {
		struct bpfnative_node *n = bn_node(m, i);

		if (n->hash == h && !memcmp(bn_key(n), key, m->key_size))
			break;
	}
	if (link)
		*link = l;
	return i;
}

void *bpfnative_lookup(struct bpfnative_map *m, const void *key)
{
	uint32_t idx, i;

	if (m->kind == BN_ARRAY) {
		memcpy(&idx, key, 4);
		return idx < m->max_entries ?
		       m->mem + (size_t)idx * bn_align8(m->value_size) : NULL;
	}
	if (m->kind == BN_RINGBUF)
		return NULL;
	i = bn_find(m, key, bn_hash(key, m->key_size), NULL);
	if (i == BPFNATIVE_NONE)
		return NULL;
	if (m->kind == BN_LRU && m->lru_head != i) {
		bn_lru_unlink(m, i);
		bn_lru_front(m, i);
	}
	return bn_value(m, bn_node(m, i));
}

static void bn_unchain(struct bpfnative_map *m, uint32_t i, uint32_t *link)
{
	*link = bn_node(m, i)->next;
	if (m->kind == BN_LRU)
		bn_lru_unlink(m, i);
	bn_node(m, i)->next = m->free;
	m->free = i;
	m->used--;
}

long bpfnative_delete(struct bpfnative_map *m, const void *key)
{
	uint32_t *link, i;

	if (m->kind != BN_HASH && m->kind != BN_LRU)
		return -EINVAL;
	i = bn_find(m, key, bn_hash(key, m->key_size), &link);
	if (i == BPFNATIVE_NONE)
		return -ENOENT;
	bn_unchain(m, i, link);
	return 0;
}

/* a free node for a new key: the LRU map's least recent one when none */
static uint32_t bn_take(struct bpfnative_map *m)
{
	uint32_t i = m->free, *link;

	if (i == BPFNATIVE_NONE && m->fresh < m->max_entries) {
		m->used++;
		return m->fresh++;
	}
	if (i == BPFNATIVE_NONE && m->kind == BN_LRU &&
	    m->lru_tail != BPFNATIVE_NONE) {
		struct bpfnative_node *old = bn_node(m, m->lru_tail);

		bn_find(m, bn_key(old), old->hash, &link);
		bn_unchain(m, m->lru_tail, link);
		i = m->free;
	}
	if (i != BPFNATIVE_NONE) {
		m->free = bn_node(m, i)->next;
		m->used++;
	}
	return i;
}

long bpfnative_update(struct bpfnative_map *m, const void *key,
		      const void *value, unsigned long long flags)
{
	uint32_t h, i, *link;
	void *v;

	if (flags > BPF_EXIST)
		return -EINVAL;
	if (m->kind == BN_ARRAY) {
		if (flags == BPF_NOEXIST)
			return -EEXIST;	/* every array key exists */
		v = bpfnative_lookup(m, key);
		if (!v)
			return -E2BIG;
		memcpy(v, value, m->value_size);
		return 0;
	}
	if (m->kind == BN_RINGBUF)
		return -EINVAL;
	h = bn_hash(key, m->key_size);
	i = bn_find(m, key, h, &link);
	if (i != BPFNATIVE_NONE) {
		if (flags == BPF_NOEXIST)
			return -EEXIST;
	} else {
		if (flags == BPF_EXIST)
			return -ENOENT;
		i = bn_take(m);
		if (i == BPFNATIVE_NONE)
			return -E2BIG;
		/* the chain may have lost the evicted node: find the head
		 * again */
		link = &m->buckets[h & (m->nbuckets - 1)];
		bn_node(m, i)->next = *link;
		*link = i;
		bn_node(m, i)->hash = h;
		memcpy(bn_key(bn_node(m, i)), key, m->key_size);
		if (m->kind == BN_LRU)
			bn_lru_front(m, i);
	}
	if (m->kind == BN_LRU && m->lru_head != i) {
		bn_lru_unlink(m, i);
		bn_lru_front(m, i);
	}
	memcpy(bn_value(m, bn_node(m, i)), value, m->value_size);
	return 0;
}

/* an element's key: whether node i holds one (not on the free list) */
static int bn_in_use(struct bpfnative_map *m, uint32_t i)
{
	struct bpfnative_node *n = bn_node(m, i);
	uint32_t *link;

	return bn_find(m, bn_key(n), n->hash, &link) == i;
}

long bpfnative_for_each(struct bpfnative_map *m,
			long (*cb)(void *map, void *key, void *value, void *ctx),
			void *map_arg, void *ctx)
{
	/* a hash map's nodes past fresh were never in use */
	uint32_t i, k, end = m->kind == BN_ARRAY ? m->max_entries : m->fresh;
	long n = 0;

	for (i = 0; i < end; i++) {
		void *key, *val;

		if (m->kind == BN_ARRAY) {
			k = i;
			key = &k;
			val = m->mem + (size_t)i * bn_align8(m->value_size);
		} else if (m->kind == BN_RINGBUF || !bn_in_use(m, i)) {
			continue;
		} else {
			key = bn_key(bn_node(m, i));
			val = bn_value(m, bn_node(m, i));
		}
		n++;
		if (cb(map_arg, key, val, ctx))
			break;
	}
	return n;
}

void *bpfnative_rb_reserve(struct bpfnative_map *m, unsigned long long size)
{
	struct bpfnative_rec *r;

	if (m->kind != BN_RINGBUF || size > m->max_entries)
		return NULL;
	r = malloc(sizeof(*r) + size);
	if (!r)
		return NULL;
	r->m = m;
	r->size = size;
	return r + 1;
}

void bpfnative_rb_submit(void *data)
{
	struct bpfnative_rec *r = (struct bpfnative_rec *)data - 1;

	if (r->m->rb_cb)
		r->m->rb_cb(r->m->rb_ctx, data, r->size);
	free(r);
}

void bpfnative_rb_discard(void *data)
{
	free((struct bpfnative_rec *)data - 1);
}

void bpfnative_rb_consumer(struct bpfnative_map *m,
			   int (*cb)(void *ctx, void *data, unsigned long size),
			   void *ctx)
{
	m->rb_cb = cb;
	m->rb_ctx = ctx;
}
