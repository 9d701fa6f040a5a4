// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The shared parser's decapsulation (bpf/lib/parse.bpf.h, pkt_cursor.decap)
 * through BPF_PROG_TEST_RUN: mirror and tunnel frames built by scapy
 * (tests/unit/gen_decap.py, at build time) go through the test programs of
 * tests/unit/parse_decap.bpf.c, and every field of the pkt_info they leave
 * is compared with what the generator says. The same frames through a
 * caller that did not ask for decap must parse as they always did, and
 * read as kernel memory (the tracing tools' cursors) exactly as in place.
 * Ends with the cost of decap, as TAP comments (no timing is asserted).
 * Needs root.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/pkt_info.h"
#include "lib/probe.h"
#include "tests/parse_decap.skel.h"
#include "tap.h"

#define PARSE_T_FILTERED	100	/* as in parse_decap.bpf.c */
#define T_BENCH_REPEAT		100000

/* the kernel turns loads through bpf_rdonly_cast(p, 0) into fault-safe
 * ones (6.18 does; 6.1 has no such kfunc): parse_kmem is loaded */
static bool have_kmem;

struct decap_case {
	const char *name;
	const unsigned char *pkt;
	unsigned int len;
	int decap;		/* verdict with decap */
	int plain;		/* verdict of a caller without it */
	struct pkt_info want;	/* with decap */
};

#include "tests/decap_pkts.h"

#define NCASES	(sizeof(decap_cases) / sizeof(decap_cases[0]))

/* every scalar of struct pkt_info; the addresses are compared apart */
#define PI_FIELDS(X)							\
	X(family) X(ip_proto) X(ecn) X(flags) X(sport) X(dport) X(vlan)	\
	X(opcode) X(syndrome) X(dqpn) X(psn) X(msn) X(dma_len) X(src_qp)	\
	X(l3_len) X(payload_len) X(tun_kind) X(tun_family) X(tun_ts_gra)	\
	X(tun_plat_id) X(tun_id) X(tun_ts) X(tun_plat_word) X(tun_off)	\
	X(cap_len)

/* ip_id, payload_off and tun_daddr are left out: the generator does not
 * model them (rocelat's unit tests and captures cover them) */
_Static_assert(sizeof(struct pkt_info) == 124,
	       "struct pkt_info changed: compare the new field in pi_diff()");

/* the fields that differ, named, into buf; 0 when none */
static int pi_diff(const struct pkt_info *got, const struct pkt_info *want,
		   char *buf, size_t cap)
{
	size_t n = 0;
	int bad = 0;

	buf[0] = 0;
#define X(f)								\
	if (got->f != want->f) {					\
		bad++;							\
		n += snprintf(buf + n, n < cap ? cap - n : 0,		\
			      " %s=0x%llx(want 0x%llx)", #f,		\
			      (unsigned long long)got->f,		\
			      (unsigned long long)want->f);		\
	}
	PI_FIELDS(X)
#undef X
#define A(f)								\
	if (memcmp(got->f, want->f, sizeof(got->f))) {			\
		bad++;							\
		n += snprintf(buf + n, n < cap ? cap - n : 0, " %s", #f); \
	}
	A(saddr) A(daddr) A(tun_saddr)
#undef A
	return bad;
}

static struct parse_decap_bpf *t_open(bool decap)
{
	struct parse_decap_bpf *obj = parse_decap_bpf__open();

	if (!obj) {
		printf("Bail out! open parse_decap skeleton: %s\n", strerror(errno));
		exit(1);
	}
	obj->rodata->targ_decap = decap;
	bpf_program__set_autoload(obj->progs.parse_kmem, have_kmem);
	if (parse_decap_bpf__load(obj)) {
		printf("Bail out! load parse_decap (needs root): %s\n", strerror(errno));
		exit(1);
	}
	return obj;
}

/* one frame through prog; the verdict it left, or -1000 - errno */
static int t_run(struct parse_decap_bpf *obj, struct bpf_program *prog,
		 const void *pkt, unsigned int len, struct pkt_info *pi)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len,
		    .repeat = 1);
	int err;

	obj->bss->verdict = -1;
	memset(&obj->bss->info, 0xAA, sizeof(obj->bss->info));
	err = bpf_prog_test_run_opts(bpf_program__fd(prog), &o);
	if (err)
		return -1000 + err;
	if (o.retval != 2)			/* XDP_PASS: an observer */
		return -2000 - (int)o.retval;
	*pi = obj->bss->info;
	return obj->bss->verdict;
}

