// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocediag's sources: rocelat's XDP/tc programs (latency, retransmits,
 * NAKs per flow), rxedrop's kfree_skb program (every dropped RoCE packet,
 * with its QP), nfdrop's netfilter path (the rule, per packet signature)
 * and, where rdma_rxe is loaded, rxeqp's hooks (QP state, retry timer);
 * rdmaqp's (rocediag_rdma.c) and verbslat's (rocediag_verbs.c) beside.
 * Each is the tool's own BPF object, loaded by the tool's own loader
 * (rocelat's through tools/lib/netattach), and read into one diag_table
 * per interval.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rocelat.h"
#include "rocelat_backend.h"
#include "rocelat_hist.h"
#include "rocelat_load.h"
#include "rxedrop.h"
#include "rxedrop.skel.h"
#include "rxedrop_load.h"
#include "nfdrop.h"
#include "nfdrop.skel.h"
#include "nfdrop_load.h"
#include "nfdrop_names.h"
#include "nfdrop_output.h"
#include "nfdrop_row.h"
#include "rxeqp.h"
#include "rxeqp.skel.h"
#include "rxeqp_delta.h"
#include "rxeqp_load.h"
#include "rocediag.h"
#include "lib/btf_enum.h"
#include "lib/cli.h"
#include "lib/hash.h"
#include "lib/hist.h"
#include "lib/ksyms.h"
#include "lib/maps.h"
#include "lib/netattach.h"
#include "lib/netns.h"
#include "lib/pcapng.h"
#include "lib/probe.h"

#define MAX_DROP_AGG	1024
#define MAX_NF_KEYS	4096
#define MAX_NF_HELD	256
#define MAX_RXE_EV	4096

static struct {
	struct rocelat_backend *lat;	/* rocelat's program in the kernel */
	struct netattach ifs[ROCEDIAG_MAX_IFACES];
	int nifs;
	struct rxedrop_bpf *drop;
	struct nfdrop_bpf *nf;
	struct nfdrop_ctx nfc;	/* nfdrop's parts', filled by its loader */
	struct rxeqp_bpf *rxe;
	struct ksyms *ksyms;
	struct btf_enum_names *qp_states;
	struct ring_buffer *drop_rb, *rxe_rb;
	int ncpu;
	__u32 epoch;		/* rocelat's interval being read */
	__u64 last_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) of the last read */
	__u64 drop_lost, rxe_lost;	/* the programs' lost-event counters, as last read */
	struct pcapng *pcap;	/* -w */
} s;

/* how much a program's lost-event counter grew since *seen */
static __u64 lost_since(const struct bpf_map *stats, int stat, __u64 *seen)
{
	__u64 now = maps_stat(stats, stat, s.ncpu), d = now - *seen;

	*seen = now;
	return d;
}

/* ---- drops: rxedrop's events, aggregated until the report ---- */

/*
 * A drop as the event has it, raw: the key of the interval's aggregate,
 * hashed and compared whole (zeroed first, padding too). Names are made
 * once per aggregate, at the report. rdma_rxe's frees of the packets its
 * QPs took in never get here: rxedrop's program leaves them out.
 */
struct drop_id {
	__u64 location;		/* kfree_skb's caller */
	__u32 reason;		/* enum skb_drop_reason */
	__u32 dqpn;
	__u8 family;
	__u8 answer;		/* an ACK or response: dqpn is the requester's */
	__u8 check;		/* enum rxe_check: which of rxe_rcv's checks */
	__u8 pad;
	char ifname[16];
	struct diag_sig sig;	/* addresses and ports */
};

struct drop_agg {
	struct drop_id id;
	__u64 packets;		/* 0: a free slot */
};

#define DROP_HASH_SLOTS	(2 * MAX_DROP_AGG)	/* open addressing, half full at most */

static struct drop_agg drops[DROP_HASH_SLOTS];
static int drop_used[MAX_DROP_AGG];	/* the slots in use, in arrival order */
static int ndrops;
static __u64 drops_not_roce, drops_unkept;

static __u32 drop_hash(const struct drop_id *id)
{
	return hash_bytes(id, sizeof(*id), 0);
}

