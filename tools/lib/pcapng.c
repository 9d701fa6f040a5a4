// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pcapng writer (pcapng.h), after the block layouts of the pcapng
 * specification (draft-ietf-opsawg-pcapng): SHB, IDB, EPB. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pcapng.h"
#include "cli.h"

#define BT_SHB		0x0A0D0D0AU
#define BT_IDB		0x00000001U
#define BT_EPB		0x00000006U
#define BYTE_ORDER_MAGIC 0x1A2B3C4DU
#define OPT_END		0
#define OPT_COMMENT	1
#define OPT_SHB_USERAPPL 4
#define OPT_IF_NAME	2
#define PCAPNG_MAX_IFACES 256
#define PCAPNG_NAME_LEN 64

struct pcapng_iface {
	char name[PCAPNG_NAME_LEN];
	int linktype;
};

struct pcapng {
	FILE *f;
	char *path;
	bool warned;			/* a write failed and was reported */
	uint32_t snaplen;
	int err;			/* the first failed write, -errno */
	unsigned long packets;
	int nifaces;
	struct pcapng_iface ifaces[PCAPNG_MAX_IFACES];
};

static uint32_t pad4(uint32_t n)
{
	return (n + 3) & ~3U;
}

static void put(struct pcapng *p, const void *b, size_t n)
{
	if (!p->err && n && fwrite(b, 1, n, p->f) != n)
		p->err = -(errno ? errno : EIO);
}

static void put32(struct pcapng *p, uint32_t v)
{
	put(p, &v, 4);
}

/* zero bytes up to the next 4-byte boundary after n bytes */
static void put_pad(struct pcapng *p, uint32_t n)
{
	static const char zero[4];

	put(p, zero, pad4(n) - n);
}

/* an option's size in the block: header, value, padding */
static uint32_t opt_size(const char *s)
{
	return s && *s ? 4 + pad4(strlen(s)) : 0;
}

static void put_opt(struct pcapng *p, uint16_t code, const char *s)
{
	uint16_t h[2];
	size_t n;

	if (!s || !*s)
		return;
	n = strlen(s);
	if (n > 0xffff)
		n = 0xffff;
	h[0] = code;
	h[1] = n;
	put(p, h, sizeof(h));
	put(p, s, n);
	put_pad(p, n);
}

/* the options' end marker, where there were options */
static void put_opt_end(struct pcapng *p, uint32_t opts)
{
	if (opts)
		put32(p, OPT_END);
}

static void write_shb(struct pcapng *p, const char *app)
{
	uint32_t opts = opt_size(app);
	uint32_t len = 28 + opts + (opts ? 4 : 0);
	uint16_t version[2] = { 1, 0 };
	int64_t section_len = -1;	/* not given */

	put32(p, BT_SHB);
	put32(p, len);
	put32(p, BYTE_ORDER_MAGIC);
	put(p, version, sizeof(version));
	put(p, &section_len, sizeof(section_len));
	put_opt(p, OPT_SHB_USERAPPL, app);
	put_opt_end(p, opts);
	put32(p, len);
}

struct pcapng *pcapng_open(const char *path, const char *app, uint32_t snaplen)
{
	struct pcapng *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return NULL;
	p->f = fopen(path, "wb");
	if (!p->f) {
		err = errno;
		free(p);
		errno = err;
		return NULL;
	}
	p->snaplen = snaplen;
	p->path = strdup(path);
	write_shb(p, app);
	if (!p->err)
		p->err = fflush(p->f) ? -errno : 0;
	if (p->err) {
		err = -p->err;
		fclose(p->f);
		free(p->path);
		free(p);
		errno = err;
		return NULL;
	}
	return p;
}

/* the interface's id, its description written first when new; -1 when
 * the table is full */
static int iface_id(struct pcapng *p, const char *name, int linktype)
{
	struct pcapng_iface *i;
	uint32_t opts, len;
	uint16_t lt[2] = { (uint16_t)linktype, 0 };

	for (int k = 0; k < p->nifaces; k++)
		if (p->ifaces[k].linktype == linktype && !strcmp(p->ifaces[k].name, name))
			return k;
	if (p->nifaces == PCAPNG_MAX_IFACES)
		return -1;
	i = &p->ifaces[p->nifaces];
	snprintf(i->name, sizeof(i->name), "%s", name);
	i->linktype = linktype;
	opts = opt_size(i->name);
	len = 20 + opts + (opts ? 4 : 0);
	put32(p, BT_IDB);
	put32(p, len);
	put(p, lt, sizeof(lt));
	put32(p, p->snaplen);
	put_opt(p, OPT_IF_NAME, i->name);
	put_opt_end(p, opts);
	put32(p, len);
	return p->nifaces++;
}

