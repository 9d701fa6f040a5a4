// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocegen's responder: answers RC requests as rdma_rxe does (one ACK per
 * AckReq packet, a sequence-error NAK on a gap, then silence until the
 * expected PSN; READ responses), each answer queued behind the flow's
 * injected delay, with optional coalescing, NAKs, RNR NAKs and drops.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rocegen.h"
#include "lib/roce_names.h"

struct sock_key {
	uint8_t family;
	uint8_t pad;
	uint16_t sport;
	uint32_t scope;
	uint8_t local[16];
};

struct rsock {
	struct sock_key key;	/* first: the hash table compares it */
	int fd;
};

struct flow_key {
	uint8_t family;
	uint8_t pad;
	uint16_t sport;
	uint32_t dqpn;
	uint32_t scope;
	uint8_t peer[16];
	uint8_t local[16];
};

struct rflow {
	struct flow_key key;	/* first: the hash table compares it */
	int fd;
	struct sockaddr_storage peer;	/* requester address, reply port */
	uint32_t req_qpn;		/* requester QPN = dqpn + offset */
	bool psn_init;
	bool nak_state;		/* NAK/RNR sent, drop out-of-order silently */
	uint32_t epsn;		/* next expected request PSN */
	uint32_t counted_next;	/* AckReq PSNs below this were counted once */
	uint32_t msn;
	uint64_t kcount;	/* AckReq requests counted for --*-every */
	uint64_t delay_ns;
	uint64_t nak_every, rnr_every, drop_every;
	bool nak_pf, rnr_pf, drop_pf;	/* knob is per flow: use kcount */
	uint32_t pend_cnt, pend_psn, pend_msn, pend_gen;
	uint32_t epoch;		/* bumped by a hello: drops queued answers */
	uint64_t last_due;
	uint64_t requests, msgs, dups, ooo, acks, naks, rnr, read_resp,
		 dropped, cnp;
};

struct htab {
	void **slot;
	size_t cap, n, keylen;
};

static uint64_t rsp_hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static void *rsp_ht_find(const struct htab *h, const void *key)
{
	size_t i;

	if (!h->cap)
		return NULL;
	i = (size_t)rsp_hash_bytes(key, h->keylen) & (h->cap - 1);
	while (h->slot[i]) {
		if (!memcmp(h->slot[i], key, h->keylen))
			return h->slot[i];
		i = (i + 1) & (h->cap - 1);
	}
	return NULL;
}

static void rsp_ht_put(struct htab *h, void *ent);

static void rsp_ht_grow(struct htab *h)
{
	struct htab nh = { .cap = h->cap ? h->cap * 2 : 64, .keylen = h->keylen };
	size_t i;

	nh.slot = rg_calloc(nh.cap, sizeof(void *));
	for (i = 0; i < h->cap; i++)
		if (h->slot[i])
			rsp_ht_put(&nh, h->slot[i]);
	free(h->slot);
	*h = nh;
}

static void rsp_ht_put(struct htab *h, void *ent)
{
	size_t i;

	if ((h->n + 1) * 2 > h->cap)
		rsp_ht_grow(h);
	i = (size_t)rsp_hash_bytes(ent, h->keylen) & (h->cap - 1);
	while (h->slot[i])
		i = (i + 1) & (h->cap - 1);
	h->slot[i] = ent;
	h->n++;
}

enum ev_type { EV_ACK, EV_NAK, EV_RNR, EV_READ, EV_FLUSH };

struct rev {
	uint64_t due, seq;
	struct rflow *f;
	uint8_t type;
	uint32_t psn, msn, len, gen, epoch;
};

struct rheap {
	struct rev *a;
	size_t n, cap;
};

static bool rsp_ev_before(const struct rev *x, const struct rev *y)
{
	return x->due != y->due ? x->due < y->due : x->seq < y->seq;
}

