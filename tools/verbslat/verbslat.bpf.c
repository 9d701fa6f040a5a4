// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * verbslat: post-to-completion latency of the work requests of kernel
 * QPs (NVMe over Fabrics, NFS over RDMA, iSER, SMB Direct, RDS), per QP
 * and opcode, and their completions by status, on any RNIC whose driver
 * it knows. ib_post_send(), ib_post_recv() and ib_poll_cq() are inline
 * wrappers (include/rdma/ib_verbs.h) of the driver's ops, so the hooks
 * are the drivers' entry points, all with the ops' signatures:
 *   post_send(qp, wr, bad_wr), post_recv(qp, wr, bad_wr): the WR chain
 *   poll_cq(cq, num_entries, wc): fexit reads ret of them (a kprobe saves
 *   wc at entry for the kretprobe)
 * one trio per driver (rdma_rxe, mlx5_ib, irdma, bnxt_re), the loader
 * autoloading those of the drivers loaded (tools/verbslat/verbslat_load.c).
 * ib_destroy_qp_user (ib_core) forgets a QP.
 *
 * A QP's owner (--ulp) is the module that allocated its PD: ib_alloc_pd()
 * names the PD after its caller's KBUILD_MODNAME (nvme_rdma, nvmet_rdma,
 * rpcrdma, ib_iser, ...), while the QP's own restrack name is rdma_cm
 * for every QP RDMA CM creates (rdma_create_qp() calls ib_create_qp()
 * from cma.c: so on 6.1 and 6.12, read in their rdma_cm.ko).
 *
 * Pairing: a completion names its WR by the cookie the poster chose
 * (wr_id, or wr_cqe: the same union) and its QP (wc->qp). A send WR
 * posted without IB_SEND_SIGNALED has no completion of its own: the send
 * queue completes in order, so the next completion of that send queue
 * retires it (rdma_rw chains its unsignaled RDMA WRITEs before the
 * signaled SEND of an NVMe-oF target's response). Those are kept by
 * their send queue position, not their cookie. An error completion
 * carries no valid opcode (IBTA: only wr_id, status, qp and vendor_err
 * are), so its WR is looked up in both queues; a flush completes
 * unsignaled WRs too (rxe_completer.c:do_complete posts a CQE for any
 * WR whose status is not success), as the oldest unsignaled one.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "lib/hist.bpf.h"
#include "lib/maps.bpf.h"
#include "lib/probe.bpf.h"
#include "verbslat.h"

/* ib_core's types, the fields read: in no vmlinux.h (ib_core is a
 * module); the ___vl flavour keeps them apart, CO-RE matches by name */
enum ib_wr_opcode___vl { IB_WR_RDMA_WRITE___vl = 0 };
enum ib_wc_status___vl { IB_WC_SUCCESS___vl = 0 };
enum ib_wc_opcode___vl { IB_WC_SEND___vl = 0 };
enum ib_qp_type___vl { IB_QPT_SMI___vl = 0, IB_QPT_GSI___vl = 1 };

struct ib_device___vl {
	char name[VL_DEVNAME];
	__u32 index;
} __attribute__((preserve_access_index));

struct rdma_restrack_entry___vl {
	const char *kern_name;	/* a kernel object's owner, by module name */
} __attribute__((preserve_access_index));

struct ib_pd___vl {
	struct rdma_restrack_entry___vl res;
} __attribute__((preserve_access_index));

struct ib_qp___vl {
	struct ib_device___vl *device;
	struct ib_pd___vl *pd;
	void *uobject;		/* NULL for a kernel QP */
	__u32 qp_num;
	enum ib_qp_type___vl qp_type;
} __attribute__((preserve_access_index));

struct ib_send_wr___vl {
	struct ib_send_wr___vl *next;
	union {
		__u64 wr_id;
		void *wr_cqe;
	};
	enum ib_wr_opcode___vl opcode;
	int send_flags;
} __attribute__((preserve_access_index));

struct ib_recv_wr___vl {
	struct ib_recv_wr___vl *next;
	union {
		__u64 wr_id;
		void *wr_cqe;
	};
} __attribute__((preserve_access_index));

struct ib_wc___vl {
	union {
		__u64 wr_id;
		void *wr_cqe;
	};
	enum ib_wc_status___vl status;
	enum ib_wc_opcode___vl opcode;
	__u32 vendor_err;
	struct ib_qp___vl *qp;
} __attribute__((preserve_access_index));

/* include/rdma/ib_verbs.h: enum ib_send_flags, enum ib_wc_opcode */
#define VL_IB_SEND_SIGNALED 2
#define VL_IB_WC_RECV 128

AX_RODATA __u32 targ_qpn;
AX_RODATA bool targ_qpn_set;
AX_RODATA char targ_dev[VL_DEVNAME];
AX_RODATA bool targ_events;
AX_RODATA char targ_owner[VL_OWNERS][VL_OWNER];	/* --ulp; "" for none */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct vl_qp);
} qps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 262144);
	__type(key, struct vl_wr_key);
	__type(value, struct vl_wr);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 262144);
	__type(key, struct vl_unsig_key);
	__type(value, struct vl_wr);
} unsig SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct vl_stat_key);
	__type(value, struct vl_stat);
} stats SEC(".maps");

