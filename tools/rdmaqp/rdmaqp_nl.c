// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rdmaqp's RDMA netlink reader: request, receive loop and attribute
 * parsing of the two dumps rdmaqp_nl.h declares. The kernel side is
 * drivers/infiniband/core/nldev.c (nldev_get_dumpit, res_get_common_dumpit
 * with fill_res_qp_entry); the RES_QP dump needs the device index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>
#include "rdmaqp_nl.h"

struct mnl_socket *rdmaqp_nl_open(void)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_RDMA);

	if (!nl)
		return NULL;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno;

		mnl_socket_close(nl);
		errno = e;
		return NULL;
	}
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

static void qp_entry(const struct nlattr *entry, struct qp_ctx *c)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = {};
	struct rdmaqp_nlqp q = { .dev_index = c->dev_index };

	mnl_attr_parse_nested(entry, attr_cb, tb);
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