/* what a caller without decap must see for a frame it parses as RoCE */
static struct pkt_info plain_want(const struct pkt_info *w)
{
	struct pkt_info p = *w;
	size_t tun = offsetof(struct pkt_info, tun_kind);

	memset((char *)&p + tun, 0, sizeof(p) - tun);
	p.flags &= ~(PKT_F_TRUNC | PKT_F_TUN_TS | PKT_F_TUN_PLAT);
	return p;
}

/* the frame read as kernel memory: the same verdict and every field */
static void test_kernel_kinds(struct parse_decap_bpf *on, const struct decap_case *c)
{
	struct { const char *what; struct bpf_program *prog; } k[] = {
		{ "probe read (SRC_KERNEL)", on->progs.parse_kernel },
		{ "plain loads (SRC_KMEM)", on->progs.parse_kmem },
	};
	struct pkt_info pi;
	char diff[1024];
	int v;

	for (int i = 0; i < 2; i++) {
		if (k[i].prog == on->progs.parse_kmem && !have_kmem) {
			tap_skip("the kernel has no bpf_rdonly_cast(p, 0)",
				 "kernel memory, %s: %s", k[i].what, c->name);
			continue;
		}
		v = t_run(on, k[i].prog, c->pkt, c->len, &pi);
		tap_eq(v, c->decap, "kernel memory, %s: %s: verdict", k[i].what, c->name);
		if (v != c->decap)
			continue;
		tap_ok(!pi_diff(&pi, &c->want, diff, sizeof(diff)),
		       "kernel memory, %s: %s: every pkt_info field", k[i].what, c->name);
		if (diff[0])
			printf("#  %s\n", diff);
	}
}

static void test_cases(struct parse_decap_bpf *on, struct parse_decap_bpf *off)
{
	struct pkt_info pi, w;
	char diff[1024];
	int v;

	for (unsigned i = 0; i < NCASES; i++) {
		const struct decap_case *c = &decap_cases[i];

		v = t_run(on, on->progs.parse_decap, c->pkt, c->len, &pi);
		tap_eq(v, c->decap, "decap: %s: verdict", c->name);
		if (v == c->decap) {
			tap_ok(!pi_diff(&pi, &c->want, diff, sizeof(diff)),
			       "decap: %s: every pkt_info field", c->name);
			if (diff[0])
				printf("#  %s\n", diff);
		}

		v = t_run(on, on->progs.parse_plain, c->pkt, c->len, &pi);
		tap_eq(v, c->plain, "no decap: %s: verdict as before", c->name);
		if (v == PKT_ROCE) {
			w = plain_want(&c->want);
			tap_ok(!pi_diff(&pi, &w, diff, sizeof(diff)),
			       "no decap: %s: pkt_info as before, no tunnel fields", c->name);
			if (diff[0])
				printf("#  %s\n", diff);
		} else if (v >= 0 && v != PARSE_T_FILTERED) {
			tap_ok(!pi.tun_kind && !pi.cap_len && !(pi.flags & PKT_F_TRUNC),
			       "no decap: %s: no tunnel fields", c->name);
		}

		/* a tool whose targ_decap is false: the program with the
		 * decap branch, the verifier removing it */
		v = t_run(off, off->progs.parse_decap, c->pkt, c->len, &pi);
		tap_eq(v, c->plain, "targ_decap=false: %s: verdict as without decap", c->name);

		test_kernel_kinds(on, c);
	}
}

static const struct decap_case *find_case(const char *name)
{
	for (unsigned i = 0; i < NCASES; i++)
		if (!strcmp(decap_cases[i].name, name))
			return &decap_cases[i];
	printf("Bail out! no generated case \"%s\"\n", name);
	exit(1);
}

/*
 * Tunnel frames cut at every length, the outer headers too: the parser
 * never calls a frame RoCE before its BTH and extended header are
 * complete, always does after, calls every shorter cut malformed, and
 * flags every cut as truncated once the outer IP header is there to say
 * how long the frame should be.
 */