static void rsp_heap_push(struct rheap *h, struct rev e)
{
	size_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 256;
		h->a = rg_realloc(h->a, h->cap, sizeof(*h->a));
	}
	i = h->n++;
	while (i && rsp_ev_before(&e, &h->a[(i - 1) / 2])) {
		h->a[i] = h->a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->a[i] = e;
}

static struct rev rsp_heap_pop(struct rheap *h)
{
	struct rev top = h->a[0], last = h->a[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && rsp_ev_before(&h->a[c + 1], &h->a[c]))
			c++;
		if (!rsp_ev_before(&h->a[c], &last))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	return top;
}

struct responder {
	struct rsp_opts o;
	struct htab socks, flows;
	struct rflow **flist;
	size_t nflows;
	struct rheap heap;
	uint64_t seq;
	uint64_t kcount;	/* AckReq requests counted, all flows */
	uint64_t rng;
	/* totals */
	uint64_t requests, msgs, dups, ooo, acks, naks, rnr, read_resp,
		 dropped, cnp, cnp_rx, ignored, send_errors, sport_fallback;
};

static uint64_t rsp_rng_next(uint64_t *s)
{
	/* xorshift64* */
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static int rsp_sock_for(struct responder *r, int family, const uint8_t local[16],
			uint32_t scope, uint16_t sport)
{
	struct sock_key k;
	struct sockaddr_storage ss;
	struct rsock *s;
	char buf[INET6_ADDRSTRLEN];
	int fd;

	memset(&k, 0, sizeof(k));
	k.family = (uint8_t)family;
	k.sport = sport;
	k.scope = scope;
	memcpy(k.local, local, 16);
	s = rsp_ht_find(&r->socks, &k);
	if (s)
		return s->fd;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET) {
		memcpy(&((struct sockaddr_in *)&ss)->sin_addr, local, 4);
	} else {
		memcpy(&((struct sockaddr_in6 *)&ss)->sin6_addr, local, 16);
		((struct sockaddr_in6 *)&ss)->sin6_scope_id = scope;
	}
	rg_sa_set_port(&ss, sport);
	fd = rg_udp_bound(&ss, true);
	if (fd < 0) {
		/* the reply still goes out, but from another source port */
		rg_warn(&r->o.c, "cannot bind reply socket to %s port %u (%s); replying from an ephemeral port",
			rg_sa_str(&ss, buf, sizeof(buf)), sport, strerror(-fd));
		r->sport_fallback++;
		rg_sa_set_port(&ss, 0);
		fd = rg_udp_bound(&ss, true);
		if (fd < 0)
			cli_die("cannot create reply socket: %s", strerror(-fd));
	}
	rg_sock_bufs(fd);
	s = rg_calloc(1, sizeof(*s));
	s->key = k;
	s->fd = fd;
	rsp_ht_put(&r->socks, s);
	return fd;
}

static void rsp_send(struct responder *r, struct rflow *f, const uint8_t *pkt,
		     size_t len)
{
	ssize_t n;

	do {
		n = sendto(f->fd, pkt, len, 0,
			   (const struct sockaddr *)&f->peer,
			   rg_sa_len(f->peer.ss_family));
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		/* an ICMP error from an earlier reply surfaces once: retry */
		if (errno == ECONNREFUSED)
			n = sendto(f->fd, pkt, len, 0,
				   (const struct sockaddr *)&f->peer,
				   rg_sa_len(f->peer.ss_family));
		if (n < 0)
			r->send_errors++;
	}
}

static void rsp_log(const struct responder *r, const struct rflow *f, const char *dir,
		    uint8_t op, uint32_t psn, const char *extra)
{
	char buf[INET6_ADDRSTRLEN], name[32];

	if (r->o.c.verbose < 1)
		return;
	fprintf(stderr, "%s %s peer=%s sport=%u qpn=0x%x psn=%u%s\n", dir,
		roce_opcode_name(op, name, sizeof(name)), rg_sa_str(&f->peer, buf, sizeof(buf)),
		f->key.sport, *dir == 't' ? f->req_qpn : f->key.dqpn, psn,
		extra ? extra : "");
}

