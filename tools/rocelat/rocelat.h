/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* rocelat: types shared by tools/rocelat/rocelat.bpf.c and tools/rocelat/rocelat.c */
#ifndef AGENTXDP_ROCELAT_H
#define AGENTXDP_ROCELAT_H

#include "lib/hist.h"
#include "lib/pkt_info.h"
#include "lib/roce_proto.h"

/*
 * Outstanding requests of one flow (one responder QP), a FIFO ring in PSN
 * order: answers come in order, so completing scans only from the oldest
 * entry up to the first one not yet covered. A flow with more requests in
 * flight drops its oldest (counted as an eviction). Power of two.
 */
#define PENDING_RING		64
/* responder QPs remembered per address pair, the candidates an answer of
 * a not yet known requester QP is tried against: as many QPs of one pair
 * of hosts may wait for their first answer at once (a collective starting
 * all its QPs); paired ones make room (pair_add()). Power of two. The
 * bounded-loop build (kernels before 5.17) verifies the pairing search
 * once per candidate: 257K instructions at 16, 403K at 64, 600K at 128
 * (6.18; the limit is 1M, and older verifiers prune less). */
#define PAIR_QPS		64
/* QPs awaiting their first answer, indexed by their address pair and the
 * UDP source port of their requests (waitport map): rxe answers from the
 * port its requester sends from, so an answer names its QP's entry and
 * pairs at one lookup, however many QPs of one pair of hosts wait at
 * once. As many entries as twice the flow table, at least this many in
 * all; a QP refused by the full index is counted (RL_WAIT_FULL) and left
 * to the candidate scan above (PAIR_QPS of one pair of hosts). */
#define WAIT_MIN		16384
/* a waitport value: the QP sending from the port was left out of the
 * flow table (its answers are none of the waiting QPs') */
#define WAIT_UNTRACKED		0x80000000u
/* a QP left out of the full flow table (the untracked map's value) */
struct untracked_qp {
	__u64 seen;		/* its latest request */
	__u32 sport;		/* its port, marked in waitport */
	__u32 pad;
};

/* a waitpsn value: two waiting QPs sent the PSN */
#define WAIT_AMBIG		0x80000000u
#define ROCELAT_WAIT_N(f)	(2 * (f) > WAIT_MIN ? 2 * (f) : WAIT_MIN)
/* the pairs map (an LRU): two pairings a QP pair (both directions) for
 * every flow the table holds, twice over: an LRU hash evicts before it is
 * full (per-CPU free lists), and at twice the flows 48 of 2,000 QPs lost
 * their pairing in a full table */
#define ROCELAT_PAIRS_N(f)	(4 * (f))
/* a request PSN further behind the highest one than this is a new
 * connection reusing the QPN (random starting PSN), not a retransmission:
 * go-back-N never resends more than the requester has in flight */
#define RETX_WINDOW		(1 << 16)
/* the same request seen again this soon with the same IPv4 ID is one
 * packet seen twice (two interfaces, a bridge's two ports, a mirror of rx
 * and tx), not a retransmission: a resend waits for a NAK or a timer */
#define DUP_WINDOW_NS		20000ULL
/* 10,000 active QPs, none left out (three sets of 16: 11,264 entries
 * leave room for the unevenness of hashing), within 64 MiB of kernel
 * memory: 66.2 MB measured (6.18, the memlock of every map) */
#define DEFAULT_MAX_FLOWS	11264

/* floor(log2(v)), 0 for 0 */
static inline __u32 rocelat_log2(__u64 v)
{
	__u32 r = 0;

	while (v >>= 1)
		r++;
	return r;
}

/* the histogram unit of a rocelat skeleton's rodata, in ns, and its log2
 * (precomputed for the BPF side's hist_slot_scaled()) */
#define ROCELAT_SET_UNIT(rodata, ns)					\
	do {								\
		(rodata)->targ_unit_ns = (ns);				\
		(rodata)->targ_unit_log2 = rocelat_log2(ns);		\
	} while (0)
/* the flow table is set-associative: a flow lives in one of the FLOW_WAYS
 * entries of one of its three sets (the emptiest when it started), and a
 * new flow whose sets are full pushes out their least recently
 * active flow if that one is idle (nothing seen for --timeout), else it
 * is left out (counted: RL_UNTRACKED), so that more active QPs than the
 * table holds leave a stable set timed, not every flow pushed out before
 * its next sample */
