/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* rdmaqp: types shared by tools/rdmaqp/rdmaqp.bpf.c and its loader */
#ifndef AGENTXDP_RDMAQP_H
#define AGENTXDP_RDMAQP_H

/* __u32 and friends: vmlinux.h on the BPF side, <linux/types.h> in the
 * loader, included first */

#define RDMAQP_DEVNAME 64	/* IB_DEVICE_NAME_MAX (include/rdma/ib_verbs.h) */
#define RDMAQP_COMM 16
#define RDMAQP_STATE_UNKNOWN 0xff

/* enum ib_qp_attr_mask (include/rdma/ib_verbs.h), the same bits as
 * libibverbs' IBV_QP_*: an ABI, stable since the first kernel with verbs */
#define RDMAQP_ATTR_STATE	(1u << 0)
#define RDMAQP_ATTR_PORT	(1u << 5)
#define RDMAQP_ATTR_RQ_PSN	(1u << 12)
#define RDMAQP_ATTR_SQ_PSN	(1u << 16)
#define RDMAQP_ATTR_DEST_QPN	(1u << 20)

/* what the control path did to a QP, or an async event */
enum rdmaqp_ev_type {
	RQ_EV_CREATE,		/* rdma_restrack_add of a QP: created */
	RQ_EV_MODIFY,		/* _ib_modify_qp returned 0 */
	RQ_EV_DESTROY,		/* ib_destroy_qp_user */
	RQ_EV_ASYNC,		/* ib_dispatch_event / ib_uverbs_qp_event_handler */
	RQ_EV_NR,
};

struct rdmaqp_event {
	__u64 ts_ns;		/* bpf_ktime_get_ns() */
	__u64 cgroup_id;	/* of the task doing it */
	__u32 dev_index;	/* ib_device.index: RDMA netlink's DEV_INDEX */
	__u32 qpn;		/* 0 for a device/port event */
	__u32 pid;		/* tgid of the task doing it */
	__u32 mask;		/* modify: ib_qp_attr_mask */
	__u32 sq_psn;		/* modify with RDMAQP_ATTR_SQ_PSN */
	__u32 rq_psn;		/* modify with RDMAQP_ATTR_RQ_PSN */
	__u32 dest_qpn;		/* modify with RDMAQP_ATTR_DEST_QPN */
	__u32 port;		/* modify with RDMAQP_ATTR_PORT; async: element.port_num */
	__u32 event;		/* async: enum ib_event_type */
	__u8 type;		/* enum rdmaqp_ev_type */
	__u8 qp_type;		/* enum ib_qp_type */
	__u8 old_state;		/* modify: what the last modify set, else UNKNOWN */
	__u8 new_state;		/* modify with RDMAQP_ATTR_STATE */
	__u8 user;		/* restrack: a user (verbs) QP, else a kernel one */
	__u8 pad[3];
	char comm[RDMAQP_COMM];		/* of the task doing it */
	char kern_name[RDMAQP_COMM];	/* restrack: the kernel creator's module */
	char dev[RDMAQP_DEVNAME];
};

/* a QP: device index and number (QPNs are per device) */
struct rdmaqp_key {
	__u32 dev_index;
	__u32 qpn;
};

/* a modify in flight: _ib_modify_qp's arguments, for its return */
struct rdmaqp_modify {
	void *qp;
	__u32 mask;
	__u32 sq_psn, rq_psn, dest_qpn, port;
	__u8 new_state;
	__u8 pad[3];
};

enum rdmaqp_stat {
	RDMAQP_STAT_EVENTS_LOST,
	RDMAQP_STAT_NR,
};

#endif
