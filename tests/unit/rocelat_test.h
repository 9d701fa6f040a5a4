/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Helpers shared by the rocelat unit tests: load the skeleton in offline
 * mode (the program's clock is ours), run crafted frames through
 * BPF_PROG_TEST_RUN, read counters and flows back. */
#ifndef AGENTXDP_ROCELAT_TEST_H
#define AGENTXDP_ROCELAT_TEST_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rocelat.h"
#include "rocelat.skel.h"
#include "tap.h"
#include "pkt_build.h"

#define US 1000ULL
#define MS 1000000ULL
#define S  1000000000ULL

#define T_XDP_PASS	2
#define T_TC_UNSPEC	(-1)
#define T_TC_OK		0

static int t_ncpu;

static inline struct rocelat_bpf *t_load(__u64 unit_ns, __u16 roce_port)
{
	struct rocelat_bpf *obj = rocelat_bpf__open();

	if (!obj) {
		printf("Bail out! open rocelat skeleton: %s\n", strerror(errno));
		exit(1);
	}
	obj->rodata->targ_offline = true;
	ROCELAT_SET_UNIT(obj->rodata, unit_ns);
	obj->rodata->targ_roce_port = roce_port;
	if (rocelat_bpf__load(obj)) {
		printf("Bail out! load rocelat (needs root): %s\n", strerror(errno));
		exit(1);
	}
	t_ncpu = libbpf_num_possible_cpus();
	return obj;
}

/* one frame through a program; returns retval, or -1000 - errno when the
 * test run itself failed */
static inline int t_run_prog(struct bpf_program *prog, const void *pkt, int len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len,
		    .repeat = 1);
	int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &o);

	return err ? -1000 + err : (int)o.retval;
}

/* builds the frame, sets the program clock to t_ns, runs it through XDP,
 * checks the verdict */
static inline void t_xdp(struct rocelat_bpf *obj, const struct pkt_spec *s, __u64 t_ns)
{
	uint8_t buf[2048];
	int len = pkt_build(s, buf, sizeof(buf)), rv;

	obj->bss->clock_ns = t_ns;
	rv = t_run_prog(obj->progs.rocelat_xdp, buf, len);
	if (rv != T_XDP_PASS)
		tap_ok(0, "XDP verdict is XDP_PASS for opcode 0x%02x psn %u (got %d)",
		       s->opcode, s->psn, rv);
}

/* a SEND ONLY asking for an ACK to responder QP 0x11, PSN psn, at t_ns */
static inline void t_request(struct rocelat_bpf *obj, __u32 psn, __u64 t_ns)
{
	struct pkt_spec s = {
		.opcode = ROCE_SEND_ONLY, .ackreq = true, .dqpn = 0x11,
		.psn = psn, .payload = 32,
	};

	t_xdp(obj, &s, t_ns);
}

static inline struct rocelat_counters t_counters(struct rocelat_bpf *obj)
{
	struct rocelat_counters sum = {}, *v = calloc(t_ncpu, sizeof(*v));
	__u32 zero = 0;

	if (v && !bpf_map_lookup_elem(bpf_map__fd(obj->maps.counters), &zero, v)) {
		for (int c = 0; c < t_ncpu; c++) {
			for (int i = 0; i < RL_NR; i++)
				sum.c[i] += v[c].c[i];
			for (int i = 0; i < HIST_SLOTS; i++)
				sum.hist.slots[i] += v[c].hist.slots[i];
			for (int i = 0; i < HIST_SLOTS; i++)
				sum.turn_hist.slots[i] += v[c].turn_hist.slots[i];
		}
	}
	free(v);
	return sum;
}

/* the struct rl_llhist bucket of v ns (rocelat.h), written out apart:
 * below 32 exact; per power of two e >= 5 its top 5 bits below the
 * leading one, m, in bucket m for m < 2, else 1 + m / 2; one top bucket
 * from 2^36 */
static inline int llhist_test_bucket(__u64 v)
{
	int e = 63 - __builtin_clzll(v | 1), m;

	if (v < 32)
		return v;
	if (e > 35)
		return RL_LL_BUCKETS - 1;
	m = (int)(v >> (e - 5)) - 32;
	return 32 + (e - 5) * 17 + (m < 2 ? m : 1 + m / 2);
}

/* a flow: requester, responder, responder QPN */
static inline void t_flow_key(struct roce_flow_id *k, int family, const char *req,
			      const char *resp, __u32 qpn)
{
	memset(k, 0, sizeof(*k));
	k->family = family;
	k->qpn = qpn;
	inet_pton(family == 4 ? AF_INET : AF_INET6, req, k->req);
	inet_pton(family == 4 ? AF_INET : AF_INET6, resp, k->resp);
}

