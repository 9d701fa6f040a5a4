// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * roceinject's selection and faults through BPF_PROG_TEST_RUN: crafted
 * frames, one skeleton per configuration (its selectors are read-only
 * data), verdicts, per-QP counts and the bytes that come out checked
 * exactly. Needs root.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "roceinject.h"
#include "roceinject.skel.h"
#include "roceinject_load.h"
#include "tap.h"
#include "pkt_build.h"

#define T_UNSPEC	(-1)
#define T_SHOT		2

static int t_ncpu;

/* the skeleton opened; configure obj->rodata, then t_load() (-Q: t_load_qpn()) */
static struct roceinject_bpf *t_open(__u32 faults)
{
	struct roceinject_bpf *obj = roceinject_bpf__open();

	if (!obj) {
		printf("Bail out! open roceinject skeleton: %s\n", strerror(errno));
		exit(1);
	}
	obj->rodata->targ_faults = faults;
	return obj;
}

/* loaded, with -Q qpn when qpn_set (the hot map, as the loader writes it) */
static void t_load_qpn(struct roceinject_bpf *obj, bool qpn_set, __u32 qpn)
{
	if (roceinject_bpf__load(obj)) {
		printf("Bail out! load roceinject (needs root): %s\n", strerror(errno));
		exit(1);
	}
	if (roceinject_set_hot(obj, ROCE_V2_PORT, qpn_set, qpn,
			       obj->rodata->targ_faults & (1U << FAULT_DUP))) {
		printf("Bail out! write roceinject's hot map: %s\n", strerror(errno));
		exit(1);
	}
}

static void t_load(struct roceinject_bpf *obj)
{
	t_load_qpn(obj, false, 0);
}

/* s through the tc program; the verdict, the frame that came out in out */
static int t_run(struct roceinject_bpf *obj, const struct pkt_spec *s, uint8_t *out, int *len)
{
	uint8_t buf[2048];
	int n = pkt_build(s, buf, sizeof(buf));
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = n,
		    .data_out = out, .data_size_out = 2048, .repeat = 1);
	int err = bpf_prog_test_run_opts(bpf_program__fd(obj->progs.roceinject_tc), &o);

	if (len)
		*len = o.data_size_out;
	return err ? -1000 + err : (int)o.retval;
}

/* the packet's last 4 bytes (its ICRC), read from any alignment */
static uint32_t t_icrc(const uint8_t *out, int len)
{
	uint32_t v;

	memcpy(&v, out + len - 4, sizeof(v));
	return v;
}

static int t_verdict(struct roceinject_bpf *obj, const struct pkt_spec *s)
{
	static uint8_t out[2048];

	return t_run(obj, s, out, NULL);
}

static __u64 t_stat(struct roceinject_bpf *obj, int stat)
{
	__u64 v[512] = {}, sum = 0;
	__u32 k = stat;

	if (stat == STAT_ROCE)
		return roceinject_hot_seen(obj, t_ncpu);
	if (t_ncpu > 512 || bpf_map_lookup_elem(bpf_map__fd(obj->maps.stats), &k, v))
		return ~0ULL;
	for (int c = 0; c < t_ncpu; c++)
		sum += v[c];
	return sum;
}

/* the QP of s's key, or all zero */
static struct inject_qp t_qp(struct roceinject_bpf *obj, const struct pkt_spec *s)
{
	struct inject_key k = { .family = 4, .sport = s->sport ? s->sport : 49152,
				.dqpn = s->dqpn };
	struct inject_qp q = {};

	inet_pton(AF_INET, s->saddr ? s->saddr : "10.0.0.1", k.saddr);
	inet_pton(AF_INET, s->daddr ? s->daddr : "10.0.0.2", k.daddr);
	bpf_map_lookup_elem(bpf_map__fd(obj->maps.qps), &k, &q);
	return q;
}

static const struct pkt_spec req = {
	.opcode = ROCE_SEND_ONLY, .ackreq = true, .dqpn = 0x12, .payload = 16,
};

/* --drop -Q 0x12 --class requests --every 3 */
static void test_every(void)
{
	struct roceinject_bpf *obj = t_open(1U << FAULT_DROP);
	struct pkt_spec s = req, ack = req, other = req;
	int shot = 0, ok = 1;

	obj->rodata->targ_classes = 1U << CLASS_REQUEST;
	obj->rodata->targ_every = 3;
	t_load_qpn(obj, true, 0x12);
	for (int psn = 0; psn < 9; psn++) {
		int rv;

		s.psn = psn;
		rv = t_verdict(obj, &s);
		shot += rv == T_SHOT;
		ok &= rv == ((psn + 1) % 3 ? T_UNSPEC : T_SHOT);
	}
	tap_ok(ok, "--every 3: the 3rd, 6th and 9th request dropped, the rest pass");
	tap_eq(shot, 3, "--every 3: 3 of 9 dropped");
	tap_eq(t_qp(obj, &s).matched, 9, "the QP's matched count");
	tap_eq(t_qp(obj, &s).faults[FAULT_DROP], 3, "the QP's drop count");
	ack.opcode = ROCE_ACKNOWLEDGE;
	ack.syndrome = 0;
	tap_eq(t_verdict(obj, &ack), T_UNSPEC, "an ACK to the QP: not a request, passes");
	other.dqpn = 0x13;
	for (int i = 0; i < 6; i++)
		tap_eq(t_verdict(obj, &other), T_UNSPEC, "QP 0x13's request %d passes", i);
	tap_eq(t_qp(obj, &other).matched, 0, "QP 0x13 has no row");
	tap_eq(t_stat(obj, STAT_ROCE), 16, "16 RoCE packets seen");
	tap_eq(t_stat(obj, STAT_INJECTED), 3, "3 injected");
	roceinject_bpf__destroy(obj);
}

