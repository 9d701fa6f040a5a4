/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* verbslat: the types its BPF side (verbslat.bpf.c) and loader share */
#ifndef AGENTXDP_VERBSLAT_H
#define AGENTXDP_VERBSLAT_H

#include "../../bpf/lib/hist.h"

#define VL_DEVNAME 64		/* IB_DEVICE_NAME_MAX */
#define VL_OP_RECV 0xff		/* a receive WR: no enum ib_wr_opcode value is 255 */
#define VL_WC_MAX 32		/* completions read per poll (ib_poll_cq batches 16) */
#define VL_UNSIG_MAX 32		/* unsignaled WRs one signaled completion retires */
#define VL_SEND_WR_MAX 32	/* WRs of one post_send chain walked */
#define VL_RECV_WR_MAX 32	/* and of one post_recv chain */
#define VL_OWNER 32		/* a QP's owner: a module name (MODULE_NAME_LEN 56) */
#define VL_OWNERS 2		/* --ulp: the modules of one ULP (iser: ib_iser, ib_isert) */

/* one QP seen posting, by its struct ib_qp address */
struct vl_qp {
	__u32 qpn;
	__u32 dev_index;
	char dev[VL_DEVNAME];
	/* the module that allocated its PD (ib_alloc_pd's KBUILD_MODNAME:
	 * nvme_rdma, nvmet_rdma, rpcrdma ...); "" when unknown */
	char owner[VL_OWNER];
	__u8 tracked;		/* a kernel QP passing -d, -Q and --ulp */
	__u8 pad[7];
	__u64 post_seq;		/* send WRs posted so far */
	__u64 done_seq;		/* send WRs before this one are complete */
};

/* a WR waiting for its completion; dir 0 send, 1 receive */
struct vl_wr_key {
	__u64 qp;
	__u64 wr_id;		/* wr_id or wr_cqe, the completion's cookie */
	__u32 dir;
	__u32 pad;
};

struct vl_wr {
	__u64 ts_ns;
	__u64 seq;		/* send queue position (send WRs) */
	__u8 opcode;		/* enum ib_wr_opcode, VL_OP_RECV */
	__u8 pad[3];
	__u32 again;		/* posted again under the same cookie before completing */
};

/* an unsignaled send WR, by its send queue position: its cookie need
 * not be unique (rdma_rw's chained RDMA WRITEs carry none) */
struct vl_unsig_key {
	__u64 qp;
	__u64 seq;
};

/* completions of one QP, opcode and status */
struct vl_stat_key {
	__u64 qp;
	__u32 qpn;
	__u32 dev_index;
	__u8 opcode;		/* as posted: enum ib_wr_opcode, VL_OP_RECV */
	__u8 status;		/* enum ib_wc_status */
	__u8 pad[6];
};

struct vl_stat {
	__u64 count;
	__u64 unsignaled;	/* of count, retired by a later completion */
	__u64 sum_ns, max_ns;
	struct llhist lat;	/* post to completion, ns */
};

/* -e: one error completion */
struct vl_event {
	__u64 ts_ns;
	__u64 wr_id;
	__u64 lat_ns;		/* 0: its post was not seen */
	__u32 qpn;
	__u32 status;		/* enum ib_wc_status */
	__u32 vendor_err;
	__u8 opcode;		/* as posted, else VL_OP_UNKNOWN */
	__u8 pad[3];
	char dev[VL_DEVNAME];
};
#define VL_OP_UNKNOWN 0xfe

enum vl_counter {
	VL_STAT_POSTED,		/* WRs of tracked QPs posted */
	VL_STAT_COMPLETED,	/* of them, completed (unsignaled ones included) */
	VL_STAT_UNPAIRED,	/* completions of tracked QPs with no post seen */
	VL_STAT_CHAIN_LONG,	/* post chains longer than VL_*_WR_MAX: the rest unseen */
	VL_STAT_POLL_LONG,	/* polls returning more than VL_WC_MAX: the rest unread */
	VL_STAT_UNSIG_LONG,	/* more unsignaled WRs before a completion than VL_UNSIG_MAX */
	VL_STAT_MAP_FULL,	/* a WR not stored: map full */
	VL_STAT_COOKIE_AGAIN,	/* a cookie posted again while outstanding */
	VL_STAT_EVENTS_LOST,
	VL_STAT_NR,
};

#endif
