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
/* -w: bytes of each dropped packet into its event (drop_event_cap), 0 none */
const volatile __u32 targ_snaplen = 0;
const volatile __u32 targ_consumed = ~0U; /* SKB_CONSUMED where it exists */
/*
 * rdma_rxe (6.1) frees every packet its QPs took in with kfree_skb(), not
 * consume_skb(): rxe_resp.c cleanup() (inlined into rxe_responder, named
 * rxe_receiver from 6.4 on) for each request it executed, rxe_comp.c
 * free_pkt() (in rxe_completer) for each ACK or response it completed.
 * rdma_rxe counted them delivered (rcvd_pkts): not drops. What rxe made of them (duplicates, sequence
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
/* rxe_rcv's text, where its checks are hooked (rxe_checks below) */
const volatile __u64 targ_rxe_rcv_start = 0, targ_rxe_rcv_end = 0;

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

/*
 * rdma_rxe's receive checks, one packet at a time per CPU: rxe_rcv runs
 * them in order in softirq context and frees a packet that fails one
 * before it returns, so the checks' exits come before the kfree_skb that
 * follows a failure, and the next packet on this CPU starts afresh.
 */
enum rxe_stage {
	RXE_ST_IDLE = 0,
	RXE_ST_ENTERED,		/* in rxe_rcv, no check function returned yet */
	RXE_ST_NO_QP,		/* the QP lookup found nothing */
	RXE_ST_QP_FOUND,	/* it found the QP */
	RXE_ST_KEYS_BAD,	/* check_keys failed */
	RXE_ST_KEYS_OK,
	RXE_ST_ICRC_BAD,	/* rxe_icrc_check failed */
	RXE_ST_PASSED,		/* every check passed */
};

struct rxe_rcv_state {
	__u64 skb;
	__u32 stage;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rxe_rcv_state);
} rxe_state SEC(".maps");

static __always_inline struct rxe_rcv_state *rxe_state_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&rxe_state, &zero);
}

static __always_inline int rxe_rcv_enter(void *skb)
{
	struct rxe_rcv_state *st = rxe_state_get();

	if (st) {
		st->skb = (__u64)skb;
		st->stage = RXE_ST_ENTERED;
	}
	return 0;
}

/* a check function returned: the stage moves on if it was the one due
 * (rxe_pool_get_index serves other lookups too: only the first in
 * rxe_rcv, hdr_check's, counts) */
static __always_inline int rxe_check_exit(__u32 from, __u32 from2, bool ok,
					  __u32 pass, __u32 fail)
{
	struct rxe_rcv_state *st = rxe_state_get();

	if (st && (st->stage == from || st->stage == from2))
		st->stage = ok ? pass : fail;
	return 0;
}

FENTRY_OR_KPROBE(rxedrop_rxe_rcv, rxe_rcv, rxe_rcv_enter(skb), void *skb)
FEXIT_OR_KRETPROBE(rxedrop_rxe_qp_lookup, rxe_pool_get_index,
		   rxe_check_exit(RXE_ST_ENTERED, RXE_ST_ENTERED, ret,
				  RXE_ST_QP_FOUND, RXE_ST_NO_QP),
		   void *ret, void *pool, __u32 index)
FEXIT_OR_KRETPROBE(rxedrop_rxe_keys, check_keys,
		   rxe_check_exit(RXE_ST_QP_FOUND, RXE_ST_QP_FOUND, !ret,
				  RXE_ST_KEYS_OK, RXE_ST_KEYS_BAD),
		   int ret, void *rxe, void *pkt, __u32 qpn, void *qp)
/* a multicast packet goes from the header checks to the ICRC directly */
FEXIT_OR_KRETPROBE(rxedrop_rxe_icrc, rxe_icrc_check,
		   rxe_check_exit(RXE_ST_KEYS_OK, RXE_ST_ENTERED, !ret,
				  RXE_ST_PASSED, RXE_ST_ICRC_BAD),
		   int ret, void *skb, void *pkt)

/* which check a drop inside rxe_rcv failed: the ones that are functions
 * seen failing, the inlined ones by where the sequence stopped */
static __always_inline __u32 rxe_check_of(struct sk_buff *skb, __u64 location)
{
	struct rxe_rcv_state *st;

	if (!IN_TEXT(location, targ_rxe_rcv_start, targ_rxe_rcv_end))
		return RXE_CHECK_NONE;
	st = rxe_state_get();
	if (!st || st->skb != (__u64)skb)
		return RXE_CHECK_UNKNOWN;
	switch (st->stage) {
	case RXE_ST_ENTERED:	return RXE_CHECK_HEADER;
	case RXE_ST_NO_QP:	return RXE_CHECK_NO_QP;
	case RXE_ST_QP_FOUND:	return RXE_CHECK_QP;
	case RXE_ST_KEYS_BAD:	return RXE_CHECK_KEYS;
	case RXE_ST_ICRC_BAD:	return RXE_CHECK_ICRC;
	default:		return RXE_CHECK_UNKNOWN;
	}
}
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
	if (sl && sl->key.location == key->location && sl->key.reason == key->reason &&
	    sl->key.check == key->check) {
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
	key.check = rxe_check_of(skb, key.location);
	count_drop(&key);

	if (!with_events)
		return 0;
	if (targ_snaplen)
		e = bpf_ringbuf_reserve(&events, sizeof(struct drop_event_cap), 0);
	else
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
	e->check = key.check;
	e->stack_id = targ_stack ? bpf_get_stackid(ctx, &stacks, 0) : -1;
	BPF_CORE_READ_STR_INTO(&e->ifname, skb, dev, name);
	e->pkt = *pi;
	if (targ_snaplen)
		skb_capture(skb, &((struct drop_event_cap *)e)->cap, targ_snaplen);
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
