// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rdmaqp: the RDMA control path, on any RDMA device (mlx5, irdma, bnxt_re,
 * rxe ...): QP creation and destruction with the owner, state changes and
 * the PSNs a modify sets, async events. The data path of a hardware RNIC
 * is invisible to the kernel; its progress is polled from RDMA netlink by
 * the loader. Every hook is in ib_core or ib_uverbs, which every driver
 * goes through, so nothing here depends on the driver.
 *
 * Hooks (Debian's 6.1 and 6.12, drivers/infiniband/core/; all have BTF in
 * the modules of both lines, which tests/unit/rdma_btf.c proves):
 *   restrack.c:rdma_restrack_add(res)   every new verbs object, after the
 *       driver created it: a QP (res->type) has its number by then; the
 *       current task is the creator (a user QP's process; for a kernel
 *       QP, res->kern_name names the module)
 *   verbs.c:ib_destroy_qp_user(qp, udata)   its destruction
 *   verbs.c:_ib_modify_qp(qp, attr, mask, udata)   both ib_modify_qp
 *       (kernel consumers) and ib_modify_qp_with_udata (uverbs) call it;
 *       its return says whether the change happened, so entry and return
 *       are paired per thread
 *   device.c:ib_dispatch_event(event)   port and device async events
 *   uverbs_main.c:ib_uverbs_qp_event_handler(event, ctx)   a user QP's
 *       async events (QP fatal, path migrated, ...), any driver
 * A driver that moves a QP to ERR on its own (rxe when retries run out,
 * firmware on a fatal error) does not go through ib_core: the loader's
 * netlink polling sees that state; the fatal event, where the driver sends
 * one, comes through the event handler.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "lib/maps.bpf.h"
#include "lib/probe.bpf.h"
#include "rdmaqp.h"

/*
 * ib_core's types, only the fields read here: ib_core is a module, so they
 * are in no vmlinux.h. The ___rq flavour keeps them apart from the rxe
 * header's; CO-RE matches them by name against the running ib_core.
 */
struct ib_device___rq {
	char name[RDMAQP_DEVNAME];
	__u32 index;
} __attribute__((preserve_access_index));

enum rdma_restrack_type___rq {
	RDMA_RESTRACK_QP___rq = 2,
};

/* a field libbpf relocates must have the target's kind: an enum is read
 * as an enum of the same (flavour-less) name, never as an int; only the
 * names matter here, not the values */
enum ib_qp_type___rq { IB_QPT_RC___rq = 2 };
enum ib_qp_state___rq { IB_QPS_RESET___rq = 0 };
enum ib_event_type___rq { IB_EVENT_QP_FATAL___rq = 1 };

struct rdma_restrack_entry___rq {
	enum rdma_restrack_type___rq type;
	bool user;
	const char *kern_name;
} __attribute__((preserve_access_index));

struct ib_qp___rq {
	struct ib_device___rq *device;
	__u32 qp_num;
	enum ib_qp_type___rq qp_type;
	struct rdma_restrack_entry___rq res;
} __attribute__((preserve_access_index));

struct ib_qp_attr___rq {
	enum ib_qp_state___rq qp_state;
	__u32 rq_psn;
	__u32 sq_psn;
	__u32 dest_qp_num;
	__u8 port_num;
} __attribute__((preserve_access_index));

struct ib_event___rq {
	struct ib_device___rq *device;
	union {
		struct ib_qp___rq *qp;
		__u32 port_num;
	} element;
	enum ib_event_type___rq event;
} __attribute__((preserve_access_index));

/* enum ib_event_type values of QP events (include/rdma/ib_verbs.h) */
#define RQ_IB_EVENT_QP_FIRST 1	/* IB_EVENT_QP_FATAL .. IB_EVENT_PATH_MIG_ERR */
#define RQ_IB_EVENT_QP_LAST 7
#define RQ_IB_EVENT_QP_LAST_WQE_REACHED 16