static void rsp_send_aeth(struct responder *r, struct rflow *f, uint8_t syn,
			  uint32_t psn, uint32_t msn)
{
	const struct roce_pkt a = {
		.opcode = ROCE_ACKNOWLEDGE, .migreq = true, .dqpn = f->req_qpn,
		.psn = psn, .syndrome = syn, .msn = msn,
	};
	uint8_t p[ROCE_BTH_LEN + ROCE_AETH_LEN + ROCE_ICRC_LEN];
	char extra[32];

	rsp_send(r, f, p, roce_pkt_build(&a, p, sizeof(p)));
	snprintf(extra, sizeof(extra), " syndrome=0x%02x msn=%u", syn, msn);
	rsp_log(r, f, "tx", ROCE_ACKNOWLEDGE, psn, extra);
}

static void rsp_send_read(struct responder *r, struct rflow *f, uint32_t psn,
			  uint32_t len, uint32_t msn)
{
	uint32_t mtu = r->o.c.mtu, npk = rg_pkts_for(len, mtu), i;
	uint8_t p[PKT_MAX];

	for (i = 0; i < npk; i++) {
		uint32_t plen = len ? (len - i * mtu < mtu ? len - i * mtu : mtu) : 0;
		bool first = i == 0, last = i == npk - 1;
		/* the AETH (on FIRST, LAST, ONLY) and zero payload: the builder */
		struct roce_pkt rr = {
			.migreq = true, .pad = (uint8_t)((4 - plen % 4) % 4),
			.dqpn = f->req_qpn, .psn = roce_psn_add(psn, i),
			.syndrome = ROCE_AETH_SYNDROME(ROCE_AETH_ACK,
						       ROCE_AETH_CREDIT_INVALID),
			.msn = msn, .payload_len = plen,
		};

		if (npk == 1)
			rr.opcode = ROCE_READ_RESP_ONLY;
		else if (first)
			rr.opcode = ROCE_READ_RESP_FIRST;
		else if (last)
			rr.opcode = ROCE_READ_RESP_LAST;
		else
			rr.opcode = ROCE_READ_RESP_MIDDLE;
		rsp_send(r, f, p, roce_pkt_build(&rr, p, sizeof(p)));
		rsp_log(r, f, "tx", rr.opcode, rr.psn, NULL);
		f->read_resp++;
		r->read_resp++;
	}
}

static void rsp_send_cnp(struct responder *r, struct rflow *f)
{
	/* CNP: no MigReq, PSN 0, 16 reserved bytes */
	const struct roce_pkt c = { .opcode = ROCE_OPCODE_CNP, .dqpn = f->req_qpn };
	uint8_t p[ROCE_BTH_LEN + ROCE_CNP_RSVD_LEN + ROCE_ICRC_LEN];

	rsp_send(r, f, p, roce_pkt_build(&c, p, sizeof(p)));
	rsp_log(r, f, "tx", ROCE_OPCODE_CNP, 0, NULL);
	f->cnp++;
	r->cnp++;
}

static void rsp_run(struct responder *r, const struct rev *e);

/* queue an answer behind the flow's delay, keeping the flow's order */
static void rsp_emit(struct responder *r, struct rflow *f, uint8_t type,
		     uint32_t psn, uint32_t msn, uint32_t len)
{
	struct rev e = { .f = f, .type = type, .psn = psn, .msn = msn,
			 .len = len, .epoch = f->epoch };
	uint64_t now = rg_now_ns(), due = now + f->delay_ns;

	if (r->o.jitter_us)
		due += rsp_rng_next(&r->rng) % (r->o.jitter_us * 1000 + 1);
	if (due < f->last_due)
		due = f->last_due;
	f->last_due = due;
	if (due <= now) {
		rsp_run(r, &e);
		return;
	}
	e.due = due;
	e.seq = r->seq++;
	rsp_heap_push(&r->heap, e);
}

