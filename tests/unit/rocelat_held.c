// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat's held answers (answers of a requester QP not paired yet)
 * through BPF_PROG_TEST_RUN with the offline clock: applied at their own
 * time once the pairing is known, also when a CNP reaches the QP between
 * its pairing and its next answer; answers a full held map refuses are
 * counted (answers_unheld) and what they covered is untimed, never timed
 * against a later answer; what the flow's statistics count of held
 * answers (NAKs, RNR NAKs, CE marks) is the flow's once it is paired; held
 * answers 2 x --timeout old are dropped by
 * the sweep. Every expected count and latency is the sequence's own.
 * Needs root.
 */
#include "rocelat_test.h"

static struct rocelat_bpf *obj;
static struct roce_flow_id path;	/* 10.0.0.1 -> 10.0.0.2 responder QP 0x11 */

#define C(x) (t_counters(obj).c[x])

static void request(__u32 psn, __u64 t)
{
	t_request(obj, psn, t);
}

/* an ACKNOWLEDGE (AETH syndrome, ECN field) of requester QP qpn
 * (10.0.0.1's) */
static void answer_of(__u32 qpn, __u32 psn, __u8 syndrome, __u8 ecn, __u64 t)
{
	struct pkt_spec s = {
		.saddr = "10.0.0.2", .daddr = "10.0.0.1", .opcode = ROCE_ACKNOWLEDGE,
		.syndrome = syndrome, .ecn = ecn, .dqpn = qpn, .psn = psn,
	};

	t_xdp(obj, &s, t);
}

static void ack_of(__u32 qpn, __u32 psn, __u64 t)
{
	answer_of(qpn, psn, 0x1f, 0, t);
}

static void ack(__u32 psn, __u64 t)
{
	ack_of(0x111, psn, t);
}

/* an RDMA CM MAD to QP 1: attr REQ (from 10.0.0.1, its QPN qpn) or REP
 * (from 10.0.0.2, its QPN qpn), communication ID id */
static void cm(__u16 attr, __u32 id, __u32 qpn, __u64 t)
{
	bool rep = attr == ROCE_CM_ATTR_REP;
	struct pkt_spec s = {
		.saddr = rep ? "10.0.0.2" : "10.0.0.1",
		.daddr = rep ? "10.0.0.1" : "10.0.0.2",
		.opcode = ROCE_UD_SEND_ONLY, .dqpn = ROCE_CM_QPN, .payload = 256,
	};
	uint8_t buf[2048], *m;
	int len = pkt_build(&s, buf, sizeof(buf)), rv;
	int id_at = rep ? ROCE_CM_REP_REMOTE_ID : 0;
	int qpn_at = rep ? ROCE_CM_REP_QPN : ROCE_CM_REQ_QPN;

	m = buf + len - 4 - s.payload;	/* the payload, before the ICRC */
	m[1] = ROCE_MAD_CLASS_CM;
	m[16] = attr >> 8;
	m[17] = attr & 0xff;
	m += ROCE_MAD_HDR_LEN;
	m[id_at] = id >> 24;
	m[id_at + 1] = id >> 16;
	m[id_at + 2] = id >> 8;
	m[id_at + 3] = id;
	m[qpn_at] = qpn >> 16;
	m[qpn_at + 1] = qpn >> 8;
	m[qpn_at + 2] = qpn;
	obj->bss->clock_ns = t;
	rv = t_run_prog(obj->progs.rocelat_xdp, buf, len);
	if (rv != T_XDP_PASS)
		tap_ok(0, "CM MAD: XDP_PASS (got %d)", rv);
}

static struct roce_flow_stats flow(void)
{
	struct roce_flow_stats fs;

	t_flow(obj, &path, &fs);
	return fs;
}

static int held_entries(void)
{
	struct roce_qp_key k, next;
	int n = 0, fd = bpf_map__fd(obj->maps.held);

	for (void *prev = NULL; !bpf_map_get_next_key(fd, prev, &next); prev = &k) {
		k = next;
		n++;
	}
	return n;
}

static int unheld_traces(void)
{
	int n = 0;

	for (int i = 0; i < UNHELD_SLOTS; i++)
		n += !!obj->bss->unheld[i].arrived;
	return n;
}

static void reset(void)
{
	t_reset(obj);
	memset(obj->bss->unheld, 0, sizeof(obj->bss->unheld));
}

/* rocelat with a held map of max_held entries */
static struct rocelat_bpf *load_small(__u32 max_held)
{
	struct rocelat_bpf *o = rocelat_bpf__open();

	if (!o) {
		printf("Bail out! open rocelat skeleton: %s\n", strerror(errno));
		exit(1);
	}
	o->rodata->targ_offline = true;
	ROCELAT_SET_UNIT(o->rodata, 1000);
	o->rodata->targ_roce_port = ROCE_V2_PORT;
	bpf_map__set_max_entries(o->maps.held, max_held);
	if (rocelat_bpf__load(o)) {
		printf("Bail out! load rocelat (needs root): %s\n", strerror(errno));
		exit(1);
	}
	return o;
}

