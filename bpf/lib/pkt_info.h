/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the shared parser learns about one packet. Shared with user space,
 * and the correlation key of every tool's output: addresses, UDP ports,
 * destination QPN, PSN.
 */
#ifndef AGENTXDP_PKT_INFO_H
#define AGENTXDP_PKT_INFO_H

/* parse outcome, also used as counter index */
enum pkt_verdict {
	PKT_ROCE = 0,		/* UDP to the RoCE port, BTH parsed */
	PKT_UDP,		/* UDP, other port */
	PKT_IP,			/* IP, not UDP (or non-first fragment) */
	PKT_OTHER,		/* not IP */
	PKT_MALFORMED,		/* truncated or inconsistent headers */
	PKT_VERDICTS,
};

#define PKT_F_ACKREQ	0x01
#define PKT_F_AETH	0x02
#define PKT_F_RETH	0x04
#define PKT_F_DETH	0x08
#define PKT_F_VLAN	0x10

struct pkt_info {
	__u8 family;		/* 4 or 6, 0 when not IP */
	__u8 ip_proto;
	__u8 ecn;
	__u8 flags;		/* PKT_F_* */
	__u8 saddr[16];		/* IPv4 in the first 4 bytes */
	__u8 daddr[16];
	__u16 sport;		/* host byte order */
	__u16 dport;
	__u16 vlan;		/* outer VLAN id, 0 when untagged */
	__u8 opcode;		/* BTH */
	__u8 syndrome;		/* AETH */
	__u32 dqpn;		/* BTH destination QP */
	__u32 psn;		/* BTH PSN */
	__u32 msn;		/* AETH MSN */
	__u32 dma_len;		/* RETH DMA length */
	__u32 src_qp;		/* DETH source QP (UD) */
	__u16 l3_len;		/* IP total length as the header says */
	__u16 payload_len;	/* UDP payload after BTH and extended headers */
	__u16 ip_id;		/* IPv4 identification, 0 for IPv6 */
	__u16 payload_off;	/* where the payload after the extended headers starts */
};

#endif
