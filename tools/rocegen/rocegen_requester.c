// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocegen's requester: RC messages (SEND, WRITE, READ) over several flows,
 * closed loop, answered by ACKs (cumulative), NAKs (go-back-N), RNR NAKs
 * (wait, then resend) and READ responses (the first one acknowledges all
 * earlier requests); a per-flow retransmit timer; RTT samples by Karn.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rocegen.h"
#include "lib/roce_names.h"

/* IB RNR NAK timer field -> microseconds (IBA table 45) */
static uint64_t req_rnr_timer_us(unsigned int code)
{
	static const uint32_t us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};

	return us[code & 31];
}


struct msg {
	uint32_t psn;		/* first PSN */
	uint32_t npsn;		/* PSNs consumed (read: response packets) */
	uint32_t npk;		/* request packets */
	uint32_t size;
	uint8_t op;		/* enum msg_op */
	bool retransmitted;	/* Karn: no RTT sample */
	uint32_t retries, rnr_retries;
	uint32_t rd_next;	/* next expected read response PSN */
	uint64_t first_tx_ns, tx_ns;
};

struct qflow {
	int fd;
	uint16_t sport;
	uint32_t dqpn, lqpn;
	uint32_t next_psn;
	uint64_t quota, issued;
	struct msg *q;
	size_t qcap, qhead, qlen;
	bool rnr_wait;
	uint64_t rnr_until;
	uint32_t rnr_psn;
	bool dead;
	uint64_t progress_ns;	/* last ACK/response progress: restarts timer */
	/* stats */
	uint64_t requests, completed, retransmits, acks, naks, rnr, read_resp;
	uint64_t rtt_n, rtt_sum, rtt_min, rtt_max;
};

struct dup_ent {
	uint64_t due;
	uint32_t flow;
	struct msg m;
};

enum retx_cause { RC_INJECTED, RC_TIMEOUT, RC_NAK, RC_RNR };

struct requester {
	struct req_opts o;
	struct qflow *fl;
	struct sockaddr_storage dst, src;
	int ack_fd;
	struct dup_ent *dups;
	size_t ndup_head, ndup, dupcap;
	uint64_t issued_total;
	uint64_t last_rx_ns;
	uint64_t next_issue;	/* --interval-us: when the next may go */
	uint32_t rr;		/* --interval-us: the flow whose turn it is */
	uint8_t payload[MAX_MTU];
	/* totals */
	uint64_t requests, sent, retransmits, retx[4], acks, dup_acks, naks,
		 rnr, read_resp, cnp, completed, failed, timeouts, stray,
		 bad_qpn, send_errors;
	uint64_t rtt_n, rtt_sum, rtt_min, rtt_max;
};

static struct msg *req_q_at(struct qflow *f, size_t i)
{
	return &f->q[(f->qhead + i) % f->qcap];
}

static void req_q_push(struct qflow *f, const struct msg *m)
{
	if (f->qlen == f->qcap) {
		size_t ncap = f->qcap ? f->qcap * 2 : 16, i;
		struct msg *nq = rg_calloc(ncap, sizeof(*nq));

		for (i = 0; i < f->qlen; i++)
			nq[i] = *req_q_at(f, i);
		free(f->q);
		f->q = nq;
		f->qcap = ncap;
		f->qhead = 0;
	}
	f->q[(f->qhead + f->qlen) % f->qcap] = *m;
	f->qlen++;
}

static void req_q_pop(struct qflow *f)
{
	f->qhead = (f->qhead + 1) % f->qcap;
	f->qlen--;
}

static uint32_t req_msg_end(const struct msg *m)
{
	return roce_psn_add(m->psn, m->npsn - 1);
}

static void req_log(const struct requester *rq, const struct qflow *f,
		    const char *dir, uint8_t op, uint32_t psn, const char *extra)
{
	char name[32];

	if (rq->o.c.verbose < 1)
		return;
	fprintf(stderr, "%s %s sport=%u qpn=0x%x psn=%u%s\n", dir,
		roce_opcode_name(op, name, sizeof(name)), f->sport, *dir == 't' ? f->dqpn : f->lqpn, psn,
		extra ? extra : "");
}

