// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tools/verbslat/verbslat_prom.c: the --prom file of completions the
 * reports drained, written as the text node_exporter reads. 70 QPs on
 * one device: the 64 busiest keep series of their own, the 6 others are
 * summed into qpn="other" (completions and latency histogram), and stay
 * there when they complete more later; totals only grow; a WR's latency
 * lands in the log2 bucket of its value; outstanding WRs per traced QP,
 * the untraced left out.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "verbslat_prom.h"
#include "tap.h"

#define NQP 70

static char path[] = "/tmp/axp-vlprom.XXXXXX";

/* the value of sample s (name{labels}) in the file, -1 when absent */
static double sample(const char *s)
{
	static char line[512];
	FILE *f = fopen(path, "r");
	double v = -1;
	size_t n = strlen(s);

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, s, n) && line[n] == ' ') {
			v = strtod(line + n + 1, NULL);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

/* count completions of 1000 ns: log-linear bucket 190 (tools/lib/hist.h:
 * 2^9 <= 1000 < 2^10, sub-bucket (1000 >> 4) & 31 = 30) */
static void add(struct vl_prom *p, __u32 qpn, const char *st, __u64 count)
{
	static struct vl_stat s;

	memset(&s, 0, sizeof(s));
	s.count = count;
	s.sum_ns = 1000 * count;
	s.lat.b[(9 - LLH_SUB_BITS + 1) * LLH_SUB + 30] = count;
	tap_eq(vl_prom_add(p, "rxe0", qpn, "SEND", st, &s), 0, "add QP %u %s", qpn, st);
}

static int write_file(struct vl_prom *p, struct vl_qp_row *rows, int n)
{
	static const char *const names[VL_STAT_NR] = {
		"posted", "completed", "unpaired", "chain_too_long", "poll_too_long",
		"unsignaled_too_many", "map_full", "cookie_again", "events_lost",
	};
	__u64 counters[VL_STAT_NR] = { [0] = 7 };
	struct vl_prom_in in = { .qps = rows, .nq = n, .now_ns = 5000000000ULL,
				 .counters = counters, .counter_names = names };

	return vl_prom_write(p, path, &in);
}

int main(void)
{
	struct vl_prom *p = vl_prom_new();
	struct vl_qp_row rows[2] = {};
	int fd = mkstemp(path);

	if (fd < 0 || !p) {
		printf("1..0 # skip no temporary file\n");
		return 0;
	}
	close(fd);
	/* QP i completed i + 1 WRs: QPs 0-5 are the least busy */
	for (__u32 i = 0; i < NQP; i++)
		add(p, i, "IB_WC_SUCCESS", i + 1);
	add(p, 69, "IB_WC_WR_FLUSH_ERR", 3);
	/* QP 69 traced, 2 send WRs out, the oldest posted 1.5 s ago; QP 0
	 * (summed into other) 1 receive; an untraced QP left out */
	rows[0] = (struct vl_qp_row){ .q = { .qpn = 69, .dev = "rxe0", .owner = "nvme_rdma",
					     .tracked = 1 },
				      .send = 2, .oldest_send = 3500000000ULL };
	rows[1] = (struct vl_qp_row){ .q = { .qpn = 0, .dev = "rxe0", .tracked = 1 }, .recv = 1,
				      .oldest_recv = 4000000000ULL };
	tap_eq(write_file(p, rows, 2), 0, "first write");
	tap_eq(sample("agentxdp_verbslat_completions_total{dev=\"rxe0\",qpn=\"69\",opcode=\"SEND\","
		      "status=\"IB_WC_SUCCESS\"}"), 70, "QP 69's successes");
	tap_eq(sample("agentxdp_verbslat_completions_total{dev=\"rxe0\",qpn=\"69\",opcode=\"SEND\","
		      "status=\"IB_WC_WR_FLUSH_ERR\"}"), 3, "QP 69's flushes, named");
	tap_eq(sample("agentxdp_verbslat_completions_total{dev=\"rxe0\",qpn=\"6\",opcode=\"SEND\","
		      "status=\"IB_WC_SUCCESS\"}"), 7, "QP 6, the 64th busiest, on its own");
	tap_eq(sample("agentxdp_verbslat_completions_total{dev=\"rxe0\",qpn=\"5\",opcode=\"SEND\","
		      "status=\"IB_WC_SUCCESS\"}"), -1, "QP 5 not on its own");
	tap_eq(sample("agentxdp_verbslat_completions_total{dev=\"rxe0\",qpn=\"other\",opcode=\"SEND\","
		      "status=\"IB_WC_SUCCESS\"}"), 1 + 2 + 3 + 4 + 5 + 6, "QPs 0-5 summed as other");
	/* the histogram: over both statuses, 1000 ns in le 1.024e-06 */
	tap_eq(sample("agentxdp_verbslat_wr_latency_seconds_count{dev=\"rxe0\",qpn=\"69\","
		      "opcode=\"SEND\"}"), 73, "QP 69's latency count, every status");
	tap_eq(sample("agentxdp_verbslat_wr_latency_seconds_bucket{dev=\"rxe0\",qpn=\"69\","
		      "opcode=\"SEND\",le=\"5.12e-07\"}"), 0, "none below 512 ns");
	tap_eq(sample("agentxdp_verbslat_wr_latency_seconds_bucket{dev=\"rxe0\",qpn=\"69\","
		      "opcode=\"SEND\",le=\"1.024e-06\"}"), 73, "all below 1024 ns");
	tap_ok(sample("agentxdp_verbslat_wr_latency_seconds_sum{dev=\"rxe0\",qpn=\"69\","
		      "opcode=\"SEND\"}") == 73e-6, "the exact sum, in seconds");
	tap_eq(sample("agentxdp_verbslat_wr_latency_seconds_count{dev=\"rxe0\",qpn=\"other\","
		      "opcode=\"SEND\"}"), 21, "other's latency count");
	/* outstanding */
	tap_eq(sample("agentxdp_verbslat_outstanding_wrs{dev=\"rxe0\",qpn=\"69\",owner=\"nvme_rdma\","
		      "queue=\"send\"}"), 2, "QP 69's sends outstanding");
	tap_ok(sample("agentxdp_verbslat_oldest_outstanding_seconds{dev=\"rxe0\",qpn=\"69\","
		      "owner=\"nvme_rdma\",queue=\"send\"}") == 1.5, "the oldest 1.5 s old");
	tap_eq(sample("agentxdp_verbslat_outstanding_wrs{dev=\"rxe0\",qpn=\"other\",owner=\"\","
		      "queue=\"recv\"}"), 1, "QP 0's receive under other");
	tap_eq(sample("agentxdp_verbslat_posted_total"), 7, "the run's counters");
	/* QP 0 again, and 69: other and 69 grow, QP 0 stays in other */
	add(p, 0, "IB_WC_SUCCESS", 10);
	add(p, 69, "IB_WC_SUCCESS", 1);
	tap_eq(write_file(p, rows, 0), 0, "second write");
	tap_eq(sample("agentxdp_verbslat_completions_total{dev=\"rxe0\",qpn=\"other\",opcode=\"SEND\","
		      "status=\"IB_WC_SUCCESS\"}"), 31, "other only grows");
	tap_eq(sample("agentxdp_verbslat_completions_total{dev=\"rxe0\",qpn=\"0\",opcode=\"SEND\","
		      "status=\"IB_WC_SUCCESS\"}"), -1, "QP 0 still not on its own");
	tap_eq(sample("agentxdp_verbslat_completions_total{dev=\"rxe0\",qpn=\"69\",opcode=\"SEND\","
		      "status=\"IB_WC_SUCCESS\"}"), 71, "QP 69 grows");
	tap_eq(sample("agentxdp_verbslat_outstanding_wrs{dev=\"rxe0\",qpn=\"69\",owner=\"nvme_rdma\","
		      "queue=\"send\"}"), -1, "no QP now, no outstanding series");
	vl_prom_free(p);
	unlink(path);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
