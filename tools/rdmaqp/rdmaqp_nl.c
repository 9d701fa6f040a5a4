// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rdmaqp's RDMA netlink reader: request, receive loop and attribute
 * parsing of the requests rdmaqp_nl.h declares. The kernel side is
 * drivers/infiniband/core/nldev.c (nldev_get_dumpit, res_get_common_dumpit
 * and res_get_common_doit with fill_res_qp_entry, nldev_res_get_dumpit
 * with fill_res_info); the RES_QP dump needs the device index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>
#include "rdmaqp_nl.h"

struct mnl_socket *rdmaqp_nl_open(void)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_RDMA);
	struct timeval tv = { .tv_sec = 5 };

	if (!nl)
		return NULL;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno;

		mnl_socket_close(nl);
		errno = e;
		return NULL;
	}
	/* an answer the kernel could not queue never comes: never wait forever */
	setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return nl;
}

void rdmaqp_nl_close(struct mnl_socket *nl)
{
	if (nl)
		mnl_socket_close(nl);
}

/* sends a dump request of cmd (with the device index when dev_index >= 0)
 * and runs cb over the answer; 0 or -errno */
static int nl_dump(struct mnl_socket *nl, int cmd, long long dev_index, mnl_cb_t cb, void *ctx)
{
	char buf[32768];	/* a dump message may pass a 4 KiB page */
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	unsigned int seq = time(NULL), portid = mnl_socket_get_portid(nl);
	int n;

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	if (dev_index >= 0)
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		n = mnl_cb_run(buf, n, seq, portid, cb, ctx);
		if (n < 0)
			return -errno;
		if (n == MNL_CB_STOP)
			return 0;
	}
}

/* every attribute of one level into tb[type] (unknown types ignored) */
static int attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(a);

	if (type > 0 && type < RDMA_NLDEV_ATTR_MAX)
		tb[type] = a;
	return MNL_CB_OK;
}

struct dev_ctx {
	struct rdmaqp_dev *devs;
	int n, max;
};

static int dev_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = {};
	struct dev_ctx *c = data;
	struct rdmaqp_dev *d;

	mnl_attr_parse(nlh, 0, attr_cb, tb);
	if (!tb[RDMA_NLDEV_ATTR_DEV_INDEX] || !tb[RDMA_NLDEV_ATTR_DEV_NAME] || c->n >= c->max)
		return MNL_CB_OK;
	d = &c->devs[c->n++];
	d->index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	snprintf(d->name, sizeof(d->name), "%s", mnl_attr_get_str(tb[RDMA_NLDEV_ATTR_DEV_NAME]));
	/* nldev.c:fill_dev_info: the port index of a device is its port count */
	d->nports = tb[RDMA_NLDEV_ATTR_PORT_INDEX] ?
		    mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX]) : 1;
	return MNL_CB_OK;
}

int rdmaqp_nl_devices(struct mnl_socket *nl, struct rdmaqp_dev *devs, int max)
{
	struct dev_ctx c = { .devs = devs, .max = max };
	int e = nl_dump(nl, RDMA_NLDEV_CMD_GET, -1, dev_cb, &c);

	return e ? e : c.n;
}

struct qp_ctx {
	__u32 dev_index;
	void (*fn)(void *ctx, const struct rdmaqp_nlqp *qp);
	void *ctx;
};

/* one QP's attributes (a dump's nested entry, or a doit's top level) */
static void qp_attrs(const struct nlattr **tb, struct qp_ctx *c)
{
	struct rdmaqp_nlqp q = { .dev_index = c->dev_index };

	if (!tb[RDMA_NLDEV_ATTR_RES_LQPN])
		return;
	q.lqpn = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_RES_LQPN]);
	if (tb[RDMA_NLDEV_ATTR_PORT_INDEX])
		q.port = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if ((q.has_rqpn = tb[RDMA_NLDEV_ATTR_RES_RQPN]))
		q.rqpn = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_RES_RQPN]);
	if ((q.has_sq_psn = tb[RDMA_NLDEV_ATTR_RES_SQ_PSN]))
		q.sq_psn = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_RES_SQ_PSN]);
	if ((q.has_rq_psn = tb[RDMA_NLDEV_ATTR_RES_RQ_PSN]))
		q.rq_psn = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_RES_RQ_PSN]);
	if ((q.has_pid = tb[RDMA_NLDEV_ATTR_RES_PID]))
		q.pid = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_RES_PID]);
	if (tb[RDMA_NLDEV_ATTR_RES_TYPE])
		q.type = mnl_attr_get_u8(tb[RDMA_NLDEV_ATTR_RES_TYPE]);
	q.state = tb[RDMA_NLDEV_ATTR_RES_STATE] ?
		  mnl_attr_get_u8(tb[RDMA_NLDEV_ATTR_RES_STATE]) : RDMAQP_STATE_UNKNOWN;
	if (tb[RDMA_NLDEV_ATTR_RES_KERN_NAME])
		snprintf(q.kern_name, sizeof(q.kern_name), "%s",
			 mnl_attr_get_str(tb[RDMA_NLDEV_ATTR_RES_KERN_NAME]));
	c->fn(c->ctx, &q);
}

static void qp_entry(const struct nlattr *entry, struct qp_ctx *c)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = {};

	mnl_attr_parse_nested(entry, attr_cb, tb);
	qp_attrs(tb, c);
}

static int qp_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = {};
	const struct nlattr *entry;

	mnl_attr_parse(nlh, 0, attr_cb, tb);
	if (!tb[RDMA_NLDEV_ATTR_RES_QP])
		return MNL_CB_OK;
	mnl_attr_for_each_nested(entry, tb[RDMA_NLDEV_ATTR_RES_QP])
		qp_entry(entry, data);
	return MNL_CB_OK;
}

