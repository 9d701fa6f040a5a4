// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nfdrop: which netfilter hook, table and chain dropped a packet.
 *
 * Every drop is counted at kfree_skb with reason NETFILTER_DROP, where the
 * packet is still intact. Where fexit is allowed, fexit on nft_do_chain and
 * ipt_do_table/ip6t_do_table adds the table and chain from the kernel's own
 * structures; elsewhere the kernel stack names the hook and user space
 * names the candidate chains from the ruleset.
 *
 * The two events of one drop meet in a per-CPU slot, in either order:
 * Debian's 6.1 and 6.18 free the skb inside nft_do_chain (so kfree_skb
 * comes first and the fexit completes the record), while iptables-legacy
 * returns NF_DROP and nf_hook_slow frees it (fexit first, then kfree_skb).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "lib/skb.bpf.h"
#include "lib/maps.bpf.h"
#include "lib/probe.bpf.h"
#include "nfdrop.h"

/*
 * What nfdrop reads of nf_tables and x_tables, as local CO-RE types: the
 * "___ax" flavour matches the kernel's struct of the name before "___",
 * field by field, wherever it lives. Where nf_tables and x_tables are
 * modules (Debian's arm64 kernel) vmlinux.h has no such structs; the
 * offsets come from the module's BTF at load time, on every kernel.
 */
struct nft_table___ax {
	__u16 family:6;		/* a bit-field: read with the _PROBED macro */
	char *name;
} __attribute__((preserve_access_index));

struct nft_chain___ax {
	struct nft_table___ax *table;
	char *name;
} __attribute__((preserve_access_index));

struct nft_base_chain___ax {
	struct nft_chain___ax chain;
	__u8 policy;
} __attribute__((preserve_access_index));

struct nft_pktinfo___ax {
	struct sk_buff *skb;
	const struct nf_hook_state *state;
} __attribute__((preserve_access_index));

/* nf_conntrack may be a module (Debian): its BTF gives the offset */
struct nf_conn___ax {
	unsigned long status;
} __attribute__((preserve_access_index));

struct sk_buff___ct {
	unsigned long _nfct;
} __attribute__((preserve_access_index));

struct xt_table___ax {
	char name[32];		/* XT_TABLE_MAXNAMELEN */
} __attribute__((preserve_access_index));

#define NFCT_INFOMASK	7UL	/* include/linux/skbuff.h: _nfct = ct | ctinfo */
#define IPS_SRC_NAT_FLAG 0x10
#define IPS_DST_NAT_FLAG 0x20
#define IPS_SRC_NAT_DONE_FLAG 0x80
#define IPS_DST_NAT_DONE_FLAG 0x100
#define NF_DROP_VERDICT	0
#define NF_STOLEN_VERDICT 2
#define NF_VERDICT_BITS	0xff
#define ICMP_DEST_UNREACH_TYPE 3
#define ICMPV6_DEST_UNREACH_TYPE 1
#define IPPROTO_ICMPV6_NR 58
/* what an ICMPv6 error quotes and nfdrop compares: the IPv6 header and
 * the first 8 bytes after it (the UDP or TCP ports) */
#define IP6_QUOTE_LEN	48
#define REJECT_SLOTS	4
#define REJECT_WINDOW_NS 100000000	/* reply and drop: microseconds apart, ms under emulation */

const volatile __u8 targ_scope = NFD_SCOPE_ALL;
const volatile __u16 targ_roce_port = ROCE_V2_PORT;
const volatile __u16 targ_port = 0;	/* either UDP port */
const volatile __u32 targ_ifindex = 0;
const volatile __u32 targ_netns = 0;	/* netns inode, 0: any */
const volatile bool targ_events = false;
const volatile bool targ_stack = false;
/* -w: bytes of each dropped packet into its event (nfd_event_cap), 0 none */
const volatile __u32 targ_snaplen = 0;
const volatile __u32 targ_nf_drop = 12;	/* SKB_DROP_REASON_NETFILTER_DROP, from BTF */
/* a queue verdict without a listener (and no bypass): nf_queue() frees
 * the packet with kfree_skb(), reason NOT_SPECIFIED; 0xffffffff: none */
const volatile __u32 targ_not_specified = 0xffffffff;
const volatile __u64 targ_queue_start = 0, targ_queue_end = 0;	/* nf_queue */

