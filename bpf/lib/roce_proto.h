/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * RoCE v2 and packet constants shared by BPF and user space.
 * vmlinux.h carries no macros, so the numbers live here, once.
 * Wire facts: InfiniBand Architecture Spec vol. 1, annex A17 (RoCE v2).
 */
#ifndef AGENTXDP_ROCE_PROTO_H
#define AGENTXDP_ROCE_PROTO_H

#define AX_ETH_HLEN		14
#define AX_ETH_P_IP		0x0800
#define AX_ETH_P_IPV6		0x86DD
#define AX_ETH_P_8021Q		0x8100
#define AX_ETH_P_8021AD		0x88A8
#define AX_IPPROTO_HOPOPTS	0
#define AX_IPPROTO_TCP		6
#define AX_IPPROTO_UDP		17
#define AX_IPPROTO_GRE		47
#define AX_IPPROTO_ROUTING	43
#define AX_IPPROTO_FRAGMENT	44
#define AX_IPPROTO_DSTOPTS	60
#define AX_IP_MF		0x2000
#define AX_IP_OFFSET		0x1FFF
#define AX_ECN_MASK		0x3
#define AX_ECN_CE		0x3

#define ROCE_V2_PORT		4791

/* tunnels and mirrors (decap): GRE RFC 2784/2890, ERSPAN as the switches
 * send it (draft-foschiano-erspan), VXLAN RFC 7348, Geneve RFC 8926 */
#define AX_VXLAN_PORT		4789
#define AX_GENEVE_PORT		6081
#define AX_ETH_P_TEB		0x6558	/* transparent Ethernet bridging */
#define AX_ETH_P_ERSPAN		0x88BE	/* types I and II */
#define AX_ETH_P_ERSPAN3	0x22EB
#define AX_GRE_CSUM		0x8000
#define AX_GRE_ROUTING		0x4000	/* RFC 1701 source routing: not followed */
#define AX_GRE_KEY		0x2000
#define AX_GRE_SEQ		0x1000
#define AX_GRE_VERSION		0x0007	/* 1 is PPTP's enhanced GRE */
#define AX_ERSPAN2_LEN		8
#define AX_ERSPAN3_LEN		12
#define AX_ERSPAN3_PLAT_LEN	8
#define AX_VXLAN_LEN		8
#define AX_VXLAN_F_VNI		0x08	/* I flag: the VNI is valid */
#define AX_GENEVE_LEN		8
#define ROCE_BTH_LEN		12
#define ROCE_RETH_LEN		16
#define ROCE_AETH_LEN		4
#define ROCE_DETH_LEN		8
#define ROCE_ICRC_LEN		4
#define ROCE_PSN_MASK		0xFFFFFF
#define ROCE_QPN_MASK		0xFFFFFF
#define ROCE_ACKREQ		0x80
#define ROCE_MSN_MASK		0xFFFFFF
#define ROCE_CNP_RSVD_LEN	16	/* CNP: reserved bytes after the BTH */
#define ROCE_PKEY_DEFAULT	0xFFFF

/* BTH byte 1: SE, MigReq, PadCnt (2 bits), TVer (4 bits) */
#define ROCE_BTH_MIGREQ		0x40
#define ROCE_BTH_PAD(n)		(((n) & 0x3) << 4)

/* BTH opcode: top 3 bits transport, low 5 bits operation */
#define ROCE_TRANSPORT(op)	((op) & 0xE0)
#define ROCE_TR_RC		0x00
#define ROCE_TR_UC		0x20
#define ROCE_TR_RD		0x40
#define ROCE_TR_UD		0x60
#define ROCE_TR_CNP		0x80
#define ROCE_TR_XRC		0xA0
#define ROCE_OP(op)		((op) & 0x1F)

/* operation (low 5 bits) */
#define ROCE_SEND_FIRST		0x00
#define ROCE_SEND_MIDDLE	0x01
#define ROCE_SEND_LAST		0x02
#define ROCE_SEND_LAST_IMM	0x03
#define ROCE_SEND_ONLY		0x04
#define ROCE_SEND_ONLY_IMM	0x05
#define ROCE_WRITE_FIRST	0x06
#define ROCE_WRITE_MIDDLE	0x07
#define ROCE_WRITE_LAST		0x08
#define ROCE_WRITE_LAST_IMM	0x09
#define ROCE_WRITE_ONLY		0x0A
#define ROCE_WRITE_ONLY_IMM	0x0B
#define ROCE_READ_REQUEST	0x0C
#define ROCE_READ_RESP_FIRST	0x0D
#define ROCE_READ_RESP_MIDDLE	0x0E
#define ROCE_READ_RESP_LAST	0x0F
#define ROCE_READ_RESP_ONLY	0x10
#define ROCE_ACKNOWLEDGE	0x11
#define ROCE_ATOMIC_ACK		0x12
#define ROCE_COMPARE_SWAP	0x13
#define ROCE_FETCH_ADD		0x14
#define ROCE_SEND_LAST_INV	0x16
#define ROCE_SEND_ONLY_INV	0x17
#define ROCE_FLUSH		0x1C	/* IBTA 1.5: persistence flush */
#define ROCE_ATOMIC_WRITE	0x1D	/* IBTA 1.5: 8-byte atomic write */
#define ROCE_OPCODE_CNP		0x81
#define ROCE_UD_SEND_ONLY	0x64
#define ROCE_UD_SEND_ONLY_IMM	0x65