/* --probability 0.25 --seed 7: exactly the PSNs the hash names */
static void test_probability(void)
{
	struct roceinject_bpf *obj = t_open(1U << FAULT_DROP);
	struct pkt_spec s = req;
	int agree = 1, n = 0, want = 0;

	obj->rodata->targ_prob = 1ULL << 30;
	obj->rodata->targ_seed = 7;
	t_load(obj);
	for (int psn = 0; psn < 1000; psn++) {
		bool take = inject_hash(7, 0x12, psn) >> 32 < 1ULL << 30;

		s.psn = psn;
		want += take;
		n += t_verdict(obj, &s) == T_SHOT;
		agree &= (t_qp(obj, &s).injected == (__u64)want);
	}
	tap_ok(agree, "--probability: each PSN taken exactly when hash(seed, QPN, PSN) says");
	tap_ok(n == want && n > 200 && n < 300, "--probability 0.25: %d of 1000 taken", n);
	roceinject_bpf__destroy(obj);
}

/* --count 2, a PSN range that wraps at 2^24 */
static void test_count_psn(void)
{
	struct roceinject_bpf *obj = t_open(1U << FAULT_DROP);
	struct pkt_spec s = req;
	int shot = 0;

	obj->rodata->targ_count = 2;
	obj->rodata->targ_psn_set = true;
	obj->rodata->targ_psn_lo = 0xFFFFFE;
	obj->rodata->targ_psn_hi = 1;
	t_load(obj);
	for (__u32 psn = 0xFFFFFC; psn != 4; psn = (psn + 1) & 0xFFFFFF) {
		s.psn = psn;
		shot += t_verdict(obj, &s) == T_SHOT;
	}
	tap_eq(t_qp(obj, &s).matched, 4, "--psn 16777214-1: 4 of 8 PSNs across the wrap");
	tap_eq(shot, 2, "--count 2: 2 dropped");
	tap_eq(t_stat(obj, STAT_LIMITED), 2, "... and 2 left alone, counted");
	roceinject_bpf__destroy(obj);
}

/* --ecn-ce --corrupt-icrc: IPv4 with its checksum right, IPv6 */
static void test_ce_icrc(void)
{
	struct roceinject_bpf *obj = t_open(1U << FAULT_CE | 1U << FAULT_ICRC);
	struct pkt_spec s = req, s6 = req;
	uint8_t out[2048];
	int len, rv;

	t_load(obj);
	rv = t_run(obj, &s, out, &len);
	tap_eq(rv, T_UNSPEC, "CE + ICRC: the packet goes on");
	tap_eq(out[14 + 1] & 3, AX_ECN_CE, "IPv4: ECN is CE");
	tap_eq(pkt_csum16(out + 14, 20), 0, "IPv4: the header checksum is right");
	tap_eq(t_icrc(out, len), 0xFFFFFFFFU, "the ICRC (4 zero bytes) inverted");
	tap_eq(t_qp(obj, &s).faults[FAULT_CE], 1, "one CE counted");
	tap_eq(t_qp(obj, &s).faults[FAULT_ICRC], 1, "one ICRC counted");
	s6.family = 6;
	rv = t_run(obj, &s6, out, &len);
	tap_eq((out[14 + 1] >> 4) & 3, AX_ECN_CE, "IPv6: ECN is CE");
	tap_eq(t_icrc(out, len), 0xFFFFFFFFU, "IPv6: the ICRC inverted");
	roceinject_bpf__destroy(obj);
}

/* --rewrite-qpn 0x99 --rewrite-pkey 0x7fff on QP 0x12 only */
static void test_rewrite(void)
{
	struct roceinject_bpf *obj = t_open(1U << FAULT_QPN | 1U << FAULT_PKEY);
	struct pkt_spec s = req, other = req;
	uint8_t out[2048];
	const uint8_t *bth = out + 14 + 20 + 8;
	int len;

	obj->rodata->targ_new_qpn = 0x99;
	obj->rodata->targ_new_pkey = 0x7fff;
	t_load_qpn(obj, true, 0x12);
	s.psn = 0x123456;
	tap_eq(t_run(obj, &s, out, &len), T_UNSPEC, "rewrite: the packet goes on");
	tap_eq(roce_bth_dqpn(bth), 0x99, "the BTH's destination QPN rewritten");
	tap_eq((bth[2] << 8) | bth[3], 0x7fff, "the BTH's P_Key rewritten");
	tap_eq(bth[0], ROCE_SEND_ONLY, "the opcode kept");
	tap_eq(bth[4], 0, "the reserved byte kept");
	tap_eq(roce_bth_psn(bth), 0x123456, "the PSN kept");
	tap_eq(t_qp(obj, &s).faults[FAULT_QPN], 1, "counted under the QP it was sent to");
	tap_eq(t_qp(obj, &s).faults[FAULT_PKEY], 1, "P_Key rewrite counted");
	other.dqpn = 0x13;
	t_run(obj, &other, out, &len);
	tap_eq(roce_bth_dqpn(bth), 0x13, "another QP's packet untouched");
	tap_eq((bth[2] << 8) | bth[3], 0xffff, "... its P_Key too");
	roceinject_bpf__destroy(obj);
}

int main(void)
{
	t_ncpu = libbpf_num_possible_cpus();
	test_every();
	test_probability();
	test_count_psn();
	test_ce_icrc();
	test_rewrite();
	return tap_done();
}
