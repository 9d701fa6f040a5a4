// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <pcap/pcap.h>
#include "capture.h"
#include "roce_pkt.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif
#define LINKTYPE_IPV4	228
#define LINKTYPE_IPV6	229
#define LINKTYPE_RAW	101	/* DLT_RAW is 12 or 14 depending on the OS */
/* Linux cooked captures: the header's length, where its protocol is */
#define SLL_HLEN	16
#define SLL_PROTO	14
#define SLL2_HLEN	20
#define SLL2_PROTO	0

/* the file's stdio buffer: its default (4 KiB, the block size) would be a
 * read() per 4 KiB, a fifth of -r's time at 2 million packets a second */
#define CAPTURE_IO_BUF	(1 << 20)

struct capture {
	pcap_t *pc;
	char *iobuf;		/* the FILE's buffer, freed after pcap_close() */
	int dlt;
	unsigned long long bytes;	/* captured bytes of the frames read */
	char err[PCAP_ERRBUF_SIZE];
	unsigned char frame[CAPTURE_MAX_FRAME];
};

static int dlt_supported(int dlt)
{
	return dlt == DLT_EN10MB || dlt == DLT_LINUX_SLL || dlt == DLT_LINUX_SLL2 ||
	       dlt == DLT_RAW || dlt == LINKTYPE_IPV4 || dlt == LINKTYPE_IPV6 ||
	       dlt == LINKTYPE_RAW;
}

struct capture *capture_open(const char *path, char *err, size_t errlen)
{
	char pcerr[PCAP_ERRBUF_SIZE] = "";
	struct capture *c = calloc(1, sizeof(*c));
	FILE *f;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(c);
		return NULL;
	}
	c->iobuf = malloc(CAPTURE_IO_BUF);
	if (c->iobuf)
		setvbuf(f, c->iobuf, _IOFBF, CAPTURE_IO_BUF);
	/* one thread reads it: no lock per fread (two a packet) */
	__fsetlocking(f, FSETLOCKING_BYCALLER);
	c->pc = pcap_fopen_offline_with_tstamp_precision(f,
			PCAP_TSTAMP_PRECISION_NANO, pcerr);
	if (!c->pc) {
		snprintf(err, errlen, "%s", pcerr);
		if (f != stdin)
			fclose(f);	/* libpcap leaves it open when it refuses it */
		free(c->iobuf);
		free(c);
		return NULL;
	}
	c->dlt = pcap_datalink(c->pc);
	if (!dlt_supported(c->dlt)) {
		const char *name = pcap_datalink_val_to_name(c->dlt);

		snprintf(err, errlen, "link type %s is not supported "
			 "(Ethernet, Linux cooked or raw IP only)",
			 name ? name : "unknown");
		capture_close(c);
		return NULL;
	}
	return c;
}

/* a frame of another link type as Ethernet, in c->frame */
static unsigned int to_ethernet(struct capture *c, const unsigned char *p,
				unsigned int caplen)
{
	unsigned int hdr, n;
	unsigned short proto;

	switch (c->dlt) {
	case DLT_LINUX_SLL:
		if (caplen < SLL_HLEN)
			return 0;
		proto = roce_get16(p + SLL_PROTO);
		hdr = SLL_HLEN;
		break;
	case DLT_LINUX_SLL2:
		if (caplen < SLL2_HLEN)
			return 0;
		proto = roce_get16(p + SLL2_PROTO);
		hdr = SLL2_HLEN;
		break;
	default:		/* raw IP */
		if (caplen < 1)
			return 0;
		proto = (p[0] >> 4) == 6 ? AX_ETH_P_IPV6 : AX_ETH_P_IP;
		hdr = 0;
		break;
	}
	/* no addresses, the ethertype last */
	memset(c->frame, 0, AX_ETH_HLEN - 2);
	roce_put16(c->frame + AX_ETH_HLEN - 2, proto);
	n = caplen - hdr;
	if (n > CAPTURE_MAX_FRAME - AX_ETH_HLEN)
		n = CAPTURE_MAX_FRAME - AX_ETH_HLEN;
	memcpy(c->frame + AX_ETH_HLEN, p + hdr, n);
	return n + AX_ETH_HLEN;
}

int capture_next(struct capture *c, const unsigned char **frame,
		 unsigned int *len, unsigned long long *ts_ns)
{
	struct pcap_pkthdr *h;
	const unsigned char *data;
	int rc = pcap_next_ex(c->pc, &h, &data);

	if (rc == PCAP_ERROR_BREAK)
		return 0;
	if (rc != 1) {
		snprintf(c->err, sizeof(c->err), "%s", pcap_geterr(c->pc));
		return -1;
	}
	c->bytes += h->caplen;
	if (c->dlt == DLT_EN10MB) {
		/* in place: libpcap's buffer holds it until the next call */
		*frame = data;
		*len = h->caplen < CAPTURE_MAX_FRAME ? h->caplen : CAPTURE_MAX_FRAME;
	} else {
		*len = to_ethernet(c, data, h->caplen);
		*frame = c->frame;
	}
	/* with nanosecond precision tv_usec holds nanoseconds */
	*ts_ns = (unsigned long long)h->ts.tv_sec * 1000000000ULL + h->ts.tv_usec;
	return 1;
}

unsigned long long capture_bytes(const struct capture *c)
{
	return c->bytes;
}

long long capture_offset(const struct capture *c)
{
	FILE *f = pcap_file(c->pc);

	return f ? (long long)ftell(f) : -1;
}

const char *capture_error(const struct capture *c)
{
	return c->err;
}

void capture_close(struct capture *c)
{
	if (!c)
		return;
	if (c->pc)
		pcap_close(c->pc);
	free(c->iobuf);
	free(c);
}