/* kprobes: poll_cq's wc arrays between entry and return, per CPU as a
 * stack: a poll in a softirq nests in one in process context on the same
 * CPU (the same thread id, so a per-thread key would mix them up), and
 * returns first; poll_cq does not sleep */
#define VL_POLL_DEPTH 4
struct vl_poll_stack {
	__u32 depth;
	__u32 pad;
	__u64 pid_tgid[VL_POLL_DEPTH];
	__u64 wc[VL_POLL_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vl_poll_stack);
} polls SEC(".maps");

/* a zeroed vl_stat to insert from (too big for the stack) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vl_stat);
} zero_stat SEC(".maps");

AX_PERCPU_STATS(counters, VL_STAT_NR);
AX_RINGBUF(events, 1 << 18);

/* a string of at most len bytes equal to want; an empty want matches all */
static __always_inline bool str_match(const char *s, const volatile char *want, int len)
{
	if (!want[0])
		return true;
	for (int i = 0; i < len; i++) {
		if (s[i] != want[i])
			return false;
		if (!s[i])
			break;
	}
	return true;
}

static __always_inline bool owner_match(const char *owner)
{
	if (!targ_owner[0][0])
		return true;
	for (int i = 0; i < VL_OWNERS; i++)
		if (targ_owner[i][0] && str_match(owner, targ_owner[i], VL_OWNER))
			return true;
	return false;
}

/* the entry of a QP not seen before, made at its first post (or
 * completion): a kernel QP passing the filters is tracked, any other is
 * remembered as not. QP0 and QP1 (SMI, GSI) are ib_mad's management QPs,
 * created with the device and posted to long before any tool starts: not
 * a ULP's data path, not tracked */
static __always_inline void qp_new(__u64 qp_addr)
{
	struct ib_qp___vl *qp = (struct ib_qp___vl *)qp_addr;
	struct ib_device___vl *dev;
	const char *owner;
	struct vl_qp n = {};

	dev = BPF_CORE_READ(qp, device);
	n.qpn = BPF_CORE_READ(qp, qp_num);
	n.dev_index = BPF_CORE_READ(dev, index);
	BPF_CORE_READ_STR_INTO(&n.dev, dev, name);
	owner = BPF_CORE_READ(qp, pd, res.kern_name);
	if (owner)
		bpf_probe_read_kernel_str(n.owner, sizeof(n.owner), owner);
	n.tracked = !BPF_CORE_READ(qp, uobject) && (!targ_qpn_set || n.qpn == targ_qpn) &&
		    BPF_CORE_READ(qp, qp_type) > IB_QPT_GSI___vl &&
		    str_match(n.dev, targ_dev, VL_DEVNAME) && owner_match(n.owner);
	bpf_map_update_elem(&qps, &qp_addr, &n, BPF_NOEXIST);
}

/* the same as a global function, verified once rather than at each
 * completion of the poll loop (which would multiply it past the
 * verifier's budget); it takes a scalar, which a post hook's trusted
 * qp argument is not */
AX_GLOBAL_FUNC int vl_qp_new(__u64 qp_addr)
{
	qp_new(qp_addr);
	return 0;
}

/* a post's QP (its trusted argument) */
static __always_inline struct vl_qp *qp_get(struct ib_qp___vl *qp)
{
	__u64 key = (__u64)qp;
	struct vl_qp *q = bpf_map_lookup_elem(&qps, &key);

	if (q)
		return q;
	qp_new(key);
	return bpf_map_lookup_elem(&qps, &key);
}

/* a signaled or receive WR stored by its cookie; a cookie posted again
 * before its completion was seen (two WRs in flight under one cookie)
 * is counted on the first, whose post time both then carry */