/* kernel text ranges, from /proc/kallsyms */
const volatile __u64 targ_slow_start = 0, targ_slow_end = 0;	/* nf_hook_slow */
const volatile __u64 targ_list_start = 0, targ_list_end = 0;	/* nf_hook_slow_list */
/* the traversal functions; a kfree_skb inside one whose fexit is attached
 * waits for that fexit */
const volatile __u64 targ_nft_start = 0, targ_nft_end = 0;	/* nft_do_chain */
const volatile __u64 targ_ipt_start = 0, targ_ipt_end = 0;	/* ipt_do_table */
const volatile __u64 targ_ip6t_start = 0, targ_ip6t_end = 0;	/* ip6t_do_table */
const volatile bool targ_nft_fexit = false;
const volatile bool targ_ipt_fexit = false;
const volatile bool targ_ip6t_fexit = false;
/* ipt_do_table(priv, skb, state) since 5.16 (commit ee177a54413a, "netfilter:
 * ip6_tables: pass table pointer via nf_hook_ops"); (skb, state, table) before */
const volatile bool targ_xt_priv_first = true;
/* REJECT replies over IPv6 seen as ICMPv6 errors leaving (nfdrop_icmp6_out) */
const volatile bool targ_icmp6_out = false;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct nfd_key);
	__type(value, struct nfd_value);
} drops SEC(".maps");

AX_PERCPU_STATS(stats, NFD_STAT_NR);
AX_RINGBUF(events, 1 << 20);
AX_STACK_MAP(stacks, 1024);

/* per-CPU meeting point of the programs that see one drop */
struct nfd_cpu {
	__u64 pend_skb;		/* kfree_skb seen inside a traversal, fexit due */
	__u8 pend_matched;	/* ... and it passed the filters */
	__u8 pad[7];
	__u64 mark_skb;		/* fexit saw NF_DROP, kfree_skb due */
	/*
	 * skbs a REJECT reply was sent for. Several: sending the reply
	 * re-enables softirqs, and another packet rejected in one that runs
	 * there must not take the place of the first before it is freed.
	 * An IPv6 packet known only by what its ICMPv6 error quotes is held
	 * as ip6_quote_id(), whose top bit is clear: no kernel pointer.
	 */
	__u64 reject_skb[REJECT_SLOTS];
	__u64 reject_ts[REJECT_SLOTS];
	__u32 reject_next;
	__u32 pad3;
	__u8 in_traversal;	/* scan_stack: freed inside a traversal with fexit */
	__u8 pad2[7];
	struct nfd_key mark_key;
	struct nfd_key key;	/* scratch */
	struct nfd_rec rec;	/* the packet, from kfree_skb */
	struct pkt_cap cap;	/* -w: its bytes, from kfree_skb */
	__u64 stack[NFD_STACK_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nfd_cpu);
} cpu_state SEC(".maps");

/*
 * Walking the kernel stack costs ~2.5 us here (bpf_get_stack's fixed
 * cost, not per frame), ten times the rest of the program. The walk's
 * answer depends on the code path, and the path shows in cheap fields of
 * the skb: where it is freed, its route's input/output handlers (input:
 * ip_local_deliver vs ip_forward) and whether skb->dev is unset (local
 * output), the route's device (postrouting) or another (input, forward).
 * So the stack is walked for the first packet of each such signature and
 * every PATH_REWALK-th after; a signature whose walks disagree is walked
 * every time from then on. The packet's conntrack is part of the
 * signature: nat chains run (under nft_nat_do_chain, inside the nat
 * core's hook) only for a connection's packets before its NAT binding
 * is made, so drops in a nat chain and in the filter chains after it
 * differ there. Keys from the cache say so (NFD_F_PATH_CACHED).
 */
#define PATH_REWALK	64

struct path_sig {
	__u64 location;
	__u64 dst_input;
	__u64 dst_output;
	__u64 dev;
	__u16 protocol;
	__u8 dev_state;		/* 0 no skb->dev, 1 the route's device, 2 another */
	__u8 pkt_type;
	__u8 ct;		/* NFD_CT_* */
	__u8 ct_done;		/* NFD_F_*_NAT_DONE */
	__u16 pad;
};

struct path_val {
	__u64 hook_ret;
	__u64 chain_ret;
	__u32 hits;
	__u8 in_traversal;
	__u8 ambiguous;
	__u8 pad[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct path_sig);
	__type(value, struct path_val);
} paths SEC(".maps");