/* AETH syndrome: top 3 bits kind, low 5 bits credit/timer/NAK code */
#define ROCE_AETH_KIND(s)	(((s) >> 5) & 0x3)
#define ROCE_AETH_ACK		0
#define ROCE_AETH_RNR_NAK	1
#define ROCE_AETH_NAK		3
#define ROCE_AETH_CODE(s)	((s) & 0x1F)
#define ROCE_NAK_PSN_SEQ_ERR	0
#define ROCE_NAK_INVALID_REQ	1
#define ROCE_NAK_REMOTE_ACCESS	2
#define ROCE_NAK_REMOTE_OP	3
#define ROCE_NAK_INVALID_RD	4
#define ROCE_NAK_CODES		5
#define ROCE_AETH_SYNDROME(kind, code)	(((kind) << 5) | ((code) & 0x1F))
/* an ACK's low 5 bits: credit count, 0x1F = "invalid" (no flow control) */
#define ROCE_AETH_CREDIT_INVALID	0x1F

/* which extended headers follow the BTH (RC/UC/XRC share operation numbers) */
static inline int roce_op_has_reth(unsigned char op)
{
	unsigned char t = ROCE_TRANSPORT(op), o = ROCE_OP(op);

	if (t != ROCE_TR_RC && t != ROCE_TR_UC && t != ROCE_TR_XRC)
		return 0;
	return o == ROCE_WRITE_FIRST || o == ROCE_WRITE_ONLY ||
	       o == ROCE_WRITE_ONLY_IMM || o == ROCE_READ_REQUEST;
}

static inline int roce_op_has_aeth(unsigned char op)
{
	unsigned char t = ROCE_TRANSPORT(op), o = ROCE_OP(op);

	if (t != ROCE_TR_RC && t != ROCE_TR_XRC)
		return 0;
	return o == ROCE_READ_RESP_FIRST || o == ROCE_READ_RESP_LAST ||
	       o == ROCE_READ_RESP_ONLY || o == ROCE_ACKNOWLEDGE ||
	       o == ROCE_ATOMIC_ACK;
}

/* a packet a requester sends (as opposed to a response or an ACK) */
static inline int roce_op_is_request(unsigned char op)
{
	unsigned char t = ROCE_TRANSPORT(op), o = ROCE_OP(op);

	if (op == ROCE_OPCODE_CNP)
		return 0;
	if (t == ROCE_TR_UD)
		return 1;
	return o <= ROCE_READ_REQUEST || o == ROCE_COMPARE_SWAP ||
	       o == ROCE_FETCH_ADD || o == ROCE_SEND_LAST_INV ||
	       o == ROCE_SEND_ONLY_INV || o == ROCE_FLUSH ||
	       o == ROCE_ATOMIC_WRITE;
}

/* the last (or only) packet of a request message: one per work request */
static inline int roce_op_ends_message(unsigned char op)
{
	unsigned char o = ROCE_OP(op);

	if (!roce_op_is_request(op))
		return 0;
	return o == ROCE_SEND_LAST || o == ROCE_SEND_LAST_IMM ||
	       o == ROCE_SEND_ONLY || o == ROCE_SEND_ONLY_IMM ||
	       o == ROCE_WRITE_LAST || o == ROCE_WRITE_LAST_IMM ||
	       o == ROCE_WRITE_ONLY || o == ROCE_WRITE_ONLY_IMM ||
	       o == ROCE_READ_REQUEST || o == ROCE_COMPARE_SWAP ||
	       o == ROCE_FETCH_ADD || o == ROCE_SEND_LAST_INV ||
	       o == ROCE_SEND_ONLY_INV || o == ROCE_FLUSH ||
	       o == ROCE_ATOMIC_WRITE;
}

/*
 * RDMA CM over RoCE v2: MADs in UD SEND_ONLY packets to QP 1 (after BTH and
 * DETH): a 24-byte MAD header (management class at byte 1, attribute ID at
 * bytes 16-17), then the CM message. Offsets in the message (IBTA vol. 1
 * ch. 12; checked against Wireshark's InfiniBand dissector): REQ local
 * communication ID at 0, local QPN at 32 (24 bits), starting PSN at 44;
 * REP local comm ID at 0, remote comm ID at 4, local QPN at 12, starting
 * PSN at 20.
 */
#define ROCE_CM_QPN		1
#define ROCE_MAD_HDR_LEN	24
#define ROCE_MAD_CLASS_CM	0x07
#define ROCE_CM_ATTR_REQ	0x0010
#define ROCE_CM_ATTR_REP	0x0013
#define ROCE_CM_REQ_QPN		32
#define ROCE_CM_REQ_PSN		44
#define ROCE_CM_REP_REMOTE_ID	4
#define ROCE_CM_REP_QPN		12
#define ROCE_CM_REP_PSN		20

/* PSN arithmetic is modulo 2^24: a - b as a signed 24-bit distance */
static inline int roce_psn_diff(unsigned int a, unsigned int b)
{
	return (int)((a - b) << 8) >> 8;
}

static inline unsigned int roce_psn_add(unsigned int psn, unsigned int n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

#endif
