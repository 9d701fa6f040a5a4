/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one user-space builder of RoCE v2 transport headers: BTH, the extended
 * header its opcode calls for (DETH, RETH or AETH; a CNP's reserved bytes),
 * payload, pad and a zero ICRC; and readers of the BTH fields. rocegen, the
 * unit tests' frames (tests/unit/pkt_build.h) and udpflood all build their
 * packets with it. Plain libc; the numbers come from bpf/lib/roce_proto.h.
 */
#ifndef AGENTXDP_ROCE_PKT_H
#define AGENTXDP_ROCE_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../../bpf/lib/roce_proto.h"

struct roce_pkt {
	uint8_t opcode;
	bool migreq;		/* BTH MigReq, as rdma_rxe sets it */
	bool ackreq;
	uint8_t pad;		/* PadCnt: zero bytes after the payload, 0-3 */
	uint32_t dqpn;
	uint32_t psn;
	/* RETH, on the opcodes roce_op_has_reth() names */
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;
	/* AETH, on the opcodes roce_op_has_aeth() names */
	uint8_t syndrome;
	uint32_t msn;
	/* DETH, on UD opcodes */
	uint32_t qkey;
	uint32_t src_qp;
	const void *payload;	/* NULL: zero bytes */
	uint32_t payload_len;
};

/* the bytes roce_pkt_build() writes for s: headers, payload, pad, ICRC */
size_t roce_pkt_len(const struct roce_pkt *s);
/* writes s at buf (cap bytes); returns its length, 0 when it does not fit */
size_t roce_pkt_build(const struct roce_pkt *s, uint8_t *buf, size_t cap);

/* big-endian fields of the transport headers */
void roce_put16(uint8_t *p, uint32_t v);
void roce_put24(uint8_t *p, uint32_t v);
void roce_put32(uint8_t *p, uint32_t v);
uint32_t roce_get16(const uint8_t *p);
uint32_t roce_get24(const uint8_t *p);
uint32_t roce_get32(const uint8_t *p);

/* where the RETH has its DMA length */
#define ROCE_RETH_DMA_LEN_OFF	12

/* BTH fields of a packet that starts with its BTH */
static inline uint8_t roce_bth_opcode(const uint8_t *bth)
{
	return bth[0];
}

static inline uint32_t roce_bth_dqpn(const uint8_t *bth)
{
	return roce_get24(bth + 5);
}

static inline uint32_t roce_bth_psn(const uint8_t *bth)
{
	return roce_get24(bth + 9);
}

static inline bool roce_bth_ackreq(const uint8_t *bth)
{
	return bth[8] & ROCE_ACKREQ;
}

/* the extended header after the BTH, of an opcode that has it
 * (roce_op_has_aeth(), roce_op_has_reth()) */
static inline uint8_t roce_aeth_syndrome(const uint8_t *bth)
{
	return bth[ROCE_BTH_LEN];
}

static inline uint32_t roce_reth_dma_len(const uint8_t *bth)
{
	return roce_get32(bth + ROCE_BTH_LEN + ROCE_RETH_DMA_LEN_OFF);
}

/* rewrite the PSN of a built packet (floods that count up) */
static inline void roce_bth_set_psn(uint8_t *bth, uint32_t psn)
{
	roce_put24(bth + 9, psn & ROCE_PSN_MASK);
}

#endif