static __always_inline struct nfd_cpu *cpu_slot(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_state, &zero);
}

/*
 * The frames up to nf_hook_slow: the one above it ran the hook
 * (ip_local_deliver: IPv4 input), the one above nft_do_chain chose the
 * table family (nft_do_chain_inet). Results go to the key and the per-CPU
 * slot, found values are stored at once: the verifier then meets the same
 * state after the loop whatever frame matched.
 */
static __always_inline void scan_stack(void *ctx, struct nfd_cpu *st,
				       struct nfd_key *key)
{
	long n = bpf_get_stack(ctx, st->stack, sizeof(st->stack), 0);
	__u32 frames = n > 0 ? (__u64)n >> 3 : 0;

	st->in_traversal = 0;
	for (__u32 i = 0; i < NFD_STACK_DEPTH - 2; i++) {
		__u64 ret, up;

		if (i >= frames)
			break;
		ret = st->stack[i];
		if (IN_TEXT(ret, targ_slow_start, targ_slow_end)) {
			up = st->stack[i + 1];
			/* list receive: ip_sublist_rcv -> nf_hook_slow_list -> nf_hook_slow */
			if (IN_TEXT(up, targ_list_start, targ_list_end))
				up = st->stack[i + 2];
			key->hook_ret = up;
			break;
		}
		if (IN_TEXT(ret, targ_nft_start, targ_nft_end)) {
			key->chain_ret = st->stack[i + 1];
			st->in_traversal |= targ_nft_fexit;
		}
		if (IN_TEXT(ret, targ_ipt_start, targ_ipt_end))
			st->in_traversal |= targ_ipt_fexit;
		if (IN_TEXT(ret, targ_ip6t_start, targ_ip6t_end))
			st->in_traversal |= targ_ip6t_fexit;
	}
}

static __always_inline void find_path(void *ctx, struct nfd_cpu *st,
				      struct nfd_key *key, struct sk_buff *skb,
				      const struct nfd_rec *rec)
{
	struct path_sig sig = {};
	struct path_val *pv, nv = {};
	unsigned long refdst = BPF_CORE_READ(skb, _skb_refdst);
	struct dst_entry *dst = (struct dst_entry *)(refdst & ~1UL);
	struct net_device *dev = BPF_CORE_READ(skb, dev), *rdev = NULL;

	sig.location = key->location;
	if (refdst) {
		sig.dst_input = (__u64)BPF_CORE_READ(dst, input);
		sig.dst_output = (__u64)BPF_CORE_READ(dst, output);
		rdev = BPF_CORE_READ(dst, dev);
	}
	sig.dev = (__u64)dev;
	sig.dev_state = !dev ? 0 : dev == rdev ? 1 : 2;
	sig.protocol = BPF_CORE_READ(skb, protocol);
	sig.pkt_type = BPF_CORE_READ_BITFIELD_PROBED(skb, pkt_type);
	sig.ct = rec->ct;
	sig.ct_done = rec->ct_done;
	pv = bpf_map_lookup_elem(&paths, &sig);
	/* a racy count is fine: it only spaces the re-walks */
	if (pv && !pv->ambiguous && pv->hits++ % PATH_REWALK) {
		key->hook_ret = pv->hook_ret;
		key->chain_ret = pv->chain_ret;
		key->flags |= NFD_F_PATH_CACHED;
		st->in_traversal = pv->in_traversal;
		return;
	}
	scan_stack(ctx, st, key);
	if (pv) {
		if (pv->hook_ret != key->hook_ret || pv->chain_ret != key->chain_ret ||
		    pv->in_traversal != st->in_traversal)
			pv->ambiguous = 1;
		return;
	}
	nv.hook_ret = key->hook_ret;
	nv.chain_ret = key->chain_ret;
	nv.in_traversal = st->in_traversal;
	nv.hits = 1;
	bpf_map_update_elem(&paths, &sig, &nv, BPF_NOEXIST);
}

static __always_inline __u32 skb_dst_ifindex(struct sk_buff *skb)
{
	unsigned long refdst = BPF_CORE_READ(skb, _skb_refdst);
	struct dst_entry *dst = (struct dst_entry *)(refdst & ~1UL);

	return refdst ? BPF_CORE_READ(dst, dev, ifindex) : 0;
}

