/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One packet parser for every hook: XDP and tc (direct packet access) and
 * sk_buffs seen from tracing programs (probe reads from skb->head).
 * Ethernet, up to two VLAN tags, IPv4, IPv6 with up to four extension
 * headers, UDP, and for the RoCE port the BTH plus RETH/AETH/DETH.
 *
 * Every read goes through pkt_load(); the source kind is a compile-time
 * constant at each call site, so after inlining the XDP/tc programs carry
 * no probe reads and the tracing programs no packet pointers.
 */
#ifndef AGENTXDP_PARSE_BPF_H
#define AGENTXDP_PARSE_BPF_H

#include "roce_proto.h"
#include "pkt_info.h"

#define PARSE_MAX_IPV6_EXT	4
#define PARSE_MAX_OFF		1024	/* headers never reach further */

enum pkt_src_kind { SRC_PACKET, SRC_KERNEL };

struct pkt_cursor {
	enum pkt_src_kind kind;
	void *data;		/* SRC_PACKET: packet start and end */
	void *data_end;
	const void *kbase;	/* SRC_KERNEL: start of the headers in memory */
	__u32 klen;		/* bytes readable from kbase */
	bool l4_only;		/* stop after the UDP header */
};

static __always_inline int pkt_load(const struct pkt_cursor *c, __u32 off,
				    void *dst, __u32 len)
{
	if (off > PARSE_MAX_OFF)
		return -1;
	if (c->kind == SRC_PACKET) {
		void *p = c->data + off;

		if (p + len > c->data_end)
			return -1;
		/* a void pointer has alignment 1: clang would copy byte by
		 * byte (a third of the parser's time). Headers are read
		 * with word loads instead; x86 and arm64 load unaligned
		 * words natively and the verifier allows unaligned packet
		 * access where the architecture does (not with
		 * BPF_F_STRICT_ALIGNMENT, which we never set). */
		__builtin_memcpy(dst, __builtin_assume_aligned(p, 8), len);
		return 0;
	}
	if (off + len > c->klen)
		return -1;
	return bpf_probe_read_kernel(dst, len, c->kbase + off);
}

struct ax_bth {
	__u8 opcode;
	__u8 flags;
	__be16 pkey;
	__u8 resv;
	__u8 dqpn[3];
	__u8 ackreq;
	__u8 psn[3];
};

static __always_inline __u32 be24(const __u8 *b)
{
	return ((__u32)b[0] << 16) | ((__u32)b[1] << 8) | b[2];
}

/* BTH and the extended headers that matter; off points at the BTH */
static __always_inline int roce_parse_bth(const struct pkt_cursor *c, __u32 off,
					  __u32 end, struct pkt_info *pi)
{
	struct ax_bth bth;
	__u8 ext[ROCE_RETH_LEN];
	__u32 hdr;

	if (pkt_load(c, off, &bth, sizeof(bth)))
		return PKT_MALFORMED;
	pi->opcode = bth.opcode;
	pi->dqpn = be24(bth.dqpn);
	pi->psn = be24(bth.psn);
	if (bth.ackreq & ROCE_ACKREQ)
		pi->flags |= PKT_F_ACKREQ;
	off += ROCE_BTH_LEN;
	hdr = off;

	if (ROCE_TRANSPORT(bth.opcode) == ROCE_TR_UD) {
		if (pkt_load(c, off, ext, ROCE_DETH_LEN))
			return PKT_MALFORMED;
		pi->src_qp = be24(&ext[5]);
		pi->flags |= PKT_F_DETH;
		off += ROCE_DETH_LEN;
	} else if (roce_op_has_reth(bth.opcode)) {
		if (pkt_load(c, off, ext, ROCE_RETH_LEN))
			return PKT_MALFORMED;
		pi->dma_len = bpf_ntohl(*(__be32 *)&ext[12]);
		pi->flags |= PKT_F_RETH;
		off += ROCE_RETH_LEN;
	} else if (roce_op_has_aeth(bth.opcode)) {
		if (pkt_load(c, off, ext, ROCE_AETH_LEN))
			return PKT_MALFORMED;
		pi->syndrome = ext[0];
		pi->msn = be24(&ext[1]);
		pi->flags |= PKT_F_AETH;
		off += ROCE_AETH_LEN;
	}
	pi->payload_off = off;
	if (end < off + ROCE_ICRC_LEN)
		return hdr <= end ? PKT_ROCE : PKT_MALFORMED;
	pi->payload_len = end - off - ROCE_ICRC_LEN;
	return PKT_ROCE;
}

