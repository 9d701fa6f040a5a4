/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reading packets out of an sk_buff from tracing programs (tp_btf, raw_tp,
 * fentry, kprobe): every field through CO-RE, every byte by probe read, so
 * the same code serves all of them and both kernels. */
#ifndef AGENTXDP_SKB_BPF_H
#define AGENTXDP_SKB_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "parse.bpf.h"
#include "pkt_cap.h"

/*
 * How a program reaches an skb, a constant at every call site, so each
 * program keeps one kind:
 * SKB_PROBE    raw_tp, kprobe: fields and header bytes by probe read
 * SKB_BTF      tp_btf, fentry (the verifier knows skb's type): fields as
 *              plain loads, header bytes by probe read
 * SKB_BTF_MEM  as SKB_BTF, header bytes as plain loads through
 *              bpf_rdonly_cast(p, 0) (pkt_cursor's SRC_KMEM): a helper
 *              call less per read, where the kernel casts to void (6.18
 *              does, 6.1 has no bpf_rdonly_cast; the loader asks,
 *              probe_untrusted_mem())
 */
enum skb_access { SKB_PROBE, SKB_BTF, SKB_BTF_MEM };

/* weak: an object that has it loads on kernels without it, as long as the
 * program that calls it is not loaded */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

#define SKB_READ(acc, skb, f) \
	((acc) != SKB_PROBE ? (skb)->f : BPF_CORE_READ(skb, f))

/*
 * Parse from skb->head + network_header. skb->sk is not used: drops before
 * the socket lookup are exactly the RoCE case. The header offsets are
 * u16 with ~0 meaning unset; tail is an offset on 64-bit kernels
 * (NET_SKBUFF_DATA_USES_OFFSET). With l4_only the BTH is not read (the
 * port alone decides whether it is RoCE). With decap, tunnels in the
 * network headers are followed (pkt_cursor.decap); paged data past
 * skb->tail is not read, so cap_len and PKT_F_TRUNC see the linear part.
 */
static __always_inline int skb_parse_decap(struct sk_buff *skb,
					   enum skb_access acc, bool l4_only,
					   bool decap, __u16 roce_port,
					   struct pkt_info *pi)
{
	struct pkt_cursor c = {
		.kind = acc == SKB_BTF_MEM ? SRC_KMEM : SRC_KERNEL,
		.l4_only = l4_only, .decap = decap,
	};
	unsigned char *head = SKB_READ(acc, skb, head);
	__u16 nh = SKB_READ(acc, skb, network_header);
	__u32 tail = SKB_READ(acc, skb, tail);
	__u16 proto = bpf_ntohs(SKB_READ(acc, skb, protocol));
	__u8 ver;

	/* else clang keeps each field of a caller's zeroed pkt_info in a
	 * register of its own and writes them all out on every path: a
	 * third of rxedrop's time */
	pkt_info_in_memory(pi);
	if (nh == (__u16)~0U || tail <= nh)
		return PKT_OTHER;
	c.kbase = acc == SKB_BTF_MEM ?
		bpf_rdonly_cast((void *)((__u64)head + nh), 0) : head + nh;
	c.klen = tail - nh;
	if (proto != AX_ETH_P_IP && proto != AX_ETH_P_IPV6) {
		/* skb->protocol is still 0 on some local-output paths */
		if (proto || pkt_load(&c, 0, &ver, 1))
			return PKT_OTHER;
		proto = (ver >> 4) == 4 ? AX_ETH_P_IP :
			(ver >> 4) == 6 ? AX_ETH_P_IPV6 : 0;
	}
	return pkt_parse_ip(&c, proto, roce_port, pi);
}

static __always_inline int skb_parse(struct sk_buff *skb, enum skb_access acc,
				     bool l4_only, __u16 roce_port,
				     struct pkt_info *pi)
{
	return skb_parse_decap(skb, acc, l4_only, false, roce_port, pi);
}

static __always_inline __u32 skb_ifindex(struct sk_buff *skb, enum skb_access acc)
{
	__u32 ifindex = acc != SKB_PROBE ? (skb->dev ? skb->dev->ifindex : 0) :
					   BPF_CORE_READ(skb, dev, ifindex);

	return ifindex ? ifindex : SKB_READ(acc, skb, skb_iif);
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

/*
 * Up to snaplen (<= PKT_CAP_MAX) bytes of the packet as the kernel holds
 * it, from its mac header, else (no mac header, or an empty one) from its
 * network header: cap->start says which. snaplen is 1..PKT_CAP_MAX
 * (a power of two). Only the linear part (up to
 * skb->tail) is read; orig_len counts the paged part too.
 */
static __always_inline void skb_capture(struct sk_buff *skb, struct pkt_cap *cap,
					__u32 snaplen)
{
	unsigned char *head = BPF_CORE_READ(skb, head);
	unsigned char *data = BPF_CORE_READ(skb, data);
	__u16 mh = BPF_CORE_READ(skb, mac_header);
	__u16 nh = BPF_CORE_READ(skb, network_header);
	__u32 tail = BPF_CORE_READ(skb, tail);
	__u32 len = BPF_CORE_READ(skb, len);
	__u32 start, data_off = data - head, n;

	cap->cap_len = cap->orig_len = 0;
	cap->start = PKT_CAP_NONE;
	if (mh != (__u16)~0U && nh != (__u16)~0U && mh < nh) {
		start = mh;
		cap->start = PKT_CAP_MAC;
	} else if (nh != (__u16)~0U) {
		start = nh;
		cap->start = PKT_CAP_NET;
	} else {
		return;
	}
	if (tail <= start) {
		cap->start = PKT_CAP_NONE;
		return;
	}
	cap->orig_len = data_off >= start ? len + (data_off - start) :
			len > start - data_off ? len - (start - data_off) : 0;
	n = tail - start;
	if (n > snaplen)
		n = snaplen;
	/* 1..PKT_CAP_MAX in the form the verifier can bound (n >= 1 here,
	 * snaplen <= PKT_CAP_MAX); a compare is tested on a copy by clang */
	n = ((n - 1) & (PKT_CAP_MAX - 1)) + 1;
	if (bpf_probe_read_kernel(cap->data, n, head + start))
		n = 0;
	cap->cap_len = n;
}

#endif