static void rsp_coalesce_flush(struct responder *r, struct rflow *f)
{
	if (!f->pend_cnt)
		return;
	f->pend_cnt = 0;
	f->pend_gen++;
	rsp_emit(r, f, EV_ACK, f->pend_psn, f->pend_msn, 0);
}

static void rsp_run(struct responder *r, const struct rev *e)
{
	struct rflow *f = e->f;

	if (e->epoch != f->epoch)
		return;		/* queued before a new run started on the flow */
	switch (e->type) {
	case EV_ACK:
		rsp_send_aeth(r, f, ROCE_AETH_SYNDROME(ROCE_AETH_ACK,
						       ROCE_AETH_CREDIT_INVALID),
			      e->psn, e->msn);
		f->acks++;
		r->acks++;
		break;
	case EV_NAK:
		rsp_send_aeth(r, f, ROCE_AETH_SYNDROME(ROCE_AETH_NAK,
						       ROCE_NAK_PSN_SEQ_ERR),
			      e->psn, e->msn);
		f->naks++;
		r->naks++;
		break;
	case EV_RNR:
		rsp_send_aeth(r, f, ROCE_AETH_SYNDROME(ROCE_AETH_RNR_NAK, r->o.rnr_timer),
			      e->psn, e->msn);
		f->rnr++;
		r->rnr++;
		break;
	case EV_READ:
		rsp_send_read(r, f, e->psn, e->len, e->msn);
		break;
	case EV_FLUSH:
		if (f->pend_gen == e->gen)
			rsp_coalesce_flush(r, f);
		break;
	}
}

static bool rsp_every_hit(uint64_t every, bool per_flow, uint64_t fk, uint64_t gk)
{
	return every && ((per_flow ? fk : gk) % every) == 0;
}

static bool rsp_is_rc_request(uint8_t op)
{
	return op <= ROCE_READ_REQUEST || op == ROCE_SEND_LAST_INV ||
	       op == ROCE_SEND_ONLY_INV;
}

/*
 * The injected faults of an in-order AckReq request, in the order drop, RNR,
 * NAK; true when one applied (the request is not accepted). Each AckReq PSN
 * counts once, so a NAKed request's retransmission is accepted and the
 * injected counts are exact.
 */
static bool rsp_fault(struct responder *r, struct rflow *f, uint8_t op,
		      uint32_t psn)
{
	if (roce_psn_diff(psn, f->counted_next) < 0)
		return false;
	f->counted_next = roce_psn_add(psn, 1);
	f->kcount++;
	r->kcount++;
	if (rsp_every_hit(f->drop_every, f->drop_pf, f->kcount, r->kcount)) {
		f->dropped++;
		r->dropped++;
		rsp_log(r, f, "drop", op, psn, NULL);
		return true;
	}
	if (rsp_every_hit(f->rnr_every, f->rnr_pf, f->kcount, r->kcount)) {
		rsp_coalesce_flush(r, f);
		f->nak_state = true;
		rsp_emit(r, f, EV_RNR, psn, f->msn, 0);
		return true;
	}
	if (rsp_every_hit(f->nak_every, f->nak_pf, f->kcount, r->kcount)) {
		rsp_coalesce_flush(r, f);
		f->nak_state = true;
		rsp_emit(r, f, EV_NAK, psn, f->msn, 0);
		return true;
	}
	return false;
}

static void rsp_ack(struct responder *r, struct rflow *f, uint32_t psn);

/*
 * One RC request packet, rxe-like: in order -> accept and answer; older PSN
 * (duplicate) -> ACK again with the latest PSN, or redo the read; newer PSN
 * (gap) -> one sequence-error NAK with the expected PSN, then silence until
 * the expected PSN arrives.
 */
