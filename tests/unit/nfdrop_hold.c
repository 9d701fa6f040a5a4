// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tools/nfdrop/nfdrop_hold.c: held packets written with their report's row, in
 * the order they were dropped; the unsettled ones said why, and counted;
 * the caps. The file is walked back block by block. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "nfdrop_hold.h"
#include "nfdrop_output.h"
#include "tap.h"

#define MAX_SEEN 64

static char path[] = "/tmp/axp-nfdrop-hold-unit.XXXXXX";
/* what the file holds: each packet's first byte and comment */
static int nread;
static unsigned char first[MAX_SEEN];
static char comments[MAX_SEEN][1024];
/* the unsettled callback's calls */
static int nwhy;
static unsigned char why_first[MAX_SEEN];
static char whys[MAX_SEEN][128];

static bool unsettled_cb(const struct nfd_event *e, const struct pkt_cap *cap, const char *why)
{
	if (nwhy < MAX_SEEN) {
		why_first[nwhy] = cap->cap_len ? cap->data[0] : 0;
		snprintf(whys[nwhy], sizeof(whys[0]), "%s", why);
	}
	nwhy++;
	return true;
}

/* the Enhanced Packet Blocks of the file: first byte and comment */
static void read_back(void)
{
	static unsigned char buf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t len = f ? fread(buf, 1, sizeof(buf), f) : 0, off = 0;
	uint32_t type, tl, cap;

	if (f)
		fclose(f);
	nread = 0;
	while (off + 12 <= len) {
		memcpy(&type, buf + off, 4);
		memcpy(&tl, buf + off + 4, 4);
		if (tl < 12 || off + tl > len)
			break;
		if (type == 6 && nread < MAX_SEEN) {
			uint16_t code, n;
			size_t o;

			memcpy(&cap, buf + off + 20, 4);
			o = off + 28 + ((cap + 3) & ~3U);
			first[nread] = cap ? buf[off + 28] : 0;
			comments[nread][0] = 0;
			memcpy(&code, buf + o, 2);
			memcpy(&n, buf + o + 2, 2);
			if (code == 1 && n < sizeof(comments[0])) {
				memcpy(comments[nread], buf + o + 4, n);
				comments[nread][n] = 0;
			}
			nread++;
		}
		off += tl;
	}
}

static void key_of(struct nfd_key *k, unsigned int netns)
{
	memset(k, 0, sizeof(*k));
	k->netns = netns;
}

/* a packet of key netns whose first byte is tag */
static void add(unsigned int netns, unsigned char tag, unsigned int len)
{
	static struct nfd_event e;
	static struct pkt_cap cap;

	key_of(&e.key, netns);
	e.ts_ns = tag;
	cap.cap_len = len;
	cap.orig_len = len;
	cap.start = PKT_CAP_MAC;
	cap.data[0] = tag;
	nfdrop_hold_add(&e, &cap);
}

static void settle(unsigned int netns, int row)
{
	struct nfd_key k;

	key_of(&k, netns);
	nfdrop_hold_settle(&k, row);
}

static struct nfdrop_row rows[2];

static void make_rows(void)
{
	for (int i = 0; i < 2; i++) {
		struct nfdrop_row *r = &rows[i];

		r->pf = NFR_PROTO_IPV4;
		snprintf(r->hook, sizeof(r->hook), "input");
		r->chain_known = true;
		r->table_family = NFR_PROTO_INET;
		snprintf(r->table, sizeof(r->table), "t%d", i);
		snprintf(r->chain, sizeof(r->chain), "in");
		r->verdict = i ? NFDROP_V_POLICY : NFDROP_V_DROP;
	}
	rows[0].rule_known = true;
	rows[0].handle = 4;
	snprintf(rows[0].rule_chain, sizeof(rows[0].rule_chain), "in");
	snprintf(rows[0].rule_text, sizeof(rows[0].rule_text), "udp dport 4791 drop");
}