int rdmaqp_nl_qps(struct mnl_socket *nl, __u32 dev_index,
		  void (*fn)(void *ctx, const struct rdmaqp_nlqp *qp), void *ctx)
{
	struct qp_ctx c = { .dev_index = dev_index, .fn = fn, .ctx = ctx };

	return nl_dump(nl, RDMA_NLDEV_CMD_RES_QP_GET, dev_index, qp_cb, &c);
}

/* ---- the QP count of every device: RES_GET's summary ----
 * fill_res_info counts the restrack entries (rdma_restrack_count): no QP
 * is queried for it, whatever the driver */

struct count_ctx {
	struct rdmaqp_qpcount *out;
	int n, max;
};

static int summary_cb(const struct nlattr *a, void *data)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = {};
	__u64 *qps = data;

	mnl_attr_parse_nested(a, attr_cb, tb);
	if (tb[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME] && tb[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR] &&
	    !strcmp(mnl_attr_get_str(tb[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME]), "qp"))
		*qps = mnl_attr_get_u64(tb[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR]);
	return MNL_CB_OK;
}

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = {};
	struct count_ctx *c = data;
	__u64 qps = 0;

	mnl_attr_parse(nlh, 0, attr_cb, tb);
	if (!tb[RDMA_NLDEV_ATTR_DEV_INDEX] || !tb[RDMA_NLDEV_ATTR_RES_SUMMARY] || c->n >= c->max)
		return MNL_CB_OK;
	mnl_attr_parse_nested(tb[RDMA_NLDEV_ATTR_RES_SUMMARY], summary_cb, &qps);
	c->out[c->n].dev_index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	c->out[c->n++].qps = qps;
	return MNL_CB_OK;
}

int rdmaqp_nl_counts(struct mnl_socket *nl, struct rdmaqp_qpcount *out, int max)
{
	struct count_ctx c = { .out = out, .max = max };
	int e = nl_dump(nl, RDMA_NLDEV_CMD_RES_GET, -1, count_cb, &c);

	return e ? e : c.n;
}

/* ---- single QPs: RES_QP_GET's doit, a batch of requests at a time ----
 * res_get_common_doit takes DEV_INDEX, PORT_INDEX (required for a QP: a
 * QP is not NLDEV_PER_DEV) and LQPN, the restrack id: the QP number, with
 * the port in bits 24-31 for the SMI and GSI QPs (restrack.c,
 * rdma_restrack_add). rdma_nl_rcv_skb runs every message of one send in
 * turn and answers each: the QP, or an error (ENOENT: gone). */

#define QP_BATCH 16	/* answers queued at once: 16 skbs of ~4 KiB */

struct one_ctx {
	struct qp_ctx qc;
	const struct rdmaqp_qpreq *req;
	int *err;
	unsigned int seq0, n, answered;
};

static int one_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = {};
	struct one_ctx *c = data;
	unsigned int i = nlh->nlmsg_seq - c->seq0;

	if (i >= c->n)
		return MNL_CB_OK;
	c->answered++;
	mnl_attr_parse(nlh, 0, attr_cb, tb);
	c->qc.dev_index = c->req[i].dev_index;
	c->err[i] = 0;
	qp_attrs(tb, &c->qc);
	return MNL_CB_OK;
}

static int one_err_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	struct one_ctx *c = data;
	unsigned int i;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
		return MNL_CB_ERROR;
	i = e->msg.nlmsg_seq - c->seq0;
	if (i < c->n) {
		c->answered++;
		c->err[i] = e->error;
	}
	return MNL_CB_OK;
}

/* n (<= QP_BATCH) requests in one send, then their n answers */
static int qp_batch(struct mnl_socket *nl, const struct rdmaqp_qpreq *req, int *err,
		    unsigned int n, struct qp_ctx *qc)
{
	char buf[32768];
	struct one_ctx c = { .qc = *qc, .req = req, .err = err, .n = n };
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = { [NLMSG_ERROR] = one_err_cb };
	unsigned int portid = mnl_socket_get_portid(nl);
	static unsigned int next;	/* an answer late from an earlier batch is no match */
	size_t len = 0;
	int r;

	c.seq0 = (time(NULL) << 16) + (next += QP_BATCH);
	for (unsigned int i = 0; i < n; i++) {
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + len);

		nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET);
		nlh->nlmsg_flags = NLM_F_REQUEST;
		nlh->nlmsg_seq = c.seq0 + i;
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, req[i].dev_index);
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, req[i].port);
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_LQPN, req[i].id);
		len += NLMSG_ALIGN(nlh->nlmsg_len);
		err[i] = -ETIMEDOUT;
	}
	if (mnl_socket_sendto(nl, buf, len) < 0)
		return -errno;
	while (c.answered < n) {
		r = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (r < 0)
			return -errno;
		if (mnl_cb_run2(buf, r, 0, portid, one_cb, &c, ctl, NLMSG_MIN_TYPE) < 0)
			return -errno;
	}
	return 0;
}

int rdmaqp_nl_qp_get(struct mnl_socket *nl, const struct rdmaqp_qpreq *req, int *err,
		     unsigned int n, void (*fn)(void *ctx, const struct rdmaqp_nlqp *qp),
		     void *ctx)
{
	struct qp_ctx qc = { .fn = fn, .ctx = ctx };

	for (unsigned int i = 0; i < n; i += QP_BATCH) {
		int e = qp_batch(nl, req + i, err + i, n - i < QP_BATCH ? n - i : QP_BATCH, &qc);

		if (e)
			return e;
	}
	return 0;
}