static int on_drop(void *ctx, void *data, size_t len)
{
	const struct drop_event *e = data;
	const struct pkt_info *pi = &e->pkt;
	struct drop_id id;
	__u32 h;

	if (len < sizeof(*e))
		return 0;
	if (s.pcap) {
		char sym[128];

		ksyms_format(s.ksyms, e->location, sym, sizeof(sym), true);
		rxedrop_write_packet(s.pcap, e, len, sym, cli_ktime_to_epoch(e->ts_ns));
	}
	if (e->verdict != PKT_ROCE) {
		drops_not_roce++;
		return 0;
	}
	memset(&id, 0, sizeof(id));
	id.location = e->location;
	id.reason = e->reason;
	id.check = e->check;
	id.dqpn = pi->dqpn;
	id.family = pi->family;
	id.answer = !roce_op_is_request(pi->opcode);
	memcpy(id.ifname, e->ifname, strnlen(e->ifname, sizeof(e->ifname) - 1));
	memcpy(id.sig.saddr, pi->saddr, 16);
	memcpy(id.sig.daddr, pi->daddr, 16);
	id.sig.sport = pi->sport;
	id.sig.dport = pi->dport;
	for (h = drop_hash(&id) % DROP_HASH_SLOTS;; h = (h + 1) % DROP_HASH_SLOTS) {
		struct drop_agg *d = &drops[h];

		if (!d->packets)
			break;
		if (!memcmp(&d->id, &id, sizeof(id))) {
			d->packets++;
			return 0;
		}
	}
	if (ndrops == MAX_DROP_AGG) {
		drops_unkept++;
		return 0;
	}
	drops[h].id = id;
	drops[h].packets = 1;
	drop_used[ndrops++] = h;
	return 0;
}

static void read_drops(struct diag_table *t)
{
	for (int i = 0; i < ndrops; i++) {
		struct drop_agg *d = &drops[drop_used[i]];
		const struct drop_id *id = &d->id;
		struct diag_site site = { .packets = d->packets };
		struct diag_qp *q;

		/* a request is sent req -> resp to the responder's QPN; an
		 * answer resp -> req to the requester's */
		q = id->answer ? diag_by_answer(t, id->family, id->sig.daddr, id->sig.saddr, id->dqpn)
			       : diag_by_request(t, id->family, id->sig.saddr, id->sig.daddr, id->dqpn);
		if (q) {
			ksyms_format(s.ksyms, id->location, site.location, sizeof(site.location), false);
			rxedrop_reason_str(id->reason, id->check, site.reason, sizeof(site.reason));
			memcpy(site.ifname, id->ifname, sizeof(site.ifname));
			site.netfilter = id->reason == s.nfc.nf_drop;
			diag_add_drop(q, &site, site.netfilter ? &id->sig : NULL);
			/* a QP seen only dropped: its path is the requests' port */
			if (!id->answer && !q->sport)
				q->sport = id->sig.sport;
		}
		d->packets = 0;
	}
	t->unmatched_drops += drops_not_roce;
	ndrops = 0;
	drops_not_roce = 0;
}

/* ---- the rule: nfdrop's counts per packet signature ---- */

static bool sig_matches(const struct diag_sig *g, const struct nfd_key *k)
{
	return !memcmp(g->saddr, k->saddr, 16) && !memcmp(g->daddr, k->daddr, 16) &&
	       g->sport == k->sport && g->dport == k->dport;
}

static void rule_of_row(const struct nfdrop_row *r, struct diag_rule *rule)
{
	memset(rule, 0, sizeof(*rule));
	rule->packets = r->packets;
	if (!r->chain_known)
		return;
	rule->known = true;
	rule->certain = !(r->inferred & (NFDROP_INF_TABLE | NFDROP_INF_CHAIN | NFDROP_INF_RULE));
	if (r->rule_known)
		snprintf(rule->where, sizeof(rule->where), "%s%s%s %s handle %llu",
			 r->engine == NFR_ENGINE_NFT ? nfdrop_family_str(r->table_family) : "",
			 r->engine == NFR_ENGINE_NFT ? " " : "", r->table,
			 r->rule_chain[0] ? r->rule_chain : r->chain, r->handle);
	else
		snprintf(rule->where, sizeof(rule->where), "%s%s%s %s%s",
			 r->engine == NFR_ENGINE_NFT ? nfdrop_family_str(r->table_family) : "",
			 r->engine == NFR_ENGINE_NFT ? " " : "", r->table, r->chain,
			 r->verdict == NFDROP_V_POLICY ? " policy" : "");
	if (r->rule_known)
		snprintf(rule->text, sizeof(rule->text), "%s", r->rule_text);
}