static void test_cut_everywhere(struct parse_decap_bpf *on)
{
	static const struct { const char *name; unsigned inner, outer_ip; } cuts[] = {
		/* inner Ethernet + IPv4 + UDP + BTH + RETH */
		{ "ERSPAN III IPv4 outer, 100 ns timestamp", 14 + 20 + 8 + 12 + 16, 20 },
		{ "GRE/TEB IPv4 outer, key", 14 + 20 + 8 + 12 + 16, 20 },
		/* + IPv4, no extended header */
		{ "VXLAN IPv4 outer", 14 + 20 + 8 + 12, 20 },
		/* + IPv6 */
		{ "Geneve IPv4 outer, 20 bytes of options", 14 + 40 + 8 + 12, 20 },
		/* + IPv6 + AETH, IPv6 outer */
		{ "ERSPAN III IPv6 outer, platform subheader", 14 + 40 + 8 + 12 + 4, 40 },
	};

	for (unsigned k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++) {
		const struct decap_case *c = find_case(cuts[k].name);
		unsigned need = c->want.tun_off + cuts[k].inner;
		unsigned early = 0, late = 0, unflagged = 0, malformed = 0;
		struct pkt_info pi;
		int v;

		for (unsigned len = 14; len < c->len; len++) {
			v = t_run(on, on->progs.parse_decap, c->pkt, len, &pi);
			if (v == PKT_ROCE && len < need)
				early++;
			if (v != PKT_ROCE && len >= need)
				late++;
			if (v == PKT_MALFORMED)
				malformed++;
			if (len >= 14 + cuts[k].outer_ip && !(pi.flags & PKT_F_TRUNC))
				unflagged++;
		}
		tap_eq(early, 0, "%s, cut: never RoCE before byte %u", c->name, need);
		tap_eq(late, 0, "%s, cut: always RoCE from byte %u on", c->name, need);
		tap_eq(malformed, need - 14, "%s, cut: the %u shorter cuts are malformed",
		       c->name, need - 14);
		tap_eq(unflagged, 0, "%s, cut: every cut flagged PKT_F_TRUNC", c->name);
	}
}

/*
 * pkt_fast_classify() is a second reader of the plain IPv4/UDP/BTH layout
 * (roceinject's -Q fast path): where it answers RoCE, the full parser must
 * call the frame RoCE with the same destination QPN; it must answer for a
 * complete plain IPv4 RoCE frame (a first fragment is one) and leave IP
 * options, later fragments, VLAN, IPv6 and other ports to the full parse
 * or call them not RoCE exactly where pkt_fast_not_roce() does. Checked
 * on every generated frame, on every cut of the plain one and on
 * variants of it.
 */
static int t_fast_agrees(struct parse_decap_bpf *on, const unsigned char *pkt,
			 unsigned len, struct pkt_info *pi)
{
	int v = t_run(on, on->progs.parse_fast_qpn, pkt, len, pi);

	if ((on->bss->fast_class == PKT_FAST_NOT_ROCE) != on->bss->fast_not)
		return 0;
	if (!on->bss->fast_ok)
		return 1;
	return v == PKT_ROCE && pi->family == 4 && pi->dqpn == on->bss->fast_qpn;
}

static void test_fast_qpn(struct parse_decap_bpf *on)
{
	const struct decap_case *c = find_case("plain IPv4 SEND_ONLY");
	static const struct { const char *what; unsigned off; unsigned char val; int fast; } var[] = {
		{ "as built", 0, 0, 1 },
		{ "IP options (IHL 6)", 14, 0x46, 0 },
		{ "first fragment (MF, offset 0)", 14 + 6, 0x20, 1 },
		{ "fragment offset", 14 + 7, 0x01, 0 },
		{ "UDP port 4792", 14 + 20 + 3, 0xB8, 0 },
		{ "not UDP (TCP)", 14 + 9, 6, 0 },
		{ "VLAN ethertype", 12, 0x81, 0 },
		{ "IPv6 ethertype", 13, 0xDD, 0 },
		{ "RDMA WRITE ONLY (RETH)", 14 + 28, 0x0A, 1 },
		{ "ACKNOWLEDGE (AETH)", 14 + 28, 0x11, 1 },
		{ "UD SEND ONLY (DETH)", 14 + 28, 0x64, 1 },
		{ "IP total length 39", 14 + 3, 39, 0 },
	};
	unsigned char f[256];
	unsigned bad = 0, hits = 0;
	struct pkt_info pi;

	for (unsigned i = 0; i < NCASES; i++)
		if (!t_fast_agrees(on, decap_cases[i].pkt, decap_cases[i].len, &pi)) {
			printf("#  disagrees: %s\n", decap_cases[i].name);
			bad++;
		}
	tap_eq(bad, 0, "fast QPN read: agrees with the full parse on all %u generated frames",
	       (unsigned)NCASES);

	bad = 0;
	for (unsigned len = 14; len <= c->len; len++) {
		if (!t_fast_agrees(on, c->pkt, len, &pi))
			bad++;
		hits += on->bss->fast_ok;
	}
	tap_eq(bad, 0, "fast QPN read: agrees on every cut of %s", c->name);
	/* SEND ONLY: no extended header after the BTH */
	tap_eq(hits, c->len - (14 + 20 + 8 + 12) + 1,
	       "fast QPN read: answers on exactly the cuts that hold the whole BTH");

	if (c->len > sizeof(f) || c->len < 14 + 20 + 8 + 12 + 16) {
		printf("Bail out! plain IPv4 SEND_ONLY frame of %u bytes\n", c->len);
		exit(1);
	}
	for (unsigned k = 0; k < sizeof(var) / sizeof(var[0]); k++) {
		memcpy(f, c->pkt, c->len);
		if (var[k].off) {
			if (var[k].off == 14 + 3)
				f[14 + 2] = 0;	/* the total length's high byte */
			f[var[k].off] = var[k].val;
		}
		tap_ok(t_fast_agrees(on, f, c->len, &pi), "fast QPN read, %s: agrees with the full parse",
		       var[k].what);
		tap_eq(on->bss->fast_ok, var[k].fast, "fast QPN read, %s: %s", var[k].what,
		       var[k].fast ? "answers" : "leaves it to the full parse");
	}
}