static __always_inline long pending_add(const struct vl_wr_key *k, const struct vl_wr *w)
{
	struct vl_wr *old = bpf_map_lookup_elem(&pending, k);

	if (old) {
		__sync_fetch_and_add(&old->again, 1);
		counter_inc(&counters, VL_STAT_COOKIE_AGAIN);
		return 0;
	}
	return bpf_map_update_elem(&pending, k, w, BPF_ANY);
}

static __always_inline int on_post_send(struct ib_qp___vl *qp, struct ib_send_wr___vl *wr)
{
	struct vl_qp *q = qp_get(qp);
	struct vl_wr w = {};
	int i;

	if (!q || !q->tracked)
		return 0;
	w.ts_ns = bpf_ktime_get_ns();
	for (i = 0; i < VL_SEND_WR_MAX && wr; i++) {
		struct vl_wr_key k = { .qp = (__u64)qp };
		long err;

		w.opcode = BPF_CORE_READ(wr, opcode);
		w.seq = __sync_fetch_and_add(&q->post_seq, 1);
		if (BPF_CORE_READ(wr, send_flags) & VL_IB_SEND_SIGNALED) {
			k.wr_id = BPF_CORE_READ(wr, wr_id);
			err = pending_add(&k, &w);
		} else {
			struct vl_unsig_key u = { .qp = (__u64)qp, .seq = w.seq };

			err = bpf_map_update_elem(&unsig, &u, &w, BPF_ANY);
		}
		counter_inc(&counters, err ? VL_STAT_MAP_FULL : VL_STAT_POSTED);
		wr = BPF_CORE_READ(wr, next);
	}
	if (wr)
		counter_inc(&counters, VL_STAT_CHAIN_LONG);
	return 0;
}

static __always_inline int on_post_recv(struct ib_qp___vl *qp, struct ib_recv_wr___vl *wr)
{
	struct vl_qp *q = qp_get(qp);
	struct vl_wr w = { .opcode = VL_OP_RECV };
	int i;

	if (!q || !q->tracked)
		return 0;
	w.ts_ns = bpf_ktime_get_ns();
	for (i = 0; i < VL_RECV_WR_MAX && wr; i++) {
		struct vl_wr_key k = { .qp = (__u64)qp, .dir = 1 };

		k.wr_id = BPF_CORE_READ(wr, wr_id);
		counter_inc(&counters, pending_add(&k, &w) ? VL_STAT_MAP_FULL : VL_STAT_POSTED);
		wr = BPF_CORE_READ(wr, next);
	}
	if (wr)
		counter_inc(&counters, VL_STAT_CHAIN_LONG);
	return 0;
}

/* one WR completed: its latency and status, per QP and opcode */
static __always_inline void record(__u64 qp, const struct vl_qp *q, const struct vl_wr *w,
				   __u32 status, __u64 now, bool unsignaled)
{
	struct vl_stat_key k = { .qp = qp, .qpn = q->qpn, .dev_index = q->dev_index,
				 .opcode = w->opcode, .status = status };
	__u32 zero = 0;
	struct vl_stat *init = bpf_map_lookup_elem(&zero_stat, &zero), *s;
	__u64 lat = now - w->ts_ns;

	if (!init)
		return;
	s = map_lookup_or_init(&stats, &k, init);
	if (!s) {
		counter_inc(&counters, VL_STAT_MAP_FULL);
		return;
	}
	__sync_fetch_and_add(&s->count, 1);
	if (unsignaled)
		__sync_fetch_and_add(&s->unsignaled, 1);
	__sync_fetch_and_add(&s->sum_ns, lat);
	if (lat > s->max_ns)
		s->max_ns = lat;
	__sync_fetch_and_add(&s->lat.b[llhist_bucket(lat)], 1);
	counter_inc(&counters, VL_STAT_COMPLETED);
}

/* the unsignaled send WRs before position end, retired with status */
static __always_inline void retire_unsig(__u64 qp, struct vl_qp *q, __u64 end, __u32 status,
					 __u64 now)
{
	struct vl_unsig_key u = { .qp = qp };
	int i;

	for (i = 0; i < VL_UNSIG_MAX; i++) {
		struct vl_wr *w;

		u.seq = q->done_seq;
		if (u.seq >= end)
			return;
		w = bpf_map_lookup_elem(&unsig, &u);
		if (w) {
			record(qp, q, w, status, now, true);
			bpf_map_delete_elem(&unsig, &u);
		}
		q->done_seq = u.seq + 1;
	}
	if (q->done_seq < end) {
		counter_inc(&counters, VL_STAT_UNSIG_LONG);
		q->done_seq = end;
	}
}