static __always_inline bool scope_match(const struct pkt_info *pi)
{
	bool udp = pi->ip_proto == AX_IPPROTO_UDP && (pi->sport || pi->dport);

	if (targ_scope == NFD_SCOPE_ROCE &&
	    !(pi->ip_proto == AX_IPPROTO_UDP && pi->dport == targ_roce_port))
		return false;
	if (targ_port && !(udp && (pi->sport == targ_port || pi->dport == targ_port)))
		return false;
	return true;
}

static __always_inline void key_sign(struct nfd_key *key, const struct nfd_rec *rec)
{
	const struct pkt_info *pi = &rec->pkt;

	key->sig = 1;
	key->sig_family = pi->family;
	key->sig_proto = pi->ip_proto;
	key->sig_ports = rec->verdict == PKT_ROCE || rec->verdict == PKT_UDP ||
			 rec->tcp_ports;
	key->ct = rec->ct;
	key->flags = (key->flags & NFD_F_PATH_CACHED) | rec->ct_done;
	key->sport = key->sig_ports ? pi->sport : 0;
	key->dport = key->sig_ports ? pi->dport : 0;
	key->dev_ifindex = rec->dev_ifindex;
	key->dst_ifindex = rec->dst_ifindex;
	key->mark = rec->mark;
	__builtin_memcpy(key->saddr, pi->saddr, sizeof(key->saddr));
	__builtin_memcpy(key->daddr, pi->daddr, sizeof(key->daddr));
}

static __always_inline void key_unsign(struct nfd_key *key)
{
	key->sig = key->sig_family = key->sig_proto = key->sig_ports = 0;
	key->sport = key->dport = 0;
	key->ct = 0;
	key->flags &= NFD_F_PATH_CACHED;
	key->dev_ifindex = key->dst_ifindex = 0;
	key->mark = 0;
	__builtin_memset(key->saddr, 0, sizeof(key->saddr));
	__builtin_memset(key->daddr, 0, sizeof(key->daddr));
}

/*
 * The packet's conntrack as the dropping rule saw it: a ct state match
 * reads skb->_nfct (nf_ct_get), and nothing changes it between that rule
 * and the free in the same hook. Conntrack attaches it at prerouting and
 * output priority -200 (NF_IP_PRI_CONNTRACK); a chain that runs before
 * that (raw, -300) or outside the IP hooks saw another value: user space
 * (ev_walk) does not use it there. Kernels built without conntrack have
 * no _nfct: no NFD_CT_READ, the state stays unknown.
 */
static __always_inline __u8 skb_ct(struct sk_buff *skb, __u8 *done)
{
	struct sk_buff___ct *s = (void *)skb;
	struct nf_conn___ax *ct;
	unsigned long nfct;
	__u8 v;

	*done = 0;
	if (!bpf_core_field_exists(s->_nfct))
		return 0;
	nfct = BPF_CORE_READ(s, _nfct);
	v = NFD_CT_READ | (nfct & NFCT_INFOMASK);
	ct = (void *)(nfct & ~NFCT_INFOMASK);
	if (!ct)
		return v;
	v |= NFD_CT_ENTRY;
	if (bpf_core_type_exists(struct nf_conn___ax)) {
		unsigned long status = BPF_CORE_READ(ct, status);

		v |= NFD_CT_STATUS;
		if (status & IPS_SRC_NAT_FLAG)
			v |= NFD_CT_SNAT;
		if (status & IPS_DST_NAT_FLAG)
			v |= NFD_CT_DNAT;
		if (status & IPS_SRC_NAT_DONE_FLAG)
			*done |= NFD_F_SNAT_DONE;
		if (status & IPS_DST_NAT_DONE_FLAG)
			*done |= NFD_F_DNAT_DONE;
	}
	return v;
}

/*
 * TCP ports, for rules on tcp sport/dport (the shared parser reads UDP's
 * only): after the IPv4 header by its length, or right after an IPv6
 * header whose next header is TCP (extension headers: no ports). Not for
 * non-first fragments; only what is in the linear part.
 */
