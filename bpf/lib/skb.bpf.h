/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reading packets out of an sk_buff from tracing programs (tp_btf, raw_tp,
 * fentry, kprobe): every field through CO-RE, every byte by probe read, so
 * the same code serves all of them and both kernels. */
#ifndef AGENTXDP_SKB_BPF_H
#define AGENTXDP_SKB_BPF_H

#include <bpf/bpf_core_read.h>
#include "parse.bpf.h"

/*
 * A field of the skb: plain loads where the verifier knows skb's type
 * (tp_btf, fentry: direct), probe reads elsewhere (raw_tp, kprobe). The
 * choice is a constant at every call site, so each program keeps one kind.
 */
#define SKB_READ(direct, skb, f) \
	((direct) ? (skb)->f : BPF_CORE_READ(skb, f))

/*
 * Parse from skb->head + network_header. skb->sk is not used: drops before
 * the socket lookup are exactly the RoCE case. The header offsets are
 * u16 with ~0 meaning unset; tail is an offset on 64-bit kernels
 * (NET_SKBUFF_DATA_USES_OFFSET). With l4_only the BTH is not read (the
 * port alone decides whether it is RoCE). With decap, tunnels in the
 * network headers are followed (pkt_cursor.decap); paged data past
 * skb->tail is not read, so cap_len and PKT_F_TRUNC see the linear part.
 */
static __always_inline int skb_parse_decap(struct sk_buff *skb, bool direct,
					   bool l4_only, bool decap,
					   __u16 roce_port, struct pkt_info *pi)
{
	struct pkt_cursor c = {
		.kind = SRC_KERNEL, .l4_only = l4_only, .decap = decap,
	};
	unsigned char *head = SKB_READ(direct, skb, head);
	__u16 nh = SKB_READ(direct, skb, network_header);
	__u32 tail = SKB_READ(direct, skb, tail);
	__u16 proto = bpf_ntohs(SKB_READ(direct, skb, protocol));
	__u8 ver;

	if (nh == (__u16)~0U || tail <= nh)
		return PKT_OTHER;
	c.kbase = head + nh;
	c.klen = tail - nh;
	if (proto != AX_ETH_P_IP && proto != AX_ETH_P_IPV6) {
		/* skb->protocol is still 0 on some local-output paths */
		if (proto || bpf_probe_read_kernel(&ver, 1, c.kbase))
			return PKT_OTHER;
		proto = (ver >> 4) == 4 ? AX_ETH_P_IP :
			(ver >> 4) == 6 ? AX_ETH_P_IPV6 : 0;
	}
	return pkt_parse_ip(&c, proto, roce_port, pi);
}

static __always_inline int skb_parse(struct sk_buff *skb, bool direct,
				     bool l4_only, __u16 roce_port,
				     struct pkt_info *pi)
{
	return skb_parse_decap(skb, direct, l4_only, false, roce_port, pi);
}

static __always_inline __u32 skb_ifindex(struct sk_buff *skb, bool direct)
{
	__u32 ifindex = direct ? (skb->dev ? skb->dev->ifindex : 0) :
				 BPF_CORE_READ(skb, dev, ifindex);

	return ifindex ? ifindex : SKB_READ(direct, skb, skb_iif);
}

/*
 * The device a packet belongs to: skb->dev, or on the local output path
 * (where skb->dev is still NULL before ip_output) the route's device.
 * _skb_refdst carries SKB_DST_NOREF in bit 0.
 */
static __always_inline struct net_device *skb_any_dev(struct sk_buff *skb)
{
	struct net_device *dev = BPF_CORE_READ(skb, dev);
	unsigned long refdst;
	struct dst_entry *dst;

	if (dev)
		return dev;
	refdst = BPF_CORE_READ(skb, _skb_refdst);
	if (!refdst)
		return NULL;
	dst = (struct dst_entry *)(refdst & ~1UL);
	return BPF_CORE_READ(dst, dev);
}

/* inode number of the packet's network namespace (what
 * readlink /proc/PID/ns/net shows), 0 when neither a device nor a socket
 * tells */
static __always_inline __u32 skb_netns_inum(struct sk_buff *skb)
{
	struct net_device *dev = skb_any_dev(skb);
	struct sock *sk;

	if (dev)
		return BPF_CORE_READ(dev, nd_net.net, ns.inum);
	sk = BPF_CORE_READ(skb, sk);
	if (sk)
		return BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	return 0;
}

#endif