#define FLOW_WAYS		16
/* three sets to choose from: 10,000 QPs of random QPNs in 11,264 entries
 * left none out in 13 draws (sets of 4: about 100 out; sets of 16 but two
 * choices: 1 in 2 draws of 13; at 12,288 entries in sets of 8: none) */
#define FLOW_SETS		3
/* the flow table's entries for up to f flows (whole sets), and the words of
 * its flows_used bitmap (rocelat_load.c, rocelat_native.c) */
#define ROCELAT_PENDING_N(f)	((f) / FLOW_WAYS * FLOW_WAYS)
/* the cands and held maps' entries for up to f flows: one a flow up to
 * 4,096, then 4,096, then a quarter of the flows. cands is keyed by
 * address pair (an LRU: one entry serves all QPs of two hosts), held by
 * requester QP not paired yet (answers seen before their requests: a
 * lossy recording); neither needs an entry for every flow a large table
 * holds, and the two are 700 bytes of kernel memory an entry */
#define ROCELAT_CANDS_N(f)	((f) / 4 > 4096 ? (f) / 4 : (f) > 4096 ? 4096 : (f))
#define ROCELAT_USED_WORDS(f)	(((f) + 63) / 64)

/* global counters, one per-CPU struct looked up once per RoCE packet */
enum rocelat_counter {
	RL_ROCE_PKTS,		/* packets to the RoCE port with a BTH */
	RL_PARSE_ERRORS,	/* truncated or inconsistent headers */
	RL_REQUESTS,		/* request packets (any RC/XRC request opcode) */
	RL_TRACKED,		/* requests waiting for an answer (AckReq, READ, atomic) */
	RL_ACKS,		/* ACKNOWLEDGE / ATOMIC ACK packets (ACK, NAK, RNR) */
	RL_READ_RESP,		/* READ RESPONSE packets */
	RL_SAMPLES,		/* latency samples taken (both kinds) */
	RL_TURN_SAMPLES,	/* of those: local turnaround (request in, answer out) */
	RL_RETRANSMITS,		/* request packets with a PSN seen before */
	RL_KARN_DISCARDED,	/* answers to retransmitted requests: no sample */
	RL_NAK_SEQ,		/* NAK PSN sequence error */
	RL_NAK_INVALID_REQ,
	RL_NAK_REMOTE_ACCESS,
	RL_NAK_REMOTE_OP,
	RL_NAK_INVALID_RD,
	RL_NAK_OTHER,		/* reserved NAK codes and syndromes */
	RL_RNR_NAKS,
	RL_CNPS,
	RL_ECN_CE,		/* RoCE packets with IP ECN = CE */
	RL_EVICTED,		/* pending request pushed out by a newer one */
	RL_TIMEOUTS,		/* pending request unanswered for --timeout */
	RL_UNMATCHED,		/* answer that completed no pending request */
	RL_RESP_MISSING,	/* READ/atomic passed by a later answer: its response was not seen */
	RL_FATAL_ENDED,		/* requests ended without a sample by a fatal NAK */
	RL_LEARNED,		/* requester QPs paired with their responder QP */
	RL_CM_REQS,		/* RDMA CM connection requests (REQ) seen */
	RL_CM_PAIRED,		/* QP pairs learned from a CM REQ and its REP */
	RL_AMBIGUOUS,		/* answers that could belong to several QPs: not paired */
	RL_DUPLICATES,		/* the same packet seen twice: one sighting */
	RL_FLOW_RESETS,		/* a QP's PSNs restarted far behind: a new connection */
	RL_FLOWS,		/* flows (responder QPs) started; minus those live = evicted */
	RL_PAIR_FULL,		/* a responder QP left out of the candidate scan (PAIR_QPS):
				 * found by its port (waitport) only */
	RL_RESERVED_OP,		/* reserved RC/XRC opcodes */
	RL_TUN_NOT_ROCE,	/* decapsulated mirror/tunnel frames, inner not RoCE */
	RL_TUN_UNKNOWN,		/* tunnel headers not followed (unknown ERSPAN version...) */
	RL_TRUNCATED,		/* RoCE frames cut short (mirror truncation), BTH read */
	RL_NO_SWITCH_TIME,	/* answers on a switch-timed flow without a timestamp */
	RL_OTHER_TRANSPORT,	/* UC, UD, RD packets: counted, not timed */
	RL_HELD,		/* answers of a QP not paired yet, held as evidence */
	RL_UNTIMED,		/* requests answered by an answer whose time is lost */
	RL_UNHELD,		/* answers of a QP not paired yet, refused: held map full */
	RL_REORDERED,		/* answers stamped before their request: not timed */
	RL_WAIT_FULL,		/* a QP refused by the full waitport index */
	RL_PAIRED_PORT,		/* of RL_LEARNED: paired through the waitport index */
	RL_PAIRED_PSN,		/* of RL_LEARNED: paired through the waitpsn index */
	RL_UNTRACKED,		/* QPs left out: the table was full of active flows */
	RL_UNTRACKED_REQS,	/* their requests (not timed) */
	RL_UNTRACKED_LOST,	/* requests of QPs left out and not counted (map full) */
	RL_NR,
};

