// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rc_client: one reliable-connection QP pair between two local RDMA devices
 * (the test bed's rxe-a and rxe-b), in one process, with the retry count,
 * timeout and RNR settings a test needs. perftest hard-codes retry_cnt 7,
 * which rxe treats as "retry forever" (rxe_comp.c: the count is not
 * decremented at 7), so a blocked path never ends in RETRY_EXC_ERR there.
 *
 * Usage: rc_client [OPTIONS]
 *   -a DEV      requester device (rxe-a)        -b DEV   responder device (rxe-b)
 *   -g IDX      GID index on both (1: RoCE v2, IPv4-mapped)
 *   -o OP       write | send | read (write)
 *   -n N        work requests (100)              -s BYTES message size (4096)
 *   -d DEPTH    outstanding work requests (16)
 *   -r N        retry_cnt (3)                    -t T     local ACK timeout,
 *                                                         4.096 us * 2^T (14)
 *   -R N        rnr_retry (3)                    -m T     min RNR timer code (1)
 *   -p N        create N more QPs on the responder device first, so the two
 *               QP numbers differ (0)
 *   -P N        likewise on the requester device (0)
 *   -q          send without receive buffers: every SEND meets an RNR NAK
 *   -w FILE     after connecting, print the ready line, then wait for FILE
 *   -W FILE     after the done line, keep the QPs (in whatever state the run
 *               left them: ERR after an error) until FILE exists
 *   -T SEC      give up after SEC seconds (30)
 *
 * stdout, one line each:
 *   ready qpn_a=0x.. qpn_b=0x.. sport=N     (sport: RoCE v2 UDP source port
 *                                            of both directions, from the
 *                                            QPNs as rdma_get_udp_sport does)
 *   done ok=N err=N status=N first_err_wr=N (text)   status: the first
 *                                            error's enum ibv_wc_status, 0 if none
 * Exit: 0 all N completed OK, 3 a completion error, 4 timeout, 1 setup.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static const char *dev_a = "rxe-a", *dev_b = "rxe-b", *op = "write", *wait_file,
	*hold_file;
static int gid_idx = 1, iters = 100, size = 4096, depth = 16, retry_cnt = 3;
static int timeout = 14, rnr_retry = 3, min_rnr = 1, pre_b, pre_a, no_recv;
static int give_up = 30;

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
	union ibv_gid gid;
	struct ibv_qp *pre[64];
	int npre;
	struct ibv_cq *pre_cq;
};

static void die(const char *what)
{
	fprintf(stderr, "rc_client: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	if (!list)
		die("ibv_get_device_list");
	for (int i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "rc_client: no RDMA device %s\n", name);
		exit(1);
	}
	return ctx;
}

static struct ibv_qp *make_qp(struct side *s, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth + 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(s->pd, &ia);

	if (!qp)
		die("ibv_create_qp");
	return qp;
}

static void setup(struct side *s, const char *dev, int npre)
{
	s->ctx = open_dev(dev);
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		die("ibv_alloc_pd");
	s->cq = ibv_create_cq(s->ctx, 2 * depth + 2, NULL, NULL, 0);
	if (!s->cq)
		die("ibv_create_cq");
	/* QPs that exist only to take QP numbers, created before the real one */
	if (npre) {
		s->pre_cq = ibv_create_cq(s->ctx, 4, NULL, NULL, 0);
		if (!s->pre_cq)
			die("ibv_create_cq");
	}
	for (s->npre = 0; s->npre < npre && s->npre < 64; s->npre++)
		s->pre[s->npre] = make_qp(s, s->pre_cq);
	s->qp = make_qp(s, s->cq);
	s->buf = calloc(1, size);
	if (!s->buf)
		die("calloc");
	s->mr = ibv_reg_mr(s->pd, s->buf, size, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!s->mr)
		die("ibv_reg_mr");
	if (ibv_query_gid(s->ctx, 1, gid_idx, &s->gid))
		die("ibv_query_gid");
}

static void connect_qp(struct side *s, struct side *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};

	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("modify to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = min_rnr;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = gid_idx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = rnr_retry;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS");
}

/* include/rdma/ib_verbs.h: rdma_get_udp_sport(0, lqpn, rqpn) */
static unsigned int udp_sport(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;
	uint32_t fl, lo, hi;

	v ^= v >> 20;
	v ^= v >> 40;
	fl = v & 0xFFFFF;
	lo = fl & 0x03fff;
	hi = fl & 0xFC000;
	lo ^= hi >> 14;
	return (lo | 0xC000) & 0xffff;
}

static void post_recv(struct side *s)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = size, .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 0, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(s->qp, &wr, &bad))
		die("ibv_post_recv");
}

static int post_send(struct side *a, struct side *b, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)a->buf, .length = size, .lkey = a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (!strcmp(op, "send")) {
		wr.opcode = IBV_WR_SEND;
	} else {
		wr.opcode = !strcmp(op, "read") ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)b->buf;
		wr.wr.rdma.rkey = b->mr->rkey;
	}
	return ibv_post_send(a->qp, &wr, &bad);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the options, into the globals above; non-zero: the exit status */