static uint8_t req_opcode(const struct msg *m, uint32_t k)
{
	bool first = k == 0, last = k == m->npk - 1;

	if (m->op == MOP_READ)
		return ROCE_READ_REQUEST;
	if (m->op == MOP_SEND)
		return first && last ? ROCE_SEND_ONLY : first ? ROCE_SEND_FIRST :
		       last ? ROCE_SEND_LAST : ROCE_SEND_MIDDLE;
	return first && last ? ROCE_WRITE_ONLY : first ? ROCE_WRITE_FIRST :
	       last ? ROCE_WRITE_LAST : ROCE_WRITE_MIDDLE;
}

/* transmit request packet k of message m */
static void req_send_pkt(struct requester *rq, struct qflow *f,
			 const struct msg *m, uint32_t k, const char *why)
{
	uint8_t pkt[PKT_MAX];
	uint32_t mtu = rq->o.c.mtu, plen = 0;
	uint32_t idx = (uint32_t)(f - rq->fl);
	bool last = k == m->npk - 1;
	/* a RETH on READ REQUEST, WRITE FIRST and ONLY: the builder's rule */
	struct roce_pkt rp = {
		.opcode = req_opcode(m, k), .migreq = true, .ackreq = last,
		.dqpn = f->dqpn, .psn = roce_psn_add(m->psn, k),
		.va = READ_VA_BASE + ((uint64_t)idx << 32),
		.rkey = RKEY_BASE + idx, .dma_len = m->size,
		.payload = rq->payload,
	};
	size_t off;
	ssize_t n;

	if (m->op != MOP_READ && m->size) {
		plen = m->size - k * mtu < mtu ? m->size - k * mtu : mtu;
		rp.pad = (uint8_t)((4 - plen % 4) % 4);
	}
	rp.payload_len = plen;
	off = roce_pkt_build(&rp, pkt, sizeof(pkt));
	do {
		n = send(f->fd, pkt, off, 0);
		/* a pending ICMP error is reported once, then cleared */
	} while (n < 0 && (errno == EINTR || errno == ECONNREFUSED));
	if (n < 0)
		rq->send_errors++;
	if (rq->o.c.verbose >= 1) {
		char extra[48];

		snprintf(extra, sizeof(extra), "%s%s%s", last ? " ackreq" : "",
			 why ? " " : "", why ? why : "");
		req_log(rq, f, "tx", rp.opcode, rp.psn, extra);
	}
}

static void req_retx_count(struct requester *rq, struct qflow *f,
			   enum retx_cause c)
{
	rq->retransmits++;
	rq->retx[c]++;
	f->retransmits++;
}

/* go-back-N: resend everything outstanding from PSN from */
static void req_go_back(struct requester *rq, struct qflow *f, uint32_t from,
			enum retx_cause cause)
{
	static const char *const why[] = { "retx=injected", "retx=timeout",
					   "retx=nak", "retx=rnr" };
	uint64_t now = rg_now_ns();
	size_t i, j = f->qlen;

	for (i = 0; i < f->qlen; i++) {
		struct msg *m = req_q_at(f, i);

		if (roce_psn_diff(from, m->psn) >= 0 &&
		    roce_psn_diff(from, m->psn) < (int32_t)m->npsn) {
			j = i;
			break;
		}
	}
	if (j == f->qlen) {
		if (!f->qlen || roce_psn_diff(from, req_q_at(f, 0)->psn) > 0)
			return;	/* stale: nothing outstanding there */
		j = 0;
		from = req_q_at(f, 0)->psn;
	}
	for (i = j; i < f->qlen; i++) {
		struct msg *m = req_q_at(f, i);
		uint32_t k = 0;

		if (i == j && m->op != MOP_READ)
			k = (uint32_t)roce_psn_diff(from, m->psn);
		for (; k < m->npk; k++) {
			req_send_pkt(rq, f, m, k, why[cause]);
			req_retx_count(rq, f, cause);
		}
		m->retransmitted = true;
		m->rd_next = m->psn;
		m->tx_ns = now;
	}
}

