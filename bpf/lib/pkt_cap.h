/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The first bytes of a dropped packet, copied by the BPF side for -w
 * (skb_capture() in skb.bpf.h); shared with user space.
 */
#ifndef AGENTXDP_PKT_CAP_H
#define AGENTXDP_PKT_CAP_H

#define PKT_CAP_MAX	2048	/* the largest --snaplen */
#define PKT_CAP_DEFAULT	256
/* the events ring buffer with -w (records over 2 KiB larger): about as
 * many drops in flight as the 1 MiB one holds without */
#define PKT_CAP_RINGBUF	(8 << 20)

enum pkt_cap_start {
	PKT_CAP_NONE = 0,	/* no bytes: neither header offset set */
	PKT_CAP_MAC,		/* from the link-layer (Ethernet) header */
	PKT_CAP_NET,		/* from the IP header: the skb had no mac header
				 * (local output before the device) */
};

struct pkt_cap {
	__u32 cap_len;		/* bytes in data: the linear part, up to snaplen */
	__u32 orig_len;		/* the packet's length from the same start */
	__u8 start;		/* enum pkt_cap_start */
	__u8 pad[7];
	__u8 data[PKT_CAP_MAX];
};

#endif
