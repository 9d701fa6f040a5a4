// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pcap/pcap.h>
#include "capture.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif
#define LINKTYPE_IPV4	228
#define LINKTYPE_IPV6	229
#define LINKTYPE_RAW	101	/* DLT_RAW is 12 or 14 depending on the OS */

struct capture {
	pcap_t *pc;
	int dlt;
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

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->pc = pcap_open_offline_with_tstamp_precision(path,
			PCAP_TSTAMP_PRECISION_NANO, pcerr);
	if (!c->pc) {
		snprintf(err, errlen, "%s", pcerr);
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

/* the frame as Ethernet, in c->frame */
static unsigned int to_ethernet(struct capture *c, const unsigned char *p,
				unsigned int caplen)
{
	unsigned int hdr, n;
	unsigned short proto;

	switch (c->dlt) {
	case DLT_EN10MB:
		n = caplen < CAPTURE_MAX_FRAME ? caplen : CAPTURE_MAX_FRAME;
		memcpy(c->frame, p, n);
		return n;
	case DLT_LINUX_SLL:
		if (caplen < 16)
			return 0;
		proto = (p[14] << 8) | p[15];
		hdr = 16;
		break;
	case DLT_LINUX_SLL2:
		if (caplen < 20)
			return 0;
		proto = (p[0] << 8) | p[1];
		hdr = 20;
		break;
	default:		/* raw IP */
		if (caplen < 1)
			return 0;
		proto = (p[0] >> 4) == 6 ? 0x86DD : 0x0800;
		hdr = 0;
		break;
	}
	memset(c->frame, 0, 12);
	c->frame[12] = proto >> 8;
	c->frame[13] = proto & 0xff;
	n = caplen - hdr;
	if (n > CAPTURE_MAX_FRAME - 14)
		n = CAPTURE_MAX_FRAME - 14;
	memcpy(c->frame + 14, p + hdr, n);
	return n + 14;
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
	*len = to_ethernet(c, data, h->caplen);
	*frame = c->frame;
	/* with nanosecond precision tv_usec holds nanoseconds */
	*ts_ns = (unsigned long long)h->ts.tv_sec * 1000000000ULL + h->ts.tv_usec;
	return 1;
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
	free(c);
}