static __always_inline void error_event(const struct vl_qp *q, const struct vl_wr *w,
					__u64 wr_id, __u32 status, __u32 vendor_err, __u64 now)
{
	struct vl_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		counter_inc(&counters, VL_STAT_EVENTS_LOST);
		return;
	}
	e->ts_ns = now;
	e->wr_id = wr_id;
	e->lat_ns = w ? now - w->ts_ns : 0;
	e->qpn = q->qpn;
	e->status = status;
	e->vendor_err = vendor_err;
	e->opcode = w ? w->opcode : VL_OP_UNKNOWN;
	__builtin_memcpy(e->dev, q->dev, VL_DEVNAME);
	bpf_ringbuf_submit(e, 0);
}

/* a send completion matched to nothing signaled: the oldest unsignaled
 * WR (a flush, or a QP that signals all); NULL if there is none */
static __always_inline bool oldest_unsig(__u64 qp, struct vl_qp *q, __u32 status, __u64 now,
					 struct vl_wr *out)
{
	struct vl_unsig_key u = { .qp = qp, .seq = q->done_seq };
	struct vl_wr *w = bpf_map_lookup_elem(&unsig, &u);

	if (!w)
		return false;
	*out = *w;
	record(qp, q, w, status, now, false);
	bpf_map_delete_elem(&unsig, &u);
	q->done_seq = u.seq + 1;
	return true;
}

static __always_inline void on_wc(struct ib_wc___vl *wc, __u64 now)
{
	__u64 qp = (__u64)BPF_CORE_READ(wc, qp);
	struct vl_wr_key k = { .qp = qp, .wr_id = BPF_CORE_READ(wc, wr_id) };
	__u32 status = BPF_CORE_READ(wc, status);
	/* a QP first seen completing (its posts were before the tool, or a
	 * drain flushes it before posting): its completions still counted */
	struct vl_qp *q = bpf_map_lookup_elem(&qps, &qp);
	struct vl_wr *w = NULL, copy;
	bool found = false;

	if (!q) {
		vl_qp_new(qp);
		q = bpf_map_lookup_elem(&qps, &qp);
	}
	if (!q || !q->tracked)
		return;
	if (status == 0)
		k.dir = BPF_CORE_READ(wc, opcode) & VL_IB_WC_RECV ? 1 : 0;
	w = bpf_map_lookup_elem(&pending, &k);
	if (!w && status && !k.dir) {
		k.dir = 1;
		w = bpf_map_lookup_elem(&pending, &k);
	}
	if (w) {
		copy = *w;
		found = true;
		if (!k.dir) {
			retire_unsig(qp, q, copy.seq, status, now);
			q->done_seq = copy.seq + 1;
		}
		record(qp, q, &copy, status, now, false);
		if (copy.again)
			__sync_fetch_and_add(&w->again, -1);
		else
			bpf_map_delete_elem(&pending, &k);
	} else if (!k.dir || status) {
		found = oldest_unsig(qp, q, status, now, &copy);
	}
	if (!found)
		counter_inc(&counters, VL_STAT_UNPAIRED);
	if (status && targ_events)
		error_event(q, found ? &copy : NULL, k.wr_id, status,
			    BPF_CORE_READ(wc, vendor_err), now);
}

static __always_inline int on_poll(void *wc)
{
	__u32 zero = 0, d;
	struct vl_poll_stack *st = bpf_map_lookup_elem(&polls, &zero);

	if (!st)
		return 0;
	d = st->depth++;
	if (d < VL_POLL_DEPTH) {
		st->pid_tgid[d & (VL_POLL_DEPTH - 1)] = bpf_get_current_pid_tgid();
		st->wc[d & (VL_POLL_DEPTH - 1)] = (__u64)wc;
	}
	return 0;
}

/* ret completions in the array at wc */
static __always_inline int on_poll_done(__u64 wc, int ret)
{
	__u64 now, size = bpf_core_type_size(struct ib_wc___vl);
	int i;

	if (ret <= 0)
		return 0;
	now = bpf_ktime_get_ns();
	for (i = 0; i < VL_WC_MAX && i < ret; i++)
		on_wc((struct ib_wc___vl *)(wc + i * size), now);
	if (ret > VL_WC_MAX)
		counter_inc(&counters, VL_STAT_POLL_LONG);
	return 0;
}

/* a kretprobe sees no arguments: the array its entry pushed. A return
 * whose thread is not the top entry's (a kretprobe the kernel missed)
 * empties the stack */
