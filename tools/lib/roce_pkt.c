// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The RoCE v2 header builder and BTH readers of roce_pkt.h: big-endian
 * field writers, the extended header an opcode calls for, pad and ICRC.
 */
#include <string.h>
#include "roce_pkt.h"

void roce_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void roce_put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

void roce_put32(uint8_t *p, uint32_t v)
{
	roce_put16(p, v >> 16);
	roce_put16(p + 2, v);
}

uint32_t roce_get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

uint32_t roce_get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

uint32_t roce_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | roce_get24(p + 1);
}

static bool roce_pkt_is_ud(uint8_t op)
{
	return ROCE_TRANSPORT(op) == ROCE_TR_UD;
}

/* the extended header after the BTH: one of DETH, RETH, AETH, CNP bytes */
static size_t roce_pkt_ext_len(uint8_t op)
{
	if (op == ROCE_OPCODE_CNP)
		return ROCE_CNP_RSVD_LEN;
	if (roce_pkt_is_ud(op))
		return ROCE_DETH_LEN;
	if (roce_op_has_reth(op))
		return ROCE_RETH_LEN;
	if (roce_op_has_aeth(op))
		return ROCE_AETH_LEN;
	return 0;
}

size_t roce_pkt_len(const struct roce_pkt *s)
{
	return ROCE_BTH_LEN + roce_pkt_ext_len(s->opcode) + s->payload_len +
	       (s->pad & 3) + ROCE_ICRC_LEN;
}

static void roce_pkt_put_ext(const struct roce_pkt *s, uint8_t *p)
{
	uint8_t op = s->opcode;

	if (op == ROCE_OPCODE_CNP)
		return;		/* reserved bytes: zero */
	if (roce_pkt_is_ud(op)) {
		roce_put32(p, s->qkey);
		roce_put24(p + 5, s->src_qp);
	} else if (roce_op_has_reth(op)) {
		roce_put32(p, (uint32_t)(s->va >> 32));
		roce_put32(p + 4, (uint32_t)s->va);
		roce_put32(p + 8, s->rkey);
		roce_put32(p + ROCE_RETH_DMA_LEN_OFF, s->dma_len);
	} else if (roce_op_has_aeth(op)) {
		p[0] = s->syndrome;
		roce_put24(p + 1, s->msn & ROCE_MSN_MASK);
	}
}

size_t roce_pkt_build(const struct roce_pkt *s, uint8_t *buf, size_t cap)
{
	size_t len = roce_pkt_len(s), off;

	if (len > cap)
		return 0;
	memset(buf, 0, len);
	buf[0] = s->opcode;
	buf[1] = (s->migreq ? ROCE_BTH_MIGREQ : 0) | ROCE_BTH_PAD(s->pad);
	roce_put16(buf + 2, ROCE_PKEY_DEFAULT);
	roce_put24(buf + 5, s->dqpn & ROCE_QPN_MASK);
	buf[8] = s->ackreq ? ROCE_ACKREQ : 0;
	roce_put24(buf + 9, s->psn & ROCE_PSN_MASK);
	roce_pkt_put_ext(s, buf + ROCE_BTH_LEN);
	off = ROCE_BTH_LEN + roce_pkt_ext_len(s->opcode);
	if (s->payload && s->payload_len)
		memcpy(buf + off, s->payload, s->payload_len);
	return len;
}