/* BPF side: what an answer completes, passed to the global functions of
 * rocelat's BPF side (rocelat_complete(): tools/rocelat/rocelat_complete.bpf.h;
 * per-CPU scratch below; user space never reads it) */
struct answer_ctx {
	__u64 now;			/* 0 until first needed */
	__u32 psn;
	__u32 ifindex;
	__u32 sample_psn;		/* PSN of the request being sampled */
	__u32 span_hi;			/* READ RESPONSE FIRST: last PSN of its READ */
	__u16 payload_len;
	__u8 inclusive;			/* the PSN itself is answered */
	__u8 fatal;			/* a fatal NAK ends its PSN and all later */
	__u8 read_resp;			/* READ RESPONSE FIRST/ONLY: answers its READ */
	__u8 atomic_ack;		/* ATOMIC ACKNOWLEDGE: answers its atomic */
	__u8 egress;			/* the answer leaves this host (tc) */
	__u8 has_span;
	__u8 untimed;			/* held evidence whose time was lost: what
					 * it covers is counted, never timed */
	__u8 held;			/* held evidence, at its time in now */
	__u8 sw;			/* timed by the switch's clock: */
	__u64 sw_ns;			/* the answer's time on it */
};

/*
 * One responder QP seen from one requester address, through one mirror
 * session: a flow. session is 0 for traffic seen directly, else a hash of
 * the mirror session (tunnel kind, outer source address, ERSPAN session ID
 * / VNI / GRE key), so two switches mirroring one flow keep two flows (the
 * flow's entry holds the session itself, for the output). Kept whole in
 * the flow's entry (pending_flow.id), for the output; the maps are keyed
 * by it folded (roce_qp_key).
 */
struct roce_flow_id {
	__u8 family;
	__u8 pad[3];
	__u32 qpn;		/* the responder's */
	__u32 session;
	__u8 req[16];		/* requester address (IPv4 in the first 4) */
	__u8 resp[16];		/* responder address */
};

/*
 * The maps' key: a flow's identity with its two addresses folded into 8
 * bytes, IPv4's as they are and IPv6's hashed (two IPv6 address pairs
 * share a key with a chance of 2^-64). The kernel hashes every key of a
 * lookup: 20 bytes cost 1 round of jhash2 where 44 cost 3. The same
 * layout keys the pairing map, with the requester's QPN (the one answers
 * name) in qpn instead, and the candidates map, with qpn 0.
 */
struct roce_qp_key {
	__u8 family;
	__u8 pad[3];
	__u32 qpn;
	__u32 session;
	__u32 req;		/* IPv4: the requester's address, as sent */
	__u32 resp;		/* IPv4: the responder's */
};

/* a 64-bit word of a 4-aligned address */
static inline __u64 roce_addr_word(const __u8 *a, int i)
{
	__u64 w;

	__builtin_memcpy(&w, __builtin_assume_aligned(a + 8 * i, 4), 8);
	return w;
}

/* the key of requester address req, responder address resp (16 bytes
 * each, IPv4 in the first 4, both 4-aligned as in pkt_info and
 * roce_flow_id: BPF then loads words, not bytes); shared by BPF and user
 * space */