static __always_inline bool skb_tcp_ports(struct sk_buff *skb, struct pkt_info *pi)
{
	unsigned char *head = BPF_CORE_READ(skb, head);
	__u16 nh = BPF_CORE_READ(skb, network_header);
	__u32 tail = BPF_CORE_READ(skb, tail), off;
	__u8 ip[8];
	__be16 ports[2];

	if (nh == (__u16)~0U || bpf_probe_read_kernel(ip, sizeof(ip), head + nh))
		return false;
	if (pi->family == 4) {
		if ((((__u16)ip[6] << 8 | ip[7]) & AX_IP_OFFSET) || (ip[0] & 0xf) < 5)
			return false;
		off = (ip[0] & 0xf) * 4;
	} else if (pi->family == 6 && ip[6] == AX_IPPROTO_TCP) {
		off = 40;
	} else {
		return false;
	}
	if ((__u32)nh + off + sizeof(ports) > tail ||
	    bpf_probe_read_kernel(ports, sizeof(ports), head + nh + off))
		return false;
	pi->sport = bpf_ntohs(ports[0]);
	pi->dport = bpf_ntohs(ports[1]);
	return true;
}

/*
 * An IPv6 packet by what an ICMPv6 error about it quotes (IP6_QUOTE_LEN
 * bytes at p): the same bytes in the error and in the packet its REJECT
 * then frees. 0 when unreadable or not IPv6; else the top bit is clear.
 */
static __always_inline __u64 ip6_quote_id(const void *p)
{
	__u64 w[IP6_QUOTE_LEN / 8], h = 0xcbf29ce484222325ULL;

	if (bpf_probe_read_kernel(w, sizeof(w), p) || *(__u8 *)w >> 4 != 6)
		return 0;
	for (int i = 0; i < IP6_QUOTE_LEN / 8; i++)
		h = (h ^ w[i]) * 0x100000001b3ULL;
	return (h >> 1) | 1;
}

static __always_inline __u64 skb_ip6_quote_id(const struct sk_buff *skb)
{
	if (BPF_CORE_READ(skb, protocol) != bpf_htons(AX_ETH_P_IPV6))
		return 0;
	return ip6_quote_id(BPF_CORE_READ(skb, head) + BPF_CORE_READ(skb, network_header));
}

/* adds one packet to the counts and, with -e, sends its event */
/* -w: the bytes kfree_skb captured into the event (a copy: the skb may
 * be gone when a traversal's fexit sends it) */
static __always_inline void event_cap(struct nfd_event_cap *ec, const struct pkt_cap *cap)
{
	__u32 n = cap->cap_len;

	ec->cap.start = cap->start;
	ec->cap.orig_len = cap->orig_len;
	/* 1..PKT_CAP_MAX in a form the verifier bounds (skb_capture) */
	if (n && bpf_probe_read_kernel(ec->cap.data, ((n - 1) & (PKT_CAP_MAX - 1)) + 1,
				       cap->data))
		n = 0;
	ec->cap.cap_len = n;
}

static __always_inline void count_drop(struct nfd_key *key, struct nfd_rec *rec,
				       const struct pkt_cap *cap)
{
	static const struct nfd_value zero;
	struct nfd_value *val;
	struct nfd_event *e;

	counter_inc(&stats, NFD_STAT_DROPS);
	/* REJECT and DROP from one chain are told apart by this bit */
	key->rejected = rec->rejected;
	key_sign(key, rec);
	val = map_lookup_or_init(&drops, key, &zero);
	if (!val) {
		/* full of signatures: still counted, without one */
		key_unsign(key);
		val = map_lookup_or_init(&drops, key, &zero);
	}
	if (val) {
		val->packets++;
		val->rejected += rec->rejected;
	}
	if (!targ_events)
		return;
	if (targ_snaplen)
		e = bpf_ringbuf_reserve(&events, sizeof(struct nfd_event_cap), 0);
	else
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		counter_inc(&stats, NFD_STAT_EVENTS_LOST);
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	__builtin_memcpy(&e->key, key, sizeof(*key));
	__builtin_memcpy(&e->rec, rec, sizeof(*rec));
	if (targ_snaplen)
		event_cap((struct nfd_event_cap *)e, cap);
	bpf_ringbuf_submit(e, 0);
}

