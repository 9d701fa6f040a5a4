/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Crafted RoCE v2 frames for unit tests and benchmarks: Ethernet, up to two
 * VLAN tags, IPv4 or IPv6 (with hop-by-hop/destination-options extension
 * headers), UDP, BTH and the extended header the opcode calls for (RETH,
 * AETH, DETH), payload and a zero ICRC. The RoCE part comes from the one
 * user-space builder, tools/lib/roce_pkt.c (in build/libagentxdp.a).
 */
#ifndef AGENTXDP_PKT_BUILD_H
#define AGENTXDP_PKT_BUILD_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "../../bpf/lib/roce_proto.h"
#include "../../tools/lib/roce_pkt.h"

struct pkt_spec {
	int family;		/* 4 (default when 0) or 6 */
	int vlans;		/* 0, 1 (802.1Q) or 2 (802.1ad + 802.1Q) */
	int ext6;		/* IPv6 extension headers before UDP (0-4) */
	const char *saddr;	/* default 10.0.0.1 / fd00::1 */
	const char *daddr;	/* default 10.0.0.2 / fd00::2 */
	uint8_t ip_proto;	/* default UDP */
	uint8_t ecn;
	uint16_t sport;		/* default 49152 */
	uint16_t dport;		/* default 4791 */
	uint16_t ethertype;	/* when not IP: raw ethertype, no L3 */
	uint16_t frag_off;	/* IPv4 fragment offset field, host order */
	uint8_t opcode;
	uint8_t syndrome;	/* AETH */
	bool ackreq;
	uint32_t dqpn;
	uint32_t psn;
	uint32_t dma_len;	/* RETH */
	int payload;		/* bytes after the extended headers */
};

static inline uint16_t pkt_csum16(const void *p, int len)
{
	const uint8_t *b = p;
	uint32_t s = 0;

	for (int i = 0; i + 1 < len; i += 2)
		s += (b[i] << 8) | b[i + 1];
	if (len & 1)
		s += b[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return htons(~s & 0xffff);
}

/* writes the frame into buf (cap bytes); returns its length, -1 if too big */
static inline int pkt_build(const struct pkt_spec *s, uint8_t *buf, int cap)
{
	int family = s->family ? s->family : 4, off = 0, l3, l4, i;
	uint8_t proto = s->ip_proto ? s->ip_proto : AX_IPPROTO_UDP;
	uint8_t *p;
	int roce_len, udp_len, ext_len = s->ext6 * 8;
	/* the transport headers, by the builder rocegen and udpflood use */
	const struct roce_pkt roce = {
		.opcode = s->opcode, .migreq = true, .ackreq = s->ackreq,
		.dqpn = s->dqpn, .psn = s->psn, .dma_len = s->dma_len,
		.syndrome = s->syndrome, .msn = 1,
		.qkey = 0x11111111, .src_qp = 0x22,
		.payload_len = s->payload > 0 ? (uint32_t)s->payload : 0,
	};

	if (cap < 2048)
		return -1;
	memset(buf, 0, 2048);
	/* Ethernet: 02:00:00:00:00:02 <- 02:00:00:00:00:01 */
	buf[0] = 2; buf[5] = 2; buf[6] = 2; buf[11] = 1;
	off = 12;
	if (s->vlans >= 2) {
		buf[off] = 0x88; buf[off + 1] = 0xa8;
		buf[off + 2] = 0; buf[off + 3] = 100;
		off += 4;
	}
	if (s->vlans >= 1) {
		buf[off] = 0x81; buf[off + 1] = 0x00;
		buf[off + 2] = 0; buf[off + 3] = 42;
		off += 4;
	}
	if (s->ethertype) {
		buf[off] = s->ethertype >> 8;
		buf[off + 1] = s->ethertype;
		return off + 2 + 46;
	}
	buf[off] = family == 4 ? 0x08 : 0x86;
	buf[off + 1] = family == 4 ? 0x00 : 0xdd;
	off += 2;
	l3 = off;

	roce_len = (int)roce_pkt_len(&roce);
	udp_len = 8 + roce_len;
	if (proto != AX_IPPROTO_UDP)
		udp_len = 8 + 20;	/* some other L4 payload */

	if (family == 4) {
		p = buf + l3;
		p[0] = 0x45;
		p[1] = s->ecn & 3;
		*(uint16_t *)(p + 2) = htons(20 + udp_len);
		*(uint16_t *)(p + 6) = htons(s->frag_off);
		p[8] = 64;
		p[9] = proto;
		inet_pton(AF_INET, s->saddr ? s->saddr : "10.0.0.1", p + 12);
		inet_pton(AF_INET, s->daddr ? s->daddr : "10.0.0.2", p + 16);
		*(uint16_t *)(p + 10) = pkt_csum16(p, 20);
		l4 = l3 + 20;
	} else {
		uint8_t nh = proto;

		p = buf + l3;
		p[0] = 0x60 | 0;
		p[1] = (s->ecn & 3) << 4;
		*(uint16_t *)(p + 4) = htons(ext_len + udp_len);
		p[7] = 64;
		inet_pton(AF_INET6, s->saddr ? s->saddr : "fd00::1", p + 8);
		inet_pton(AF_INET6, s->daddr ? s->daddr : "fd00::2", p + 24);
		/* extension headers: hop-by-hop first, then destination
		 * options, each 8 bytes of PadN */
		for (i = s->ext6 - 1; i >= 0; i--) {
			uint8_t *e = buf + l3 + 40 + i * 8;

			e[0] = nh;
			e[1] = 0;
			e[2] = 1;	/* PadN */
			e[3] = 4;
			nh = i == 0 ? AX_IPPROTO_HOPOPTS : AX_IPPROTO_DSTOPTS;
		}
		p[6] = s->ext6 ? AX_IPPROTO_HOPOPTS : proto;
		l4 = l3 + 40 + ext_len;
	}
	if (l4 + udp_len > cap)
		return -1;
	p = buf + l4;
	*(uint16_t *)(p + 0) = htons(s->sport ? s->sport : 49152);
	*(uint16_t *)(p + 2) = htons(s->dport ? s->dport : ROCE_V2_PORT);
	*(uint16_t *)(p + 4) = htons(udp_len);
	if (proto != AX_IPPROTO_UDP)
		return l4 + udp_len;
	roce_pkt_build(&roce, p + 8, (size_t)(cap - l4 - 8));
	return l4 + udp_len;
}

#endif