/* nfdrop's count of one signature, held for the next report */
struct nf_held {
	struct nfd_key key;
	unsigned long long packets, rejected;
};

static struct nf_held held[MAX_NF_HELD];
static int nheld;

/*
 * packets of nfdrop's count of signature k on the QPs whose netfilter
 * drops carry it, each at most as many as it dropped this interval unless
 * all (a count held from the last report: its drops came late or were
 * lost); returns what is left
 */
static unsigned long long attach_rule(struct diag_table *t, const struct nfd_key *k,
				      unsigned long long packets,
				      unsigned long long rejected, bool all)
{
	static struct nfdrop_row r;	/* 5 KB: not on the stack */
	bool resolved = false;

	for (int j = 0; j < t->n && packets; j++) {
		struct diag_qp *q = &t->qp[j];

		for (int g = 0; g < q->nsigs; g++) {
			unsigned long long n = packets;

			if (!sig_matches(&q->sigs[g], k))
				continue;
			if (!all && n > q->sig_packets[g])
				n = q->sig_packets[g];
			if (!n)
				break;
			if (q->rule.known) {
				q->rule.packets += n;
			} else {
				if (!resolved)
					nfdrop_resolve(&s.nfc, k, packets, rejected,
						       NFDROP_RS_TTL, &r);
				resolved = true;
				rule_of_row(&r, &q->rule);
				q->rule.packets = n;
			}
			packets -= n;
			break;
		}
	}
	return packets;
}

/*
 * nfdrop counts a packet when its verdict is given (fexit on nft_do_chain,
 * or its own kfree_skb program), rxedrop's event of it comes at kfree_skb,
 * and the ring buffer is read before nfdrop's counts: a count can come one
 * report before the drops it belongs to (all or some of them: a busy CPU
 * delivers the events late), never after. So what of a count meets no
 * QP's drops is held for the next report, once; then it goes to the QPs
 * of its signature whatever they dropped.
 */
static void read_rules(struct diag_table *t)
{
	static struct nfd_key keys[MAX_NF_KEYS];
	static unsigned long long pk[MAX_NF_KEYS], rj[MAX_NF_KEYS];
	int n = nfdrop_drain(s.nf, keys, pk, rj, MAX_NF_KEYS), was = nheld;
	unsigned long long left;

	for (int i = 0; i < was; i++)
		attach_rule(t, &held[i].key, held[i].packets, held[i].rejected, true);
	nheld = 0;
	for (int i = 0; i < n; i++) {
		if (!pk[i] || !keys[i].sig)
			continue;
		left = attach_rule(t, &keys[i], pk[i], rj[i], false);
		if (left && nheld < MAX_NF_HELD)
			held[nheld++] = (struct nf_held){ keys[i], left, rj[i] };
	}
	ev_counters_advance();
}

/* ---- latency: rocelat's flows ---- */

/* rocelat's flow-table entries as last read: an interval's percentiles */
static struct rocelat_ll_reads lat_reads;