static void rsp_request(struct responder *r, struct rflow *f, const uint8_t *p,
			size_t len, int tos)
{
	uint8_t op = roce_bth_opcode(p);
	uint32_t psn = roce_bth_psn(p), rdlen = 0, npsn = 1;
	bool ackreq = roce_bth_ackreq(p), is_read = op == ROCE_READ_REQUEST;
	int32_t d;

	f->requests++;
	r->requests++;
	rsp_log(r, f, "rx", op, psn, ackreq ? " ackreq" : NULL);
	if (r->o.cnp && (tos & 3) == 3)
		rsp_send_cnp(r, f);
	if (r->o.count_only)
		return;
	if (is_read) {
		if (len < ROCE_BTH_LEN + ROCE_RETH_LEN + ROCE_ICRC_LEN) {
			r->ignored++;
			return;
		}
		rdlen = roce_reth_dma_len(p);
		if (rdlen > MAX_MSG_SIZE) {
			r->ignored++;
			return;
		}
		npsn = rg_pkts_for(rdlen, r->o.c.mtu);
	}
	if (!f->psn_init) {
		f->psn_init = true;
		f->epsn = psn;
		f->counted_next = psn;
	}
	d = roce_psn_diff(psn, f->epsn);
	if (d < 0) {
		f->dups++;
		r->dups++;
		if (is_read)
			rsp_emit(r, f, EV_READ, psn, f->msn, rdlen);
		else if (ackreq)
			rsp_emit(r, f, EV_ACK, roce_psn_add(f->epsn, ROCE_PSN_MASK),
				 f->msn, 0);
		return;
	}
	if (d > 0) {
		f->ooo++;
		r->ooo++;
		if (!f->nak_state) {
			rsp_coalesce_flush(r, f);
			f->nak_state = true;
			rsp_emit(r, f, EV_NAK, f->epsn, f->msn, 0);
		}
		return;
	}
	f->nak_state = false;
	if ((ackreq || is_read) && rsp_fault(r, f, op, psn))
		return;
	f->epsn = roce_psn_add(psn, npsn);
	if (roce_op_ends_message(op)) {
		f->msn = (f->msn + 1) & ROCE_MSN_MASK;
		f->msgs++;
		r->msgs++;
	}
	if (is_read) {
		rsp_coalesce_flush(r, f);
		rsp_emit(r, f, EV_READ, psn, f->msn, rdlen);
		return;
	}
	if (ackreq)
		rsp_ack(r, f, psn);
}

/* the ACK of an accepted AckReq request, at once or held for --coalesce */
static void rsp_ack(struct responder *r, struct rflow *f, uint32_t psn)
{
	if (r->o.coalesce <= 1) {
		rsp_emit(r, f, EV_ACK, psn, f->msn, 0);
		return;
	}
	f->pend_psn = psn;
	f->pend_msn = f->msn;
	if (++f->pend_cnt >= r->o.coalesce) {
		rsp_coalesce_flush(r, f);
	} else if (f->pend_cnt == 1) {
		struct rev e = {
			.due = rg_now_ns() + r->o.coalesce_us * 1000,
			.seq = r->seq++, .f = f, .type = EV_FLUSH,
			.gen = f->pend_gen, .epoch = f->epoch,
		};

		rsp_heap_push(&r->heap, e);
	}
}

