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
	/* only with pkt_cursor.decap: */
	PKT_TUN_NOT_ROCE,	/* a tunnel or mirror decapsulated, the inner
				 * frame is not RoCE (pkt_info describes it) */
	PKT_TUN_UNKNOWN,	/* a tunnel header not followed: unknown ERSPAN
				 * version, GRE routing or version 1, VXLAN
				 * without its I flag, Geneve version 1+, a
				 * payload that is not Ethernet (pkt_info:
				 * the outer packet and tun_*) */
	PKT_VERDICTS,
};

/* pkt_fast_classify()'s answers */
enum pkt_fast_class {
	PKT_FAST_UNSURE = 0,	/* the full parse decides */
	PKT_FAST_NOT_ROCE,	/* where pkt_fast_not_roce() is true */
	PKT_FAST_ROCE,		/* a plain RoCE v2 frame; its QPN read */
};

/* what a RoCE frame came in, with pkt_cursor.decap (else PKT_TUN_NONE) */
enum pkt_tunnel {
	PKT_TUN_NONE = 0,
	PKT_TUN_GRE,		/* GRE, transparent Ethernet bridging (0x6558) */
	PKT_TUN_ERSPAN1,	/* GRE 0x88BE without sequence number: no header */
	PKT_TUN_ERSPAN2,	/* GRE 0x88BE, 8-byte ERSPAN type II header */
	PKT_TUN_ERSPAN3,	/* GRE 0x22EB, 12-byte type III header (+8) */
	PKT_TUN_VXLAN,		/* UDP 4789 */
	PKT_TUN_GENEVE,		/* UDP 6081 */
	PKT_TUN_KINDS,
};

/* ERSPAN type III timestamp granularity (the header's Gra field) */
enum pkt_ts_gra {
	PKT_GRA_100US = 0,
	PKT_GRA_100NS = 1,
	PKT_GRA_IEEE1588 = 2,	/* PTP time; a platform subheader may hold more */
	PKT_GRA_USER = 3,
};

#define PKT_F_ACKREQ	0x01
#define PKT_F_AETH	0x02
#define PKT_F_RETH	0x04
#define PKT_F_DETH	0x08
#define PKT_F_VLAN	0x10
/* with pkt_cursor.decap: the frame is shorter than its IP total length
 * (a mirror cut it: switches truncate mirrored frames to e.g. 128 bytes),
 * or the ERSPAN header's T bit says the switch truncated it. The headers
 * that were read are good; payload_len is what the header says. */
#define PKT_F_TRUNC	0x20
#define PKT_F_TUN_TS	0x40	/* tun_ts holds an ERSPAN III timestamp */
#define PKT_F_TUN_PLAT	0x80	/* ... and tun_plat_id/tun_plat_word a subheader */

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
	/*
	 * With pkt_cursor.decap, the tunnel or mirror session the frame came
	 * in; every field above then describes the inner frame. All zero but
	 * cap_len for a frame that is not in a tunnel. Kept last: the parser
	 * clears what is above when it steps into the inner frame.
	 */
	__u8 tun_kind;		/* PKT_TUN_* */
	__u8 tun_family;	/* outer IP version, 4 or 6 */
	__u8 tun_ts_gra;	/* PKT_GRA_* when PKT_F_TUN_TS */
	__u8 tun_plat_id;	/* ERSPAN III platform subheader's Platf ID */
	__u32 tun_id;		/* ERSPAN session ID (10 bits), VXLAN or Geneve
				 * VNI (24), GRE key when present */
	__u8 tun_saddr[16];	/* outer source: the switch or VTEP that sent it */
	__u8 tun_daddr[16];	/* outer destination: the collector or VTEP */
	__u32 tun_ts;		/* ERSPAN III timestamp, units of tun_ts_gra */
	__u32 tun_plat_word;	/* the subheader's second word, as sent: some
				 * platforms keep timestamp bits there (read
				 * it with tun_plat_id) */
	__u16 tun_off;		/* offset of the inner Ethernet header */
	__u16 cap_len;		/* decap: bytes the frame has, what a mirror's
				 * truncation left (65535 at most) */
};

#endif
