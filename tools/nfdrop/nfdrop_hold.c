// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* nfdrop's held packets (nfdrop_hold.h): -w without -e */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "nfdrop_hold.h"
#include "nfdrop_output.h"
#include "lib/cli.h"
#include "lib/hash.h"

#define HOLD_SLOTS	(2 * NFDROP_HOLD_MAX_KEYS)	/* a power of two */
#define ROW_UNSET	(-3)

_Static_assert((HOLD_SLOTS & (HOLD_SLOTS - 1)) == 0, "HOLD_SLOTS: a power of two");

/* a packet signature with packets held, and the comment its packets were
 * last written with */
struct hold_key {
	struct nfd_key key;
	int npkts;
	char *comment;		/* NULL: none written yet */
};

struct held {
	struct nfd_event e;
	struct pkt_cap *cap;	/* its header and cap_len bytes */
	size_t size;		/* of cap */
	int key;		/* in keys[] */
	int row;		/* ROW_UNSET until a drain counted it */
};

static struct pcapng *pcap;
static nfdrop_hold_unsettled_fn write_unsettled;
static struct hold_key keys[NFDROP_HOLD_MAX_KEYS];
static int nkeys;
static short slots[HOLD_SLOTS];		/* index into keys[] + 1, 0 empty */
static struct held *held;
static int nheld, capheld;
static size_t held_bytes;
static unsigned long long unsettled;

void nfdrop_hold_init(struct pcapng *p, nfdrop_hold_unsettled_fn fn)
{
	pcap = p;
	write_unsettled = fn;
}

/* the slot of k: where it is, or the empty one where it would go */
static unsigned int hold_slot(const struct nfd_key *k)
{
	return hash_slot(slots, HOLD_SLOTS, keys, sizeof(keys[0]), k, sizeof(*k));
}

/* keys without held packets forgotten (their comments with them) */
static void hold_keys_compact(void)
{
	int map[NFDROP_HOLD_MAX_KEYS], n = 0;

	memset(slots, 0, sizeof(slots));
	for (int i = 0; i < nkeys; i++) {
		map[i] = -1;
		if (!keys[i].npkts) {
			free(keys[i].comment);
			continue;
		}
		map[i] = n;
		keys[n] = keys[i];
		slots[hold_slot(&keys[n].key)] = n + 1;
		n++;
	}
	nkeys = n;
	for (int i = 0; i < nheld; i++)
		held[i].key = map[held[i].key];
}

/* the index of k in keys[], added when new; -1 when they are full */
static int hold_key(const struct nfd_key *k)
{
	unsigned int s = hold_slot(k);

	if (slots[s])
		return slots[s] - 1;
	if (nkeys == NFDROP_HOLD_MAX_KEYS) {
		hold_keys_compact();
		if (nkeys == NFDROP_HOLD_MAX_KEYS)
			return -1;
		s = hold_slot(k);
	}
	memset(&keys[nkeys], 0, sizeof(keys[nkeys]));
	keys[nkeys].key = *k;
	slots[s] = nkeys + 1;
	return nkeys++;
}

static void hold_unsettled(const struct nfd_event *e, const struct pkt_cap *cap, const char *why)
{
	if (write_unsettled(e, cap, why))
		unsettled++;
}

void nfdrop_hold_add(const struct nfd_event *e, const struct pkt_cap *cap)
{
	uint32_t n = cap->cap_len <= PKT_CAP_MAX ? cap->cap_len : PKT_CAP_MAX;
	size_t size = offsetof(struct pkt_cap, data) + n;
	struct held *h;
	int k;

	if (nheld == capheld && capheld < NFDROP_HOLD_MAX_PKTS) {
		int c = capheld ? capheld * 2 : 256;
		struct held *m = realloc(held, c * sizeof(*m));

		if (m) {
			held = m;
			capheld = c;
		}
	}
	if (nheld == capheld || held_bytes + size > NFDROP_HOLD_MAX_BYTES) {
		hold_unsettled(e, cap, "written before the report that counts it: "
			       "too many packets held");
		return;
	}
	k = hold_key(&e->key);
	h = &held[nheld];
	h->cap = k < 0 ? NULL : malloc(size);
	if (!h->cap) {
		hold_unsettled(e, cap, "written before the report that counts it: "
			       "too many packet signatures held");
		return;
	}
	memcpy(h->cap, cap, size);
	h->cap->cap_len = n;
	h->e = *e;
	h->size = size;
	h->key = k;
	h->row = ROW_UNSET;
	keys[k].npkts++;
	held_bytes += size;
	nheld++;
}

void nfdrop_hold_settle(const struct nfd_key *k, int row)
{
	unsigned int s = hold_slot(k);
	int idx = slots[s] - 1;

	if (!slots[s] || !keys[idx].npkts)
		return;
	for (int i = 0; i < nheld; i++)
		if (held[i].key == idx && held[i].row == ROW_UNSET)
			held[i].row = row;
}

/* a held packet written with comment, and let go */
static void hold_release(struct held *h)
{
	keys[h->key].npkts--;
	held_bytes -= h->size;
	free(h->cap);
	h->cap = NULL;
}

static void hold_write_comment(struct held *h, const char *comment)
{
	struct hold_key *k = &keys[h->key];

	pcapng_write_cap(pcap, h->e.rec.ifname, h->cap, cli_ktime_to_epoch(h->e.ts_ns), comment);
	if (!k->comment || strcmp(k->comment, comment)) {
		free(k->comment);
		k->comment = strdup(comment);
	}
}

/* h, settled or not (at_exit: nothing more will settle it); false when it
 * stays held */
static bool hold_write_one(struct held *h, const struct nfdrop_row *rows, int nrows,
			   bool at_exit)
{
	char comment[1024];
	const char *last = keys[h->key].comment;

	/* a row's index means something in this report only */
	if (h->row >= nrows)
		h->row = ROW_UNSET;
	if (h->row >= 0) {
		nfdrop_row_comment(&rows[h->row], NULL, comment, sizeof(comment));
		hold_write_comment(h, comment);
	} else if (h->row == NFDROP_HOLD_SPLIT) {
		hold_unsettled(&h->e, h->cap, "the trace gave packets like it to more than one rule");
	} else if (h->row == ROW_UNSET && last) {
		/* read after the drain that counted it: as that report said */
		snprintf(comment, sizeof(comment), "%s", last);
		hold_write_comment(h, comment);
	} else if (h->row == ROW_UNSET && at_exit) {
		hold_unsettled(&h->e, h->cap, "no report counted it");
	} else if (h->row == ROW_UNSET) {
		return false;
	}
	hold_release(h);
	return true;
}

void nfdrop_hold_write(const struct nfdrop_row *rows, int nrows)
{
	int n = 0;

	for (int i = 0; i < nheld; i++) {
		if (hold_write_one(&held[i], rows, nrows, false))
			continue;
		held[n++] = held[i];
	}
	nheld = n;
}

void nfdrop_hold_flush(void)
{
	for (int i = 0; i < nheld; i++)
		hold_write_one(&held[i], NULL, 0, true);
	nheld = 0;
	for (int i = 0; i < nkeys; i++)
		free(keys[i].comment);
	nkeys = 0;
	memset(slots, 0, sizeof(slots));
	free(held);
	held = NULL;
	capheld = 0;
}

unsigned long long nfdrop_hold_unsettled(void)
{
	return unsettled;
}
