// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat's parser paths through BPF_PROG_TEST_RUN: every frame passes, and
 * exactly the counters the frame calls for move. Needs root.
 */
#include "rocelat_test.h"

static struct rocelat_bpf *obj;

#define C(x) (t_counters(obj).c[x])

static const struct pkt_spec req = {
	.opcode = ROCE_SEND_ONLY, .ackreq = true, .dqpn = 0x12, .psn = 7,
	.payload = 64,
};

static void test_ipv4_request(void)
{
	struct roce_flow_id k;
	static struct pending_flow pp;
	struct rocelat_counters c;

	t_reset(obj);
	t_xdp(obj, &req, 5000);
	c = t_counters(obj);
	tap_eq(c.c[RL_ROCE_PKTS], 1, "IPv4 SEND_ONLY: one RoCE packet");
	tap_eq(c.c[RL_REQUESTS], 1, "IPv4 SEND_ONLY: one request");
	tap_eq(c.c[RL_TRACKED], 1, "IPv4 SEND_ONLY with AckReq: tracked");
	tap_eq(c.c[RL_PARSE_ERRORS], 0, "IPv4 SEND_ONLY: no parse error");
	t_flow_key(&k, 4, "10.0.0.1", "10.0.0.2", 0x12);
	tap_eq(t_pending(obj, &k, &pp), 0, "flow keyed requester->responder, responder QPN");
	tap_eq(t_pending_count(&pp), 1, "one pending slot");
	tap_eq(pp.ring[0].psn, 7, "pending slot PSN");
	tap_eq(pp.sport, 49152, "the flow keeps the request's source port (its path)");
	tap_eq(pp.ring[0].flags & SLOT_INGRESS, SLOT_INGRESS, "seen on XDP: arriving");
	tap_eq(pp.ring[0].ts_ns, 5000, "pending slot timestamp is the program clock");
	tap_eq(pp.hi_psn, 7, "highest request PSN");
}

static void test_no_ackreq(void)
{
	struct pkt_spec s = req;
	struct roce_flow_id k;
	static struct pending_flow pp;

	t_reset(obj);
	s.ackreq = false;
	s.opcode = ROCE_WRITE_FIRST;
	t_xdp(obj, &s, 1000);
	tap_eq(C(RL_REQUESTS), 1, "WRITE_FIRST without AckReq: a request");
	tap_eq(C(RL_TRACKED), 0, "WRITE_FIRST without AckReq: not tracked");
	t_flow_key(&k, 4, "10.0.0.1", "10.0.0.2", 0x12);
	tap_eq(t_pending(obj, &k, &pp), 0, "flow exists for retransmit detection");
	tap_eq(t_pending_count(&pp), 0, "but no pending slot");
}