/* flow id's entry in the flow table (in its sets, as the program finds
 * it), which must name its flow */
static inline int t_pending_at(struct rocelat_bpf *obj, const struct roce_flow_id *id,
			       struct pending_flow *pf, __u32 *at)
{
	struct roce_qp_key k;
	__u32 set[FLOW_SETS];

	roce_qp_key_of(&k, id);
	roce_flow_sets(&k, obj->rodata->targ_flow_sets, set);
	for (__u32 i = 0; i < FLOW_SETS * FLOW_WAYS; i++) {
		__u32 idx = set[i / FLOW_WAYS] * FLOW_WAYS + i % FLOW_WAYS;

		memset(pf, 0, sizeof(*pf));
		if (bpf_map_lookup_elem(bpf_map__fd(obj->maps.pending), &idx, pf))
			return -1;
		*at = idx;
		if (pf->used && !memcmp(&pf->key, &k, sizeof(k)))
			return memcmp(&pf->id, id, sizeof(*id)) ? -2 : 0;
	}
	memset(pf, 0, sizeof(*pf));
	return -1;
}

/* the same, without the entry's index */
static inline int t_pending(struct rocelat_bpf *obj, const struct roce_flow_id *id,
			    struct pending_flow *pf)
{
	__u32 at;

	return t_pending_at(obj, id, pf, &at);
}

/* the flow's statistics of the current interval, as rocelat reads them;
 * 0 when found */
static inline int t_flow(struct rocelat_bpf *obj, const struct roce_flow_id *k,
			 struct roce_flow_stats *fs)
{
	static struct pending_flow pf;
	const struct roce_flow_stats *st;

	memset(fs, 0, sizeof(*fs));
	if (t_pending(obj, k, &pf))
		return -1;
	st = pending_flow_stats(&pf, obj->bss->stats_epoch);
	if (!st)
		return -1;
	*fs = *st;
	return 0;
}

/* the flow's log-linear histogram: every sample since it started (the
 * entry's one copy, pending_flow.ll); 0 when found */
static inline int t_flow_ll(struct rocelat_bpf *obj, const struct roce_flow_id *k,
			    struct rl_llhist *ll)
{
	static struct pending_flow pf;

	memset(ll, 0, sizeof(*ll));
	if (t_pending(obj, k, &pf))
		return -1;
	*ll = pf.ll;
	return 0;
}

static inline int t_pending_count(const struct pending_flow *pf)
{
	int n = 0;

	for (int i = 0; i < PENDING_RING; i++)
		n += !!(pf->ring[i].flags & SLOT_VALID);
	return n;
}

/* empty every map of the object (keys of any size) */
static inline void t_map_clear(struct bpf_map *m)
{
	int fd = bpf_map__fd(m);
	char key[64];

	while (!bpf_map_get_next_key(fd, NULL, key))
		bpf_map_delete_elem(fd, key);
}

/* every entry of an array zeroed */
static inline void t_array_clear(struct bpf_map *m)
{
	void *zero = calloc(1, bpf_map__value_size(m));
	int fd = bpf_map__fd(m);

	for (__u32 i = 0; zero && i < bpf_map__max_entries(m); i++)
		bpf_map_update_elem(fd, &i, zero, BPF_ANY);
	free(zero);
}

static inline void t_reset(struct rocelat_bpf *obj)
{
	struct rocelat_counters *z = calloc(t_ncpu, sizeof(*z));
	__u32 zero = 0;

	t_array_clear(obj->maps.pending);
	t_array_clear(obj->maps.flows_used);
	t_map_clear(obj->maps.pairs);
	t_map_clear(obj->maps.cands);
	t_map_clear(obj->maps.waitport);
	t_map_clear(obj->maps.waitpsn);
	t_map_clear(obj->maps.untracked);
	t_map_clear(obj->maps.held);
	t_map_clear(obj->maps.cm_reqs);
	if (z)
		bpf_map_update_elem(bpf_map__fd(obj->maps.counters), &zero, z, 0);
	free(z);
}

/* the timeout sweep rocelat runs before each report, at the clock t_ns */
static inline void t_sweep(struct rocelat_bpf *obj, __u64 t_ns)
{
	uint8_t frame[64] = {};

	obj->bss->clock_ns = t_ns;
	if (t_run_prog(obj->progs.rocelat_sweep, frame, sizeof(frame)) < -900)
		tap_ok(0, "timeout sweep ran");
}

#endif