/* what the last modify set, per QP: the old state of the next one */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct rdmaqp_key);
	__type(value, __u8);
} states SEC(".maps");

/* modifies between entry and return, per thread */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct rdmaqp_modify);
} modifies SEC(".maps");

AX_PERCPU_STATS(stats, RDMAQP_STAT_NR);
AX_RINGBUF(events, 1 << 18);

static __always_inline struct rdmaqp_event *ev_new(__u8 type, struct ib_device___rq *dev)
{
	struct rdmaqp_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		counter_inc(&stats, RDMAQP_STAT_EVENTS_LOST);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = bpf_ktime_get_ns();
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(&e->comm, sizeof(e->comm));
	e->type = type;
	e->old_state = RDMAQP_STATE_UNKNOWN;
	e->new_state = RDMAQP_STATE_UNKNOWN;
	e->dev_index = BPF_CORE_READ(dev, index);
	BPF_CORE_READ_STR_INTO(&e->dev, dev, name);
	return e;
}

static __always_inline void ev_qp(struct rdmaqp_event *e, struct ib_qp___rq *qp)
{
	e->qpn = BPF_CORE_READ(qp, qp_num);
	e->qp_type = BPF_CORE_READ(qp, qp_type);
}

/* rdma_restrack_add: QPs only */
static __always_inline int on_create(struct rdma_restrack_entry___rq *res)
{
	struct ib_qp___rq *qp;
	struct rdmaqp_event *e;
	struct rdmaqp_key k;
	__u8 reset = 0;

	if (BPF_CORE_READ(res, type) != bpf_core_enum_value(enum rdma_restrack_type___rq,
							     RDMA_RESTRACK_QP___rq))
		return 0;
	qp = (void *)res - bpf_core_field_offset(struct ib_qp___rq, res);
	e = ev_new(RQ_EV_CREATE, BPF_CORE_READ(qp, device));
	if (!e)
		return 0;
	ev_qp(e, qp);
	e->user = BPF_CORE_READ(res, user);
	if (!e->user)
		BPF_CORE_READ_STR_INTO(&e->kern_name, res, kern_name);
	k.dev_index = e->dev_index;
	k.qpn = e->qpn;
	bpf_map_update_elem(&states, &k, &reset, BPF_ANY);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* ib_destroy_qp_user(qp, udata): user and kernel QPs (ib_destroy_qp is
 * an inline wrapper of it). Its entry: a destroy that fails (a QP still
 * in use) is reported too. rdma_restrack_del, the twin of the creation
 * hook, was not reached for rxe's QPs on 6.1 in the guest. */
static __always_inline int on_destroy(struct ib_qp___rq *qp)
{
	struct rdmaqp_event *e;
	struct rdmaqp_key k;
	__u8 *st;

	e = ev_new(RQ_EV_DESTROY, BPF_CORE_READ(qp, device));
	if (!e)
		return 0;
	ev_qp(e, qp);
	k.dev_index = e->dev_index;
	k.qpn = e->qpn;
	st = bpf_map_lookup_elem(&states, &k);
	if (st)
		e->old_state = *st;
	bpf_map_delete_elem(&states, &k);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* _ib_modify_qp entry: what is asked */
static __always_inline int on_modify(struct ib_qp___rq *qp, struct ib_qp_attr___rq *attr,
				     int mask)
{
	struct rdmaqp_modify m = { .qp = qp, .mask = mask, .new_state = RDMAQP_STATE_UNKNOWN };
	__u64 id = bpf_get_current_pid_tgid();

	if (mask & RDMAQP_ATTR_STATE)
		m.new_state = BPF_CORE_READ(attr, qp_state);
	if (mask & RDMAQP_ATTR_SQ_PSN)
		m.sq_psn = BPF_CORE_READ(attr, sq_psn);
	if (mask & RDMAQP_ATTR_RQ_PSN)
		m.rq_psn = BPF_CORE_READ(attr, rq_psn);
	if (mask & RDMAQP_ATTR_DEST_QPN)
		m.dest_qpn = BPF_CORE_READ(attr, dest_qp_num);
	if (mask & RDMAQP_ATTR_PORT)
		m.port = BPF_CORE_READ(attr, port_num);
	bpf_map_update_elem(&modifies, &id, &m, BPF_ANY);
	return 0;
}

/* _ib_modify_qp return: an event when it succeeded */
static __always_inline int on_modify_ret(int ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rdmaqp_modify *m = bpf_map_lookup_elem(&modifies, &id);
	struct ib_qp___rq *qp;
	struct rdmaqp_event *e;
	struct rdmaqp_key k;
	__u8 *st;

	if (!m)
		return 0;
	qp = m->qp;
	if (ret)
		goto out;
	e = ev_new(RQ_EV_MODIFY, BPF_CORE_READ(qp, device));
	if (!e)
		goto out;
	ev_qp(e, qp);
	e->mask = m->mask;
	e->sq_psn = m->sq_psn;
	e->rq_psn = m->rq_psn;
	e->dest_qpn = m->dest_qpn;
	e->port = m->port;
	e->new_state = m->new_state;
	k.dev_index = e->dev_index;
	k.qpn = e->qpn;
	st = bpf_map_lookup_elem(&states, &k);
	if (st)
		e->old_state = *st;
	if (m->mask & RDMAQP_ATTR_STATE)
		bpf_map_update_elem(&states, &k, &m->new_state, BPF_ANY);
	bpf_ringbuf_submit(e, 0);
out:
	bpf_map_delete_elem(&modifies, &id);
	return 0;
}

static __always_inline bool qp_event(int ev)
{
	return (ev >= RQ_IB_EVENT_QP_FIRST && ev <= RQ_IB_EVENT_QP_LAST) ||
	       ev == RQ_IB_EVENT_QP_LAST_WQE_REACHED;
}

/* an async event: a QP's (from the uverbs handler) or a port's */
static __always_inline int on_async(struct ib_event___rq *ev, bool from_qp_handler)
{
	int type = BPF_CORE_READ(ev, event);
	struct rdmaqp_event *e;

	/* QP events reach ib_dispatch_event in no kernel; CQ/SRQ events are
	 * not for this tool */
	if (from_qp_handler != qp_event(type))
		return 0;
	e = ev_new(RQ_EV_ASYNC, BPF_CORE_READ(ev, device));
	if (!e)
		return 0;
	e->event = type;
	if (from_qp_handler)
		ev_qp(e, BPF_CORE_READ(ev, element.qp));
	else
		e->port = BPF_CORE_READ(ev, element.port_num);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

FENTRY_OR_KPROBE(rdmaqp_create, rdma_restrack_add, on_create(res),
		 struct rdma_restrack_entry___rq *res)
FENTRY_OR_KPROBE(rdmaqp_destroy, ib_destroy_qp_user, on_destroy(qp),
		 struct ib_qp___rq *qp)
FENTRY_OR_KPROBE(rdmaqp_modify, _ib_modify_qp, on_modify(qp, attr, mask),
		 struct ib_qp___rq *qp, struct ib_qp_attr___rq *attr, int mask)
FEXIT_OR_KRETPROBE(rdmaqp_modify_ret, _ib_modify_qp, on_modify_ret(ret), int ret,
		   struct ib_qp___rq *qp, struct ib_qp_attr___rq *attr, int mask, void *udata)
FENTRY_OR_KPROBE(rdmaqp_async, ib_dispatch_event, on_async(ev, false),
		 struct ib_event___rq *ev)
FENTRY_OR_KPROBE(rdmaqp_qp_async, ib_uverbs_qp_event_handler, on_async(ev, true),
		 struct ib_event___rq *ev)

char LICENSE[] SEC("license") = "Dual BSD/GPL";