/* a full frame cut at each header boundary and inside each header */
static void test_truncated(void)
{
	struct pkt_spec s = req;
	uint8_t buf[2048];
	int full, rv, n = 0;
	int cuts[] = {
		14,		/* Ethernet only */
		14 + 10,	/* inside IPv4 */
		14 + 20,	/* IPv4, no UDP */
		14 + 20 + 4,	/* inside UDP */
		14 + 28,	/* UDP, no BTH */
		14 + 28 + 6,	/* inside BTH */
	};

	t_reset(obj);
	full = pkt_build(&s, buf, sizeof(buf));
	for (unsigned i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		rv = t_run_prog(obj->progs.rocelat_xdp, buf, cuts[i]);
		tap_eq(rv, T_XDP_PASS, "IPv4 frame cut at %d of %d bytes passes", cuts[i], full);
		n++;
		tap_eq(C(RL_PARSE_ERRORS), n, "... and counts one parse error");
	}
	/* RETH missing after a complete BTH */
	s.opcode = ROCE_WRITE_ONLY;
	full = pkt_build(&s, buf, sizeof(buf));
	rv = t_run_prog(obj->progs.rocelat_xdp, buf, 14 + 28 + 12 + 8);
	tap_eq(rv, T_XDP_PASS, "WRITE_ONLY cut inside the RETH passes");
	tap_eq(C(RL_PARSE_ERRORS), n + 1, "... and is a parse error");
	/* AETH missing */
	s.opcode = ROCE_ACKNOWLEDGE;
	full = pkt_build(&s, buf, sizeof(buf));
	rv = t_run_prog(obj->progs.rocelat_xdp, buf, 14 + 28 + 12 + 2);
	tap_eq(rv, T_XDP_PASS, "ACK cut inside the AETH passes");
	tap_eq(C(RL_PARSE_ERRORS), n + 2, "... and is a parse error");
	/* IPv6 and VLAN cuts */
	s = req;
	s.family = 6;
	s.vlans = 2;
	s.ext6 = 1;
	full = pkt_build(&s, buf, sizeof(buf));
	{
		int cuts6[] = { 16, 18 + 2, 22 + 20, 22 + 40 + 4, 22 + 48 + 4, 22 + 48 + 8 + 6 };

		for (unsigned i = 0; i < sizeof(cuts6) / sizeof(cuts6[0]); i++) {
			rv = t_run_prog(obj->progs.rocelat_xdp, buf, cuts6[i]);
			tap_eq(rv, T_XDP_PASS, "QinQ IPv6+ext frame cut at %d of %d passes",
			       cuts6[i], full);
			tap_eq(C(RL_PARSE_ERRORS), n + 3 + i, "... and counts one parse error");
		}
	}
	tap_eq(C(RL_ROCE_PKTS), 0, "no truncated frame counted as RoCE");
	/* below an Ethernet header BPF_PROG_TEST_RUN itself refuses */
	rv = t_run_prog(obj->progs.rocelat_xdp, buf, 13);
	tap_ok(rv <= -1000, "a 13-byte frame is refused by the test run (%d)", rv);
}

static void test_not_roce(void)
{
	struct pkt_spec s = req;

	t_reset(obj);
	s.dport = 4792;
	t_xdp(obj, &s, 1);
	s = req;
	s.sport = 4791;
	s.dport = 53;			/* an answer-looking source port is not RoCE */
	t_xdp(obj, &s, 1);
	s = req;
	s.ip_proto = AX_IPPROTO_TCP;
	t_xdp(obj, &s, 1);
	s = req;
	s.ethertype = 0x0806;		/* ARP */
	t_xdp(obj, &s, 1);
	s = req;
	s.frag_off = 100;		/* non-first fragment */
	t_xdp(obj, &s, 1);
	s = req;
	s.ip_proto = 1;			/* ICMP quoting RoCE is not traffic */
	t_xdp(obj, &s, 1);
	s = req;
	s.family = 6;
	s.dport = 4792;
	t_xdp(obj, &s, 1);
	tap_eq(C(RL_ROCE_PKTS), 0, "wrong port, TCP, ARP, fragment, ICMP: no RoCE packet");
	tap_eq(C(RL_PARSE_ERRORS), 0, "... and no parse error");
	tap_eq(C(RL_REQUESTS), 0, "... and no request");
}

static void test_vlan_ipv6(void)
{
	struct pkt_spec s = req;
	struct roce_flow_id k;
	static struct pending_flow pp;

	t_reset(obj);
	s.vlans = 1;
	s.psn = 1;
	t_xdp(obj, &s, 1);
	tap_eq(C(RL_ROCE_PKTS), 1, "802.1Q-tagged RoCE parsed");
	s.vlans = 2;
	s.psn = 2;
	t_xdp(obj, &s, 2);
	tap_eq(C(RL_ROCE_PKTS), 2, "802.1ad+802.1Q (QinQ) RoCE parsed");
	tap_eq(C(RL_RETRANSMITS), 0, "tagged PSN 1, 2: no retransmit");
	s = req;
	s.family = 6;
	s.psn = 10;
	t_xdp(obj, &s, 3);
	tap_eq(C(RL_ROCE_PKTS), 3, "IPv6 RoCE parsed");
	s.ext6 = 2;
	s.psn = 11;
	t_xdp(obj, &s, 4);
	tap_eq(C(RL_ROCE_PKTS), 4, "IPv6 with hop-by-hop + destination options parsed");
	s.vlans = 2;
	s.ext6 = 3;
	s.psn = 12;
	t_xdp(obj, &s, 5);
	tap_eq(C(RL_ROCE_PKTS), 5, "QinQ IPv6 with three extension headers parsed");
	t_flow_key(&k, 6, "fd00::1", "fd00::2", 0x12);
	tap_eq(t_pending(obj, &k, &pp), 0, "IPv6 flow with 16-byte addresses");
	tap_eq(t_pending_count(&pp), 3, "three IPv6 requests pending");
	tap_eq(pp.hi_psn, 12, "IPv6 highest PSN");
	s.ext6 = 5;			/* more than the parser follows */
	s.vlans = 0;
	s.psn = 13;
	t_xdp(obj, &s, 6);
	tap_eq(C(RL_ROCE_PKTS), 5, "five extension headers: beyond the parser, not RoCE");
	s = req;
	s.vlans = 2;
	s.ethertype = 0x8100;		/* a third tag: not followed */
	t_xdp(obj, &s, 7);
	tap_eq(C(RL_ROCE_PKTS), 5, "third VLAN tag not followed");
	tap_eq(C(RL_PARSE_ERRORS), 0, "no parse errors for valid frames");
}

