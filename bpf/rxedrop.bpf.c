// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rxedrop: which RoCE packets did the kernel drop, where, and why. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "lib/skb.bpf.h"
#include "lib/maps.bpf.h"
#include "lib/probe.bpf.h"
#include "rxedrop.h"

#define EVENTS_WAKEUP_BYTES (64 * sizeof(struct drop_event))

const volatile __u8 targ_scope = SCOPE_ROCE;
const volatile __u16 targ_roce_port = ROCE_V2_PORT;
const volatile __u32 targ_ifindex = 0;
const volatile __u32 targ_netns = 0;	/* netns inode, 0: any */
const volatile __u16 targ_port = 0;	/* either UDP port */
const volatile bool targ_stack = false;
const volatile __u32 targ_consumed = ~0U; /* SKB_CONSUMED where it exists */
/*
 * rdma_rxe (6.1) frees every packet its QPs took in with kfree_skb(), not
 * consume_skb(): rxe_resp.c cleanup() (inlined into rxe_responder) for
 * each request it executed, rxe_comp.c free_pkt() (in rxe_completer) for
 * each ACK or response it completed. rdma_rxe counted them delivered
 * (rcvd_pkts): not drops. What rxe made of them (duplicates, sequence
 * errors) is rxeqp's to show; the packets still queued when a QP goes to
 * ERR (rxe_drain_*_pkts, inlined into the same two) are the QP's own
 * failure, its state change. rxe's receive-side drops (bad ICRC, no such
 * QP: rxe_rcv, rxe_udp_encap_recv) stay drops. The two functions' text,
 * where rdma_rxe was loaded when the tool started (else empty ranges),
 * and the reason they free with.
 */
const volatile __u32 targ_not_specified = ~0U;
const volatile __u64 targ_rxe_resp_start = 0, targ_rxe_resp_end = 0;
const volatile __u64 targ_rxe_comp_start = 0, targ_rxe_comp_end = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct drop_key);
	__type(value, __u64);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DROP_SLOTS);
	__type(key, __u32);
	__type(value, struct drop_slot);
} drop_slots SEC(".maps");

AX_PERCPU_STATS(stats, STAT_NR);
AX_RINGBUF(events, 1 << 20);
AX_STACK_MAP(stacks, 1024);

/* the fields scope_match() reads, zeroed before the parse (which writes
 * only what it finds): counts mode clears just these, since clearing all
 * of pkt_info cost a tenth of its time */
static __always_inline void scope_fields_clear(struct pkt_info *pi)
{
	pi->ip_proto = pi->sport = pi->dport = 0;
}

static __always_inline bool scope_match(int verdict, const struct pkt_info *pi)
{
	bool udp = pi->ip_proto == AX_IPPROTO_UDP && (pi->sport || pi->dport);

	/* a truncated BTH on the RoCE port is still RoCE traffic that died */
	if (targ_scope == SCOPE_ROCE && !(udp && pi->dport == targ_roce_port))
		return false;
	if (targ_scope == SCOPE_UDP && !udp)
		return false;
	if (targ_port && pi->sport != targ_port && pi->dport != targ_port)
		return false;
	return true;
}

/* one drop of a site and reason: its slot on this CPU, else the map */
static __always_inline void count_drop(const struct drop_key *key)
{
	static const __u64 zero;
	__u32 idx = drop_slot_of(key->location, key->reason);
	struct drop_slot *sl = bpf_map_lookup_elem(&drop_slots, &idx);
	__u64 *cnt;

	if (sl && !sl->count) {
		sl->key = *key;
		sl->count = 1;
		return;
	}
	if (sl && sl->key.location == key->location && sl->key.reason == key->reason) {
		sl->count++;
		return;
	}
	cnt = map_lookup_or_init(&drops, key, &zero);
	if (cnt)
		*cnt += 1;
	else
		counter_inc(&stats, STAT_COUNTS_LOST);
}