static int read_flow(const void *key, const void *val, void *ctx)
{
	const struct pending_flow *pf = val;
	const struct roce_flow_id *k = &pf->id;
	struct diag_table *t = ctx;
	const struct roce_flow_stats *st;
	struct diag_qp *q;
	__u64 outstanding = 0;
	bool req, ans;

	if (!pf->used)
		return 0;
	st = pending_flow_stats(pf, s.epoch);
	req = pf->last_ts > s.last_ns;
	ans = pf->ans_ts > s.last_ns;
	for (int i = 0; i < PENDING_RING; i++)
		outstanding += !!(pf->ring[i].flags & SLOT_VALID);
	/* rocelat still holds the flow: a QP's held drops stay with it */
	diag_alive(t, k->family, k->req, k->resp, k->qpn,
		   pf->flags & FLOW_PAIRED ? pf->req_qpn : DIAG_QPN_UNKNOWN, DIAG_BY_LAT);
	if (!req && !ans && !st)
		return 0;
	q = diag_by_request(t, k->family, k->req, k->resp, k->qpn);
	if (!q)
		return 0;
	q->lat_seen = true;
	q->requests |= req;
	q->answers |= ans;
	q->outstanding += outstanding;
	q->sport = pf->sport;
	if (pf->flags & FLOW_PAIRED)
		q->req_qpn = pf->req_qpn;
	if (!st)
		return 0;
	/* request in, answer out: this host answered, and the time is its own */
	q->turnaround = st->kind == FLOW_KIND_TURN;
	q->samples += st->samples;
	if (st->samples) {
		static struct rl_llhist ll;

		rocelat_ll_since(&lat_reads, *(const __u32 *)key, pf, &ll);
		q->p50_ns = rocelat_ll_quantile(&ll, 0.50, st->min, st->max);
		q->p99_ns = rocelat_ll_quantile(&ll, 0.99, st->min, st->max);
	}
	q->retransmits += st->retransmits;
	q->seq_naks += st->nak[ROCE_NAK_PSN_SEQ_ERR];
	q->other_naks += st->naks - st->nak[ROCE_NAK_PSN_SEQ_ERR];
	q->rnr_naks += st->rnr_naks;
	q->cnps += st->cnps;
	q->ecn_ce += st->ecn_ce;
	q->timeouts += st->timeouts;
	return 0;
}

/* ---- rdma_rxe: rxeqp's QPs, deltas per interval, transitions ---- */

/* rxeqp's QPs and what they did since the last reading */
static struct rxeqp_delta rxe_qps;

/* state changes and retransmit timer firings of the interval, from
 * rxeqp's events */
struct rxe_change {
	struct qp_key key;
	__u8 from, to;
	bool state;		/* a state change seen: from -> to */
	bool err;
	__u64 busy_timer;	/* retransmit timer firings with requests outstanding */
};

static struct rxe_change changes[MAX_RXE_EV];
static int nchanges;

static struct rxe_change *change_of(const struct qp_key *k)
{
	for (int i = 0; i < nchanges; i++)
		if (!memcmp(&changes[i].key, k, sizeof(*k)))
			return &changes[i];
	if (nchanges == MAX_RXE_EV)
		return NULL;
	memset(&changes[nchanges], 0, sizeof(changes[nchanges]));
	changes[nchanges].key = *k;
	return &changes[nchanges++];
}

static int on_rxe_event(void *ctx, void *data, size_t len)
{
	const struct qp_event *e = data;
	struct rxe_change *ch;

	/*
	 * rdma_rxe leaves its retransmit timer to expire after the last ACK
	 * instead of stopping it (rxe_comp.c re-arms it only while requests
	 * are outstanding, and nothing deletes it before the QP is
	 * destroyed), so an idle QP's timer fires once more, with req.psn ==
	 * comp.psn, and the completer finds nothing to retry. Only a firing
	 * with requests outstanding is evidence: an idle one after the
	 * traffic ended would make a finished QP STUCK.
	 */
	if (e->type == EV_RETX_TIMER && e->psn == e->psn2)
		return 0;
	if (e->type != EV_STATE && e->type != EV_RETX_TIMER)
		return 0;
	ch = change_of(&e->key);
	if (!ch)
		return 0;
	if (e->type == EV_RETX_TIMER) {
		ch->busy_timer++;
		return 0;
	}
	if (!ch->state) {
		ch->state = true;
		ch->from = e->old_state;
	}
	ch->to = e->new_state;
	ch->err |= e->new_state == QP_STATE_ERR;
	return 0;
}

static const char *state_name(__u8 st)
{
	const char *n = st == QP_STATE_UNKNOWN ? NULL : btf_enum_name(s.qp_states, st);

	return n ? n : "?";
}