static inline void roce_qp_key_addrs(struct roce_qp_key *k, __u8 family,
				     const __u8 *req, const __u8 *resp)
{
	__u64 h = 0x9E3779B97F4A7C15ULL;
	__u32 fw = 0;
	int i;

	/* family and pad in one 4-byte store: bytes stored one by one and
	 * read back as a word (qp_key_eq()) wait until they reach the
	 * cache; a store that holds the whole word forwards it at once */
	__builtin_memcpy(&fw, &family, 1);
	__builtin_memcpy(k, &fw, 4);
	if (family == 4) {
		__builtin_memcpy(&k->req, __builtin_assume_aligned(req, 4), 4);
		__builtin_memcpy(&k->resp, __builtin_assume_aligned(resp, 4), 4);
		return;
	}
	/* order matters: a->b and b->a are two flows */
	for (i = 0; i < 4; i++) {
		h ^= i < 2 ? roce_addr_word(req, i) : roce_addr_word(resp, i - 2);
		h *= 0xFF51AFD7ED558CCDULL;
		h ^= h >> 32;
	}
	k->req = h;
	k->resp = h >> 32;
}

/* the flow table's sets for key k (FLOW_SETS), of nsets: multiply-shifts
 * of three hashes, no division; shared by BPF and user space */
static inline void roce_flow_sets(const struct roce_qp_key *k, __u32 nsets,
				  __u32 set[FLOW_SETS])
{
	__u32 h = (k->qpn ^ k->session) * 0x9E3779B1u;

	h = (h ^ k->req) * 0x85EBCA6Bu;
	h = (h ^ k->resp) * 0xC2B2AE35u;
	h ^= h >> 16;
	set[0] = ((__u64)h * nsets) >> 32;
	h *= 0x27D4EB2Fu;
	h ^= h >> 15;
	set[1] = ((__u64)h * nsets) >> 32;
	h *= 0x165667B1u;
	h ^= h >> 13;
	set[2] = ((__u64)h * nsets) >> 32;
}

/* the tags of one set of the flow table (the flow_tags map): a hash of
 * each entry's key, so that looking for a flow reads one cache line a
 * set, not one an entry, and compares a key only where its tag matches
 * (never 0: a set's untouched entries) */
struct flow_tags {
	__u32 tag[FLOW_WAYS];
};

static inline __u32 roce_flow_tag(const struct roce_qp_key *k)
{
	__u32 h = (k->qpn ^ k->session) * 0xC2B2AE35u;

	h = (h ^ k->req) * 0x27D4EB2Fu;
	h = (h ^ k->resp) * 0x165667B1u;
	return (h ^ h >> 15) | 1;
}

/* the key of a flow */
static inline void roce_qp_key_of(struct roce_qp_key *k,
				  const struct roce_flow_id *id)
{
	roce_qp_key_addrs(k, id->family, id->req, id->resp);
	k->qpn = id->qpn;
	k->session = id->session;
}

/*
 * The pairing cache: a per-CPU direct-mapped copy of recent pairs-map
 * entries, so that a paired answer's first lookup is an array slot and a
 * key compare instead of a hash lookup, and its second (the flow) one
 * entry of the flow table instead of its two sets. gen is pairs_gen + 1
 * when the entry was read (0: empty); any change to the pairs map steps
 * pairs_gen.
 */
#define PAIR_CACHE		64
/* no flow-table entry (beyond any table: its lookup finds nothing) */
#define PAIR_NO_FLOW		0xFFFFFFFFu

struct pair_cache_ent {
	__u32 gen;
	__u32 resp_qpn;
	struct roce_qp_key key;		/* qpn: the requester's */
	__u32 flow_at;			/* the flow's flow-table entry when
					 * last found (PAIR_NO_FLOW: not yet) */
	__u64 flow_serial;		/* the flow's serial then: the entry
					 * holds it still while they match */
	__u32 held;			/* answers of it were held when read */
	__u32 pad;
};

/* what a flow's statistics count of answers: NAKs by code, RNR NAKs, CE
 * marks (rocelat_flow.bpf.h, answer_marks_add()) */
struct answer_marks {
	__u32 naks;		/* all NAK codes */
	__u32 nak[ROCE_NAK_CODES];
	__u32 rnr_naks;
	__u32 ecn_ce;
	__u8 rnr_timer;		/* of the latest RNR NAK */
	__u8 pad[3];
};