static void req_complete_head(struct requester *rq, struct qflow *f,
			      uint64_t now)
{
	struct msg *m = req_q_at(f, 0);

	if (!m->retransmitted) {
		uint64_t rtt = (now - m->first_tx_ns) / 1000;

		rq->rtt_n++;
		rq->rtt_sum += rtt;
		if (rq->rtt_n == 1 || rtt < rq->rtt_min)
			rq->rtt_min = rtt;
		if (rtt > rq->rtt_max)
			rq->rtt_max = rtt;
		f->rtt_n++;
		f->rtt_sum += rtt;
		if (f->rtt_n == 1 || rtt < f->rtt_min)
			f->rtt_min = rtt;
		if (rtt > f->rtt_max)
			f->rtt_max = rtt;
	}
	rq->completed++;
	f->completed++;
	f->progress_ns = now;
	req_q_pop(f);
}

/* cumulative: complete every message whose last PSN is <= psn */
static uint64_t req_ack_upto(struct requester *rq, struct qflow *f,
			     uint32_t psn)
{
	uint64_t now = rg_now_ns(), n = 0;

	/* an acknowledgement beyond what was sent is bogus */
	if (roce_psn_diff(psn, f->next_psn) >= 0)
		return 0;
	while (f->qlen && roce_psn_diff(psn, req_msg_end(req_q_at(f, 0))) >= 0) {
		req_complete_head(rq, f, now);
		n++;
	}
	return n;
}

static void req_flow_dead(struct requester *rq, struct qflow *f,
			  const char *why)
{
	rg_warn(&rq->o.c, "flow sport=%u qpn=0x%x: %s, giving up", f->sport, f->dqpn, why);
	rq->failed += f->qlen + (f->quota - f->issued);
	f->qlen = 0;
	f->issued = f->quota;
	f->dead = true;
	f->rnr_wait = false;
}

/* the outstanding message holding psn, if any */
static struct msg *req_find(struct qflow *f, uint32_t psn)
{
	size_t i;

	for (i = 0; i < f->qlen; i++) {
		struct msg *m = req_q_at(f, i);
		int32_t d = roce_psn_diff(psn, m->psn);

		if (d >= 0 && d < (int32_t)m->npsn)
			return m;
	}
	return NULL;
}

static void req_aeth(struct requester *rq, struct qflow *f, uint32_t psn,
		     uint8_t syn)
{
	struct msg *m;

	/* the top 3 bits; 010 and the reserved 1xx are no answer of ours */
	switch (syn >> 5) {
	case ROCE_AETH_ACK:
		rq->acks++;
		f->acks++;
		if (!req_ack_upto(rq, f, psn))
			rq->dup_acks++;
		break;
	case ROCE_AETH_RNR_NAK:
		rq->rnr++;
		f->rnr++;
		/* acknowledges everything before psn */
		req_ack_upto(rq, f, roce_psn_add(psn, ROCE_PSN_MASK));
		m = req_find(f, psn);
		if (!m || rq->o.no_recovery)
			break;
		if (++m->rnr_retries > rq->o.rnr_retry) {
			req_flow_dead(rq, f, "RNR retry count exceeded");
			break;
		}
		f->rnr_wait = true;
		f->rnr_psn = psn;
		f->rnr_until = rg_now_ns() + req_rnr_timer_us(ROCE_AETH_CODE(syn)) * 1000;
		break;
	case ROCE_AETH_NAK:
		rq->naks++;
		f->naks++;
		req_ack_upto(rq, f, roce_psn_add(psn, ROCE_PSN_MASK));
		m = req_find(f, psn);
		if (!m || rq->o.no_recovery)
			break;
		if (ROCE_AETH_CODE(syn) != ROCE_NAK_PSN_SEQ_ERR) {
			req_flow_dead(rq, f, "fatal NAK");
			break;
		}
		if (++m->retries > rq->o.retry) {
			req_flow_dead(rq, f, "retry count exceeded after NAKs");
			break;
		}
		req_go_back(rq, f, psn, RC_NAK);
		break;
	default:
		rq->stray++;
		break;
	}
}