/* one QP's interval (its growth, its events) into the entry of its pair */
static void read_rxe_qp(struct diag_table *t, const struct rxeqp_qp *qp)
{
	const struct qp_key *k = &qp->key;
	const struct qp_stats *st = &qp->cur;
	const __u64 *d = qp->d;
	struct rxe_change *ch = NULL;
	struct diag_qp *q;
	bool active = false, requester;

	for (int i = 0; i < nchanges && !ch; i++)
		if (!memcmp(&changes[i].key, k, sizeof(*k)))
			ch = &changes[i];
	/* timer firings count through the events (on_rxe_event) */
	for (int i = 0; i < QC_NR; i++)
		active |= d[i] && i != QC_STATE_CHANGES && i != QC_RETX_TIMER;
	/* rdma_rxe still has the QP, as either side: its held drops stay */
	if (st->peer_known && st->family && !st->destroyed) {
		diag_alive(t, st->family, st->saddr, st->daddr, st->dqpn, k->qpn, DIAG_BY_RXE);
		diag_alive(t, st->family, st->daddr, st->saddr, k->qpn, st->dqpn, DIAG_BY_RXE);
	}
	if ((!active && !ch) || !st->peer_known || !st->family)
		return;
	/* the requester's QP names the responder's QPN as its peer; the
	 * responder's names itself. An entry either way first (rocelat's,
	 * or the other side's QP), else the side it mostly played */
	q = diag_find_request(t, st->family, st->saddr, st->daddr, st->dqpn);
	requester = q != NULL;
	if (!q)
		q = diag_find_request(t, st->family, st->daddr, st->saddr, k->qpn);
	if (!q) {
		requester = st->cnt[QC_TX_REQ_PKTS] >= st->cnt[QC_RX_REQ_PKTS];
		q = requester ? diag_by_request(t, st->family, st->saddr, st->daddr, st->dqpn)
			      : diag_by_request(t, st->family, st->daddr, st->saddr, k->qpn);
	}
	if (!q)
		return;
	if (requester && q->req_qpn == DIAG_QPN_UNKNOWN)
		q->req_qpn = k->qpn;
	if (!requester && q->req_qpn == DIAG_QPN_UNKNOWN)
		q->req_qpn = st->dqpn;
	if (!q->sport && requester)
		q->sport = st->sport;
	q->rxe_seen = true;
	snprintf(q->rxe_dev, sizeof(q->rxe_dev), "%s", st->dev);
	q->rxe_retx_timer += ch ? ch->busy_timer : 0;
	q->rxe_retries += d[QC_RETRIES];
	q->rxe_retx_pkts += d[QC_RETX_PKTS];
	q->rxe_rnr += d[QC_RNR_TIMER];
	q->rxe_rx_acks += requester ? d[QC_RX_RESP_PKTS] : 0;
	if (requester && d[QC_RX_RESP_PKTS])
		q->answers = true;
	if (ch && ch->state && ch->from != ch->to && !q->state_changed) {
		q->state_changed = true;
		q->state_from = ch->from;
		q->state_to = ch->to;
		snprintf(q->state_str, sizeof(q->state_str), "%s -> %s",
			 state_name(ch->from), state_name(ch->to));
	}
	q->to_err |= ch && ch->err;
}

/* ---- the sources together ---- */

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* rocelat's count of RoCE packets, all CPUs, since start */
static __u64 roce_packets_seen(void)
{
	struct rocelat_counters *v = calloc(s.ncpu, sizeof(*v));
	__u64 n = 0;
	int ncpu;

	if (!v)
		return 0;
	ncpu = s.lat->counters(s.lat, v);
	for (int c = 0; c < ncpu; c++)
		n += v[c].c[RL_ROCE_PKTS];
	free(v);
	return n;
}