/*
 * Answers of a requester QP that is not paired yet (no CM exchange seen,
 * PSN in no candidate's window: the sniffer lost the requests between),
 * held as evidence until the pairing is known, then applied in order,
 * each at its own time. A QP with more held answers forgets its oldest:
 * what that one covered (up to lost_psn) is counted as untimed, never
 * timed against a later answer.
 */
#define HELD_ANSWERS		8

#define HELD_INCLUSIVE	0x01	/* an ACK: its PSN itself is answered */
#define HELD_FATAL	0x02
#define HELD_READ_RESP	0x04
#define HELD_ATOMIC	0x08
#define HELD_EGRESS	0x10
#define HELD_SW		0x20	/* ts is the mirroring switch's time */
#define HELD_MARKS	0x40	/* only its marks: it completes nothing */

struct held_answer {
	__u64 ts;
	__u32 psn;
	__u32 ifindex;
	__u16 payload_len;
	__u8 flags;		/* HELD_* */
	__u8 pad[5];
};

struct held_answers {
	__u32 n;		/* answers held so far (free-running) */
	__u32 lost;		/* 1: answers were forgotten, covering up to */
	__u32 lost_psn;		/* this PSN */
	__u32 pad;
	/* what the flow's statistics count of each answer held, forgotten
	 * ones and RNR NAKs too (those complete nothing: not held) */
	struct answer_marks marks;
	__u64 arrived;		/* the newest one's arrival (the program's
				 * clock, not the switch's): the sweep drops
				 * the entry 2 x --timeout after it */
	struct held_answer a[HELD_ANSWERS];
};

/*
 * Answers refused by a full held map (answers_unheld) leave a trace: the
 * arrival and the PSN covered (up to, inclusive) of the last one, in a
 * slot chosen by a hash of its requester QP's key. When that QP is paired
 * within 2 x --timeout of it, its requests up to that PSN and sent before
 * it are untimed, never timed against a later answer. Two QPs sharing a
 * slot: the later one's trace wins; a QP that takes a slot holding
 * another's untimes too many, never times one wrong.
 */
#define UNHELD_SLOTS		64

struct unheld_slot {
	__u64 arrived;		/* 0: empty */
	__u32 key_hash;
	__u32 psn;
};

/* per-CPU: the counters and the log2 histograms of all samples */
struct rocelat_counters {
	__u64 c[RL_NR];
	struct hist hist;	/* round trips (and samples of unknown direction) */
	struct hist turn_hist;	/* local turnarounds */
	/* scratch: the packet being handled (8-aligned: pkt_info_clear()), */
	struct pkt_info pi __attribute__((aligned(8)));
	struct answer_ctx ac;	/* and what it answers: off the stack, which
				 * 6.1 limits to 512 bytes over the call chain */
	struct answer_marks marks;	/* and its marks (answer_flow_stats()) */
	struct pair_cache_ent pair_cache[PAIR_CACHE];
};


/*
 * --svg: one event per latency sample through the samples ring buffer
 * (targ_samples), so user space can draw each sample at its time; without
 * --svg the samples exist only as histograms.
 */
struct rocelat_sample_event {
	__u64 ts_ns;		/* when the answer was seen: the capture's time
				 * with -r, else bpf_ktime_get_ns() */
	__u64 lat_ns;
	struct roce_flow_id id;	/* the flow, as the report names it */
	__u16 sport;		/* its ECMP path (latest request's port) */
	__u8 turn;		/* a local turnaround, not a round trip */
	__u8 pad[5];
};

/* --mirror-time */
enum rocelat_mirror_time {
	MIRROR_TIME_AUTO,	/* the switch's where ERSPAN III carries it */
	MIRROR_TIME_SWITCH,
	MIRROR_TIME_ARRIVAL,
};

struct roce_pair_qps {
	__u32 n;		/* QPNs added so far (free-running) */
	__u32 qpn[PAIR_QPS];
};

#define SLOT_VALID	0x01
#define SLOT_RETX	0x02	/* retransmitted: the answer is ambiguous */
#define SLOT_READ	0x04	/* READ REQUEST: only its READ RESPONSE answers */
#define SLOT_ATOMIC	0x08	/* atomic: only its ATOMIC ACKNOWLEDGE answers */
#define SLOT_INGRESS	0x10	/* request seen arriving (XDP), not leaving (tc) */

