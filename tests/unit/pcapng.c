// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tools/lib/pcapng.c: the blocks it writes, walked back byte by byte
 * (tests/host/{rxedrop,nfdrop}.bats read its files with tshark). */
#include <argp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/pcapng.h"
#include "tap.h"

static uint8_t buf[8192];
static size_t len;

static uint32_t u32(size_t off)
{
	uint32_t v;

	memcpy(&v, buf + off, 4);
	return v;
}

static uint16_t u16(size_t off)
{
	uint16_t v;

	memcpy(&v, buf + off, 2);
	return v;
}

/* the first option of code in [off, end): its value's offset, length */
static int find_opt(size_t off, size_t end, uint16_t code, size_t *voff)
{
	while (off + 4 <= end) {
		uint16_t c = u16(off), l = u16(off + 2);

		if (c == 0)
			return -1;
		if (c == code) {
			*voff = off + 4;
			return l;
		}
		off += 4 + ((l + 3) & ~3U);
	}
	return -1;
}

static void check_blocks(void)
{
	static const uint32_t want[] = { 0x0A0D0D0A, 1, 6, 6, 1, 6, 6 };
	static const uint32_t ifid[] = { 0, 0, 0, 0, 0, 1, 0 };
	size_t off = 0, vo;
	int i = 0, l;

	for (; off + 12 <= len && i < 7; i++) {
		uint32_t type = u32(off), tl = u32(off + 4);

		tap_eq(type, want[i], "block %d: type", i);
		tap_ok(tl % 4 == 0 && off + tl <= len && u32(off + tl - 4) == tl,
		       "block %d: length %u, a multiple of 4, repeated at its end", i, tl);
		if (type == 1) {
			l = find_opt(off + 16, off + tl - 4, 2, &vo);
			tap_ok(l == 5 && !memcmp(buf + vo, "veth0", 5), "IDB %d: if_name veth0", i);
			tap_eq(u16(off + 8), i == 1 ? PCAPNG_LINKTYPE_ETHERNET : PCAPNG_LINKTYPE_RAW,
			       "IDB %d: link type", i);
			tap_eq(u32(off + 12), 256, "IDB %d: snaplen", i);
		}
		if (type == 6) {
			uint32_t cap = u32(off + 20);
			uint64_t ts = (uint64_t)u32(off + 12) << 32 | u32(off + 16);

			tap_eq(u32(off + 8), ifid[i], "EPB %d: interface id", i);
			tap_eq(ts, 1700000000123456ULL + i, "EPB %d: microseconds", i);
			tap_eq(u32(off + 24), 100, "EPB %d: original length", i);
			l = find_opt(off + 28 + ((cap + 3) & ~3U), off + tl - 4, 1, &vo);
			tap_ok(l == 7 && !memcmp(buf + vo, "drop #", 6) && buf[vo + 6] == '0' + i,
			       "EPB %d: the comment", i);
		}
		off += tl;
	}
	tap_eq(off, len, "the blocks fill the file");
}

/* a tool's parser: its struct pcapng_args to the child (as PCAPNG_CLI_ARGP's
 * tools do at ARGP_KEY_INIT), and -H: the help into help_f, from within
 * the parse, as the tools' -h gives it */
static FILE *help_f;

static error_t parent_parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = state->input;
		break;
	case 'H':
		argp_state_help(state, help_f, ARGP_HELP_LONG);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* the help of a parse of -H with args' write_doc (malloc'd, NULL on error) */
static char *help_of(const struct argp *parent, struct pcapng_args *args)
{
	char a0[] = "unit", a1[] = "-H";
	char *argv[] = { a0, a1, NULL };
	char *help = NULL;
	size_t n = 0;

	help_f = open_memstream(&help, &n);
	if (!help_f)
		return NULL;
	/* not ARGP_SILENT: its ARGP_NO_ERRS silences help too */
	argp_parse(parent, 2, argv, ARGP_NO_EXIT | ARGP_NO_HELP, NULL, args);
	fclose(help_f);
	return help;
}

/* pcapng_argp as a child: -w and --snaplen parsed into the tool's struct,
 * -w's help the tool's */
static void check_argp(void)
{
	static const struct argp_option opts[] = { { "help-here", 'H', NULL, 0, "Help", 0 }, {} };
	static const struct argp_child children[] = { { &pcapng_argp, 0, NULL, 0 }, {} };
	static const struct argp parent = {
		.options = opts, .parser = parent_parse, .children = children,
	};
	char a0[] = "unit", a1[] = "-w", a2[] = "drops.pcapng", a3[] = "--snaplen", a4[] = "60";
	char *argv[] = { a0, a1, a2, a3, a4, NULL };
	struct pcapng_args args = { .path = "stale", .snaplen = 1 };
	char *help;

	tap_eq(argp_parse(&parent, 1, argv, ARGP_SILENT, NULL, &args), 0, "nothing parsed");
	tap_eq(args.snaplen, PKT_CAP_DEFAULT, "--snaplen's default");
	tap_ok(!args.path, "no -w: no file");
	tap_eq(argp_parse(&parent, 3, argv, ARGP_SILENT, NULL, &args), 0, "-w FILE parsed");
	tap_ok(args.path && !strcmp(args.path, "drops.pcapng"), "-w's FILE");
	tap_eq(args.snaplen, PKT_CAP_DEFAULT, "without --snaplen: the default");
	tap_eq(argp_parse(&parent, 5, argv, ARGP_SILENT, NULL, &args), 0,
	       "-w FILE --snaplen N parsed");
	tap_eq(args.snaplen, 60, "--snaplen's N");
	help = help_of(&parent, &args);
	tap_ok(help && strstr(help, "reason as the packet's comment"),
	       "--help: -w in the default words without the tool's");
	free(help);
	args.write_doc = "the tool's own words for -w";
	help = help_of(&parent, &args);
	tap_ok(help && strstr(help, "the tool's own words for -w") &&
	       !strstr(help, "reason as the packet's") && strstr(help, "--snaplen=N") &&
	       strstr(help, "1-2048") && strstr(help, "(default 256)"),
	       "--help: -w in the tool's words, --snaplen's range");
	free(help);
}

int main(void)
{
	char path[] = "/tmp/axp-pcapng-unit.XXXXXX";
	int fd = mkstemp(path);
	uint8_t pkt[100];
	struct pcapng *p;
	FILE *f;
	char c[16];

	for (unsigned int i = 0; i < sizeof(pkt); i++)
		pkt[i] = i;
	p = pcapng_open(path, "unit", 256);
	tap_ok(fd >= 0 && p, "opened");
	if (!p)
		return tap_done();
	for (int i = 2; i < 7; i++) {
		if (i == 4)
			continue;	/* the second IDB's place */
		snprintf(c, sizeof(c), "drop #%d", i);
		/* odd lengths: padding; block 5 raw IP */
		tap_eq(pcapng_packet(p, "veth0", i == 5 ? PCAPNG_LINKTYPE_RAW :
				     PCAPNG_LINKTYPE_ETHERNET, 1700000000123456ULL + i,
				     pkt, 2 * i + 1, 100, c), 0, "packet %d written", i);
	}
	tap_eq(pcapng_count(p), 4, "four packets counted");
	tap_eq(pcapng_close(p), 0, "closed");
	f = fopen(path, "rb");
	len = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	check_blocks();
	unlink(path);
	close(fd);
	errno = 0;
	tap_ok(!pcapng_open("/nonexistent/dir/x.pcapng", "unit", 256) && errno == ENOENT,
	       "a file that cannot be created: NULL, errno ENOENT");
	check_argp();
	return tap_done();
}