/* a UDP header already loaded; off points at it, end one past the IP payload */
static __always_inline int parse_udp_hdr(const struct pkt_cursor *c,
					 const struct udphdr *udp, __u32 off,
					 __u32 end, __u16 roce_port,
					 struct pkt_info *pi)
{
	pi->sport = bpf_ntohs(udp->source);
	pi->dport = bpf_ntohs(udp->dest);
	if (pi->dport != roce_port)
		return PKT_UDP;
	if (c->l4_only)
		return PKT_ROCE;
	return roce_parse_bth(c, off + sizeof(*udp), end, pi);
}

static __always_inline int parse_udp(const struct pkt_cursor *c, __u32 off,
				     __u32 end, __u16 roce_port,
				     struct pkt_info *pi)
{
	struct udphdr udp;

	if (pkt_load(c, off, &udp, sizeof(udp)))
		return PKT_MALFORMED;
	return parse_udp_hdr(c, &udp, off, end, roce_port, pi);
}

static __always_inline int parse_ipv4(const struct pkt_cursor *c, __u32 off,
				      __u16 roce_port, struct pkt_info *pi)
{
	/* IPv4 without options and UDP in one load: one bounds check or one
	 * probe read instead of two on the common path */
	struct { struct iphdr ip; struct udphdr udp; } h;
	bool have_udp = !pkt_load(c, off, &h, sizeof(h));
	__u32 ihl, tot;

	if (!have_udp && pkt_load(c, off, &h.ip, sizeof(h.ip)))
		return PKT_MALFORMED;
	ihl = (__u32)h.ip.ihl * 4;
	tot = bpf_ntohs(h.ip.tot_len);
	if (h.ip.version != 4 || ihl < sizeof(h.ip) || tot < ihl)
		return PKT_MALFORMED;
	pi->family = 4;
	pi->ip_proto = h.ip.protocol;
	pi->ecn = h.ip.tos & AX_ECN_MASK;
	pi->l3_len = tot;
	pi->ip_id = bpf_ntohs(h.ip.id);
	__builtin_memcpy(pi->saddr, &h.ip.saddr, 4);
	__builtin_memcpy(pi->daddr, &h.ip.daddr, 4);
	if (h.ip.protocol != AX_IPPROTO_UDP ||
	    (bpf_ntohs(h.ip.frag_off) & AX_IP_OFFSET))
		return PKT_IP;
	if (have_udp && ihl == sizeof(h.ip))
		return parse_udp_hdr(c, &h.udp, off + ihl, off + tot, roce_port, pi);
	return parse_udp(c, off + ihl, off + tot, roce_port, pi);
}

static __always_inline int parse_ipv6(const struct pkt_cursor *c, __u32 off,
				      __u16 roce_port, struct pkt_info *pi)
{
	struct ipv6hdr ip6;
	struct { __u8 nexthdr, hdrlen; __be16 frag; } ext;
	__u32 end;
	__u8 nh;
	int i;

	if (pkt_load(c, off, &ip6, sizeof(ip6)))
		return PKT_MALFORMED;
	if (ip6.version != 6)
		return PKT_MALFORMED;
	pi->family = 6;
	pi->ecn = (ip6.flow_lbl[0] >> 4) & AX_ECN_MASK;
	pi->l3_len = sizeof(ip6) + bpf_ntohs(ip6.payload_len);
	__builtin_memcpy(pi->saddr, &ip6.saddr, 16);
	__builtin_memcpy(pi->daddr, &ip6.daddr, 16);
	end = off + pi->l3_len;
	off += sizeof(ip6);
	nh = ip6.nexthdr;
#pragma unroll
	for (i = 0; i < PARSE_MAX_IPV6_EXT; i++) {
		if (nh != AX_IPPROTO_HOPOPTS && nh != AX_IPPROTO_ROUTING &&
		    nh != AX_IPPROTO_DSTOPTS && nh != AX_IPPROTO_FRAGMENT)
			break;
		if (pkt_load(c, off, &ext, sizeof(ext)))
			return PKT_MALFORMED;
		if (nh == AX_IPPROTO_FRAGMENT) {
			/* only the first fragment carries the UDP header */
			if (bpf_ntohs(ext.frag) & 0xFFF8) {
				pi->ip_proto = ext.nexthdr;
				return PKT_IP;
			}
			off += 8;
		} else {
			off += ((__u32)ext.hdrlen + 1) * 8;
		}
		nh = ext.nexthdr;
	}
	pi->ip_proto = nh;
	if (nh != AX_IPPROTO_UDP)
		return PKT_IP;
	return parse_udp(c, off, end, roce_port, pi);
}