double rocediag_sources_read(struct diag_table *t)
{
	__u64 now = now_ns();
	double len_s = (now - s.last_ns) / 1e9;

	diag_table_reset(t);
	if (s.lat) {
		t->roce_packets = roce_packets_seen();
		s.lat->sweep(s.lat);
		s.epoch = s.lat->next_interval(s.lat);
		s.lat->flows_for_each(s.lat, read_flow, t);
	}
	if (s.rxe) {
		ring_buffer__consume(s.rxe_rb);
		t->rxe_events_lost = lost_since(s.rxe->maps.stats, RXEQP_STAT_EVENTS_LOST, &s.rxe_lost);
		/* destroyed QPs are in one reading, then retired */
		rxeqp_delta_read(&rxe_qps);
		for (int i = 0; i < rxe_qps.n; i++)
			read_rxe_qp(t, &rxe_qps.qp[i]);
		nchanges = 0;
	}
	if (s.drop) {
		ring_buffer__consume(s.drop_rb);
		t->drop_events_lost = lost_since(s.drop->maps.stats, STAT_EVENTS_LOST, &s.drop_lost);
		read_drops(t);
	}
	diag_merge(t);
	rocediag_rdma_read(t, s.rxe != NULL);
	rocediag_verbs_read(t);
	if (s.nf)
		read_rules(t);
	t->unmatched_drops += drops_unkept;
	drops_unkept = 0;
	s.last_ns = now;
	return len_s;
}

static int open_lat(const struct rocediag_cfg *cfg, struct diag_sources *src)
{
	struct rocelat_kernel *k;

	if (!cfg->nifs) {
		snprintf(src->no_lat, sizeof(src->no_lat), "latency: no -i given");
		return 0;
	}
	if (rocelat_load_unsupported()) {
		snprintf(src->no_lat, sizeof(src->no_lat), "latency: %s",
			 rocelat_load_unsupported());
		return 0;
	}
	k = rocelat_load(&(struct rocelat_load_opts){
		.cli = &cfg->cli, .unit_ns = 1000, .timeout_ms = cfg->timeout_ms,
		.decap = cfg->mirror, .no_egress = cfg->mirror });
	if (!k)
		return -1;
	s.lat = rocelat_kernel_backend(k);
	for (int i = 0; i < cfg->nifs; i++) {
		struct netattach *f = &s.ifs[s.nifs];

		netattach_init(f, cfg->ifnames[i], cli_ifindex(&cfg->cli, cfg->ifnames[i]));
		s.nifs++;
		if (rocelat_attach(k, f, cfg->xdp_mode, !cfg->mirror, ROCELAT_BY_ROCEDIAG))
			return -1;
		if (f->xdp_taken)
			snprintf(src->lat_hook, sizeof(src->lat_hook),
				 "tc ingress on %s: XDP taken", f->name);
		else if (f->xdp_mtu_refused)
			snprintf(src->lat_hook, sizeof(src->lat_hook),
				 "tc ingress on %s: XDP refused at MTU %d", f->name, f->mtu);
	}
	src->lat = true;
	return 0;
}

static void open_drops(const struct rocediag_cfg *cfg, struct diag_sources *src,
		       struct loop *lp)
{
	struct rxedrop_load_opts lo = { .cli = &cfg->cli, .scope = SCOPE_ROCE, .events = true,
					.ksyms = s.ksyms,
					.netns_inum = cfg->cli.netns ? cli_netns_inum(&cfg->cli) : 0,
					.snaplen = cfg->pcap ? cfg->snaplen : 0 };
	bool tp_btf;

	if (cfg->mirror) {
		snprintf(src->no_drops, sizeof(src->no_drops), "drops: not on a collector (--mirror)");
		return;
	}
	s.drop = rxedrop_load(&lo, &tp_btf);
	if (!s.drop) {
		snprintf(src->no_drops, sizeof(src->no_drops), "drops: kfree_skb not traceable");
		return;
	}
	s.drop_rb = loop_add_events(lp, s.drop->maps.events, on_drop, NULL, NULL);
	if (!s.drop_rb) {
		rxedrop_bpf__destroy(s.drop);
		s.drop = NULL;
		snprintf(src->no_drops, sizeof(src->no_drops), "drops: no ring buffer");
		return;
	}
	src->drops = true;
}

static void open_rules(const struct rocediag_cfg *cfg, struct diag_sources *src)
{
	struct nfdrop_load_opts lo = { .method = NFDROP_METHOD_AUTO,
				       .netns_inum = cfg->cli.netns ? cli_netns_inum(&cfg->cli) : 0 };
	struct nfdrop_attached att;

	if (cfg->no_rules || cfg->mirror) {
		snprintf(src->no_rules, sizeof(src->no_rules), "netfilter rules: %s",
			 cfg->mirror ? "not on a collector (--mirror)" : "--no-rules");
		return;
	}
	if (s.nfc.nf_drop < 0) {
		snprintf(src->no_rules, sizeof(src->no_rules),
			 "netfilter rules: this kernel has no NETFILTER_DROP drop reason");
		return;
	}
	s.nf = nfdrop_load(&lo, &att, &s.nfc);
	if (!s.nf) {
		snprintf(src->no_rules, sizeof(src->no_rules),
			 "netfilter rules: nfdrop's programs did not load");
		return;
	}
	src->rules = true;
}