static __always_inline int on_poll_ret(int ret)
{
	__u32 zero = 0, d;
	struct vl_poll_stack *st = bpf_map_lookup_elem(&polls, &zero);
	__u64 wc;

	if (!st || !st->depth)
		return 0;
	d = --st->depth;
	if (d >= VL_POLL_DEPTH) {
		counter_inc(&counters, VL_STAT_POLL_LONG);
		return 0;
	}
	if (st->pid_tgid[d & (VL_POLL_DEPTH - 1)] != bpf_get_current_pid_tgid()) {
		st->depth = 0;
		return 0;
	}
	wc = st->wc[d & (VL_POLL_DEPTH - 1)];
	return on_poll_done(wc, ret);
}

static __always_inline int on_destroy(struct ib_qp___vl *qp)
{
	__u64 key = (__u64)qp;

	bpf_map_delete_elem(&qps, &key);
	return 0;
}

/*
 * A trampoline program does not run nested in itself on one CPU: a call
 * of the hooked function from a softirq (the host's CQ, polled in
 * irq_poll) interrupting the program in process context (the target's
 * CQ, polled from a workqueue) skips it (the kernel counts a recursion
 * miss), and that completion or post would be lost. So each hook has two
 * programs: the first handles every call, marking its slot of `active`
 * on this CPU while it runs; its twin handles a call only while the first
 * is marked, which is when the first was skipped for it (in whichever
 * order the trampoline runs them).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u32);
} active SEC(".maps");

#define VL_TWINS(prog, sec, slot, call, args...)				\
SEC(sec)									\
int BPF_PROG(prog, args)							\
{										\
	__u32 k = slot, *a = bpf_map_lookup_elem(&active, &k);			\
										\
	if (!a)									\
		return 0;							\
	*a = 1;									\
	call;									\
	*a = 0;									\
	return 0;								\
}										\
SEC(sec)									\
int BPF_PROG(prog##_twin, args)							\
{										\
	__u32 k = slot, *a = bpf_map_lookup_elem(&active, &k);			\
										\
	if (a && *a)								\
		call;								\
	return 0;								\
}

/* one driver's three entry points: post_send, post_recv, poll_cq; n
 * numbers the driver (its slots of `active`) */
#define VL_DRIVER(drv, n, post_send, post_recv, poll_cq)			\
VL_TWINS(drv##_send_fentry, "fentry/" #post_send, n * 3, on_post_send(qp, wr),	\
	 struct ib_qp___vl *qp, struct ib_send_wr___vl *wr)			\
VL_TWINS(drv##_recv_fentry, "fentry/" #post_recv, n * 3 + 1, on_post_recv(qp, wr), \
	 struct ib_qp___vl *qp, struct ib_recv_wr___vl *wr)			\
VL_TWINS(drv##_poll_ret_fexit, "fexit/" #poll_cq, n * 3 + 2,			\
	 on_poll_done((__u64)wc, ret), void *cq, int nwc, struct ib_wc___vl *wc, int ret) \
SEC("kprobe/" #post_send)							\
int BPF_KPROBE(drv##_send_kprobe, struct ib_qp___vl *qp, struct ib_send_wr___vl *wr) \
{										\
	return on_post_send(qp, wr);						\
}										\
SEC("kprobe/" #post_recv)							\
int BPF_KPROBE(drv##_recv_kprobe, struct ib_qp___vl *qp, struct ib_recv_wr___vl *wr) \
{										\
	return on_post_recv(qp, wr);						\
}										\
SEC("kprobe/" #poll_cq)							\
int BPF_KPROBE(drv##_poll_kprobe, void *cq, int nwc, struct ib_wc___vl *wc)	\
{										\
	return on_poll(wc);							\
}										\
SEC("kretprobe/" #poll_cq)							\
int BPF_KRETPROBE(drv##_poll_ret_kretprobe, int ret)				\
{										\
	return on_poll_ret(ret);						\
}

VL_DRIVER(rxe, 0, rxe_post_send, rxe_post_recv, rxe_poll_cq)
/* mlx5_ib_post_send/recv take a 4th argument (drain); the ops table
 * points at the 3-argument _nodrain wrappers (mlx5/wr.h), out of line */
VL_DRIVER(mlx5, 1, mlx5_ib_post_send_nodrain, mlx5_ib_post_recv_nodrain, mlx5_ib_poll_cq)
VL_DRIVER(irdma, 2, irdma_post_send, irdma_post_recv, irdma_poll_cq)
VL_DRIVER(bnxt, 3, bnxt_re_post_send, bnxt_re_post_recv, bnxt_re_poll_cq)

FENTRY_OR_KPROBE(vl_destroy, ib_destroy_qp_user, on_destroy(qp), struct ib_qp___vl *qp)

char LICENSE[] SEC("license") = "Dual BSD/GPL";
