// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * roceinject: a gray failure made on purpose. One tc program (tcx, or a
 * clsact filter) selects RoCE v2 packets by flow, QP, opcode class, PSN,
 * every Nth, a seeded probability and a count limit, and drops, CE-marks,
 * corrupts the ICRC of, or delays what it selected, counting each fault
 * per queue pair. Everything else passes untouched.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "lib/parse.bpf.h"
#include "lib/maps.bpf.h"
#include "roceinject.h"

#define AX_TC_ACT_UNSPEC	(-1)	/* also TCX_NEXT: the next program decides */
#define AX_TC_ACT_SHOT		2
#define AX_CSUM_MANGLED_0	(1ULL << 5)	/* BPF_F_MARK_MANGLED_0 */
#define AX_TSTAMP_MONO		1	/* BPF_SKB_TSTAMP_DELIVERY_MONO */

const volatile __u32 targ_faults = 0;		/* bits of enum inject_fault */
const volatile __u64 targ_delay_ns = 0;
const volatile __u32 targ_new_qpn = 0;
const volatile __u16 targ_new_pkey = 0;
const volatile __u16 targ_trunc_len = 0;	/* --truncate: UDP payload bytes kept */
/* selectors; each one off at its default (-Q and the port: hot, below) */
const volatile __u16 targ_sport = 0;
const volatile __u8 targ_family = 0;		/* of the addresses below */
const volatile bool targ_saddr_set = false, targ_daddr_set = false;
const volatile __u8 targ_saddr[16] = {}, targ_daddr[16] = {};
const volatile __u32 targ_classes = 0;		/* bits of enum inject_class */
const volatile __s16 targ_opcode = -1;
const volatile bool targ_psn_set = false;
const volatile __u32 targ_psn_lo = 0, targ_psn_hi = 0;
const volatile __u64 targ_every = 1;
const volatile __u64 targ_prob = 1ULL << 32;	/* P * 2^32 */
const volatile __u64 targ_seed = 0;
const volatile __u64 targ_count = 0;		/* 0: no limit */
const volatile bool targ_events = false;

/* packets injected, against targ_count (user space reads it too) */
__u64 injected_total = 0;

/*
 * The hot map (struct inject_cpu_line, per CPU): the port and -Q that the
 * entry compares every packet with, and the count of RoCE packets seen
 * (STAT_ROCE): every RoCE packet on the interface counts, selected or
 * not, and a lookup in the stats map there cost as much as the rest of a
 * refused packet (bench/roceinject.sh: 2.2 times an empty tc program with
 * it, 1.6 without). A program runs on one CPU to its end (BH off on tc's
 * paths): a CPU's own line needs no atomic.
 *
 * Not .rodata and .bss: on this project's VM host, perf put most of a
 * refused packet's time on its first load from each of them (even a load
 * of a value the verifier had folded away); each is a page of vmalloc
 * memory of its own. A per-CPU array's value is per-CPU memory, which the
 * kernel's own per-packet state lives in too; one line of it is all a
 * refused packet touches (its lookup is inlined from 6.7 on).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inject_cpu_line);
} hot SEC(".maps");

/* this CPU's line of the hot map */
static __always_inline struct inject_cpu_line *hot_line(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&hot, &zero);
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct inject_key);
	__type(value, struct inject_qp);
} qps SEC(".maps");

AX_PERCPU_STATS(stats, STAT_NR);
AX_RINGBUF(events, 1 << 20);

/* --duplicate: set while this CPU sends a copy; the copy passes the hook
 * again inside bpf_clone_redirect (egress: dev_queue_xmit runs the egress
 * hook synchronously) and must leave untouched and uncounted */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} dup_busy SEC(".maps");

static __always_inline __u32 inject_class_of(const struct pkt_info *pi)
{
	__u8 op = ROCE_OP(pi->opcode), kind;

	if (pi->opcode == ROCE_OPCODE_CNP)
		return 1U << CLASS_CNP;
	if (roce_op_is_request(pi->opcode))
		return 1U << CLASS_REQUEST;
	if (op >= ROCE_READ_RESP_FIRST && op <= ROCE_READ_RESP_ONLY)
		return 1U << CLASS_READ_RESP;
	if (op == ROCE_ACKNOWLEDGE || op == ROCE_ATOMIC_ACK) {
		kind = ROCE_AETH_KIND(pi->syndrome);
		return kind == ROCE_AETH_ACK ? 1U << CLASS_ACK : 1U << CLASS_NAK;
	}
	return 0;
}

static __always_inline bool inject_addr_eq(const volatile __u8 *want,
					   const __u8 *have, __u8 family)
{
	int n = family == 4 ? 4 : 16;

	for (int i = 0; i < 16; i++)
		if (i < n && want[i] != have[i])
			return false;
	return true;
}

