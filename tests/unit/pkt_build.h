/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Crafted RoCE v2 frames for unit tests and benchmarks: Ethernet, up to two
 * VLAN tags, IPv4 or IPv6 (with hop-by-hop/destination-options extension
 * headers), UDP, BTH and the extended header the opcode calls for (RETH,
 * AETH, DETH), payload and a zero ICRC. Header-only, no dependencies beyond
 * libc and bpf/lib/roce_proto.h.
 */
#ifndef AGENTXDP_PKT_BUILD_H
#define AGENTXDP_PKT_BUILD_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "lib/roce_proto.h"

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

static inline void pkt_put24(uint8_t *p, uint32_t v)
{
	p[0] = v >> 16;
	p[1] = v >> 8;
	p[2] = v;
}

/* writes the frame into buf (cap bytes); returns its length, -1 if too big */
static inline int pkt_build(const struct pkt_spec *s, uint8_t *buf, int cap)
{
	int family = s->family ? s->family : 4, off = 0, l3, l4, i;
	uint8_t proto = s->ip_proto ? s->ip_proto : AX_IPPROTO_UDP;
	uint8_t *p;
	int roce_len, udp_len, ext_len = s->ext6 * 8;
	uint8_t op = s->opcode;

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

	roce_len = ROCE_BTH_LEN + s->payload + ROCE_ICRC_LEN;
	if (ROCE_TRANSPORT(op) == ROCE_TR_UD && op != ROCE_OPCODE_CNP)
		roce_len += ROCE_DETH_LEN;
	else if (roce_op_has_reth(op))
		roce_len += ROCE_RETH_LEN;
	else if (roce_op_has_aeth(op))
		roce_len += ROCE_AETH_LEN;
	if (op == ROCE_OPCODE_CNP)
		roce_len += 16;		/* CNP: 16 reserved bytes */
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
	p += 8;
	/* BTH */
	p[0] = op;
	p[1] = 0x40;		/* MigReq */
	p[2] = 0xff; p[3] = 0xff;
	pkt_put24(p + 5, s->dqpn);
	p[8] = s->ackreq ? ROCE_ACKREQ : 0;
	pkt_put24(p + 9, s->psn & ROCE_PSN_MASK);
	p += ROCE_BTH_LEN;
	if (ROCE_TRANSPORT(op) == ROCE_TR_UD && op != ROCE_OPCODE_CNP) {
		p[0] = 0x11; p[1] = 0x11; p[2] = 0x11; p[3] = 0x11;
		pkt_put24(p + 5, 0x22);
		p += ROCE_DETH_LEN;
	} else if (roce_op_has_reth(op)) {
		*(uint32_t *)(p + 12) = htonl(s->dma_len);
		p += ROCE_RETH_LEN;
	} else if (roce_op_has_aeth(op)) {
		p[0] = s->syndrome;
		pkt_put24(p + 1, 1);
		p += ROCE_AETH_LEN;
	}
	return l4 + udp_len;
}

#endif
