// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat's flow table when more QPs are active than it holds, through
 * BPF_PROG_TEST_RUN with the offline clock and the smallest table
 * (--max-flows 16): new QPs are left out, never pushed in over active
 * flows, each counted once with every request of it; their answers are
 * neither held nor tried against the waiting QPs; flows idle for
 * --timeout make room; a left-out QP quiet for 2 x --timeout leaves the
 * count, and its port's mark in the pairing index goes with it. Then
 * the default table (DEFAULT_MAX_FLOWS) with 10,000 QPs active at once,
 * of one pair of hosts and across 64: none left out, all of rocelat's
 * maps within 64 MiB of kernel memory as the kernel counts it.
 * Needs root.
 */
#include "rocelat_test.h"

#define FLOWS	16
#define QPS	40

static struct rocelat_bpf *obj;

#define C(x) (t_counters(obj).c[x])

static struct rocelat_bpf *load_small(void)
{
	struct rocelat_bpf *o = rocelat_bpf__open();

	if (!o) {
		printf("Bail out! open rocelat skeleton: %s\n", strerror(errno));
		exit(1);
	}
	o->rodata->targ_offline = true;
	ROCELAT_SET_UNIT(o->rodata, 1000);
	o->rodata->targ_flow_sets = FLOWS / FLOW_WAYS;
	bpf_map__set_max_entries(o->maps.pending, ROCELAT_PENDING_N(FLOWS));
	bpf_map__set_max_entries(o->maps.flows_used, ROCELAT_USED_WORDS(FLOWS));
	bpf_map__set_max_entries(o->maps.flow_tags, FLOWS / FLOW_WAYS);
	bpf_map__set_max_entries(o->maps.cands, FLOWS);
	bpf_map__set_max_entries(o->maps.held, FLOWS);
	bpf_map__set_max_entries(o->maps.pairs, ROCELAT_PAIRS_N(FLOWS));
	if (rocelat_bpf__load(o)) {
		printf("Bail out! load rocelat (needs root): %s\n", strerror(errno));
		exit(1);
	}
	t_ncpu = libbpf_num_possible_cpus();
	return o;
}

/* QP i of batch b: responder QPN, its requests' port */
static __u32 qpn_of(int b, int i)
{
	return 0x1000 * (b + 1) + i;
}

static void request(int b, int i, __u32 psn, __u64 t)
{
	struct pkt_spec s = {
		.opcode = ROCE_SEND_ONLY, .ackreq = true, .dqpn = qpn_of(b, i),
		.sport = 50000 + 100 * b + i, .psn = psn, .payload = 32,
	};

	t_xdp(obj, &s, t);
}

/* the ACK, from the requests' port (as rxe), to requester QP + 0x100 */
static void ack(int b, int i, __u32 psn, __u64 t)
{
	struct pkt_spec s = {
		.saddr = "10.0.0.2", .daddr = "10.0.0.1", .opcode = ROCE_ACKNOWLEDGE,
		.syndrome = 0x1f, .dqpn = qpn_of(b, i) + 0x100,
		.sport = 50000 + 100 * b + i, .psn = psn,
	};

	t_xdp(obj, &s, t);
}

/* entries in a hash map */
static int map_count(struct bpf_map *m)
{
	int fd = bpf_map__fd(m), n = 0;
	char key[64], next[64];
	void *k = NULL;

	while (!bpf_map_get_next_key(fd, k, next)) {
		memcpy(key, next, sizeof(key));
		k = key;
		n++;
	}
	return n;
}

/* flows in the table */
static int live_flows(void)
{
	static struct pending_flow pf;
	int n = 0;

	for (__u32 i = 0; i < ROCELAT_PENDING_N(FLOWS); i++)
		if (!bpf_map_lookup_elem(bpf_map__fd(obj->maps.pending), &i, &pf))
			n += pf.used;
	return n;
}

/* waitport values that mark a left-out QP of batch b */
static int marks_of(int b)
{
	int fd = bpf_map__fd(obj->maps.waitport), n = 0;
	struct roce_qp_key key, next, *k = NULL;
	__u32 v;

	while (!bpf_map_get_next_key(fd, k, &next)) {
		key = next;
		k = &key;
		if (!bpf_map_lookup_elem(fd, &key, &v) && (v & WAIT_UNTRACKED) &&
		    (v & ROCE_QPN_MASK) >> 12 == (__u32)b + 1)
			n++;
	}
	return n;
}