static struct rflow *rsp_flow(struct responder *r,
			      const struct sockaddr_storage *peer,
			      const uint8_t local[16], uint32_t scope,
			      uint32_t dqpn)
{
	struct flow_key k;
	struct rflow *f;
	const struct rsp_opts *o = &r->o;
	uint16_t sport = rg_sa_port(peer);

	memset(&k, 0, sizeof(k));
	k.family = (uint8_t)peer->ss_family;
	k.sport = sport;
	k.dqpn = dqpn;
	k.scope = scope;
	rg_sa_addr_bytes(peer, k.peer);
	memcpy(k.local, local, 16);
	f = rsp_ht_find(&r->flows, &k);
	if (f)
		return f;

	f = rg_calloc(1, sizeof(*f));
	f->key = k;
	/* --reply-sport: each QP answers from a port of its own, as hardware
	 * RNICs pick one per QP on each side */
	f->fd = rsp_sock_for(r, peer->ss_family, local, scope,
			     o->reply_sport ? (uint16_t)(o->reply_sport + r->nflows) : sport);
	f->peer = *peer;
	rg_sa_set_port(&f->peer, o->c.port);
	f->req_qpn = (dqpn + o->c.qpn_offset) & ROCE_QPN_MASK;
	f->delay_ns = rg_knob_get(&o->delay_us, sport, dqpn, &(bool){ 0 }) * 1000;
	f->nak_every = rg_knob_get(&o->nak_every, sport, dqpn, &f->nak_pf);
	f->rnr_every = rg_knob_get(&o->rnr_every, sport, dqpn, &f->rnr_pf);
	f->drop_every = rg_knob_get(&o->drop_every, sport, dqpn, &f->drop_pf);
	rsp_ht_put(&r->flows, f);
	r->flist = rg_realloc(r->flist, r->nflows + 1, sizeof(*r->flist));
	r->flist[r->nflows++] = f;
	return f;
}

static void rsp_packet(struct responder *r, const uint8_t *p, size_t len,
		       const struct sockaddr_storage *peer,
		       const uint8_t local[16], uint32_t scope, int tos)
{
	struct rflow *f;
	uint8_t op;

	if (len < ROCE_BTH_LEN + ROCE_ICRC_LEN) {
		r->ignored++;
		return;
	}
	op = roce_bth_opcode(p);
	if (op == ROCE_OPCODE_CNP) {
		r->cnp_rx++;
		return;
	}
	if (!rsp_is_rc_request(op)) {
		/* UD/UC/XRC, atomics, or answers sent to us */
		r->ignored++;
		return;
	}
	f = rsp_flow(r, peer, local, scope, roce_bth_dqpn(p));
	rsp_request(r, f, p, len, tos);
}

/* one recvmsg; returns false when the socket is drained */
static bool rsp_recv_one(struct responder *r, int fd)
{
	uint8_t buf[PKT_MAX + 64], local[16];
	union {
		char buf[256];
		struct cmsghdr align;
	} cbuf;
	struct sockaddr_storage peer;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = {
		.msg_name = &peer, .msg_namelen = sizeof(peer),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf),
	};
	struct cmsghdr *c;
	uint32_t scope = 0;
	int tos = 0;
	ssize_t n;

	n = recvmsg(fd, &mh, MSG_DONTWAIT);
	if (n < 0)
		return rg_recv_again("recvmsg");
	memset(local, 0, sizeof(local));
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			memcpy(local, &pi.ipi_addr, 4);
		} else if (c->cmsg_level == IPPROTO_IP &&
			   c->cmsg_type == IP_TOS) {
			tos = *(uint8_t *)CMSG_DATA(c);
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
			   c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			memcpy(local, &pi.ipi6_addr, 16);
			if (IN6_IS_ADDR_LINKLOCAL(&pi.ipi6_addr))
				scope = pi.ipi6_ifindex;
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
			   c->cmsg_type == IPV6_TCLASS) {
			int tc;

			memcpy(&tc, CMSG_DATA(c), sizeof(tc));
			tos = tc;
		}
	}
	rsp_packet(r, buf, (size_t)n, &peer, local, scope, tos);
	return true;
}