static void req_read_resp(struct requester *rq, struct qflow *f, uint8_t op,
			  uint32_t psn)
{
	uint64_t now = rg_now_ns();
	struct msg *m;

	rq->read_resp++;
	f->read_resp++;
	m = req_find(f, psn);
	if (!m || m->op != MOP_READ)
		return;		/* duplicate of a finished read */
	/* the first response implicitly acknowledges all earlier requests */
	while (req_q_at(f, 0) != m)
		req_complete_head(rq, f, now);
	if (op == ROCE_READ_RESP_FIRST || op == ROCE_READ_RESP_ONLY) {
		if (psn != m->psn)
			return;
	} else if (psn != m->rd_next) {
		return;		/* out of sequence: the timer will redo it */
	}
	m->rd_next = roce_psn_add(psn, 1);
	/* a long read is progressing: restart the retransmit timer */
	f->progress_ns = now;
	if ((op == ROCE_READ_RESP_LAST || op == ROCE_READ_RESP_ONLY) &&
	    psn == req_msg_end(m))
		req_complete_head(rq, f, now);
}


static bool req_recv_one(struct requester *rq)
{
	uint8_t p[PKT_MAX + 64];
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	struct qflow *f;
	uint32_t psn;
	ssize_t n;
	uint8_t op;

	n = recvfrom(rq->ack_fd, p, sizeof(p), MSG_DONTWAIT,
		     (struct sockaddr *)&peer, &pl);
	if (n < 0)
		return rg_recv_again("recvfrom");
	rq->last_rx_ns = rg_now_ns();
	if ((size_t)n < ROCE_BTH_LEN + ROCE_ICRC_LEN || !rg_same_addr(&peer, &rq->dst)) {
		rq->stray++;
		return true;
	}
	/* an answer belongs to the flow whose QPN it names, whatever port
	 * it comes from (hardware RNICs answer from a port of their own) */
	{
		uint32_t idx = (roce_bth_dqpn(p) - rq->fl[0].lqpn) & ROCE_QPN_MASK;

		if (idx >= rq->o.flows) {
			rq->bad_qpn++;
			return true;
		}
		f = &rq->fl[idx];
	}
	op = roce_bth_opcode(p);
	psn = roce_bth_psn(p);
	if (rq->o.c.verbose >= 1) {
		char extra[32] = "";

		if (op == ROCE_ACKNOWLEDGE || op == ROCE_READ_RESP_FIRST ||
		    op == ROCE_READ_RESP_LAST || op == ROCE_READ_RESP_ONLY)
			snprintf(extra, sizeof(extra), " syndrome=0x%02x",
				 (size_t)n >= ROCE_BTH_LEN + ROCE_AETH_LEN ?
				 roce_aeth_syndrome(p) : 0);
		req_log(rq, f, "rx", op, psn, extra);
	}
	switch (op) {
	case ROCE_ACKNOWLEDGE:
		if ((size_t)n < ROCE_BTH_LEN + ROCE_AETH_LEN + ROCE_ICRC_LEN) {
			rq->stray++;
			break;
		}
		req_aeth(rq, f, psn, roce_aeth_syndrome(p));
		break;
	case ROCE_READ_RESP_FIRST:
	case ROCE_READ_RESP_MIDDLE:
	case ROCE_READ_RESP_LAST:
	case ROCE_READ_RESP_ONLY:
		req_read_resp(rq, f, op, psn);
		break;
	case ROCE_OPCODE_CNP:
		rq->cnp++;
		break;
	default:
		rq->stray++;
		break;
	}
	return true;
}