static void test_full_table(void)
{
	__u64 tracked, left;
	int i;

	t_reset(obj);
	/* QPS QPs, two requests each, all active at once */
	for (i = 0; i < QPS; i++)
		request(0, i, 100, 1 * MS + i * US);
	for (i = 0; i < QPS; i++)
		request(0, i, 101, 2 * MS + i * US);
	tracked = C(RL_FLOWS);
	left = C(RL_UNTRACKED);
	printf("# %llu of %d QPs tracked in a table of %d\n", (unsigned long long)tracked,
	       QPS, FLOWS);
	tap_ok(tracked <= FLOWS && tracked >= FLOWS - 2,
	       "the table fills (%llu of %d entries)", (unsigned long long)tracked, FLOWS);
	tap_eq(tracked + left, QPS, "every QP tracked or left out, once");
	tap_eq(live_flows(), (int)tracked, "none pushed out: the table holds a stable set");
	tap_eq(C(RL_UNTRACKED_REQS), 2 * left, "each request of a QP left out counted");
	tap_eq(C(RL_TRACKED), 2 * tracked, "the others' requests tracked");
	tap_eq(map_count(obj->maps.untracked), (int)left, "each left-out QP held once");
	tap_eq(marks_of(0), (int)left, "... and its port marked");
	/* every QP's two answers: the tracked ones timed, the others' not
	 * held and not tried against a waiting QP */
	for (i = 0; i < QPS; i++) {
		ack(0, i, 100, 3 * MS + i * US);
		ack(0, i, 101, 4 * MS + i * US);
	}
	tap_eq(C(RL_SAMPLES), 2 * tracked, "the tracked QPs' requests all timed");
	tap_eq(C(RL_HELD), 0, "no answer of a left-out QP held");
	tap_eq(C(RL_AMBIGUOUS) + C(RL_UNMATCHED), 0, "none ambiguous, none unmatched");
	tap_eq(C(RL_LEARNED), tracked, "each tracked QP paired once");

	/* 1.5 s on (past --timeout: the first batch idle), a new batch */
	for (i = 0; i < QPS; i++)
		request(1, i, 200, 1500 * MS + i * US);
	tracked = C(RL_FLOWS) - tracked;
	printf("# %llu of the second batch admitted\n", (unsigned long long)tracked);
	tap_ok(tracked >= FLOWS - 2 && tracked <= FLOWS,
	       "idle flows made room: the new batch fills the table");
	tap_eq(live_flows(), (int)tracked, "only the new batch's flows left");
	tap_eq(C(RL_UNTRACKED), left + QPS - tracked, "the rest of it counted as left out");

	/* a report at 2.6 s: the first batch's left-out QPs (quiet 2.6 s)
	 * leave the count with their ports' marks, the second's stay */
	t_sweep(obj, 2600 * MS);
	tap_eq(marks_of(0), 0, "the quiet left-out QPs' marks gone");
	tap_eq(map_count(obj->maps.untracked), (int)(QPS - tracked),
	       "only the second batch's left-out QPs held");
	tap_eq(marks_of(1), (int)(QPS - tracked), "... and their marks");
}

/* kernel memory of the object's maps: their memlock in fdinfo */
static long long maps_memlock(struct rocelat_bpf *o)
{
	struct bpf_map *m;
	long long sum = 0, v;
	char path[64], line[128];
	FILE *f;

	bpf_object__for_each_map(m, o->obj) {
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", bpf_map__fd(m));
		f = fopen(path, "r");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "memlock: %lld", &v) == 1)
				sum += v;
		fclose(f);
	}
	return sum;
}

#define DEF_QPS		10000

/* DEF_QPS requests, one a QP, all within 1 ms: QP i between host pair
 * i % hosts, its QPN qpn[i] */
static void default_batch(struct rocelat_bpf *o, int hosts, const __u32 *qpn)
{
	char sa[32], da[32];
	int i;

	for (i = 0; i < DEF_QPS; i++) {
		struct pkt_spec s = {
			.saddr = sa, .daddr = da, .opcode = ROCE_SEND_ONLY,
			.ackreq = true, .dqpn = qpn[i],
			.sport = 49152 + i % 16384, .psn = i, .payload = 32,
		};

		snprintf(sa, sizeof(sa), "10.1.%d.1", i % hosts);
		snprintf(da, sizeof(da), "10.1.%d.2", i % hosts);
		t_xdp(o, &s, 1 * MS + i * 50);
	}
}

static void test_default_table(void)
{
	static struct pending_flow zero;
	static __u32 qpn[DEF_QPS];
	struct rocelat_bpf *o = t_load(1000, ROCE_V2_PORT);
	long long mem = maps_memlock(o);
	__u32 x = 0x12345, i;

	obj = o;
	printf("# default table: %d flows, maps %lld bytes\n", DEFAULT_MAX_FLOWS, mem);
	tap_ok(mem > 0 && mem <= 64LL << 20,
	       "the default table's maps within 64 MiB (%lld bytes)", mem);
	/* one pair of hosts, QPNs as an RNIC's: distinct, 24 bits, random */
	for (i = 0; i < DEF_QPS; i++) {
		x = (x * 1103515245u + 12345u) & ROCE_QPN_MASK;
		qpn[i] = x ? x : 1;
	}
	default_batch(o, 1, qpn);
	tap_eq(C(RL_FLOWS), DEF_QPS, "10,000 QPs of one pair of hosts: each tracked");
	tap_eq(C(RL_UNTRACKED) + C(RL_UNTRACKED_REQS), 0, "... none left out");
	/* an empty table again; 64 pairs of hosts, QPNs as rxe's (counting
	 * from 0x11 on each) */
	for (i = 0; i < DEFAULT_MAX_FLOWS; i++)
		bpf_map_update_elem(bpf_map__fd(o->maps.pending), &i, &zero, BPF_ANY);
	t_reset(o);
	for (i = 0; i < DEF_QPS; i++)
		qpn[i] = 0x11 + i / 64;
	default_batch(o, 64, qpn);
	tap_eq(C(RL_FLOWS), DEF_QPS, "10,000 QPs across 64 pairs of hosts: each tracked");
	tap_eq(C(RL_UNTRACKED) + C(RL_UNTRACKED_REQS), 0, "... none left out");
	rocelat_bpf__destroy(o);
}

int main(void)
{
	obj = load_small();
	test_full_table();
	rocelat_bpf__destroy(obj);
	test_default_table();
	return tap_done();
}
