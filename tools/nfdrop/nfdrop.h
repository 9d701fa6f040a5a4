/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* nfdrop: types shared by tools/nfdrop/nfdrop.bpf.c and tools/nfdrop/nfdrop.c */
#ifndef AGENTXDP_NFDROP_H
#define AGENTXDP_NFDROP_H

#include "lib/pkt_info.h"
#include "lib/pkt_cap.h"

#define NFD_IFNAMSIZ	16
#define NFD_TABLE_LEN	32	/* XT_TABLE_MAXNAMELEN; longer nft names are cut */
#define NFD_CHAIN_LEN	64	/* nft allows 256; a cut name is matched by prefix */
#define NFD_STACK_DEPTH	16	/* frames searched for nf_hook_slow (it sits at 3-6) */
#define NFD_HOOK_UNKNOWN 0xff

/* which program named the dropping table and chain */
enum nfd_source {
	NFD_SRC_STACK = 0,	/* kfree_skb NETFILTER_DROP + kernel stack */
	NFD_SRC_NFT,		/* fexit nft_do_chain: table and base chain from the kernel */
	NFD_SRC_IPT,		/* fexit ipt_do_table (iptables-legacy, IPv4) */
	NFD_SRC_IP6T,		/* fexit ip6t_do_table (ip6tables-legacy) */
};

enum nfd_scope {
	NFD_SCOPE_ALL = 0,	/* any packet */
	NFD_SCOPE_ROCE,		/* UDP to the RoCE port */
};

enum nfd_stat {
	NFD_STAT_DROPS,		/* NETFILTER_DROP frees that passed the filters */
	NFD_STAT_NO_HOOK,	/* nf_hook_slow not found on the stack */
	NFD_STAT_EVENTS_LOST,	/* ring buffer full */
	NFD_STAT_FEXIT_DROPS,	/* drop verdicts seen by the fexit programs */
	NFD_STAT_NR,
};

/*
 * skb->_nfct at the drop, in one byte: the low 3 bits are its enum
 * ip_conntrack_info, the flags say what was read. No NFD_CT_READ: the
 * kernel has no conntrack field (built without it). READ without ENTRY:
 * no conntrack entry attached, "invalid" to a ct state match unless the
 * info is IP_CT_UNTRACKED (7). The NAT bits are ct->status's
 * IPS_SRC_NAT / IPS_DST_NAT, valid with NFD_CT_STATUS.
 */
#define NFD_CT_INFO	0x07
#define NFD_CT_READ	0x08
#define NFD_CT_ENTRY	0x10
#define NFD_CT_STATUS	0x20
#define NFD_CT_SNAT	0x40
#define NFD_CT_DNAT	0x80

/*
 * nfd_key.flags. The NAT_DONE bits are ct->status's IPS_SRC_NAT_DONE /
 * IPS_DST_NAT_DONE (valid with NFD_CT_STATUS): a binding exists for that
 * manip, so the nat core ran no nat chain of that manip's hooks for the
 * packet. PATH_CACHED: hook_ret and chain_ret came from an earlier
 * packet of the same path signature, not this packet's own stack.
 */
#define NFD_F_SNAT_DONE		0x01
#define NFD_F_DNAT_DONE		0x02
#define NFD_F_PATH_CACHED	0x04

struct nfd_key {
	/*
	 * NFD_SRC_STACK: return addresses found on the stack. hook_ret is
	 * in the function that ran the hook (ip_local_deliver: IPv4 input),
	 * chain_ret in the function that called nft_do_chain
	 * (nft_do_chain_inet: a table of family inet), 0 when nft_do_chain
	 * was not on the stack (iptables-legacy, conntrack, queue).
	 */
	__u64 hook_ret;
	__u64 chain_ret;
	__u64 location;		/* kfree_skb's location */
	__u32 netns;		/* inode of the packet's network namespace */
	__u8 source;		/* enum nfd_source */
	__u8 pf;		/* fexit: NFPROTO_* of the hook; stack: 4/6/0 */
	__u8 hook;		/* fexit: hook number; stack: NFD_HOOK_UNKNOWN */
	__u8 table_family;	/* fexit nft: NFPROTO_* of the table */
	__u8 policy;		/* fexit nft: the base chain's policy (NF_DROP 0) */
	__u8 rejected;		/* a REJECT reply was sent for the packet first */
	/*
	 * The packet, for user space to match against the rules: counts are
	 * kept per packet signature. sig 0 (and the fields zero) when the
	 * map was full: then the rules cannot be matched against it.
	 */
	__u8 sig;		/* 1: the fields below are the packet's */
	__u8 sig_family;	/* 4 or 6, 0 not IP */
	__u8 sig_proto;		/* IP protocol / IPv6 upper layer */
	__u8 sig_ports;		/* sport and dport were parsed (UDP, TCP) */
	__u8 ct;		/* NFD_CT_*: the packet's conntrack at the drop */
	__u8 flags;		/* NFD_F_* */
	__u16 sport, dport;	/* host byte order */
	__u32 dev_ifindex;	/* skb->dev: the input device on receive hooks */
	__u32 dst_ifindex;	/* the route's device: output device */
	__u32 mark;		/* skb->mark at the drop (meta mark) */
	__u32 pad;
	__u8 saddr[16], daddr[16];
	char table[NFD_TABLE_LEN];
	char chain[NFD_CHAIN_LEN];
};

struct nfd_value {
	__u64 packets;
	__u64 rejected;		/* of those, answered with a REJECT reply first */
};

/* what the kfree_skb program learned about one dropped packet */
struct nfd_rec {
	__u64 location;		/* kfree_skb's location */
	__u32 ifindex;
	__s32 stack_id;		/* -s: in the stacks map, else -1 */
	__u8 verdict;		/* enum pkt_verdict of the parse */
	__u8 rejected;		/* a REJECT reply was sent for it first */
	__u8 ct;		/* NFD_CT_* */
	__u8 tcp_ports;		/* pkt.sport/dport are TCP's (the parser reads UDP's) */
	__u8 ct_done;		/* NFD_F_SNAT_DONE, NFD_F_DNAT_DONE */
	__u8 pad[3];
	__u32 dev_ifindex;	/* skb->dev, 0 none */
	__u32 dst_ifindex;	/* skb_dst(skb)->dev, 0 none */
	__u32 mark;		/* skb->mark at the drop */
	__u32 pad2;
	char ifname[NFD_IFNAMSIZ];
	struct pkt_info pkt;
};

struct nfd_event {
	__u64 ts_ns;
	struct nfd_key key;
	struct nfd_rec rec;
};

/* with -w: the event and the packet's first bytes */
struct nfd_event_cap {
	struct nfd_event e;
	struct pkt_cap cap;
};

#endif