static __always_inline int handle_kfree(void *ctx, struct sk_buff *skb,
					void *location, __u32 reason)
{
	struct nfd_cpu *st = cpu_slot();
	struct nfd_key *key;
	struct nfd_rec *rec;
	struct net_device *dev;
	bool marked, in_traversal;
	__u64 id6;

	if (!st)
		return 0;
	rec = &st->rec;
	rec->rejected = 0;
	id6 = targ_icmp6_out && reason == targ_nf_drop ? skb_ip6_quote_id(skb) : 0;
	for (int i = 0; i < REJECT_SLOTS; i++) {
		if (st->reject_skb[i] != (__u64)skb &&
		    (!id6 || st->reject_skb[i] != id6))
			continue;
		/* other reasons (port unreachable, NO_SOCKET) only clear it */
		if (reason == targ_nf_drop &&
		    bpf_ktime_get_ns() - st->reject_ts[i] < REJECT_WINDOW_NS)
			rec->rejected = 1;
		st->reject_skb[i] = 0;
	}
	if (reason != targ_nf_drop &&
	    !(reason == targ_not_specified && targ_queue_end &&
	      IN_TEXT((__u64)location, targ_queue_start, targ_queue_end)))
		return 0;

	marked = st->mark_skb == (__u64)skb;
	if (marked)
		st->mark_skb = 0;

	/* where the packet is intact: filter and parse here */
	dev = skb_any_dev(skb);
	rec->ifindex = dev ? BPF_CORE_READ(dev, ifindex) : BPF_CORE_READ(skb, skb_iif);
	rec->dev_ifindex = BPF_CORE_READ(skb, dev, ifindex);
	rec->dst_ifindex = skb_dst_ifindex(skb);
	rec->mark = BPF_CORE_READ(skb, mark);
	rec->ct = skb_ct(skb, &rec->ct_done);
	key = marked ? &st->mark_key : &st->key;
	if (!marked) {
		__builtin_memset(key, 0, sizeof(*key));
		key->netns = skb_netns_inum(skb);
	}
	rec->location = (__u64)location;
	key->location = rec->location;

	if (!marked)
		find_path(ctx, st, key, skb, rec);
	in_traversal = !marked && st->in_traversal;

	if ((targ_ifindex && rec->ifindex != targ_ifindex) ||
	    (targ_netns && key->netns != targ_netns))
		goto filtered;
	__builtin_memset(&rec->pkt, 0, sizeof(rec->pkt));
	/* counts need only the ports; events decode the BTH too */
	rec->verdict = skb_parse(skb, SKB_PROBE, !targ_events, targ_roce_port, &rec->pkt);
	rec->tcp_ports = rec->verdict == PKT_IP && rec->pkt.ip_proto == AX_IPPROTO_TCP &&
			 skb_tcp_ports(skb, &rec->pkt);
	if (!scope_match(&rec->pkt))
		goto filtered;
	if (targ_snaplen)
		skb_capture(skb, &st->cap, targ_snaplen);
	rec->stack_id = targ_stack ? bpf_get_stackid(ctx, &stacks, 0) : -1;
	if (targ_events && dev)
		bpf_probe_read_kernel_str(rec->ifname, sizeof(rec->ifname), dev->name);
	else
		rec->ifname[0] = 0;

	if (in_traversal) {
		/* the fexit of the function that freed it completes the key */
		st->pend_skb = (__u64)skb;
		st->pend_matched = 1;
		return 0;
	}
	if (!marked) {
		key->source = NFD_SRC_STACK;
		key->hook = NFD_HOOK_UNKNOWN;
		key->pf = rec->pkt.family;
		if (!key->hook_ret)
			counter_inc(&stats, NFD_STAT_NO_HOOK);
	}
	count_drop(key, rec, &st->cap);
	return 0;

filtered:
	if (in_traversal) {
		st->pend_skb = (__u64)skb;
		st->pend_matched = 0;
	}
	return 0;
}

/*
 * NF_DROP, or NF_STOLEN after the traversal freed the skb itself with a
 * reason (NF_DROP_REASON(), 6.8+ and Debian's 6.1): then kfree_skb has
 * already left the packet in pend_skb.
 */
static __always_inline bool is_drop_verdict(unsigned int ret)
{
	ret &= NF_VERDICT_BITS;
	return ret == NF_DROP_VERDICT || ret == NF_STOLEN_VERDICT;
}

/* a drop verdict from a traversal: finish the record kfree_skb began, or
 * leave the key for the kfree_skb in nf_hook_slow that follows */
static __always_inline void handle_fexit_drop(struct nfd_cpu *st,
					      struct sk_buff *skb)
{
	counter_inc(&stats, NFD_STAT_FEXIT_DROPS);
	if (st->pend_skb == (__u64)skb) {
		st->pend_skb = 0;
		if (st->pend_matched) {
			st->key.location = st->rec.location;
			count_drop(&st->key, &st->rec, &st->cap);
		}
		return;
	}
	__builtin_memcpy(&st->mark_key, &st->key, sizeof(st->key));
	st->mark_skb = (__u64)skb;
}