/* answers held before the first answer in the window pairs the QP time
 * what they cover at their own time */
static void test_applied(void)
{
	struct roce_flow_stats fs;

	reset();
	request(10, 1 * MS);
	request(11, 1 * MS + 10 * US);
	ack(12, 1 * MS + 25 * US);	/* 12 lost: ahead of the window */
	tap_eq(C(RL_HELD), 1, "applied: the ACK ahead of the window is held");
	request(13, 1 * MS + 40 * US);
	ack(13, 1 * MS + 90 * US);
	fs = flow();
	tap_eq(fs.samples, 3, "applied: three samples once paired");
	tap_eq(fs.sum, (25 + 15 + 50) * US, "... PSN 10, 11 at the held ACK, 13 at its own");
	tap_eq(fs.max, 50 * US, "... none at the pairing ACK's time");
	tap_eq(C(RL_UNTIMED), 0, "applied: nothing untimed");
	tap_eq(C(RL_UNMATCHED), 0, "applied: nothing unmatched");
	tap_eq(held_entries(), 0, "applied: the held entry is gone");
}

/* what the flow's statistics count of answers held before the pairing
 * (NAKs by code, RNR NAKs, CE marks) is the flow's once it is paired, of
 * the answers forgotten (over HELD_ANSWERS) and the RNR NAKs (never held
 * themselves) too; the per-CPU counters counted each at once */
static void test_marks(void)
{
	struct roce_flow_stats fs;
	int i;

	reset();
	request(20, 1 * MS);
	/* behind the window: no candidate covers them */
	for (i = 0; i < HELD_ANSWERS + 2; i++)
		answer_of(0x111, 10, ROCE_AETH_NAK << 5 | ROCE_NAK_PSN_SEQ_ERR, 0,
			  1 * MS + (i + 1) * US);
	answer_of(0x111, 11, ROCE_AETH_NAK << 5 | 2, 0, 1 * MS + 20 * US);
	answer_of(0x111, 12, ROCE_AETH_RNR_NAK << 5 | 0x0e, 0, 1 * MS + 21 * US);
	answer_of(0x111, 13, 0x1f, AX_ECN_CE, 1 * MS + 22 * US);
	tap_eq(C(RL_HELD), HELD_ANSWERS + 4, "marks: every NAK and the CE-marked ACK held, the RNR NAK not");
	tap_eq(C(RL_NAK_SEQ), HELD_ANSWERS + 2, "marks: the sequence-error NAKs counted at once");
	tap_eq(C(RL_RNR_NAKS), 1, "marks: the RNR NAK counted at once");
	ack(20, 1 * MS + 50 * US);	/* pairs */
	fs = flow();
	tap_eq(fs.naks, HELD_ANSWERS + 3, "marks: the flow has every NAK held, forgotten ones too");
	tap_eq(fs.nak[ROCE_NAK_PSN_SEQ_ERR], HELD_ANSWERS + 2, "... by code: sequence errors");
	tap_eq(fs.nak[2], 1, "... remote access");
	tap_eq(fs.rnr_naks, 1, "marks: the RNR NAK");
	tap_eq(fs.rnr_timer, 0x0e, "... its timer field");
	tap_eq(fs.ecn_ce, 1, "marks: the CE mark");
	tap_eq(held_entries(), 0, "marks: the held entry is gone");

	/* an RNR NAK alone: an entry for its marks only */
	reset();
	request(20, 1 * MS);
	answer_of(0x111, 12, ROCE_AETH_RNR_NAK << 5 | 0x03, 0, 1 * MS + 21 * US);
	tap_eq(C(RL_HELD), 0, "marks: an RNR NAK alone holds no answer");
	tap_eq(held_entries(), 1, "... but its marks");
	ack(20, 1 * MS + 50 * US);
	fs = flow();
	tap_eq(fs.rnr_naks, 1, "marks: ... the flow's once paired");
	tap_eq(held_entries(), 0, "marks: ... and the entry gone");
}

/* paired by the CM exchange while an answer is held, then a CNP to the
 * requester QP before its next answer: that answer still applies the
 * held one first (before, the CNP cached the flow and the held answer was
 * never applied: the next ACK timed PSN 10 at its own 100 us) */