static void check_reports(struct pcapng *p)
{
	char c0[1024], c1[1024];

	nfdrop_row_comment(&rows[0], NULL, c0, sizeof(c0));
	nfdrop_row_comment(&rows[1], NULL, c1, sizeof(c1));
	tap_ok(!strcmp(c0, "hook_family=ip hook=input table_family=inet table=t0 chain=in "
		       "verdict=DROP rule_chain=in rule_handle=4 rule=udp dport 4791 drop"),
	       "a row's comment: %s", c0);
	/* keys 1..5: 1 and 2 counted into rows 0 and 1, 3 filtered out, 4
	 * split by the trace, 5 not counted yet */
	add(1, 0xa1, 60);
	add(2, 0xb1, 61);
	add(1, 0xa2, 62);
	add(3, 0xc1, 63);
	add(4, 0xd1, 64);
	add(5, 0xe1, 65);
	settle(1, 0);
	settle(2, 1);
	settle(3, NFDROP_HOLD_FILTERED);
	settle(4, NFDROP_HOLD_SPLIT);
	tap_eq(pcapng_count(p), 0, "nothing written before the report's rows are final");
	nfdrop_hold_write(rows, 2);
	read_back();
	tap_eq(nread, 3, "the report: its three packets written");
	tap_ok(first[0] == 0xa1 && first[1] == 0xb1 && first[2] == 0xa2,
	       "... in the order they were dropped");
	tap_ok(!strcmp(comments[0], c0) && !strcmp(comments[1], c1) && !strcmp(comments[2], c0),
	       "... each with its row's comment");
	tap_ok(nwhy == 1 && why_first[0] == 0xd1 && strstr(whys[0], "more than one rule"),
	       "split by the trace: unsettled, in words");
	/* read after the drain that counted it: as that report said */
	add(1, 0xa3, 60);
	nfdrop_hold_write(rows, 2);
	read_back();
	tap_ok(nread == 4 && first[3] == 0xa3 && !strcmp(comments[3], c0),
	       "counted by an earlier report: its comment");
	/* key 5 is still held: counted in a later report */
	settle(5, 1);
	nfdrop_hold_write(rows, 2);
	read_back();
	tap_ok(nread == 5 && first[4] == 0xe1 && !strcmp(comments[4], c1),
	       "held over a report, then written with the one that counted it");
	add(6, 0xf1, 60);
	nfdrop_hold_write(rows, 2);
	read_back();
	tap_eq(nread, 5, "not counted yet: still held");
	nfdrop_hold_flush();
	tap_ok(nwhy == 2 && why_first[1] == 0xf1 && strstr(whys[1], "no report counted it"),
	       "at exit: what no report counted, unsettled, in words");
	tap_eq(nfdrop_hold_unsettled(), 2, "two written unsettled");
}

/* more than the caps hold: written at once, unsettled, counted */
static void check_caps(void)
{
	int over = 0, n;

	nwhy = 0;
	/* small packets: the packet cap */
	for (n = 0; n < NFDROP_HOLD_MAX_PKTS + 5; n++)
		add(7, 1, 10);
	tap_eq(nwhy, 5, "over %d packets: the rest unsettled", NFDROP_HOLD_MAX_PKTS);
	tap_ok(strstr(whys[0], "too many packets held") != NULL, "... in words");
	nfdrop_hold_flush();
	/* large packets: the byte cap first */
	nwhy = 0;
	for (n = 0; n < NFDROP_HOLD_MAX_PKTS; n++)
		add(8, 2, PKT_CAP_MAX);
	over = n - (int)(NFDROP_HOLD_MAX_BYTES / (offsetof(struct pkt_cap, data) + PKT_CAP_MAX));
	tap_eq(nwhy, over, "over %u bytes: the rest unsettled", NFDROP_HOLD_MAX_BYTES);
	nfdrop_hold_flush();
	/* too many packet signatures */
	nwhy = 0;
	for (n = 0; n < NFDROP_HOLD_MAX_KEYS + 3; n++)
		add(100 + n, 3, 10);
	tap_eq(nwhy, 3, "over %d signatures: the rest unsettled", NFDROP_HOLD_MAX_KEYS);
	tap_ok(nwhy && strstr(whys[0], "signatures") != NULL, "... in words");
	/* settled and written, the table of signatures is free again */
	for (n = 0; n < NFDROP_HOLD_MAX_KEYS; n++)
		settle(100 + n, NFDROP_HOLD_FILTERED);
	nfdrop_hold_write(rows, 2);
	nwhy = 0;
	add(99, 4, 10);
	tap_eq(nwhy, 0, "room again once they are written");
	nfdrop_hold_flush();
}

int main(void)
{
	int fd = mkstemp(path);
	struct pcapng *p;

	make_rows();
	p = fd >= 0 ? pcapng_open(path, "unit", 256) : NULL;
	tap_ok(p != NULL, "opened");
	if (!p)
		return tap_done();
	nfdrop_hold_init(p, unsettled_cb);
	check_reports(p);
	check_caps();
	pcapng_close(p);
	unlink(path);
	close(fd);
	return tap_done();
}