SEC("fexit/nft_do_chain")
int BPF_PROG(nfdrop_nft_exit, struct nft_pktinfo___ax *pkt, void *priv,
	     unsigned int ret)
{
	struct nft_chain___ax *chain = priv;
	struct nft_table___ax *table;
	struct nft_base_chain___ax *base;
	const struct nf_hook_state *state;
	struct nfd_cpu *st;
	struct nfd_key *key;
	const char *name;

	if (!is_drop_verdict(ret))
		return 0;
	st = cpu_slot();
	if (!st)
		return 0;
	if ((ret & NF_VERDICT_BITS) == NF_STOLEN_VERDICT &&
	    st->pend_skb != (__u64)BPF_CORE_READ(pkt, skb))
		return 0;	/* queued or taken over, not dropped */
	key = &st->key;
	__builtin_memset(key, 0, sizeof(*key));
	key->source = NFD_SRC_NFT;
	state = BPF_CORE_READ(pkt, state);
	key->pf = BPF_CORE_READ(state, pf);
	key->hook = BPF_CORE_READ(state, hook);
	key->netns = BPF_CORE_READ(state, net, ns.inum);
	table = BPF_CORE_READ(chain, table);
	key->table_family = BPF_CORE_READ_BITFIELD_PROBED(table, family);
	name = BPF_CORE_READ(table, name);
	bpf_probe_read_kernel_str(key->table, sizeof(key->table), name);
	name = BPF_CORE_READ(chain, name);
	bpf_probe_read_kernel_str(key->chain, sizeof(key->chain), name);
	/* nft_do_chain only runs base chains; the policy lives around them */
	base = (void *)chain - bpf_core_field_offset(struct nft_base_chain___ax, chain);
	key->policy = BPF_CORE_READ(base, policy);
	handle_fexit_drop(st, BPF_CORE_READ(pkt, skb));
	return 0;
}

static __always_inline int handle_xt_exit(__u64 *ctx, __u8 source)
{
	/* fixed ctx offsets first: the verifier refuses computed ones */
	__u64 a0 = ctx[0], a1 = ctx[1], a2 = ctx[2];
	unsigned int ret = ctx[3];
	struct xt_table___ax *table = (void *)(targ_xt_priv_first ? a0 : a2);
	struct sk_buff *skb = (void *)(targ_xt_priv_first ? a1 : a0);
	const struct nf_hook_state *state = (void *)(targ_xt_priv_first ? a2 : a1);
	struct nfd_cpu *st;
	struct nfd_key *key;

	if (!is_drop_verdict(ret))
		return 0;
	st = cpu_slot();
	if (!st)
		return 0;
	if ((ret & NF_VERDICT_BITS) == NF_STOLEN_VERDICT && st->pend_skb != (__u64)skb)
		return 0;
	key = &st->key;
	__builtin_memset(key, 0, sizeof(*key));
	key->source = source;
	key->pf = BPF_CORE_READ(state, pf);
	key->hook = BPF_CORE_READ(state, hook);
	key->netns = BPF_CORE_READ(state, net, ns.inum);
	key->table_family = key->pf;
	BPF_CORE_READ_STR_INTO(&key->table, table, name);
	handle_fexit_drop(st, skb);
	return 0;
}

SEC("fexit/ipt_do_table")
int nfdrop_ipt_exit(__u64 *ctx)
{
	return handle_xt_exit(ctx, NFD_SRC_IPT);
}

SEC("fexit/ip6t_do_table")
int nfdrop_ip6t_exit(__u64 *ctx)
{
	return handle_xt_exit(ctx, NFD_SRC_IP6T);
}

/* REJECT: the reply goes out before the verdict; remember for which skb
 * (its address, or the ip6_quote_id of an IPv6 one) */
static __always_inline void mark_reject_id(__u64 id)
{
	struct nfd_cpu *st = cpu_slot();
	__u32 i;

	if (!st)
		return;
	i = st->reject_next++ & (REJECT_SLOTS - 1);
	st->reject_skb[i] = id;
	st->reject_ts[i] = bpf_ktime_get_ns();
}