struct pending_slot {
	__u64 ts_ns;
	__u32 psn;
	__u16 flags;		/* SLOT_* */
	__u16 ip_id;		/* IPv4 ID: the same packet seen again is no resend */
	__u32 dma_len;		/* READ: bytes asked for (its response's span) */
	__u32 pad2;
};

#define FLOW_HI_VALID	0x01	/* hi_psn and una_psn hold PSNs */
#define FLOW_PAIRED	0x02	/* req_qpn is known */
#define FLOW_SWITCH_CLOCK 0x08	/* timed by the mirroring switch's clock */
#define FLOW_CLOCK_SET	0x10	/* the clock was chosen (first request) */

#define EARLY_UNMATCHED	0x80000000u	/* pending_flow.early_psn's flag */

#define FLOW_KIND_RTT	0x01	/* request out (or unknown) -> answer in */
#define FLOW_KIND_TURN	0x02	/* request in -> answer out: this host answers */

/*
 * A flow's log-linear latency histogram, in ns: values below 2^5 exact,
 * then per power of two [2^e, 2^(e+1)) for e = 5..35 (up to 69 s) the
 * buckets of its top 5 bits below the leading one (m = 0..31, 2^(e-5)
 * wide each), the first two kept apart and the rest in pairs (17 a power
 * of two), then one bucket for all above. A bucket [lo, hi] is then at
 * most 2/34 of lo wide, its midpoint within 2.94% of any value in it: the
 * 3% the percentiles promise, in 560 buckets (2,240 bytes) instead of
 * the 1,024 (4 KiB) of 32 sub-buckets apart (HdrHistogram's layout,
 * whose midpoints are within 1.6%). rocelat_ll_bucket() places a value;
 * rocelat_hist.c reads them.
 */
#define RL_LL_EXACT	32	/* 2^5: values below it have a bucket each */
#define RL_LL_PER_LOG2	17	/* buckets of one power of two */
#define RL_LL_MIN_LOG2	5
#define RL_LL_MAX_LOG2	35
#define RL_LL_BUCKETS	(RL_LL_EXACT + \
			 (RL_LL_MAX_LOG2 - RL_LL_MIN_LOG2 + 1) * RL_LL_PER_LOG2 + 1)

struct rl_llhist {
	__u32 b[RL_LL_BUCKETS];
};

/* the bucket of t = v >> (e - 5) within its power of two e, t in
 * [32, 63] (m = t - 32: 0, 1 alone, then pairs), or of v itself below 32
 * (t = v, e < 5): the offset from the power of two's first bucket less 32 */
static inline __u32 rocelat_ll_sub(__u32 t)
{
	__u32 m = t - RL_LL_EXACT;

	return t < RL_LL_EXACT ? t : RL_LL_EXACT + (m >> 1) + (m != 0);
}

/* the bucket of the power of two e's first bucket, less 32 (values
 * below 2^5: 0) */
static inline __u32 rocelat_ll_base(__u32 e)
{
	return e < RL_LL_MIN_LOG2 ? 0 : (e - RL_LL_MIN_LOG2) * RL_LL_PER_LOG2;
}

/* the bucket of v ns */
static inline __u32 rocelat_ll_bucket(__u64 v)
{
	__u32 e = rocelat_log2(v);

	if (e < RL_LL_MIN_LOG2)
		return v;
	if (e > RL_LL_MAX_LOG2)
		return RL_LL_BUCKETS - 1;
	return rocelat_ll_base(e) + rocelat_ll_sub(v >> (e - RL_LL_MIN_LOG2));
}

struct roce_flow_stats {
	__u64 samples;
	__u64 sum;		/* latency sum, ns */
	__u64 min;		/* ns */
	__u64 max;		/* ns */
	__u32 ifindex;		/* where the latest answer was seen */
	__u32 last_psn;		/* latest answered PSN */
	__u8 rnr_timer;		/* timer field of the latest RNR NAK */
	__u8 kind;		/* FLOW_KIND_* of its samples */
	__u8 pad[6];
	__u64 retransmits;
	__u64 naks;		/* all NAK codes */
	__u64 nak[ROCE_NAK_CODES];
	__u64 rnr_naks;
	__u64 cnps;
	__u64 ecn_ce;
	__u64 timeouts;
	__u64 resp_missing;
	__u64 untimed;		/* answered, but the answer's time was lost */
	/* log2 of latency in the chosen unit: an interval's counts of one
	 * flow fit 32 bits (struct hist's 64 are for sums over all) */
	__u32 hist[HIST_SLOTS];
};