static void req_issue(struct requester *rq, struct qflow *f, uint64_t now)
{
	struct msg m = { 0 };
	uint32_t k, mtu = rq->o.c.mtu;

	rq->issued_total++;
	m.op = (uint8_t)(rq->o.op >= 0 ? rq->o.op :
			 (int)((rq->issued_total - 1) % 3));
	m.psn = f->next_psn;
	m.size = rq->o.size;
	m.npsn = rg_pkts_for(m.size, mtu);
	m.npk = m.op == MOP_READ ? 1 : m.npsn;
	m.rd_next = m.psn;
	m.first_tx_ns = m.tx_ns = now;
	f->next_psn = roce_psn_add(f->next_psn, m.npsn);
	f->issued++;
	f->requests++;
	rq->requests++;
	req_q_push(f, &m);
	for (k = 0; k < m.npk; k++)
		req_send_pkt(rq, f, &m, k, NULL);
	rq->sent += m.npk;

	if (rq->o.retransmit_every &&
	    rq->issued_total % rq->o.retransmit_every == 0) {
		if (rq->ndup == rq->dupcap) {
			rq->dupcap = rq->dupcap ? rq->dupcap * 2 : 64;
			rq->dups = rg_realloc(rq->dups, rq->dupcap,
					      sizeof(*rq->dups));
		}
		rq->dups[rq->ndup++] = (struct dup_ent){
			.due = now + rq->o.retransmit_pause_us * 1000,
			.flow = (uint32_t)(f - rq->fl), .m = m,
		};
	}
}

/* resend the AckReq packet of every Nth message once, after a pause */
static void req_run_dups(struct requester *rq, uint64_t now)
{
	while (rq->ndup_head < rq->ndup && rq->dups[rq->ndup_head].due <= now) {
		struct dup_ent *d = &rq->dups[rq->ndup_head++];
		struct qflow *f = &rq->fl[d->flow];
		struct msg *m = req_find(f, d->m.psn);

		if (!f->dead) {
			req_send_pkt(rq, f, &d->m, d->m.npk - 1,
				     "retx=injected");
			req_retx_count(rq, f, RC_INJECTED);
			if (m && m->psn == d->m.psn)
				m->retransmitted = true;
		}
	}
	if (rq->ndup_head == rq->ndup)
		rq->ndup_head = rq->ndup = 0;
}

/* when the flow's retransmit timer fires (IB: per QP, restarted on progress) */
static uint64_t req_timer_due(const struct requester *rq, const struct qflow *f)
{
	uint64_t t = req_q_at((struct qflow *)f, 0)->tx_ns;

	if (f->progress_ns > t)
		t = f->progress_ns;
	return t + rq->o.ack_timeout_us * 1000;
}

static void req_timeout(struct requester *rq, struct qflow *f)
{
	struct msg *m = req_q_at(f, 0);

	rq->timeouts++;
	if (rq->o.no_recovery) {
		rq->failed++;
		req_q_pop(f);
		return;
	}
	if (++m->retries > rq->o.retry) {
		req_flow_dead(rq, f, "retry count exceeded");
		return;
	}
	req_go_back(rq, f, m->psn, RC_TIMEOUT);
}