static int parse_args(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "a:b:g:o:n:s:d:r:t:R:m:p:P:qw:W:T:h")) != -1) {
		switch (c) {
		case 'a': dev_a = optarg; break;
		case 'b': dev_b = optarg; break;
		case 'g': gid_idx = atoi(optarg); break;
		case 'o': op = optarg; break;
		case 'n': iters = atoi(optarg); break;
		case 's': size = atoi(optarg); break;
		case 'd': depth = atoi(optarg); break;
		case 'r': retry_cnt = atoi(optarg); break;
		case 't': timeout = atoi(optarg); break;
		case 'R': rnr_retry = atoi(optarg); break;
		case 'm': min_rnr = atoi(optarg); break;
		case 'p': pre_b = atoi(optarg); break;
		case 'P': pre_a = atoi(optarg); break;
		case 'q': no_recv = 1; break;
		case 'w': wait_file = optarg; break;
		case 'W': hold_file = optarg; break;
		case 'T': give_up = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: see the comment at the top of tests/vm/rc_client.c\n");
			return 1;
		}
	}
	if (strcmp(op, "write") && strcmp(op, "send") && strcmp(op, "read")) {
		fprintf(stderr, "rc_client: -o write|send|read\n");
		return 1;
	}
	if (iters < 1 || size < 1 || depth < 1 || depth > 1024) {
		fprintf(stderr, "rc_client: bad -n, -s or -d\n");
		return 1;
	}
	return 0;
}

/* until file exists (-w's start signal, -W's end); 0, or 4 after -T s */
static int wait_for(const char *file)
{
	double deadline = now() + give_up;

	while (file && access(file, F_OK)) {
		if (now() > deadline) {
			fprintf(stderr, "rc_client: %s did not appear\n", file);
			return 4;
		}
		usleep(20000);
	}
	return 0;
}

struct run {
	int posted, ok, err, recvs, first_err;
	enum ibv_wc_status status;
};

/* one round: post what the depth allows, reap both CQs, repost receives */
static void run_round(struct side *a, struct side *b, struct run *r)
{
	struct ibv_wc wc[16];
	int n;

	while (r->posted < iters && r->posted - r->ok - r->err < depth && !r->err) {
		if (post_send(a, b, r->posted))
			die("ibv_post_send");
		r->posted++;
	}
	n = ibv_poll_cq(a->cq, 16, wc);
	if (n < 0)
		die("ibv_poll_cq");
	for (int i = 0; i < n; i++) {
		if (wc[i].status == IBV_WC_SUCCESS) {
			r->ok++;
		} else {
			if (r->first_err < 0) {
				r->first_err = wc[i].wr_id;
				r->status = wc[i].status;
			}
			r->err++;
		}
	}
	/* the responder's receive completions: repost */
	n = ibv_poll_cq(b->cq, 16, wc);
	for (int i = 0; i < n; i++)
		if (!strcmp(op, "send") && r->recvs < iters) {
			post_recv(b);
			r->recvs++;
		}
}

int main(int argc, char **argv)
{
	struct side a = {}, b = {};
	struct run r = { .first_err = -1, .status = IBV_WC_SUCCESS };
	double deadline;
	int rc;

	rc = parse_args(argc, argv);
	if (rc)
		return rc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	setup(&b, dev_b, pre_b);
	setup(&a, dev_a, pre_a);
	connect_qp(&a, &b);
	connect_qp(&b, &a);
	printf("ready qpn_a=0x%x qpn_b=0x%x sport=%u\n", a.qp->qp_num, b.qp->qp_num,
	       udp_sport(a.qp->qp_num, b.qp->qp_num));
	rc = wait_for(wait_file);
	if (rc)
		return rc;
	if (!strcmp(op, "send") && !no_recv)
		for (; r.recvs < depth && r.recvs < iters; r.recvs++)
			post_recv(&b);

	deadline = now() + give_up;
	while (r.ok + r.err < iters) {
		run_round(&a, &b, &r);
		/* after an error the QP flushes what it had; nothing more is posted */
		if (r.err && r.ok + r.err >= r.posted)
			break;
		if (now() > deadline) {
			printf("done ok=%d err=%d status=%d first_err_wr=%d (timeout)\n", r.ok,
			       r.err, r.status, r.first_err);
			return 4;
		}
	}
	printf("done ok=%d err=%d status=%d first_err_wr=%d (%s)\n", r.ok, r.err, r.status,
	       r.first_err, ibv_wc_status_str(r.status));
	if (wait_for(hold_file))
		return 4;
	for (int i = 0; i < a.npre; i++)
		ibv_destroy_qp(a.pre[i]);
	for (int i = 0; i < b.npre; i++)
		ibv_destroy_qp(b.pre[i]);
	ibv_destroy_qp(a.qp);
	ibv_destroy_qp(b.qp);
	return r.err ? 3 : 0;
}
