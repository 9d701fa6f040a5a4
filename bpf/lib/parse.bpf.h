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
 *
 * Decapsulation (pkt_cursor.decap, for mirror ports and collectors):
 * GRE with transparent Ethernet bridging, ERSPAN types I, II and III,
 * VXLAN and Geneve, over IPv4 or IPv6, each to one inner Ethernet frame
 * (a tunnel inside the tunnel is not followed). pkt_info then describes
 * the inner frame and its tun_* fields the session. A caller sets decap
 * from a const volatile: the verifier sees the frozen value and removes
 * the tunnel code when it is false; a literal false removes it in clang.
 *
 * Jumbo frames (pkt_cursor.ctx): an XDP program loaded with
 * BPF_F_XDP_HAS_FRAGS (SEC("xdp.frags"), 5.18+) sees a frame larger than
 * a page as a first buffer (data .. data_end) and further fragments; a
 * tc program sees an sk_buff's linear part. Headers are read from
 * there (the IPv4 header only there, pkt_peek()); every other read
 * beyond it (a CM MAD's fields, a deep tunnel's headers) goes through
 * bpf_xdp_load_bytes() or bpf_skb_load_bytes() when the caller gave its
 * context, and fails cleanly (PKT_MALFORMED, or the read's own -1) when
 * it did not. Nothing here assumes the payload is in the first buffer:
 * lengths come from the IP header, a frame's from the caller
 * (frame_len), never from data_end.
 */
#ifndef AGENTXDP_PARSE_BPF_H
#define AGENTXDP_PARSE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "roce_proto.h"
#include "pkt_info.h"

#define PARSE_MAX_IPV6_EXT	4
#define PARSE_MAX_OFF		1024	/* headers never reach further */

/*
 * Where the bytes are: SRC_PACKET, an XDP or tc packet (bounds-checked
 * loads); SRC_KERNEL, kernel memory read by bpf_probe_read_kernel();
 * SRC_KMEM, kernel memory through the untrusted pointer that
 * bpf_rdonly_cast(p, 0) makes, whose plain loads the verifier turns into
 * fault-safe PROBE_MEM loads: no helper call per read (skb.bpf.h).
 */
enum pkt_src_kind { SRC_PACKET, SRC_KERNEL, SRC_KMEM };

struct pkt_cursor {
	enum pkt_src_kind kind;
	void *data;		/* SRC_PACKET: packet start and end */
	void *data_end;
	union {
		const void *kbase;	/* SRC_KERNEL, SRC_KMEM: start of the
					 * headers in memory */
		/* SRC_PACKET: the program's context, for bytes beyond
		 * data_end (multi-buffer XDP, a tc skb's paged part): a
		 * struct xdp_md *, or with ctx_skb a struct __sk_buff *;
		 * NULL: none are read. A caller sets an XDP context only
		 * in a program loaded with frags (5.18's helper), from a
		 * const volatile the verifier sees frozen. (A union: the
		 * cursor is copied on the stack per tunnel level, and 6.1
		 * allows 512 bytes for the whole call chain.) */
		void *ctx;
	};
	__u32 klen;		/* bytes readable from kbase */
	bool l4_only;		/* stop after the UDP header */
	bool decap;		/* follow GRE/ERSPAN/VXLAN/Geneve (see above) */
	__u32 frame_len;	/* decap: bytes the frame has when more than
				 * data_end/klen tell (tc: skb->len); 0 else */
	bool inner;		/* the parser's own: in the tunnel, stay there */
	bool ctx_skb;		/* ctx is a tc program's sk_buff */
};

/* tunnels are looked for only in the outer headers */
static __always_inline bool pkt_decap_here(const struct pkt_cursor *c)
{
	return c->decap && !c->inner;
}

/* internal: the outer headers end in a tunnel whose inner Ethernet frame
 * starts at pi->tun_off; never returned to a caller */
#define PKT_DECAP_INNER		(-1)

/* a header's copy on the stack: aligned to 8, so that pkt_load()'s copy
 * moves 8-byte words (each a bounds-checked or fault-checked load) */
#define PKT_HDR __attribute__((aligned(8)))
/* a packet's bytes copied as words (pkt_load()); compiled natively, a
 * copy that may be unaligned (the promise would be a false one there) */
#ifdef AX_NATIVE
#define PKT_WORDS(p)	(p)
#else
#define PKT_WORDS(p)	__builtin_assume_aligned(p, 8)
#endif

/* a packet's bytes beyond the first buffer (or the linear part), through
 * the helper of the context the caller gave; -1 without one */
static __always_inline int pkt_load_frag(const struct pkt_cursor *c, __u32 off,
					 void *dst, __u32 len)
{
#ifndef AX_NATIVE
	if (!c->ctx)
		return -1;
	if (c->ctx_skb)
		return bpf_skb_load_bytes(c->ctx, off, dst, len) ? -1 : 0;
	return bpf_xdp_load_bytes(c->ctx, off, dst, len) ? -1 : 0;
#else
	return -1;
#endif
}

/* a 16-bit field at p, as read in place by the hot-path shortcuts: one
 * load in BPF (unaligned packet access is the architecture's, as for
 * pkt_load()); natively a copy, since C reads no __be16 at an odd
 * address */
#ifdef AX_NATIVE
static __always_inline __be16 pkt_be16(const void *p)
{
	__be16 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}
#else
#define pkt_be16(p)	(*(__be16 *)(p))
#endif

static __always_inline int pkt_load(const struct pkt_cursor *c, __u32 off,
				    void *dst, __u32 len)
{
	if (off > PARSE_MAX_OFF)
		return -1;
	if (c->kind == SRC_PACKET) {
		void *p = c->data + off;

		if (p + len > c->data_end)
			return pkt_load_frag(c, off, dst, len);
		/* a void pointer has alignment 1: clang would copy byte by
		 * byte (a third of the parser's time). Headers are read
		 * with word loads instead; x86 and arm64 load unaligned
		 * words natively and the verifier allows unaligned packet
		 * access where the architecture does (not with
		 * BPF_F_STRICT_ALIGNMENT, which we never set). */
		__builtin_memcpy(dst, PKT_WORDS(p), len);
		return 0;
	}
#ifdef AX_NATIVE
	/* compiled natively (tools/rocelat/native/): packets in user memory only */
	return -1;
#else
	if (off + len > c->klen)
		return -1;
	if (c->kind == SRC_KMEM) {
		const void *p = c->kbase;

		/* the pointer plus the offset, in that order: the verifier
		 * takes offset + untrusted pointer for a scalar */
		asm volatile("%[p] += %[o]" : [p] "+r"(p) : [o] "r"((__u64)off));
		/* word loads, as for packets */
		__builtin_memcpy(dst, __builtin_assume_aligned(p, 8), len);
		return 0;
	}
	return bpf_probe_read_kernel(dst, len, c->kbase + off);
#endif
}

/*
 * The len bytes at off: in place in a packet, else copied to buf
 * (pkt_load()); NULL when they are not all there. A packet's header read
 * in place is not copied to the stack and back (rocelat's request: 3 ns
 * less); kernel memory is copied in 8-byte words, each load there a
 * fault-checked one (rxedrop: 4 ns less than field by field in place).
 */
static __always_inline const void *pkt_peek(const struct pkt_cursor *c,
					    __u32 off, void *buf, __u32 len)
{
#ifndef AX_NATIVE
	if (c->kind == SRC_PACKET) {
		const void *p = c->data + off;

		/* in the first buffer only: buf would be a stack slot live
		 * on the packet path too (32 bytes of IPv4 and UDP header,
		 * over 6.1's 512 for rocelat), for headers no driver
		 * splits off: an IPv4 header not in it is PKT_MALFORMED */
		if (off > PARSE_MAX_OFF || p + len > c->data_end)
			return 0;
		return p;
	}
#endif
	/* compiled natively, always the aligned copy: a header struct read
	 * in place at a packet's (2-byte) alignment is undefined behaviour
	 * in C, which the verifier's rules make safe only in BPF */
	return pkt_load(c, off, buf, len) ? 0 : buf;
}

/* bytes the frame has: what a mirror's truncation left (XDP with frags
 * and tc: the caller's frame_len, the whole frame, not the first buffer) */
static __always_inline __u32 pkt_cap_len(const struct pkt_cursor *c)
{
	if (c->frame_len)
		return c->frame_len;
	if (c->kind == SRC_PACKET)
		return (__u32)(c->data_end - c->data);
	return c->klen;
}

/* for pkt_info: a tc skb may be a 64 KiB+ GSO packet */
static __always_inline __u16 pkt_cap_len_u16(const struct pkt_cursor *c)
{
	__u32 n = pkt_cap_len(c);

	return n > 0xFFFF ? 0xFFFF : n;
}

/* decap: an IP header says the packet ends at end; a cut mirror ends
 * sooner, and only the payload it lost may be missing */
static __always_inline void pkt_note_trunc(const struct pkt_cursor *c,
					   __u32 end, struct pkt_info *pi)
{
	if (c->decap && end > pkt_cap_len(c))
		pi->flags |= PKT_F_TRUNC;
}

/* the BTH's second and third words: a byte of flags, then 24 bits */
struct ax_bth {
	__u8 opcode;
	__u8 flags;
	__be16 pkey;
	__be32 dqpn;		/* reserved byte, destination QP */
	__be32 psn;		/* AckReq and reserved bits, PSN */
};

static __always_inline __u32 be24(const __u8 *b)
{
	return ((__u32)b[0] << 16) | ((__u32)b[1] << 8) | b[2];
}

/* the low 24 bits of a big-endian word: one load, not three */
static __always_inline __u32 be24_of(__be32 w)
{
	return bpf_ntohl(w) & 0xFFFFFF;
}

/* BTH and the extended headers that matter; off points at the BTH */
static __always_inline int roce_parse_bth(const struct pkt_cursor *c, __u32 off,
					  __u32 end, struct pkt_info *pi)
{
	struct ax_bth bth PKT_HDR;
	__u8 ext[ROCE_RETH_LEN] PKT_HDR;
	__u32 hdr;

	if (pkt_load(c, off, &bth, sizeof(bth)))
		return PKT_MALFORMED;
	pi->opcode = bth.opcode;
	pi->dqpn = be24_of(bth.dqpn);
	pi->psn = be24_of(bth.psn);
	if (bpf_ntohl(bth.psn) >> 24 & ROCE_ACKREQ)
		pi->flags |= PKT_F_ACKREQ;
	off += ROCE_BTH_LEN;
	hdr = off;

	if (ROCE_TRANSPORT(bth.opcode) == ROCE_TR_UD) {
		if (pkt_load(c, off, ext, ROCE_DETH_LEN))
			return PKT_MALFORMED;
		pi->src_qp = be24_of(*(__be32 *)&ext[4]);
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
		pi->msn = be24_of(*(__be32 *)ext);
		pi->flags |= PKT_F_AETH;
		off += ROCE_AETH_LEN;
	}
	pi->payload_off = off;
	if (end < off + ROCE_ICRC_LEN)
		return hdr <= end ? PKT_ROCE : PKT_MALFORMED;
	pi->payload_len = end - off - ROCE_ICRC_LEN;
	return PKT_ROCE;
}

/* a tunnel recognised: the outer headers become the session's address */
static __always_inline void pkt_tun_start(struct pkt_info *pi, __u8 kind)
{
	pi->tun_kind = kind;
	pi->tun_family = pi->family;
	__builtin_memcpy(pi->tun_saddr, pi->saddr, 16);
	__builtin_memcpy(pi->tun_daddr, pi->daddr, 16);
}

/*
 * ERSPAN after its GRE header; off points at the ERSPAN header. The
 * version field decides the layout, as Wireshark does: 1 is type II, 2 is
 * type III, whichever of the two GRE protocols carried it. Type II:
 * Ver(4) VLAN(12) COS(3) En(2) T(1) Session(10), Reserved(12) Index(20).
 * Type III: the same first word with BSO for En, a 32-bit timestamp, then
 * SGT(16) P(1) FT(5) HW ID(6) D(1) Gra(2) O(1); O adds an 8-byte
 * platform-specific subheader, Platf ID in its top 6 bits.
 */
static __always_inline int pkt_parse_erspan(const struct pkt_cursor *c,
					    __u32 off, struct pkt_info *pi)
{
	struct { __be16 ver_vlan, cos_sid; __be32 ts; __be16 sgt, bits; } h;
	struct { __be32 w0, w1; } plat;
	__u16 w, bits;

	if (pkt_load(c, off, &h, AX_ERSPAN2_LEN))
		return PKT_MALFORMED;
	w = bpf_ntohs(h.cos_sid);
	pi->tun_id = w & 0x3FF;
	/* T: the switch cut the mirrored frame (its own truncation option) */
	if (w & 0x0400)
		pi->flags |= PKT_F_TRUNC;
	switch (bpf_ntohs(h.ver_vlan) >> 12) {
	case 1:
		pi->tun_kind = PKT_TUN_ERSPAN2;
		pi->tun_off = off + AX_ERSPAN2_LEN;
		return PKT_DECAP_INNER;
	case 2:
		break;
	default:
		return PKT_TUN_UNKNOWN;
	}
	pi->tun_kind = PKT_TUN_ERSPAN3;
	if (pkt_load(c, off, &h, AX_ERSPAN3_LEN))
		return PKT_MALFORMED;
	bits = bpf_ntohs(h.bits);
	pi->tun_ts = bpf_ntohl(h.ts);
	pi->tun_ts_gra = (bits >> 1) & 0x3;
	pi->flags |= PKT_F_TUN_TS;
	off += AX_ERSPAN3_LEN;
	if (bits & 0x1) {
		if (pkt_load(c, off, &plat, sizeof(plat)))
			return PKT_MALFORMED;
		pi->tun_plat_id = bpf_ntohl(plat.w0) >> 26;
		pi->tun_plat_word = bpf_ntohl(plat.w1);
		pi->flags |= PKT_F_TUN_PLAT;
		off += AX_ERSPAN3_PLAT_LEN;
	}
	/* FT 0 is an Ethernet frame; 2 (IP without L2) is not followed */
	if ((bits >> 10) & 0x1F)
		return PKT_TUN_UNKNOWN;
	pi->tun_off = off;
	return PKT_DECAP_INNER;
}

/* GRE (RFC 2784, key and sequence number RFC 2890); off points at it */
static __always_inline int pkt_parse_gre(const struct pkt_cursor *c, __u32 off,
					 struct pkt_info *pi)
{
	struct { __be16 flags, proto; } gre;
	__be32 key;
	__u16 fl, proto;

	if (pkt_load(c, off, &gre, sizeof(gre)))
		return PKT_MALFORMED;
	fl = bpf_ntohs(gre.flags);
	proto = bpf_ntohs(gre.proto);
	pkt_tun_start(pi, PKT_TUN_GRE);
	if (proto == AX_ETH_P_ERSPAN)
		pi->tun_kind = fl & AX_GRE_SEQ ? PKT_TUN_ERSPAN2 : PKT_TUN_ERSPAN1;
	else if (proto == AX_ETH_P_ERSPAN3)
		pi->tun_kind = PKT_TUN_ERSPAN3;
	else if (proto != AX_ETH_P_TEB)
		return PKT_TUN_UNKNOWN;
	if (fl & (AX_GRE_ROUTING | AX_GRE_VERSION))
		return PKT_TUN_UNKNOWN;
	off += sizeof(gre);
	if (fl & AX_GRE_CSUM)
		off += 4;			/* checksum, reserved */
	if (fl & AX_GRE_KEY) {
		if (pkt_load(c, off, &key, sizeof(key)))
			return PKT_MALFORMED;
		if (proto == AX_ETH_P_TEB)
			pi->tun_id = bpf_ntohl(key);
		off += 4;
	}
	if (fl & AX_GRE_SEQ)
		off += 4;
	/* type I: the mirrored frame right after the 4-byte GRE header */
	if (proto == AX_ETH_P_TEB || pi->tun_kind == PKT_TUN_ERSPAN1) {
		pi->tun_off = off;
		return PKT_DECAP_INNER;
	}
	return pkt_parse_erspan(c, off, pi);
}

/* VXLAN (RFC 7348) and Geneve (RFC 8926) after the outer UDP header */
static __always_inline int pkt_parse_udp_tun(const struct pkt_cursor *c,
					     __u32 off, __u16 dport,
					     struct pkt_info *pi)
{
	struct { __u8 b0, b1; __be16 proto; __u8 vni[3], resv; } h;

	pkt_tun_start(pi, dport == AX_VXLAN_PORT ? PKT_TUN_VXLAN : PKT_TUN_GENEVE);
	if (pkt_load(c, off, &h, sizeof(h)))
		return PKT_MALFORMED;
	pi->tun_id = be24(h.vni);
	if (dport == AX_VXLAN_PORT) {
		/* Linux drops VXLAN without the I flag too */
		if (!(h.b0 & AX_VXLAN_F_VNI))
			return PKT_TUN_UNKNOWN;
		pi->tun_off = off + AX_VXLAN_LEN;
		return PKT_DECAP_INNER;
	}
	/* Geneve: Ver(2) Opt Len(6, in 4-byte words) O C Rsvd(6) Protocol */
	if ((h.b0 >> 6) || bpf_ntohs(h.proto) != AX_ETH_P_TEB)
		return PKT_TUN_UNKNOWN;
	pi->tun_off = off + AX_GENEVE_LEN + (__u32)(h.b0 & 0x3F) * 4;
	return PKT_DECAP_INNER;
}

/* a UDP header already loaded; off points at it, end one past the IP payload */
static __always_inline int parse_udp_hdr(const struct pkt_cursor *c,
					 const struct udphdr *udp, __u32 off,
					 __u32 end, __u16 roce_port,
					 struct pkt_info *pi)
{
	pi->sport = bpf_ntohs(udp->source);
	pi->dport = bpf_ntohs(udp->dest);
	if (pi->dport != roce_port) {
		if (pkt_decap_here(c) && (pi->dport == AX_VXLAN_PORT ||
				 pi->dport == AX_GENEVE_PORT))
			return pkt_parse_udp_tun(c, off + sizeof(*udp), pi->dport, pi);
		return PKT_UDP;
	}
	if (c->l4_only)
		return PKT_ROCE;
	return roce_parse_bth(c, off + sizeof(*udp), end, pi);
}

static __always_inline int parse_udp(const struct pkt_cursor *c, __u32 off,
				     __u32 end, __u16 roce_port,
				     struct pkt_info *pi)
{
	struct udphdr udp PKT_HDR;

	if (pkt_load(c, off, &udp, sizeof(udp)))
		return PKT_MALFORMED;
	return parse_udp_hdr(c, &udp, off, end, roce_port, pi);
}

static __always_inline int parse_ipv4(const struct pkt_cursor *c, __u32 off,
				      __u16 roce_port, struct pkt_info *pi)
{
	/* IPv4 without options and UDP in one peek: one bounds check or one
	 * probe read instead of two on the common path */
	struct ax_ip_udp { struct iphdr ip; struct udphdr udp; } buf PKT_HDR;
	const struct ax_ip_udp *h = pkt_peek(c, off, &buf, sizeof(buf));
	bool have_udp = h;
	__u32 ihl, tot;

	if (!h)
		h = pkt_peek(c, off, &buf, sizeof(buf.ip));
	if (!h)
		return PKT_MALFORMED;
	ihl = (__u32)h->ip.ihl * 4;
	tot = bpf_ntohs(h->ip.tot_len);
	if (h->ip.version != 4 || ihl < sizeof(h->ip) || tot < ihl)
		return PKT_MALFORMED;
	pi->family = 4;
	pi->ip_proto = h->ip.protocol;
	pi->ecn = h->ip.tos & AX_ECN_MASK;
	pi->l3_len = tot;
	pi->ip_id = bpf_ntohs(h->ip.id);
	__builtin_memcpy(pi->saddr, &h->ip.saddr, 4);
	__builtin_memcpy(pi->daddr, &h->ip.daddr, 4);
	pkt_note_trunc(c, off + tot, pi);
	if (pkt_decap_here(c) && h->ip.protocol == AX_IPPROTO_GRE &&
	    !(bpf_ntohs(h->ip.frag_off) & AX_IP_OFFSET))
		return pkt_parse_gre(c, off + ihl, pi);
	if (h->ip.protocol != AX_IPPROTO_UDP ||
	    (bpf_ntohs(h->ip.frag_off) & AX_IP_OFFSET))
		return PKT_IP;
	if (have_udp && ihl == sizeof(h->ip))
		return parse_udp_hdr(c, &h->udp, off + ihl, off + tot, roce_port, pi);
	return parse_udp(c, off + ihl, off + tot, roce_port, pi);
}

static __always_inline int parse_ipv6(const struct pkt_cursor *c, __u32 off,
				      __u16 roce_port, struct pkt_info *pi)
{
	struct ipv6hdr ip6 PKT_HDR;
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
	pkt_note_trunc(c, end, pi);
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
	if (pkt_decap_here(c) && nh == AX_IPPROTO_GRE)
		return pkt_parse_gre(c, off, pi);
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

/* from an Ethernet header at off on */
static __always_inline int pkt_parse_frame(const struct pkt_cursor *c, __u32 off,
					   __u16 roce_port, struct pkt_info *pi)
{
	struct { __u8 dst[6], src[6]; __be16 proto; } eth;
	struct { __be16 tci, proto; } vlan;
	__u16 proto;
	int i;

	if (pkt_load(c, off, &eth, sizeof(eth)))
		return PKT_MALFORMED;
	off += AX_ETH_HLEN;
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
 * The outer headers ended in a tunnel: parse the inner frame at
 * pi->tun_off with a cursor marked inner, so the second copy of the parser
 * inlined here looks for no further tunnel. What the outer headers wrote
 * above the tun_* fields goes; truncation and timestamp flags stay.
 */
static __always_inline int pkt_decap_inner(const struct pkt_cursor *c,
					   __u16 roce_port, struct pkt_info *pi)
{
	struct pkt_cursor in = *c;
	__u8 keep = pi->flags & (PKT_F_TRUNC | PKT_F_TUN_TS | PKT_F_TUN_PLAT);
	int v;

	in.inner = true;
	__builtin_memset(pi, 0, __builtin_offsetof(struct pkt_info, tun_kind));
	pi->flags = keep;
	v = pkt_parse_frame(&in, pi->tun_off, roce_port, pi);
	if (v == PKT_UDP || v == PKT_IP || v == PKT_OTHER)
		return PKT_TUN_NOT_ROCE;
	return v;
}

/*
 * With decap, pkt_info stays in memory: clang (14) otherwise splits a
 * caller's local pkt_info into some 30 scalars that stay live across both
 * copies of the parser and spills them all, which made plain RoCE 1.5x
 * slower with decap on (tests/unit/parse_decap.c measures it). An empty
 * asm that may have read the pointer is enough; callers without decap
 * never reach it and keep their code as it was.
 */
static __always_inline void pkt_info_in_memory(struct pkt_info *pi)
{
	asm volatile("" : "+r"(pi) : : "memory");
}

/*
 * A pkt_info zeroed before a parse, in 8-byte stores: its fields are at
 * most 4-aligned, and clang clears a 4-aligned struct in 4-byte stores,
 * 31 of them (a fifth of rocelat's parse). pi must be 8-aligned: a map
 * value's field at an 8-aligned offset, or a stack variable.
 */
static __always_inline void pkt_info_clear(struct pkt_info *pi)
{
	__builtin_memset(__builtin_assume_aligned(pi, 8), 0, sizeof(*pi));
}

/*
 * What a parse without decap writes: the fields above tun_kind (9 stores
 * of 16). Enough for a pkt_info that stays in memory between parses (a
 * map value, zero when made) and is only ever parsed into without decap:
 * nothing then writes its tunnel part, which stays zero.
 */
static __always_inline void pkt_info_clear_plain(struct pkt_info *pi)
{
	__builtin_memset(__builtin_assume_aligned(pi, 8), 0,
			 __builtin_offsetof(struct pkt_info, tun_kind));
}

/* from the Ethernet header on (XDP, tc, mirror ports) */
static __always_inline int pkt_parse_eth(const struct pkt_cursor *c,
					 __u16 roce_port, struct pkt_info *pi)
{
	int v;

	if (!c->decap)
		return pkt_parse_frame(c, 0, roce_port, pi);
	pkt_info_in_memory(pi);
	pi->cap_len = pkt_cap_len_u16(c);
	v = pkt_parse_frame(c, 0, roce_port, pi);
	if (v != PKT_DECAP_INNER)
		return v;
	return pkt_decap_inner(c, roce_port, pi);
}

/* from the network header on (sk_buffs); proto as for pkt_parse_l3() */
static __always_inline int pkt_parse_ip(const struct pkt_cursor *c, __u16 proto,
					__u16 roce_port, struct pkt_info *pi)
{
	int v;

	if (!c->decap)
		return pkt_parse_l3(c, 0, proto, roce_port, pi);
	pkt_info_in_memory(pi);
	pi->cap_len = pkt_cap_len_u16(c);
	v = pkt_parse_l3(c, 0, proto, roce_port, pi);
	if (v != PKT_DECAP_INNER)
		return v;
	return pkt_decap_inner(c, roce_port, pi);
}

/* a UDP destination port the parser must see */
static __always_inline bool pkt_fast_port(__u16 dport, __u16 roce_port, bool decap)
{
	return dport == roce_port ||
	       (decap && (dport == AX_VXLAN_PORT || dport == AX_GENEVE_PORT));
}

/*
 * Hot-path shortcut for XDP/tc observers that only care about RoCE: true
 * when an untagged frame is certainly not UDP to roce_port (not IP, or
 * IPv4 without options / IPv6 without extension headers whose L4 is
 * something else). Anything it cannot decide cheaply (VLAN tags, options,
 * extension headers, short frames) returns false: run pkt_parse_eth().
 * With decap (the cursor's), GRE and UDP to the VXLAN and Geneve ports go
 * on to the parser too.
 */
static __always_inline bool pkt_fast_not_roce_decap(void *data, void *data_end,
						    __u16 roce_port, bool decap)
{
	__u8 *p = data;
	__u16 proto;

	if (p + AX_ETH_HLEN + 20 + 4 > (__u8 *)data_end)
		return false;
	proto = bpf_ntohs(pkt_be16(p + 12));
	if (proto == AX_ETH_P_IP) {
		if (p[AX_ETH_HLEN] != 0x45)		/* options or not v4 */
			return false;
		if (p[AX_ETH_HLEN + 9] != AX_IPPROTO_UDP)
			return !(decap && p[AX_ETH_HLEN + 9] == AX_IPPROTO_GRE);
		return !pkt_fast_port(bpf_ntohs(pkt_be16(p + AX_ETH_HLEN + 20 + 2)),
				      roce_port, decap);
	}
	if (proto == AX_ETH_P_IPV6) {
		__u8 nh;

		if (p + AX_ETH_HLEN + 40 + 4 > (__u8 *)data_end)
			return false;
		nh = p[AX_ETH_HLEN + 6];

		if (nh == AX_IPPROTO_UDP)
			return !pkt_fast_port(bpf_ntohs(pkt_be16(p + AX_ETH_HLEN + 40 + 2)),
					      roce_port, decap);
		if (decap && nh == AX_IPPROTO_GRE)
			return false;
		return nh != AX_IPPROTO_HOPOPTS && nh != AX_IPPROTO_ROUTING &&
		       nh != AX_IPPROTO_DSTOPTS && nh != AX_IPPROTO_FRAGMENT;
	}
	return proto != AX_ETH_P_8021Q && proto != AX_ETH_P_8021AD;
}

static __always_inline bool pkt_fast_not_roce(void *data, void *data_end,
					      __u16 roce_port)
{
	return pkt_fast_not_roce_decap(data, data_end, roce_port, false);
}

/*
 * Both fast paths in one pass, for a caller that wants a plain frame's
 * destination QPN (roceinject -Q): PKT_FAST_NOT_ROCE exactly where
 * pkt_fast_not_roce() is true; PKT_FAST_ROCE, and *dqpn, for a plain RoCE
 * v2 frame (untagged IPv4 without options, not a fragment, UDP to
 * roce_port, an IP length that holds the BTH, the BTH and its extended
 * header in the linear data), which pkt_parse_eth() calls PKT_ROCE with
 * the same destination QPN; PKT_FAST_UNSURE for anything else, which then
 * takes the full parse (enum pkt_fast_class). A plain frame is classified
 * by one reading of its headers, not two.
 */
static __always_inline int pkt_fast_classify(void *data, void *data_end,
					     __u16 roce_port, __u32 *dqpn)
{
	__u8 *ip = (__u8 *)data + AX_ETH_HLEN, *bth = ip + 20 + 8;
	__u32 ext;

	if ((void *)(bth + ROCE_BTH_LEN) > data_end ||
	    pkt_be16((__u8 *)data + 12) != bpf_htons(AX_ETH_P_IP) || ip[0] != 0x45)
		return pkt_fast_not_roce(data, data_end, roce_port) ?
		       PKT_FAST_NOT_ROCE : PKT_FAST_UNSURE;
	/* pkt_fast_not_roce()'s answer for IPv4 without options */
	if (ip[9] != AX_IPPROTO_UDP || pkt_be16(ip + 22) != bpf_htons(roce_port))
		return PKT_FAST_NOT_ROCE;
	if ((pkt_be16(ip + 6) & bpf_htons(AX_IP_OFFSET)) ||
	    bpf_ntohs(pkt_be16(ip + 2)) < 20 + 8 + ROCE_BTH_LEN)
		return PKT_FAST_UNSURE;
	ext = ROCE_TRANSPORT(bth[0]) == ROCE_TR_UD ? ROCE_DETH_LEN :
	      roce_op_has_reth(bth[0]) ? ROCE_RETH_LEN :
	      roce_op_has_aeth(bth[0]) ? ROCE_AETH_LEN : 0;
	if ((void *)(bth + ROCE_BTH_LEN + ext) > data_end)
		return PKT_FAST_UNSURE;
	*dqpn = bpf_ntohl(*(__be32 *)(bth + 4)) & ROCE_QPN_MASK;
	return PKT_FAST_ROCE;
}

#endif