static void req_setup(struct requester *rq)
{
	const struct req_opts *o = &rq->o;
	socklen_t dl, sl;
	char buf[INET6_ADDRSTRLEN];
	uint32_t i;
	int fd;

	if (rg_parse_addr(o->dst, o->c.port, &rq->dst, &dl))
		cli_die("invalid destination address: '%s'", o->dst);
	if (o->src) {
		if (rg_parse_addr(o->src, 0, &rq->src, &sl))
			cli_die("invalid source address: '%s'", o->src);
		if (rq->src.ss_family != rq->dst.ss_family)
			cli_die("source and destination address families differ");
	} else {
		/* let routing pick the source, as the kernel would */
		fd = socket(rq->dst.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			cli_die("socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&rq->dst, dl))
			cli_die("no route to %s: %s", o->dst, strerror(errno));
		sl = sizeof(rq->src);
		if (getsockname(fd, (struct sockaddr *)&rq->src, &sl))
			cli_die("getsockname: %s", strerror(errno));
		close(fd);
	}

	if (rg_same_addr(&rq->src, &rq->dst))
		cli_die("source and destination are both %s: answers come back to port %u, so run the responder in another namespace or on another address",
			rg_sa_str(&rq->dst, buf, sizeof(buf)), o->c.port);
	rg_sa_set_port(&rq->src, o->c.port);
	rq->ack_fd = rg_udp_bound(&rq->src, true);
	if (rq->ack_fd < 0)
		cli_die("cannot listen for answers on %s port %u: %s%s",
			rg_sa_str(&rq->src, buf, sizeof(buf)), o->c.port,
		    strerror(-rq->ack_fd),
		    rq->ack_fd == -EADDRINUSE ?
		    " (a responder or rdma_rxe in this namespace holds the port; use another address or namespace)" :
		    "");
	rg_sock_bufs(rq->ack_fd);
	rg_set_nonblock(rq->ack_fd);

	rq->fl = rg_calloc(o->flows, sizeof(*rq->fl));
	for (i = 0; i < o->flows; i++) {
		struct qflow *f = &rq->fl[i];
		struct sockaddr_storage ss = rq->src;

		f->sport = (uint16_t)(o->sport + i);
		f->dqpn = (o->qpn + i) & ROCE_QPN_MASK;
		f->lqpn = (f->dqpn + o->c.qpn_offset) & ROCE_QPN_MASK;
		/* a fixed hash of the flow index: random-looking 24-bit
		 * starting PSNs, the same every run */
		f->next_psn = o->psn_random ?
			(uint32_t)((i + 1) * 0x9E3779B97F4A7C15ull >> 40) & ROCE_PSN_MASK : o->psn;
		f->quota = o->count / o->flows + (i < o->count % o->flows);
		rg_sa_set_port(&ss, f->sport);
		f->fd = rg_udp_bound(&ss, true);
		if (f->fd < 0)
			cli_die("cannot bind source port %u on %s: %s", f->sport,
				rg_sa_str(&ss, buf, sizeof(buf)), strerror(-f->fd));
		if (connect(f->fd, (struct sockaddr *)&rq->dst, dl))
			cli_die("connect to %s: %s", o->dst, strerror(errno));
		rg_sock_bufs(f->fd);
		if (o->tos >= 0) {
			int tos = o->tos;

			if (rq->dst.ss_family == AF_INET)
				setsockopt(f->fd, IPPROTO_IP, IP_TOS, &tos,
					   sizeof(tos));
			else
				setsockopt(f->fd, IPPROTO_IPV6, IPV6_TCLASS,
					   &tos, sizeof(tos));
		}
	}
	for (i = 0; i < sizeof(rq->payload); i++)
		rq->payload[i] = (uint8_t)i;
}

/* announce the flows to the responder; false if it never answered */
static bool req_hello(struct requester *rq)
{
	const struct req_opts *o = &rq->o;
	struct sockaddr_storage ss = rq->src, to = rq->dst;
	char msg[128], buf[128];
	struct pollfd pfd;
	int fd, tries, len;
	bool ok = false;

	rg_sa_set_port(&ss, 0);
	rg_sa_set_port(&to, o->c.ctl_port);
	fd = rg_udp_bound(&ss, false);
	if (fd < 0)
		cli_die("cannot create control socket: %s", strerror(-fd));
	len = snprintf(msg, sizeof(msg), CTL_MAGIC " HELLO sport=%u flows=%u qpn=%u",
		       o->sport, o->flows, o->qpn);
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (tries = 0; tries < 3 && !ok && !rg_stopping(); tries++) {
		sendto(fd, msg, (size_t)len, 0, (struct sockaddr *)&to,
		       rg_sa_len(to.ss_family));
		while (poll(&pfd, 1, 100) > 0) {
			ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

			if (n < 0 && errno == ECONNREFUSED)
				break;
			if (n > 0) {
				buf[n] = '\0';
				if (!strncmp(buf, CTL_MAGIC " OK", strlen(CTL_MAGIC) + 3)) {
					ok = true;
					break;
				}
			}
		}
	}
	close(fd);
	if (!ok)
		rg_warn(&o->c, "no answer on control port %u of %s: a responder that saw these flows before may take the PSNs for duplicates",
			o->c.ctl_port, o->dst);
	return ok;
}

static bool req_flow_can_issue(const struct requester *rq, const struct qflow *f)
{
	return !f->dead && !f->rnr_wait && f->issued < f->quota &&
	       (!rq->o.window || f->qlen < rq->o.window);
}

static bool req_all_done(const struct requester *rq)
{
	uint32_t i;

	if (rq->ndup_head < rq->ndup)
		return false;
	for (i = 0; i < rq->o.flows; i++) {
		const struct qflow *f = &rq->fl[i];

		if (!f->dead && (f->issued < f->quota || f->qlen))
			return false;
	}
	return true;
}

static void req_summary(struct requester *rq, uint64_t elapsed_us, bool timed_out)
{
	char qpn[16];
	uint32_t i;

	if (rq->o.flow_stats) {
		for (i = 0; i < rq->o.flows; i++) {
			struct qflow *f = &rq->fl[i];

			snprintf(qpn, sizeof(qpn), "0x%x", f->dqpn);
			struct kv kv[] = {
				KVS("role", "requester-flow"),
				KVU("sport", f->sport), KVS("qpn", qpn),
				KVU("requests", f->requests),
				KVU("completed", f->completed),
				KVU("retransmits", f->retransmits),
				KVU("acks", f->acks), KVU("naks", f->naks),
				KVU("rnr", f->rnr), KVU("read_resp", f->read_resp),
				KVU("next_psn", f->next_psn),
				KVU("rtt_min_us", f->rtt_min),
				KVU("rtt_avg_us", f->rtt_n ? f->rtt_sum / f->rtt_n : 0),
				KVU("rtt_max_us", f->rtt_max),
			};
			rg_print_kvs(&rq->o.c, "rocegen:", kv, sizeof(kv) / sizeof(kv[0]));
		}
	}
	struct kv kv[] = {
		KVS("role", "requester"),
		KVS("op", rq->o.op >= 0 ? rg_op_names[rq->o.op] : "mix"),
		KVU("requests", rq->requests), KVU("sent", rq->sent),
		KVU("retransmits", rq->retransmits),
		KVU("retx_injected", rq->retx[RC_INJECTED]),
		KVU("retx_timeout", rq->retx[RC_TIMEOUT]),
		KVU("retx_nak", rq->retx[RC_NAK]),
		KVU("retx_rnr", rq->retx[RC_RNR]),
		KVU("acks", rq->acks), KVU("dup_acks", rq->dup_acks),
		KVU("naks", rq->naks), KVU("rnr", rq->rnr),
		KVU("read_resp", rq->read_resp), KVU("cnp", rq->cnp),
		KVU("completed", rq->completed), KVU("failed", rq->failed),
		KVU("timeouts", rq->timeouts), KVU("stray", rq->stray),
		KVU("bad_qpn", rq->bad_qpn), KVU("send_errors", rq->send_errors),
		KVU("rtt_min_us", rq->rtt_min),
		KVU("rtt_avg_us", rq->rtt_n ? rq->rtt_sum / rq->rtt_n : 0),
		KVU("rtt_max_us", rq->rtt_max),
		KVU("elapsed_us", elapsed_us),
		KVS("status", timed_out ? "timeout" :
			      rg_stopping() ? "interrupted" :
			      rq->completed == rq->o.count ? "ok" : "incomplete"),
	};
	rg_print_kvs(&rq->o.c, "rocegen:", kv, sizeof(kv) / sizeof(kv[0]));
}

/* RNR waits that ended and retransmit timers that fired */
static void req_timers(struct requester *rq, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < rq->o.flows; i++) {
		struct qflow *f = &rq->fl[i];

		if (f->dead)
			continue;
		if (f->rnr_wait) {
			if (now < f->rnr_until)
				continue;
			f->rnr_wait = false;
			req_go_back(rq, f, f->rnr_psn, RC_RNR);
		}
		while (f->qlen && !f->dead && now >= req_timer_due(rq, f)) {
			size_t before = f->qlen;

			req_timeout(rq, f);
			if (!rq->o.no_recovery || f->qlen == before)
				break;
		}
	}
}

/* issue new messages, round robin over flows with room; with
 * --interval-us one at a time */
static void req_issue_round(struct requester *rq, uint64_t now)
{
	const struct req_opts *o = &rq->o;
	bool progress;
	uint32_t i;

	do {
		progress = false;
		for (i = 0; i < o->flows; i++) {
			struct qflow *f = &rq->fl[(rq->rr + i) % o->flows];

			if (!req_flow_can_issue(rq, f))
				continue;
			if (o->interval_us && now < rq->next_issue)
				break;
			req_issue(rq, f, now);
			rq->next_issue = now + o->interval_us * 1000;
			progress = true;
			if (o->interval_us) {
				rq->rr = (uint32_t)((f - rq->fl) + 1) % o->flows;
				break;
			}
		}
	} while (progress && !o->interval_us);
}

/* the earliest of wake and every flow's next timer, issue or injected
 * duplicate */
static uint64_t req_next_wake(const struct requester *rq, uint64_t wake)
{
	const struct req_opts *o = &rq->o;
	uint32_t i;

	for (i = 0; i < o->flows; i++) {
		const struct qflow *f = &rq->fl[i];

		if (f->dead)
			continue;
		if (f->rnr_wait) {
			if (f->rnr_until < wake)
				wake = f->rnr_until;
			continue;
		}
		if (f->qlen && req_timer_due(rq, f) < wake)
			wake = req_timer_due(rq, f);
		if (o->interval_us && req_flow_can_issue(rq, f) &&
		    rq->next_issue < wake)
			wake = rq->next_issue;
	}
	if (rq->ndup_head < rq->ndup && rq->dups[rq->ndup_head].due < wake)
		wake = rq->dups[rq->ndup_head].due;
	return wake;
}

static void req_announce(const struct requester *rq)
{
	const struct req_opts *o = &rq->o;
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	rg_warn(&o->c, "requester %s -> %s op=%s count=%" PRIu64 " flows=%u sport=%u qpn=0x%x",
		rg_sa_str(&rq->src, s, sizeof(s)), rg_sa_str(&rq->dst, d, sizeof(d)),
		o->op >= 0 ? rg_op_names[o->op] : "mix", o->count, o->flows,
		o->sport, o->qpn);
}

int rg_run_requester(const struct req_opts *opts)
{
	static struct requester req;
	struct requester *rq = &req;
	const struct req_opts *o = &rq->o;
	uint64_t start, deadline, done_ns = 0;
	uint64_t linger = opts->linger_ms * 1000000;
	struct pollfd pfd;
	sigset_t mask;
	bool timed_out = false;

	rq->o = *opts;
	rg_raise_nofile();
	rg_setup_signals(&mask);
	req_setup(rq);
	if (o->c.ctl_port)
		req_hello(rq);
	if (o->c.verbose)
		req_announce(rq);
	start = rq->next_issue = rg_now_ns();
	deadline = start + (uint64_t)(o->c.timeout_s * 1e9);
	pfd.fd = rq->ack_fd;
	pfd.events = POLLIN;

	while (!rg_stopping()) {
		uint64_t now = rg_now_ns(), wake = deadline, end;
		int budget;

		if (now >= deadline) {
			timed_out = !req_all_done(rq);
			break;
		}
		req_timers(rq, now);
		req_run_dups(rq, now);
		req_issue_round(rq, now);
		if (req_all_done(rq)) {
			if (!done_ns)
				done_ns = now;
			end = (rq->last_rx_ns > done_ns ? rq->last_rx_ns :
			       done_ns) + linger;
			if (now >= end)
				break;
			if (end < wake)
				wake = end;
		} else {
			wake = req_next_wake(rq, wake);
		}
		if (rg_wait_fds(&pfd, 1, rg_now_ns(), wake, &mask) > 0)
			for (budget = 1024; budget && req_recv_one(rq); budget--)
				;
	}
	req_summary(rq, (rg_now_ns() - start) / 1000, timed_out);
	return rq->completed == o->count && !rq->failed ? 0 : 2;
}