/* the selectors that need no state: flow, QP, opcode, PSN */
static __always_inline bool inject_static_match(const struct inject_cpu_line *h,
						const struct pkt_info *pi)
{
	if (h->qpn_set && pi->dqpn != h->qpn)
		return false;
	if (targ_sport && pi->sport != targ_sport)
		return false;
	if (targ_family && pi->family != targ_family)
		return false;
	if (targ_saddr_set && !inject_addr_eq(targ_saddr, pi->saddr, pi->family))
		return false;
	if (targ_daddr_set && !inject_addr_eq(targ_daddr, pi->daddr, pi->family))
		return false;
	if (targ_opcode >= 0 && pi->opcode != targ_opcode)
		return false;
	if (targ_classes && !(inject_class_of(pi) & targ_classes))
		return false;
	/* a range that wraps at 2^24 (lo > hi) is two ranges */
	if (targ_psn_set && (targ_psn_lo <= targ_psn_hi ?
			     pi->psn < targ_psn_lo || pi->psn > targ_psn_hi :
			     pi->psn < targ_psn_lo && pi->psn > targ_psn_hi))
		return false;
	return true;
}

/* --every, --probability, --count on a packet the selectors took */
static __always_inline bool inject_pick(const struct pkt_info *pi, struct inject_qp *q)
{
	__u64 n = __sync_fetch_and_add(&q->matched, 1) + 1;

	if (targ_every > 1 && n % targ_every)
		return false;
	if (targ_prob < (1ULL << 32) &&
	    inject_hash(targ_seed, pi->dqpn, pi->psn) >> 32 >= targ_prob)
		return false;
	if (targ_count && __sync_fetch_and_add(&injected_total, 1) >= targ_count) {
		counter_inc(&stats, STAT_LIMITED);
		return false;
	}
	return true;
}

/* where the IP and UDP headers start: the parser gives where the payload
 * after the extended headers starts and the IP length; the UDP length
 * gives the IP header's (options and IPv6 extension headers included) */
static __always_inline int inject_offsets(struct __sk_buff *skb, const struct pkt_info *pi,
					  __u32 *ip_off, __u32 *udp_off)
{
	__u32 ext = pi->flags & PKT_F_DETH ? ROCE_DETH_LEN :
		    pi->flags & PKT_F_RETH ? ROCE_RETH_LEN :
		    pi->flags & PKT_F_AETH ? ROCE_AETH_LEN : 0;
	__be16 ulen;

	*udp_off = pi->payload_off - ext - ROCE_BTH_LEN - 8;
	if (bpf_skb_load_bytes(skb, *udp_off + 4, &ulen, 2))
		return -1;
	*ip_off = *udp_off - (pi->l3_len - bpf_ntohs(ulen));
	return *ip_off > PARSE_MAX_OFF ? -1 : 0;
}

/* ECN CE: IPv4's checksum follows the TOS byte; IPv6 has none */
static __always_inline bool inject_ce(struct __sk_buff *skb, const struct pkt_info *pi,
				      __u32 ip_off)
{
	__be16 old, new;

	if (bpf_skb_load_bytes(skb, ip_off, &old, 2))
		return false;
	new = old;
	if (pi->family == 4)
		((__u8 *)&new)[1] |= AX_ECN_CE;
	else
		((__u8 *)&new)[1] |= AX_ECN_CE << 4;
	if (new == old)
		return true;
	if (bpf_skb_store_bytes(skb, ip_off, &new, 2, 0))
		return false;
	if (pi->family == 4 &&
	    bpf_l3_csum_replace(skb, ip_off + 10, old, new, 2))
		return false;
	return true;
}

/*
 * One 32-bit word of the packet rewritten: the bits of keep stay, val goes
 * into the rest, then the bits of flip are inverted (network order all).
 * A UDP checksum in use is kept right, so the receiver's own check is what
 * fails, not UDP's. The ICRC is not recomputed: corrupting it is flipping
 * it whole; a BTH word rewritten (QPN, P_Key) fails the header and QP
 * checks, which rdma_rxe runs before the ICRC (hdr_check), so the packet
 * fails the check that was meant.
 */
static __always_inline bool inject_word(struct __sk_buff *skb, __u32 off, __u32 udp_off,
					__be32 keep, __be32 val, __be32 flip)
{
	__u32 old, new;
	__u16 csum;

	if (bpf_skb_load_bytes(skb, off, &old, 4) ||
	    bpf_skb_load_bytes(skb, udp_off + 6, &csum, 2))
		return false;
	new = ((old & keep) | val) ^ flip;
	if (bpf_skb_store_bytes(skb, off, &new, 4, csum ? 0 : BPF_F_RECOMPUTE_CSUM))
		return false;
	if (csum && bpf_l4_csum_replace(skb, udp_off + 6, old, new,
					AX_CSUM_MANGLED_0 | 4))
		return false;
	return true;
}