static void test_cnp_between(void)
{
	struct pkt_spec cnp = {
		.saddr = "10.0.0.2", .daddr = "10.0.0.1",
		.opcode = ROCE_OPCODE_CNP, .dqpn = 0x111,
	};
	struct roce_flow_stats fs;

	reset();
	request(10, 1 * MS);
	ack(11, 1 * MS + 19 * US);	/* 11 lost: held */
	tap_eq(C(RL_HELD), 1, "cnp: the ACK is held");
	cm(ROCE_CM_ATTR_REQ, 0x1234, 0x111, 1 * MS + 20 * US);
	cm(ROCE_CM_ATTR_REP, 0x1234, 0x11, 1 * MS + 21 * US);
	tap_eq(C(RL_CM_PAIRED), 1, "cnp: paired by the CM exchange");
	t_xdp(obj, &cnp, 1 * MS + 25 * US);
	request(12, 1 * MS + 30 * US);
	ack(12, 1 * MS + 100 * US);
	fs = flow();
	tap_eq(fs.cnps, 1, "cnp: the CNP is on the flow");
	tap_eq(fs.samples, 2, "cnp: two samples");
	tap_eq(fs.min, 19 * US, "cnp: PSN 10 at its held ACK's 19 us");
	tap_eq(fs.max, 70 * US, "cnp: PSN 12 at 70 us, nothing at 100 us");
	tap_eq(C(RL_UNMATCHED), 0, "cnp: nothing unmatched");
	tap_eq(held_entries(), 0, "cnp: the held entry is gone");
}

/* a held map of one entry, taken by another QP: QP 0x111's answer is
 * refused, counted, and the request it covered is untimed at the pairing,
 * never timed against the answer that pairs */
static void test_unheld(void)
{
	struct roce_flow_stats fs;

	reset();
	ack_of(0x222, 5, 500 * US);	/* QP 0x222 takes the only entry */
	request(10, 1 * MS);
	ack(12, 1 * MS + 19 * US);	/* 11, 12 lost: refused */
	tap_eq(C(RL_HELD), 1, "unheld: one answer held (QP 0x222's)");
	tap_eq(C(RL_UNHELD), 1, "unheld: QP 0x111's ACK refused, counted");
	request(13, 1 * MS + 30 * US);
	ack(13, 1 * MS + 100 * US);	/* pairs QP 0x111 */
	fs = flow();
	tap_eq(C(RL_UNTIMED), 1, "unheld: PSN 10 untimed");
	tap_eq(fs.untimed, 1, "... in the flow's statistics too");
	tap_eq(fs.samples, 1, "unheld: one sample, PSN 13");
	tap_eq(fs.max, 70 * US, "... at 70 us: PSN 10 never at 100 us");
	tap_eq(C(RL_SAMPLES), 1, "unheld: one sample in all");
	tap_eq(unheld_traces(), 0, "unheld: the trace is gone, applied");

	/* paired more than 2 x --timeout after the refusal: the sweep
	 * counted the request as a timeout, the trace is ignored */
	reset();
	ack_of(0x222, 5, 500 * US);
	request(10, 1 * MS);
	ack(12, 1 * MS + 19 * US);
	tap_eq(C(RL_UNHELD), 1, "unheld late: refused");
	t_sweep(obj, 1 * MS + 2 * S + 100 * US);
	tap_eq(C(RL_TIMEOUTS), 1, "unheld late: PSN 10 timed out");
	request(13, 3 * S);
	ack(13, 3 * S + 70 * US);
	fs = flow();
	tap_eq(C(RL_UNTIMED), 0, "unheld late: nothing untimed");
	tap_eq(fs.samples, 1, "unheld late: PSN 13 timed");
	tap_eq(fs.max, 70 * US, "... at 70 us");
}

/* held answers of a QP never paired go 2 x --timeout (1 s) after the
 * newest, freeing the entry for another QP */
static void test_expiry(void)
{
	reset();
	ack_of(0x222, 5, 1 * MS);
	ack_of(0x222, 6, 2 * MS);
	tap_eq(held_entries(), 1, "expiry: QP 0x222's answers held");
	t_sweep(obj, 2 * MS + 2 * S - 1 * MS);
	tap_eq(held_entries(), 1, "expiry: kept 2 s - 1 ms after the newest");
	t_sweep(obj, 2 * MS + 2 * S + 1 * MS);
	tap_eq(held_entries(), 0, "expiry: dropped 2 s + 1 ms after it");
	ack_of(0x333, 5, 3 * S);
	tap_eq(C(RL_HELD), 3, "expiry: another QP's answer held in the freed entry");
	tap_eq(C(RL_UNHELD), 0, "expiry: nothing refused");
	tap_eq(C(RL_TIMEOUTS), 0, "expiry: counted as nothing");
}

int main(void)
{
	obj = t_load(1000, ROCE_V2_PORT);
	t_flow_key(&path, 4, "10.0.0.1", "10.0.0.2", 0x11);
	test_applied();
	test_marks();
	test_cnp_between();
	rocelat_bpf__destroy(obj);
	obj = load_small(1);
	test_unheld();
	test_expiry();
	rocelat_bpf__destroy(obj);
	return tap_done();
}