/* from the network header on; proto is the ethertype in host order */
static __always_inline int pkt_parse_l3(const struct pkt_cursor *c, __u32 off,
					__u16 proto, __u16 roce_port,
					struct pkt_info *pi)
{
	if (proto == AX_ETH_P_IP)
		return parse_ipv4(c, off, roce_port, pi);
	if (proto == AX_ETH_P_IPV6)
		return parse_ipv6(c, off, roce_port, pi);
	return PKT_OTHER;
}

/* from the Ethernet header on (XDP, tc, mirror ports) */
static __always_inline int pkt_parse_eth(const struct pkt_cursor *c,
					 __u16 roce_port, struct pkt_info *pi)
{
	struct { __u8 dst[6], src[6]; __be16 proto; } eth;
	struct { __be16 tci, proto; } vlan;
	__u32 off = AX_ETH_HLEN;
	__u16 proto;
	int i;

	if (pkt_load(c, 0, &eth, sizeof(eth)))
		return PKT_MALFORMED;
	proto = bpf_ntohs(eth.proto);
#pragma unroll
	for (i = 0; i < 2; i++) {
		if (proto != AX_ETH_P_8021Q && proto != AX_ETH_P_8021AD)
			break;
		if (pkt_load(c, off, &vlan, sizeof(vlan)))
			return PKT_MALFORMED;
		if (!i) {
			pi->vlan = bpf_ntohs(vlan.tci) & 0xFFF;
			pi->flags |= PKT_F_VLAN;
		}
		proto = bpf_ntohs(vlan.proto);
		off += sizeof(vlan);
	}
	return pkt_parse_l3(c, off, proto, roce_port, pi);
}

/*
 * Hot-path shortcut for XDP/tc observers that only care about RoCE: true
 * when an untagged frame is certainly not UDP to roce_port (not IP, or
 * IPv4 without options / IPv6 without extension headers whose L4 is
 * something else). Anything it cannot decide cheaply (VLAN tags, options,
 * extension headers, short frames) returns false: run pkt_parse_eth().
 */
static __always_inline bool pkt_fast_not_roce(void *data, void *data_end,
					      __u16 roce_port)
{
	__u8 *p = data;
	__u16 proto;

	if (p + AX_ETH_HLEN + 20 + 4 > (__u8 *)data_end)
		return false;
	proto = bpf_ntohs(*(__be16 *)(p + 12));
	if (proto == AX_ETH_P_IP) {
		if (p[AX_ETH_HLEN] != 0x45)		/* options or not v4 */
			return false;
		if (p[AX_ETH_HLEN + 9] != AX_IPPROTO_UDP)
			return true;
		return bpf_ntohs(*(__be16 *)(p + AX_ETH_HLEN + 20 + 2)) != roce_port;
	}
	if (proto == AX_ETH_P_IPV6) {
		__u8 nh;

		if (p + AX_ETH_HLEN + 40 + 4 > (__u8 *)data_end)
			return false;
		nh = p[AX_ETH_HLEN + 6];

		if (nh == AX_IPPROTO_UDP)
			return bpf_ntohs(*(__be16 *)(p + AX_ETH_HLEN + 40 + 2)) != roce_port;
		return nh != AX_IPPROTO_HOPOPTS && nh != AX_IPPROTO_ROUTING &&
		       nh != AX_IPPROTO_DSTOPTS && nh != AX_IPPROTO_FRAGMENT;
	}
	return proto != AX_ETH_P_8021Q && proto != AX_ETH_P_8021AD;
}

#endif