/*
 * The UDP payload (the BTH on) cut to targ_trunc_len bytes, IPv4 only: the
 * IP total length (its header checksum updated) and the UDP length follow,
 * so the IP and UDP layers deliver it, and the UDP checksum is set to 0
 * (none), which IPv4 allows and IPv6 does not. A packet no longer than
 * that is left alone.
 */
static __always_inline bool inject_truncate(struct __sk_buff *skb, const struct pkt_info *pi,
					    __u32 ip_off, __u32 udp_off)
{
	__u32 keep = udp_off + 8 + targ_trunc_len;
	__u16 old_tot, tot, ulen, zero = 0;

	if (pi->family != 4 || skb->len <= keep)
		return false;
	if (bpf_skb_load_bytes(skb, ip_off + 2, &old_tot, 2))
		return false;
	tot = bpf_htons(keep - ip_off);
	ulen = bpf_htons(8 + targ_trunc_len);
	if (bpf_skb_change_tail(skb, keep, 0))
		return false;
	if (bpf_skb_store_bytes(skb, ip_off + 2, &tot, 2, 0) ||
	    bpf_l3_csum_replace(skb, ip_off + 10, old_tot, tot, 2) ||
	    bpf_skb_store_bytes(skb, udp_off + 4, &ulen, 2, 0) ||
	    bpf_skb_store_bytes(skb, udp_off + 6, &zero, 2, 0))
		return false;
	return true;
}

/* a copy of the packet as it now is, out of the same device first */
static __always_inline bool inject_dup(struct __sk_buff *skb)
{
	__u32 zero = 0, *busy = bpf_map_lookup_elem(&dup_busy, &zero);
	long err;

	if (!busy)
		return false;
	*busy = 1;
	err = bpf_clone_redirect(skb, skb->ifindex, 0);
	*busy = 0;
	return !err;
}

/* (--duplicate from the hot line h: a refused packet reads no .rodata) */
static __always_inline bool dup_in_flight(const struct inject_cpu_line *h)
{
	__u32 zero = 0, *busy;

	if (!h->dup)
		return false;
	busy = bpf_map_lookup_elem(&dup_busy, &zero);
	return busy && *busy;
}

/* the packet leaves no sooner than now + delay (the fq qdisc holds it) */
static __always_inline bool inject_delay(struct __sk_buff *skb)
{
	__u64 t = bpf_ktime_get_ns() + targ_delay_ns;

	if (skb->tstamp > t)
		t = skb->tstamp;
	return !bpf_skb_set_tstamp(skb, t, AX_TSTAMP_MONO);
}

static __always_inline void inject_event(struct __sk_buff *skb,
					 const struct pkt_info *pi, __u32 done)
{
	struct inject_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		counter_inc(&stats, STAT_EVENTS_LOST);
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->faults = done;
	e->ifindex = skb->ifindex;
	e->pkt = *pi;
	bpf_ringbuf_submit(e, 0);
}

/* the faults asked for on a selected packet; the ones done, as bits */
static __always_inline __u32 inject_apply(struct __sk_buff *skb, const struct pkt_info *pi)
{
	__u32 ip_off, udp_off, done = 0;

	if (targ_faults & (1U << FAULT_DROP))
		return 1U << FAULT_DROP;
	if (inject_offsets(skb, pi, &ip_off, &udp_off))
		return 0;
	if ((targ_faults & (1U << FAULT_CE)) && inject_ce(skb, pi, ip_off))
		done |= 1U << FAULT_CE;
	/* the ICRC: the last 4 bytes of the IP packet, inverted */
	if ((targ_faults & (1U << FAULT_ICRC)) &&
	    inject_word(skb, ip_off + pi->l3_len - ROCE_ICRC_LEN, udp_off, ~0U, 0, ~0U))
		done |= 1U << FAULT_ICRC;
	if ((targ_faults & (1U << FAULT_DELAY)) && inject_delay(skb))
		done |= 1U << FAULT_DELAY;
	/* the BTH: word 0 opcode, flags, P_Key; word 1 reserved byte, QPN */
	if ((targ_faults & (1U << FAULT_QPN)) &&
	    inject_word(skb, udp_off + 8 + 4, udp_off, bpf_htonl(0xFF000000),
			bpf_htonl(targ_new_qpn & ROCE_QPN_MASK), 0))
		done |= 1U << FAULT_QPN;
	if ((targ_faults & (1U << FAULT_PKEY)) &&
	    inject_word(skb, udp_off + 8, udp_off, bpf_htonl(0xFFFF0000),
			bpf_htonl(targ_new_pkey), 0))
		done |= 1U << FAULT_PKEY;
	/* last: the rewrites above still had the whole packet */
	if ((targ_faults & (1U << FAULT_TRUNC)) && inject_truncate(skb, pi, ip_off, udp_off))
		done |= 1U << FAULT_TRUNC;
	/* after every rewrite: the copy is the packet that leaves */
	if ((targ_faults & (1U << FAULT_DUP)) && inject_dup(skb))
		done |= 1U << FAULT_DUP;
	return done;
}