static void open_rxe(const struct rocediag_cfg *cfg, struct diag_sources *src,
		     struct loop *lp)
{
	struct rxeqp_load_opts lo = { .cli = &cfg->cli, .events = true };
	struct rxeqp_hooks hk;
	char err[200] = "";

	if (cfg->no_rxe || cfg->mirror) {
		snprintf(src->no_rxe, sizeof(src->no_rxe), "rdma_rxe QP state: %s",
			 cfg->mirror ? "not on a collector (--mirror)" : "--no-rxe");
		return;
	}
	s.rxe = rxeqp_load(&lo, &hk, err, sizeof(err));
	if (!s.rxe) {
		snprintf(src->no_rxe, sizeof(src->no_rxe), "rdma_rxe QP state: %.108s",
			 err[0] ? err : "its programs did not load");
		return;
	}
	s.qp_states = btf_enum_load_module(RXEQP_MODULE, "ib_qp_state", "IB_QPS_");
	if (!rxeqp_delta_init(&rxe_qps, s.rxe->maps.qps, NULL))
		s.rxe_rb = loop_add_events(lp, s.rxe->maps.events, on_rxe_event, NULL, NULL);
	if (!s.rxe_rb) {
		rxeqp_bpf__destroy(s.rxe);
		s.rxe = NULL;
		snprintf(src->no_rxe, sizeof(src->no_rxe), "rdma_rxe QP state: out of memory");
		return;
	}
	src->rxe = true;
}

int rocediag_sources_open(const struct rocediag_cfg *cfg, struct diag_sources *src,
			  struct loop *lp)
{
	memset(src, 0, sizeof(*src));
	s.ncpu = libbpf_num_possible_cpus();
	if (s.ncpu <= 0) {
		cli_err("cannot count CPUs");
		return -1;
	}
	/* before 5.17 kfree_skb has no reason: rxedrop's part counts by
	 * location (its loader picks that program), and nfdrop's part is
	 * listed under "cannot see" (no NETFILTER_DROP) */
	if (drop_reasons_load() && rxedrop_has_reason())
		cli_err("no BTF for enum skb_drop_reason: reasons print as numbers");
	s.ksyms = ksyms_load();
	if (!s.ksyms) {
		cli_err("%s", ksyms_strerror(errno));
		return -1;
	}
	nfdrop_ctx_init(&s.nfc, s.ksyms, &cfg->cli);
	if (open_lat(cfg, src))
		return -1;
	s.pcap = cfg->pcap;
	open_drops(cfg, src, lp);
	open_rules(cfg, src);
	open_rxe(cfg, src, lp);
	rocediag_rdma_open(cfg, src, lp);
	rocediag_verbs_open(cfg, src);
	s.last_ns = now_ns();
	if (!src->lat && !src->drops && !src->rxe && !src->rdma && !src->verbs) {
		cli_err("nothing to watch: %s; %s; %s", src->no_lat, src->no_drops, src->no_rxe);
		return -1;
	}
	return 0;
}

void rocediag_sources_close(void)
{
	for (int i = 0; i < s.nifs; i++)
		netattach_detach(&s.ifs[i]);
	rocelat_backend_close(s.lat);
	rocelat_ll_reads_free(&lat_reads);
	rxedrop_bpf__destroy(s.drop);
	nfdrop_bpf__destroy(s.nf);
	nfdrop_strs_free();	/* its rows are gone: each was read as it was named */
	rxeqp_bpf__destroy(s.rxe);
	btf_enum_free(s.qp_states);
	ksyms_free(s.ksyms);
	rxeqp_delta_free(&rxe_qps);
	rocediag_rdma_close();
	rocediag_verbs_close();
	memset(&s, 0, sizeof(s));
}