int pcapng_packet(struct pcapng *p, const char *ifname, int linktype, uint64_t epoch_us,
		  const void *data, uint32_t caplen, uint32_t origlen, const char *comment)
{
	int id = iface_id(p, ifname ? ifname : "", linktype);
	uint32_t opts = opt_size(comment);
	uint32_t len = 32 + pad4(caplen) + opts + (opts ? 4 : 0);

	if (id < 0)
		return -ENOSPC;
	put32(p, BT_EPB);
	put32(p, len);
	put32(p, id);
	put32(p, epoch_us >> 32);
	put32(p, (uint32_t)epoch_us);
	put32(p, caplen);
	put32(p, origlen < caplen ? caplen : origlen);
	put(p, data, caplen);
	put_pad(p, caplen);
	put_opt(p, OPT_COMMENT, comment);
	put_opt_end(p, opts);
	put32(p, len);
	/* a reader sees every packet as it is written, even if we are killed */
	if (!p->err && fflush(p->f))
		p->err = -errno;
	if (!p->err)
		p->packets++;
	return p->err;
}

unsigned long pcapng_count(const struct pcapng *p)
{
	return p ? p->packets : 0;
}

int pcapng_close(struct pcapng *p)
{
	int err;

	if (!p)
		return 0;
	err = p->err;
	if (fclose(p->f) && !err)
		err = -errno;
	if (err && !p->warned)
		cli_err("cannot write %s: %s", p->path ? p->path : "-w file", strerror(-err));
	free(p->path);
	free(p);
	return err;
}

/* microseconds, rounded as printf's "%.6f" rounds them (json_time()), so
 * a packet's time reads exactly as its JSON event's */
static uint64_t epoch_us(double epoch_s)
{
	char b[40], *dot;

	if (epoch_s < 0)
		return 0;
	snprintf(b, sizeof(b), "%.6f", epoch_s);
	dot = strchr(b, '.');
	if (!dot)
		return 0;
	*dot = 0;
	return strtoull(b, NULL, 10) * 1000000ULL + strtoull(dot + 1, NULL, 10);
}

void pcapng_write_cap(struct pcapng *p, const char *ifname, const struct pkt_cap *cap,
		      double epoch_s, const char *comment)
{
	uint64_t us = epoch_us(epoch_s);
	uint32_t n = cap->cap_len <= PKT_CAP_MAX ? cap->cap_len : PKT_CAP_MAX;
	int lt = cap->start == PKT_CAP_NET ? PCAPNG_LINKTYPE_RAW : PCAPNG_LINKTYPE_ETHERNET;
	int err;

	if (cap->start == PKT_CAP_NONE)
		n = 0;
	err = pcapng_packet(p, ifname, lt, us, cap->data, n, cap->orig_len, comment);
	if (err && !p->warned) {
		cli_err("cannot write %s: %s", p->path ? p->path : "-w file", strerror(-err));
		p->warned = true;
	}
}

struct pcapng *pcapng_open_or_die(const char *path, const char *app, uint32_t snaplen)
{
	struct pcapng *p = pcapng_open(path, app, snaplen);

	if (!p)
		cli_die("cannot write %s: %s", path, strerror(errno));
	return p;
}

/* ---- -w and --snaplen ---- */

enum { PCAPNG_OPT_SNAPLEN = 0x2100 };	/* apart from the tools' own keys */
_Static_assert(PKT_CAP_MAX == 2048 && PKT_CAP_DEFAULT == 256,
	       "--snaplen's help says 1-2048 (default 256)");

static const struct argp_option pcapng_options[] = {
	/* the default words; a tool's own through pcapng_help_filter() */
	{ "write", 'w', "FILE", 0,
	  "Also write each dropped packet (its first --snaplen bytes) to FILE as "
	  "pcapng, the drop's location and reason as the packet's comment", 0 },
	{ "snaplen", PCAPNG_OPT_SNAPLEN, "N", 0,
	  "With -w: bytes of each packet to write, 1-2048 (default 256)", 0 },
	{},
};

static error_t pcapng_parse_opt(int key, char *arg, struct argp_state *state)
{
	struct pcapng_args *a = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		/* the tool's parser hands its struct in (PCAPNG_CLI_ARGP) */
		if (!a)
			cli_die("internal error: no struct pcapng_args for -w and --snaplen");
		a->path = NULL;
		a->snaplen = PKT_CAP_DEFAULT;
		break;
	case 'w':
		if (!*arg)
			argp_failure(state, 1, 0, "empty -w file name");
		a->path = arg;
		break;
	case PCAPNG_OPT_SNAPLEN:
		a->snaplen = cli_arg_long(state, arg, 1, PKT_CAP_MAX, "snap length");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* -w's help in the tool's words, where its struct has them (argp frees
 * what differs from text) */
static char *pcapng_help_filter(int key, const char *text, void *input)
{
	const struct pcapng_args *a = input;

	if (key != 'w' || !a || !a->write_doc)
		return (char *)text;
	return strdup(a->write_doc) ?: (char *)text;
}

const struct argp pcapng_argp = {
	.options = pcapng_options,
	.parser = pcapng_parse_opt,
	.help_filter = pcapng_help_filter,
};