static __always_inline void inject_count(struct inject_qp *q, __u32 done)
{
	__sync_fetch_and_add(&q->injected, 1);
	for (int f = 0; f < FAULT_NR; f++)
		if (done & (1U << f))
			__sync_fetch_and_add(&q->faults[f], 1);
	counter_inc(&stats, STAT_INJECTED);
}

/* a RoCE packet seen (STAT_ROCE), in this CPU's line l */
static __always_inline void inject_roce_seen(struct inject_cpu_line *l)
{
	l->roce_seen++;
}

/* the selected packet's QP row, made on its first packet; its key and
 * zero row built here, on the selected path only (not on every packet's) */
static __always_inline struct inject_qp *inject_qp_of(const struct pkt_info *pi)
{
	struct inject_key k = {};
	struct inject_qp zero = {};

	k.family = pi->family;
	k.sport = pi->sport;
	k.dqpn = pi->dqpn;
	__builtin_memcpy(k.saddr, pi->saddr, 16);
	__builtin_memcpy(k.daddr, pi->daddr, 16);
	return map_lookup_or_init(&qps, &k, &zero);
}

/*
 * A RoCE packet the fast checks could not refuse: the full parse, the
 * selectors, the faults. A subprogram of its own (not inlined), so that
 * the entry's paths for the packets it refuses stay a few cache lines of
 * code, not spread through this one's (bench/roceinject.sh). h is this
 * CPU's hot line.
 */
static __noinline int inject_full(struct __sk_buff *skb, struct inject_cpu_line *h)
{
	__u32 linear = skb->data_end - skb->data;
	struct pkt_cursor c = { .kind = SRC_PACKET };
	struct pkt_info pi PKT_HDR;
	struct inject_qp *q;
	__u32 done;

	/* headers in a paged fragment: make them readable (no byte moves) */
	if (linear < 128 && skb->len > linear)
		bpf_skb_pull_data(skb, skb->len < 128 ? skb->len : 128);
	asm volatile("" : "+r"(skb));
	c.data = (void *)(long)skb->data;
	c.data_end = (void *)(long)skb->data_end;

	if (!h)
		return AX_TC_ACT_UNSPEC;
	pkt_info_clear(&pi);
	if (pkt_parse_eth(&c, h->roce_port, &pi) != PKT_ROCE)
		return AX_TC_ACT_UNSPEC;
	if (dup_in_flight(h))
		return AX_TC_ACT_UNSPEC;
	inject_roce_seen(h);
	if (!inject_static_match(h, &pi))
		return AX_TC_ACT_UNSPEC;
	counter_inc(&stats, STAT_MATCHED);
	q = inject_qp_of(&pi);
	if (!q) {
		counter_inc(&stats, STAT_QPS_FULL);
		return AX_TC_ACT_UNSPEC;
	}
	if (!inject_pick(&pi, q))
		return AX_TC_ACT_UNSPEC;
	done = inject_apply(skb, &pi);
	inject_count(q, done);
	if (targ_events)
		inject_event(skb, &pi, done);
	return done & (1U << FAULT_DROP) ? AX_TC_ACT_SHOT : AX_TC_ACT_UNSPEC;
}

static __always_inline int inject_handle(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *data_end = (void *)(long)skb->data_end;
	struct inject_cpu_line *h;
	__u32 fast_qpn;

	h = hot_line();
	if (!h)
		return AX_TC_ACT_UNSPEC;
	if (!h->qpn_set)
		return pkt_fast_not_roce(data, data_end, h->roce_port) ?
		       AX_TC_ACT_UNSPEC : inject_full(skb, h);
	/* -Q: another QP's plain frame passes without the full parse, the
	 * cost every QP but the selected one pays (bench/roceinject.sh) */
	switch (pkt_fast_classify(data, data_end, h->roce_port, &fast_qpn)) {
	case PKT_FAST_NOT_ROCE:
		return AX_TC_ACT_UNSPEC;
	case PKT_FAST_ROCE:
		if (fast_qpn == h->qpn)
			break;
		if (!dup_in_flight(h))
			inject_roce_seen(h);
		return AX_TC_ACT_UNSPEC;
	}
	return inject_full(skb, h);
}

SEC("tc")
int roceinject_tc(struct __sk_buff *skb)
{
	/* the fast checks decide only on bytes in the linear data; what
	 * they leave, inject_full() makes readable first */
	return inject_handle(skb);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