static __always_inline int handle_drop(void *ctx, struct sk_buff *skb,
				       enum skb_access acc, bool with_events,
				       void *location, __u32 reason)
{
	struct drop_key key = {};
	struct drop_event *e;
	struct pkt_info info __attribute__((aligned(8))), *pi = &info;
	__u32 ifindex = 0;
	__u64 avail;
	int verdict;

	if (reason == targ_consumed)
		return 0;
	if (reason == targ_not_specified &&
	    (IN_TEXT((__u64)location, targ_rxe_resp_start, targ_rxe_resp_end) ||
	     IN_TEXT((__u64)location, targ_rxe_comp_start, targ_rxe_comp_end))) {
		counter_inc(&stats, STAT_RXE_CONSUMED);
		return 0;
	}
	/* events copy all of it */
	if (with_events)
		pkt_info_clear(pi);
	else
		scope_fields_clear(pi);
	if (targ_ifindex) {
		ifindex = skb_ifindex(skb, acc);
		if (ifindex != targ_ifindex)
			return 0;
	}
	/* an index is only unique within a namespace (each new one numbers
	 * its devices from 1 again): -i and -N filter on the namespace too */
	if (targ_netns && skb_netns_inum(skb) != targ_netns)
		return 0;
	/* counts need only the port; events decode the BTH too */
	verdict = skb_parse(skb, acc, !with_events, targ_roce_port, pi);
	if (!scope_match(verdict, pi))
		return 0;

	key.location = (__u64)location;
	key.reason = reason;
	count_drop(&key);

	if (!with_events)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		counter_inc(&stats, STAT_EVENTS_LOST);
		return 0;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->location = key.location;
	e->reason = reason;
	e->ifindex = ifindex ? ifindex : skb_ifindex(skb, acc);
	e->verdict = verdict;
	e->stack_id = targ_stack ? bpf_get_stackid(ctx, &stacks, 0) : -1;
	BPF_CORE_READ_STR_INTO(&e->ifname, skb, dev, name);
	e->pkt = *pi;
	/* wake the reader once per batch, not per drop: when this event
	 * takes the backlog across the batch size. Not on every event above
	 * it: a reader that fell behind would then be woken per drop. It
	 * also polls every 100 ms, so a lone event (or a batch whose
	 * crossing two CPUs both missed) still shows promptly. */
	avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(e, avail >= EVENTS_WAKEUP_BYTES &&
			   avail < EVENTS_WAKEUP_BYTES + sizeof(*e) + 8 ?
			   BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}

/*
 * One program of ten is loaded (rxedrop_load.c): the mode's, the cheapest
 * the kernel has. Header bytes as plain loads (SKB_BTF_MEM), by probe read
 * (SKB_BTF), or everything by probe read without BTF (raw_tp); counts mode
 * a program of its own, compiled without the events path (clang then keeps
 * its values in registers: 0.74 -> 0.71 of the one-liner's time). 5.17+
 * passes the reason (commit c504e5c2f964); 6.18 adds rx_sk, unused.
 */
#define RXEDROP_PROG(sec, name, acc, with_events)				\
SEC(sec)								\
int BPF_PROG(name, struct sk_buff *skb, void *location,		\
	     enum skb_drop_reason reason)				\
{									\
	return handle_drop(ctx, skb, acc, with_events, location, reason); \
}

RXEDROP_PROG("tp_btf/kfree_skb", rxedrop_tp_btf_mem, SKB_BTF_MEM, false)
RXEDROP_PROG("tp_btf/kfree_skb", rxedrop_tp_btf, SKB_BTF, false)
RXEDROP_PROG("raw_tp/kfree_skb", rxedrop_raw_tp, SKB_PROBE, false)
RXEDROP_PROG("tp_btf/kfree_skb", rxedrop_tp_btf_mem_ev, SKB_BTF_MEM, true)
RXEDROP_PROG("tp_btf/kfree_skb", rxedrop_tp_btf_ev, SKB_BTF, true)
RXEDROP_PROG("raw_tp/kfree_skb", rxedrop_raw_tp_ev, SKB_PROBE, true)

/*
 * Before 5.17 kfree_skb has no reason argument: reading a third one is an
 * invalid context access for tp_btf (the verifier says EACCES) and too
 * large a context for raw_tp (EINVAL at attach). These four read the skb
 * and the location only and count every drop under reason 0, which the
 * loader then also takes as rdma_rxe's own frees (targ_not_specified).
 */
#define RXEDROP_PROG_NOREASON(sec, name, acc, with_events)		\
SEC(sec)								\
int BPF_PROG(name, struct sk_buff *skb, void *location)			\
{									\
	return handle_drop(ctx, skb, acc, with_events, location, 0);	\
}

RXEDROP_PROG_NOREASON("tp_btf/kfree_skb", rxedrop_tp_btf_nr, SKB_BTF, false)
RXEDROP_PROG_NOREASON("raw_tp/kfree_skb", rxedrop_raw_tp_nr, SKB_PROBE, false)
RXEDROP_PROG_NOREASON("tp_btf/kfree_skb", rxedrop_tp_btf_nr_ev, SKB_BTF, true)
RXEDROP_PROG_NOREASON("raw_tp/kfree_skb", rxedrop_raw_tp_nr_ev, SKB_PROBE, true)

char LICENSE[] SEC("license") = "Dual BSD/GPL";