static __always_inline void mark_reject(const struct sk_buff *skb)
{
	mark_reject_id((__u64)skb);
}

/* every REJECT, before rate limiting (nf_reject_ipv4/ipv6, fentry kernels) */
SEC("fentry/nf_send_unreach")
int BPF_PROG(nfdrop_unreach, struct sk_buff *skb_in, int code, int hook)
{
	mark_reject(skb_in);
	return 0;
}

SEC("fentry/nf_send_unreach6")
int BPF_PROG(nfdrop_unreach6, struct net *net, struct sk_buff *skb_in,
	     unsigned char code, unsigned int hooknum)
{
	mark_reject(skb_in);
	return 0;
}

SEC("fentry/nf_send_reset")
int BPF_PROG(nfdrop_reset, struct net *net, struct sock *sk,
	     struct sk_buff *oldskb, int hook)
{
	mark_reject(oldskb);
	return 0;
}

SEC("fentry/nf_send_reset6")
int BPF_PROG(nfdrop_reset6, struct net *net, struct sock *sk,
	     struct sk_buff *oldskb, int hook)
{
	mark_reject(oldskb);
	return 0;
}

/* ICMP errors that passed the rate limit (6.13+ tracepoint): where fentry is
 * refused, a REJECT is certain for the packets answered */
SEC("tp_btf/icmp_send")
int BPF_PROG(nfdrop_icmp_send, const struct sk_buff *skb, int type, int code)
{
	if (type == ICMP_DEST_UNREACH_TYPE)
		mark_reject(skb);
	return 0;
}

/*
 * ICMPv6 errors leaving (no tracepoint names the packet icmp6_send answers,
 * as icmp_send does for IPv4): nf_send_unreach6 sends the error through
 * dev_queue_xmit before its verdict frees the packet, on this CPU. Only
 * errors that passed the rate limit get here, as for IPv4's tracepoint.
 */
SEC("tp_btf/net_dev_queue")
int BPF_PROG(nfdrop_icmp6_out, struct sk_buff *skb)
{
	unsigned char *head;
	__u8 hdr[41];
	__u16 nh;

	if (BPF_CORE_READ(skb, protocol) != bpf_htons(AX_ETH_P_IPV6))
		return 0;
	head = BPF_CORE_READ(skb, head);
	nh = BPF_CORE_READ(skb, network_header);
	/* the kernel's own error: no extension headers before the ICMPv6 one */
	if (bpf_probe_read_kernel(hdr, sizeof(hdr), head + nh) ||
	    hdr[0] >> 4 != 6 || hdr[6] != IPPROTO_ICMPV6_NR ||
	    hdr[40] != ICMPV6_DEST_UNREACH_TYPE)
		return 0;
	/* after the outer header (40) and the ICMPv6 header (8): the quote */
	mark_reject_id(ip6_quote_id(head + nh + 48));
	return 0;
}

/* 5.17+ passes the reason (commit c504e5c2f964); 6.18 adds rx_sk, unused */
SEC("tp_btf/kfree_skb")
int BPF_PROG(nfdrop_kfree_btf, struct sk_buff *skb, void *location,
	     enum skb_drop_reason reason)
{
	return handle_kfree(ctx, skb, location, reason);
}

SEC("raw_tp/kfree_skb")
int BPF_PROG(nfdrop_kfree_raw, struct sk_buff *skb, void *location,
	     enum skb_drop_reason reason)
{
	return handle_kfree(ctx, skb, location, reason);
}

/*
 * Before 5.17 kfree_skb has no reason (reading a third argument is refused)
 * and nf_tables returns NF_DROP for nf_hook_slow (or nf_hook_slow_list) to
 * free the packet: a free there is a netfilter drop, by its location.
 */
static __always_inline __u32 reason_of_location(void *location)
{
	__u64 loc = (__u64)location;

	return IN_TEXT(loc, targ_slow_start, targ_slow_end) ||
	       IN_TEXT(loc, targ_list_start, targ_list_end) ?
	       targ_nf_drop : ~targ_nf_drop;
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(nfdrop_kfree_btf_nr, struct sk_buff *skb, void *location)
{
	return handle_kfree(ctx, skb, location, reason_of_location(location));
}

SEC("raw_tp/kfree_skb")
int BPF_PROG(nfdrop_kfree_raw_nr, struct sk_buff *skb, void *location)
{
	return handle_kfree(ctx, skb, location, reason_of_location(location));
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