static void test_other_kinds(void)
{
	struct pkt_spec s = req;
	struct rocelat_counters c;

	t_reset(obj);
	s.opcode = ROCE_UD_SEND_ONLY;
	t_xdp(obj, &s, 1);
	s.opcode = ROCE_TR_UC | ROCE_SEND_ONLY;
	t_xdp(obj, &s, 1);
	s.opcode = ROCE_OPCODE_CNP;
	s.ackreq = false;
	t_xdp(obj, &s, 1);
	s = req;
	s.ecn = AX_ECN_CE;
	t_xdp(obj, &s, 1);
	c = t_counters(obj);
	tap_eq(c.c[RL_ROCE_PKTS], 4, "UD, UC, CNP, CE-marked RC: four RoCE packets");
	tap_eq(c.c[RL_OTHER_TRANSPORT], 2, "UD and UC counted, not timed");
	tap_eq(c.c[RL_CNPS], 1, "CNP counted");
	tap_eq(c.c[RL_ECN_CE], 1, "ECN CE counted");
	tap_eq(c.c[RL_REQUESTS], 1, "only the RC packet is a request");
}

static void test_tc(void)
{
	uint8_t buf[2048];
	int len, rv;

	t_reset(obj);
	len = pkt_build(&req, buf, sizeof(buf));
	obj->bss->clock_ns = 1;
	rv = t_run_prog(obj->progs.rocelat_tc, buf, len);
	tap_ok(rv == T_TC_UNSPEC || rv == T_TC_OK,
	       "tc verdict is TC_ACT_UNSPEC/OK (got %d)", rv);
	tap_eq(C(RL_REQUESTS), 1, "tc program counts the request");
	rv = t_run_prog(obj->progs.rocelat_tc, buf, 14 + 20 + 4);	/* inside UDP */
	tap_ok(rv == T_TC_UNSPEC || rv == T_TC_OK, "tc passes a truncated frame (%d)", rv);
	tap_eq(C(RL_PARSE_ERRORS), 1, "tc counts the parse error");
}

static void test_port_option(void)
{
	struct rocelat_bpf *o2 = t_load(1000, 4792);
	struct pkt_spec s = req;
	struct rocelat_bpf *save = obj;

	obj = o2;
	s.dport = 4792;
	t_xdp(obj, &s, 1);
	tap_eq(C(RL_ROCE_PKTS), 1, "--roce-port 4792: that port is RoCE");
	s.dport = 4791;
	t_xdp(obj, &s, 1);
	tap_eq(C(RL_ROCE_PKTS), 1, "--roce-port 4792: 4791 is not");
	obj = save;
	rocelat_bpf__destroy(o2);
}

int main(void)
{
	obj = t_load(1000, ROCE_V2_PORT);
	test_ipv4_request();
	test_no_ackreq();
	test_truncated();
	test_not_roce();
	test_vlan_ipv6();
	test_other_kinds();
	test_tc();
	test_port_option();
	rocelat_bpf__destroy(obj);
	return tap_done();
}