/*
 * A flow's state, one entry of the pending array (the flow table, found
 * by its roce_qp_key: roce_flow_sets()): the outstanding requests and the
 * flow's statistics (st), so an answer costs a look into its sets once
 * its requester QP is paired. The statistics are
 * double-buffered by reporting interval: interval e counts in st[e & 1]
 * (st_epoch[e & 1] == e + 1; the next update in a new interval zeroes the
 * buffer first), so user space can step stats_epoch (.bss) and then read
 * the interval just ended while the new one fills the other buffer.
 * The log-linear histogram (ll), nine tenths of them, is not: one copy
 * counts every sample since the flow started in the entry, and user
 * space takes an interval's as what it gained since its last read
 * (rocelat_ll_since()), so an entry holds 2,240 bytes less.
 */
struct pending_flow {
	__u32 hi_psn;		/* highest request (or READ response) PSN seen */
	__u32 una_psn;		/* oldest PSN that may still be unanswered */
	__u32 head;		/* next slot to fill (free-running) */
	__u32 tail;		/* oldest slot that may be in use */
	__u32 flags;		/* FLOW_* */
	__u32 req_qpn;		/* the requester's QPN, once paired */
	__u32 st_epoch[2];	/* interval + 1 each buffer counts, 0: none */
	__u16 sport;		/* UDP source port of the latest request (ECMP path) */
	__u16 last_ip_id;	/* IPv4 ID of the latest request */
	__u64 last_ts;		/* when the latest request was seen */
	__u64 ans_ts;		/* the latest answer that completed something: */
	__u32 ans_psn;		/* when, its PSN and IPv4 ID (to tell a second */
	__u16 ans_ip_id;	/* sighting of it from a stray answer) */
	__u8 tun_kind;		/* the mirror session (PKT_TUN_*, 0: none) */
	__u8 tun_family;
	__u32 tun_id;
	__u8 tun_saddr[16];
	__u64 clock_wrap_ns;	/* switch clock: its period (32-bit ticks) */
	__u64 sw_last;		/* switch clock: the latest frame's time on it */
	__u64 arr_last;		/* ... and here: how the sweep tells its time */
	struct roce_flow_id id;	/* whose flow: the key, unfolded */
	struct roce_qp_key key;	/* the entry's flow, when used */
	__u32 used;		/* 1: the entry holds a flow */
	/* floor(log2) of its latest sample's ns, e: the next one's guess,
	 * and what follows from e (rocelat_samples.bpf.h, sample_geometry()): */
	__u8 lat_log2;
	__u8 slot_lo;		/* unit-histogram slot below slot_thr ns, */
	__u8 slot_hi;		/* ... and from it on */
	__u8 ll_shift;		/* llhist bucket: ll_base + (ns >> ll_shift) */
	__u64 serial;		/* which flow the entry holds, unique: the
				 * starting CPU's number and its count of
				 * flows started (rocelat_flow_new()) */
	__u64 slot_thr;		/* ns */
	__u32 ll_base;
	/* an ACK past every request seen (early_ts 0: none): the requests
	 * up to its PSN that show up later, stamped before it, are ones it
	 * answered (a recording out of time order: handle_request()) */
	__u32 early_psn;	/* EARLY_UNMATCHED: counted as unmatched */
	__u32 early_ifindex;
	__u32 pad4;
	__u64 early_ts;
	struct pending_slot ring[PENDING_RING];
	struct roce_flow_stats st[2];
	struct rl_llhist ll;	/* every sample since the flow started here,
				 * in ns, for percentiles */
};

/* the flow statistics an entry holds for reporting interval epoch, if any */
static inline const struct roce_flow_stats *
pending_flow_stats(const struct pending_flow *pf, __u32 epoch)
{
	return pf->st_epoch[epoch & 1] == epoch + 1 ? &pf->st[epoch & 1] : 0;
}

#endif