static void rsp_ctl(struct responder *r, int fd)
{
	char buf[256], reply[64];
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	unsigned int sport, flows, qpn;
	uint8_t pa[16];
	size_t i, nreset = 0;
	ssize_t n;

	n = recvfrom(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT,
		     (struct sockaddr *)&peer, &pl);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, CTL_MAGIC " HELLO sport=%u flows=%u qpn=%u", &sport,
		   &flows, &qpn) != 3)
		return;
	rg_sa_addr_bytes(&peer, pa);
	for (i = 0; i < r->nflows; i++) {
		struct rflow *f = r->flist[i];
		uint32_t k = (uint32_t)f->key.sport - sport;

		if (f->key.family != peer.ss_family ||
		    memcmp(f->key.peer, pa, 16) || f->key.sport < sport ||
		    k >= flows || f->key.dqpn != ((qpn + k) & ROCE_QPN_MASK))
			continue;
		f->psn_init = false;
		f->nak_state = false;
		f->msn = 0;
		f->pend_cnt = 0;
		f->pend_gen++;
		f->epoch++;
		f->last_due = 0;
		nreset++;
	}
	n = snprintf(reply, sizeof(reply), CTL_MAGIC " OK reset=%zu", nreset);
	sendto(fd, reply, (size_t)n, 0, (struct sockaddr *)&peer, pl);
	if (r->o.c.verbose)
		rg_warn(&r->o.c, "control: hello sport=%u flows=%u qpn=0x%x, %zu flows reset",
			sport, flows, qpn, nreset);
}

static int rsp_listen(const struct sockaddr_storage *ss, bool must)
{
	char buf[INET6_ADDRSTRLEN];
	int fd = rg_udp_bound(ss, true), one = 1;

	if (fd < 0) {
		if (!must && (fd == -EAFNOSUPPORT || fd == -EADDRNOTAVAIL))
			return -1;
		cli_die("cannot listen on %s port %u: %s%s",
			rg_sa_str(ss, buf, sizeof(buf)), rg_sa_port(ss), strerror(-fd),
		    fd == -EADDRINUSE ?
		    " (another rocegen or rdma_rxe holds the port?)" : "");
	}
	if (ss->ss_family == AF_INET) {
		setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
	} else {
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
	}
	rg_sock_bufs(fd);
	rg_set_nonblock(fd);
	return fd;
}

static void rsp_summary(struct responder *r)
{
	char peer[INET6_ADDRSTRLEN], qpn[16];
	size_t i;

	if (r->o.flow_stats) {
		for (i = 0; i < r->nflows; i++) {
			struct rflow *f = r->flist[i];

			snprintf(qpn, sizeof(qpn), "0x%x", f->key.dqpn);
			struct kv kv[] = {
				KVS("role", "responder-flow"),
				KVS("peer", rg_sa_str(&f->peer, peer, sizeof(peer))),
				KVU("sport", f->key.sport), KVS("qpn", qpn),
				KVU("requests", f->requests), KVU("msgs", f->msgs),
				KVU("dups", f->dups), KVU("ooo", f->ooo),
				KVU("acks", f->acks), KVU("naks", f->naks),
				KVU("rnr", f->rnr), KVU("read_resp", f->read_resp),
				KVU("dropped", f->dropped), KVU("cnp", f->cnp),
			};
			rg_print_kvs(&r->o.c, "rocegen:", kv, sizeof(kv) / sizeof(kv[0]));
		}
	}
	struct kv kv[] = {
		KVS("role", "responder"),
		KVU("requests", r->requests), KVU("msgs", r->msgs),
		KVU("dups", r->dups), KVU("ooo", r->ooo),
		KVU("acks", r->acks), KVU("naks", r->naks), KVU("rnr", r->rnr),
		KVU("read_resp", r->read_resp), KVU("dropped", r->dropped),
		KVU("cnp", r->cnp), KVU("cnp_rx", r->cnp_rx),
		KVU("ignored", r->ignored), KVU("flows", r->nflows),
		KVU("send_errors", r->send_errors),
		KVU("sport_fallback", r->sport_fallback),
	};
	rg_print_kvs(&r->o.c, "rocegen:", kv, sizeof(kv) / sizeof(kv[0]));
}

/* the RoCE sockets (-b ADDR, else 0.0.0.0 and [::]) then the control
 * sockets on the same addresses; returns how many, announces them */
