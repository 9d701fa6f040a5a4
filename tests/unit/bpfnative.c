// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpfnative's hash and LRU hash maps against the kernel's semantics its
 * header promises: flags, a full map, a deleted key's node used again,
 * the least recent entry pushed out of a full LRU map, for_each seeing
 * each element once and allowing its deletion, values at stable
 * addresses, and nodes never used never visited.
 */
#include <errno.h>
#include <stdint.h>
#include <linux/bpf.h>
#include "tap.h"
#include "bpfnative.h"

#define MAX 64

static long count_cb(void *map, void *key, void *value, void *ctx)
{
	uint32_t k = *(uint32_t *)key;

	if (*(uint64_t *)value != k * 10ULL)
		((int *)ctx)[1]++;	/* a key with another key's value */
	((int *)ctx)[0]++;
	return 0;
}

static long delete_odd_cb(void *map, void *key, void *value, void *ctx)
{
	if (*(uint32_t *)key & 1)
		bpfnative_delete(map, key);
	return 0;
}

static int put(struct bpfnative_map *m, uint32_t k, unsigned long long flags)
{
	uint64_t v = k * 10ULL;

	return bpfnative_update(m, &k, &v, flags);
}

static void test_hash(void)
{
	struct bpfnative_map *m = bpfnative_map_new(BPF_MAP_TYPE_HASH, 4, 8, MAX);
	int seen[2] = { 0, 0 }, full = 0, stable = 1;
	uint64_t *first;
	uint32_t k = 0;

	tap_ok(m != NULL, "hash map made");
	if (!m)
		return;
	tap_eq(bpfnative_for_each(m, count_cb, m, seen), 0, "empty: for_each visits none");
	tap_eq(put(m, 0, BPF_EXIST), -ENOENT, "BPF_EXIST on a missing key: -ENOENT");
	for (k = 0; k < MAX; k++)
		full |= put(m, k, BPF_NOEXIST);
	tap_eq(full, 0, "%d keys fit", MAX);
	first = bpfnative_lookup(m, &(uint32_t){ 0 });
	tap_eq(put(m, MAX, BPF_ANY), -E2BIG, "one more: -E2BIG");
	tap_eq(put(m, 5, BPF_NOEXIST), -EEXIST, "BPF_NOEXIST on a present key: -EEXIST");
	tap_eq(bpfnative_for_each(m, count_cb, m, seen), MAX, "for_each visits every key once");
	tap_eq(seen[1], 0, "each with its own value");
	bpfnative_for_each(m, delete_odd_cb, m, NULL);
	seen[0] = seen[1] = 0;
	tap_eq(bpfnative_for_each(m, count_cb, m, seen), MAX / 2,
	       "deleting inside for_each: the odd keys gone");
	for (k = 1; k < MAX; k += 2)
		full |= put(m, k + 1000, BPF_NOEXIST);
	tap_eq(full, 0, "the deleted keys' nodes serve new keys");
	tap_eq(put(m, MAX + 1000, BPF_ANY), -E2BIG, "and the map is full again");
	for (k = 0; k < MAX; k += 2)
		stable &= bpfnative_lookup(m, &k) != NULL;
	tap_ok(stable && bpfnative_lookup(m, &(uint32_t){ 0 }) == first,
	       "the kept keys stay, their values where they were");
	bpfnative_map_free(m);
}

static void test_lru(void)
{
	struct bpfnative_map *m = bpfnative_map_new(BPF_MAP_TYPE_LRU_HASH, 4, 8, MAX);
	int seen[2] = { 0, 0 }, ok = 1;
	uint32_t k;

	tap_ok(m != NULL, "LRU hash map made");
	if (!m)
		return;
	for (k = 0; k < MAX; k++)
		ok &= put(m, k, BPF_ANY) == 0;
	/* 0 looked up: 1 is now the least recent */
	ok &= bpfnative_lookup(m, &(uint32_t){ 0 }) != NULL;
	tap_ok(ok, "%d keys fit", MAX);
	tap_eq(put(m, 500, BPF_ANY), 0, "one more goes in");
	tap_ok(!bpfnative_lookup(m, &(uint32_t){ 1 }) && bpfnative_lookup(m, &(uint32_t){ 0 }),
	       "pushing out the least recent (1), not the one looked up (0)");
	tap_eq(bpfnative_for_each(m, count_cb, m, seen), MAX, "still %d keys", MAX);
	bpfnative_map_free(m);
}

int main(void)
{
	test_hash();
	test_lru();
	return tap_done();
}