/* ns per run of prog over one frame, BPF_PROG_TEST_RUN's own average */
static double t_bench_once(struct bpf_program *prog, const struct decap_case *c)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = c->pkt,
		    .data_size_in = c->len, .repeat = T_BENCH_REPEAT);

	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &o))
		return -1;
	return o.duration;
}

#define T_BENCH_KINDS	7
#define T_BENCH_ROUNDS	15

static void bench(struct parse_decap_bpf *on, struct parse_decap_bpf *off)
{
	const struct decap_case *plain = find_case("plain IPv4 SEND_ONLY");
	const struct decap_case *e3 =
		find_case("ERSPAN III IPv4 outer, platform subheader, QinQ inside");
	struct { const char *what; struct bpf_program *prog;
		 const struct decap_case *c; double best; } k[T_BENCH_KINDS] = {
		{ "plain RoCE, caller without decap", on->progs.parse_plain, plain, 0 },
		{ "plain RoCE, targ_decap=false", off->progs.parse_decap, plain, 0 },
		{ "plain RoCE, decap on", on->progs.parse_decap, plain, 0 },
		{ "ERSPAN III+subheader+QinQ, decap on", on->progs.parse_decap, e3, 0 },
		{ "local pkt_info: plain RoCE, no decap", on->progs.parse_plain_local, plain, 0 },
		{ "local pkt_info: plain RoCE, decap on", on->progs.parse_decap_local, plain, 0 },
		{ "local pkt_info: ERSPAN III, decap on", on->progs.parse_decap_local, e3, 0 },
	};

	/* rounds interleave the kinds, the best of each counts: the
	 * machine is shared and its clock moves */
	for (int r = 0; r < T_BENCH_ROUNDS; r++)
		for (int i = 0; i < T_BENCH_KINDS; i++) {
			double ns = t_bench_once(k[i].prog, k[i].c);

			if (!r || ns < k[i].best)
				k[i].best = ns;
		}
	printf("# cost: BPF_PROG_TEST_RUN repeat=%d, ns per packet, best of %d\n",
	       T_BENCH_REPEAT, T_BENCH_ROUNDS);
	/* each against the caller without decap of the same kind */
	for (int i = 0; i < T_BENCH_KINDS; i++) {
		double base = i < 4 ? k[0].best : k[4].best;

		printf("#   %-38s %6.1f  %.2fx\n", k[i].what, k[i].best,
		       base > 0 ? k[i].best / base : 0);
	}
}

int main(void)
{
	struct parse_decap_bpf *on, *off;

	have_kmem = probe_untrusted_mem("kfree_skb");
	on = t_open(true);
	off = t_open(false);

	test_cases(on, off);
	test_cut_everywhere(on);
	test_fast_qpn(on);
	bench(on, off);
	parse_decap_bpf__destroy(off);
	parse_decap_bpf__destroy(on);
	return tap_done();
}