static nfds_t rsp_open(struct responder *r, struct pollfd *pfd, bool *is_ctl)
{
	char where[2][INET6_ADDRSTRLEN + 16];
	struct sockaddr_storage ss;
	socklen_t sl;
	nfds_t n = 0, i, ndata;

	if (r->o.bind_addr) {
		if (rg_parse_addr(r->o.bind_addr, r->o.c.port, &ss, &sl))
			cli_die("invalid bind address: '%s'", r->o.bind_addr);
		pfd[n].fd = rsp_listen(&ss, true);
		snprintf(where[n], sizeof(where[n]), "%s", r->o.bind_addr);
		n++;
	} else {
		memset(&ss, 0, sizeof(ss));
		ss.ss_family = AF_INET;
		rg_sa_set_port(&ss, r->o.c.port);
		pfd[n].fd = rsp_listen(&ss, true);
		snprintf(where[n], sizeof(where[n]), "0.0.0.0");
		n++;
		memset(&ss, 0, sizeof(ss));
		ss.ss_family = AF_INET6;
		rg_sa_set_port(&ss, r->o.c.port);
		pfd[n].fd = rsp_listen(&ss, false);
		if (pfd[n].fd >= 0) {
			snprintf(where[n], sizeof(where[n]), "[::]");
			n++;
		}
	}
	ndata = n;
	for (i = 0; r->o.c.ctl_port && i < ndata; i++) {
		socklen_t l = sizeof(ss);

		if (getsockname(pfd[i].fd, (struct sockaddr *)&ss, &l))
			cli_die("getsockname: %s", strerror(errno));
		rg_sa_set_port(&ss, r->o.c.ctl_port);
		pfd[n].fd = rg_udp_bound(&ss, false);
		if (pfd[n].fd < 0)
			cli_die("cannot listen on control port %u: %s",
				r->o.c.ctl_port, strerror(-pfd[n].fd));
		rg_set_nonblock(pfd[n].fd);
		is_ctl[n++] = true;
	}
	for (i = 0; i < n; i++)
		pfd[i].events = POLLIN;
	rg_warn(&r->o.c, "responder listening on %s%s%s port %u", where[0],
		ndata > 1 ? " and " : "", ndata > 1 ? where[1] : "",
		r->o.c.port);
	return n;
}

int rg_run_responder(const struct rsp_opts *o)
{
	static struct responder rs;
	struct responder *r = &rs;
	struct pollfd pfd[4];
	bool is_ctl[4] = { false };
	sigset_t mask;
	uint64_t deadline = UINT64_MAX;
	nfds_t n, i;

	r->o = *o;
	r->socks.keylen = sizeof(struct sock_key);
	r->flows.keylen = sizeof(struct flow_key);
	r->rng = r->o.seed ? r->o.seed : 0x9e3779b97f4a7c15ull;
	rg_raise_nofile();
	rg_setup_signals(&mask);
	n = rsp_open(r, pfd, is_ctl);
	if (r->o.c.timeout_s > 0)
		deadline = rg_now_ns() + (uint64_t)(r->o.c.timeout_s * 1e9);

	while (!rg_stopping()) {
		uint64_t now = rg_now_ns(), wake = deadline;
		int budget;

		if (now >= deadline)
			break;
		while (r->heap.n && r->heap.a[0].due <= now) {
			struct rev e = rsp_heap_pop(&r->heap);

			rsp_run(r, &e);
		}
		if (r->heap.n && r->heap.a[0].due < wake)
			wake = r->heap.a[0].due;
		if (rg_wait_fds(pfd, n, rg_now_ns(), wake, &mask) <= 0)
			continue;
		for (i = 0; i < n; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			if (is_ctl[i]) {
				rsp_ctl(r, pfd[i].fd);
				continue;
			}
			/* bounded, so due answers are not starved */
			for (budget = 256; budget && rsp_recv_one(r, pfd[i].fd);
			     budget--)
				;
		}
	}
	rsp_summary(r);
	return 0;
}
