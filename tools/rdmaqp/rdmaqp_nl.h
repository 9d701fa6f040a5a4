/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * RDMA netlink (NETLINK_RDMA, the RDMA_NLDEV interface `rdma` is a client
 * of) through libmnl: the devices, and every QP of a device with its
 * state and live PSNs (a hardware driver reads them from the QP context
 * in firmware on every dump).
 */
#ifndef AGENTXDP_RDMAQP_NL_H
#define AGENTXDP_RDMAQP_NL_H

#include <stdbool.h>
#include <linux/types.h>
#include "rdmaqp.h"

struct mnl_socket;

struct rdmaqp_dev {
	__u32 index;
	__u32 nports;
	char name[RDMAQP_DEVNAME];
};

/* one QP of a dump; has_* says which attributes the kernel sent (RQPN and
 * RQ_PSN only for RC and UC; PID for user QPs, KERN_NAME for kernel ones) */
struct rdmaqp_nlqp {
	__u32 dev_index;
	__u32 port;		/* 0: none yet (a QP before INIT) */
	__u32 lqpn, rqpn;
	__u32 sq_psn, rq_psn;
	__u32 pid;
	__u8 type, state;
	bool has_rqpn, has_sq_psn, has_rq_psn, has_pid;
	char kern_name[RDMAQP_COMM];
};

/* a device's QP count (RES_GET summary: restrack's count, no query) */
struct rdmaqp_qpcount {
	__u32 dev_index;
	__u64 qps;
};

/* a QP to query alone: device, port (the doit needs it) and restrack id */
struct rdmaqp_qpreq {
	__u32 dev_index;
	__u32 port;
	__u32 id;		/* the QPN; SMI/GSI: QPN | port << 24 */
};

/* a NETLINK_RDMA socket; NULL with errno set */
struct mnl_socket *rdmaqp_nl_open(void);
void rdmaqp_nl_close(struct mnl_socket *nl);
/* the devices (RDMA_NLDEV_CMD_GET dump), at most max: how many, or -errno */
int rdmaqp_nl_devices(struct mnl_socket *nl, struct rdmaqp_dev *devs, int max);
/* the QPs of device dev_index (RDMA_NLDEV_CMD_RES_QP_GET dump), fn called
 * for each; 0 or -errno */
int rdmaqp_nl_qps(struct mnl_socket *nl, __u32 dev_index,
		  void (*fn)(void *ctx, const struct rdmaqp_nlqp *qp), void *ctx);

/* the QP count of every device (RDMA_NLDEV_CMD_RES_GET dump), at most
 * max: how many devices, or -errno */
int rdmaqp_nl_counts(struct mnl_socket *nl, struct rdmaqp_qpcount *out, int max);
/* the n QPs of req one by one (RDMA_NLDEV_CMD_RES_QP_GET doit, in batches):
 * fn for each answered, err[i] 0 or its -errno (-ENOENT: gone); 0 or the
 * -errno of the socket */
int rdmaqp_nl_qp_get(struct mnl_socket *nl, const struct rdmaqp_qpreq *req, int *err,
		     unsigned int n, void (*fn)(void *ctx, const struct rdmaqp_nlqp *qp),
		     void *ctx);

#endif
