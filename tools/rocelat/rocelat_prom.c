// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat's --prom file: the counters and the log2 histogram (cumulative,
 * never reset), the latest report's round-trip quantiles, each flow's
 * quantiles (capped), and what it can see (lib/prom.h's sources).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "rocelat_prom.h"
#include "lib/hist.h"
#include "lib/prom.h"

static const char *const counter_help[RL_NR] = {
	[RL_ROCE_PKTS] = "Packets to the RoCE port with a BTH",
	[RL_PARSE_ERRORS] = "Truncated or inconsistent headers",
	[RL_REQUESTS] = "RC/XRC request packets",
	[RL_TRACKED] = "Requests waiting for an answer (AckReq, READ, atomic)",
	[RL_ACKS] = "ACKNOWLEDGE and ATOMIC ACKNOWLEDGE packets (ACK, NAK, RNR NAK)",
	[RL_READ_RESP] = "READ RESPONSE packets",
	[RL_SAMPLES] = "Latency samples (round trips and local turnarounds)",
	[RL_TURN_SAMPLES] = "Latency samples of requests this host answered (request in, answer out)",
	[RL_RETRANSMITS] = "Request packets with a PSN seen before",
	[RL_KARN_DISCARDED] = "Answers to retransmitted requests, not timed (Karn)",
	[RL_NAK_SEQ] = "NAK: PSN sequence error",
	[RL_NAK_INVALID_REQ] = "NAK: invalid request",
	[RL_NAK_REMOTE_ACCESS] = "NAK: remote access error",
	[RL_NAK_REMOTE_OP] = "NAK: remote operational error",
	[RL_NAK_INVALID_RD] = "NAK: invalid RD request",
	[RL_NAK_OTHER] = "NAK with a reserved code or syndrome",
	[RL_RNR_NAKS] = "RNR NAKs",
	[RL_CNPS] = "Congestion notification packets",
	[RL_ECN_CE] = "RoCE packets marked ECN CE",
	[RL_EVICTED] = "Pending requests pushed out by newer ones",
	[RL_TIMEOUTS] = "Pending requests unanswered for --timeout",
	[RL_UNMATCHED] = "Answers that completed no pending request",
	[RL_RESP_MISSING] = "READs and atomics passed by a later answer without their response",
	[RL_FATAL_ENDED] = "Requests ended without an answer by a fatal NAK",
	[RL_LEARNED] = "Requester QPs paired with their responder QP by an answer's PSN",
	[RL_CM_REQS] = "RDMA CM connection requests (REQ) seen",
	[RL_CM_PAIRED] = "QP pairs learned from an RDMA CM REQ and its REP",
	[RL_AMBIGUOUS] = "Answers that could belong to several QPs (not paired)",
	[RL_DUPLICATES] = "Requests seen twice within microseconds (one sighting)",
	[RL_FLOW_RESETS] = "QPs whose PSNs restarted far behind (a new connection)",
	[RL_FLOWS] = "Flows (responder QPs) started",
	[RL_PAIR_FULL] = "Responder QPs left out of the PSN candidate scan (over 64 of one address pair waiting; the port index still pairs them)",
	[RL_RESERVED_OP] = "Packets with a reserved RC/XRC opcode",
	[RL_TUN_NOT_ROCE] = "Decapsulated mirror or tunnel frames whose inner frame is not RoCE",
	[RL_TUN_UNKNOWN] = "Tunnel headers not followed (unknown ERSPAN version, GRE routing, ...)",
	[RL_TRUNCATED] = "RoCE frames cut short (mirror truncation) whose headers were read",
	[RL_NO_SWITCH_TIME] = "Frames of a switch-timed flow without a switch timestamp (not timed)",
	[RL_OTHER_TRANSPORT] = "UC, UD and RD packets (counted, not timed)",
	[RL_HELD] = "Answers of a QP not paired yet, held until its pairing is known",
	[RL_UNTIMED] = "Requests answered by an answer whose time was lost (never timed)",
	[RL_UNHELD] = "Answers of a QP not paired yet, not held: the held map was full",
	[RL_REORDERED] = "Requests whose answer is stamped before them (out of time order): not timed",
	[RL_WAIT_FULL] = "QPs awaiting their first answer left out of the port index (full)",
	[RL_PAIRED_PORT] = "Of the QPs paired by an answer: found by their requests' UDP source port",
	[RL_PAIRED_PSN] = "Of the QPs paired by an answer: found by the PSN it names, which only they sent",
	[RL_UNTRACKED] = "QPs left out of the flow table: it was full of active flows",
	[RL_UNTRACKED_REQS] = "Requests of QPs left out of the flow table (not timed)",
	[RL_UNTRACKED_LOST] = "Requests of QPs left out and not counted as QPs (their count was full)",
};

static struct prom_cap flow_cap;

/*
 * Per flow with samples: p50 and p99 as gauges, labelled as rocediag
 * labels a QP (req, req_qpn, resp, resp_qpn, sport, kind) plus the mirror
 * session, so the fleet's outlier rule reads a collector's flows as it
 * reads an agent's QPs. Capped (lib/prom.h): the busiest PROM_CAP_DEFAULT
 * flows, the rest left out of this family.
 */
static void write_flows(struct prom_file *pf, const struct rocelat_prom_in *in)
{
	static const char name[] = "agentxdp_rocelat_flow_latency_seconds";
	int n = in->nflows;
	char (*keys)[256] = calloc(n + 1, sizeof(*keys));
	const char **kp = calloc(n + 1, sizeof(*kp));
	double *weight = calloc(n + 1, sizeof(*weight));
	bool *own = calloc(n + 1, sizeof(*own));

	prom_family(pf, name, PROM_GAUGE,
		    "A flow's latency quantiles of the latest interval, label q (0.5, "
		    "0.99); kind rtt: request to answer, turnaround: this host's own; "
		    "session: the mirror session it came in (empty: none)");
	if (!keys || !kp || !weight || !own)
		goto out;
	for (int i = 0; i < n; i++) {
		const struct rocelat_prom_flow *f = &in->flows[i];

		snprintf(keys[i], sizeof(keys[i]), "%s\x1f%s\x1f%s\x1f%d\x1f%s", f->req,
			 f->resp, f->resp_qpn, f->turnaround, f->session);
		kp[i] = keys[i];
		weight[i] = f->samples;
	}
	prom_cap_select(&flow_cap, n, kp, weight, own);
	for (int i = 0; i < n; i++) {
		const struct rocelat_prom_flow *f = &in->flows[i];
		struct prom_label l[8] = {
			{ "req", f->req }, { "req_qpn", f->req_qpn }, { "resp", f->resp },
			{ "resp_qpn", f->resp_qpn }, { "sport", f->sport },
			{ "kind", f->turnaround ? "turnaround" : "rtt" },
			{ "session", f->session }, { "q", "0.5" },
		};

		if (!own[i] || !f->samples)
			continue;
		prom_gauge_seconds(pf, name, l, 8, f->p50_ns, 1e-9);
		l[7].value = "0.99";
		prom_gauge_seconds(pf, name, l, 8, f->p99_ns, 1e-9);
	}
out:
	free(keys);
	free(kp);
	free(weight);
	free(own);
}

int rocelat_prom_write(const char *path, const struct rocelat_prom_in *in)
{
	static const char *const qs[] = { "0.5", "0.9", "0.99", "1" };
	struct prom_file pf;
	char name[96];
	int err = prom_open(&pf, path);

	if (err)
		return err;
	for (int i = 0; i < RL_NR; i++) {
		snprintf(name, sizeof(name), "agentxdp_rocelat_%s_total", in->counter_names[i]);
		prom_family(&pf, name, PROM_COUNTER, counter_help[i]);
		prom_counter(&pf, name, NULL, 0, in->tot->c[i]);
	}
	prom_family(&pf, "agentxdp_rocelat_pending_requests", PROM_GAUGE,
		    "Requests waiting for an answer now");
	prom_gauge(&pf, "agentxdp_rocelat_pending_requests", NULL, 0, in->live_pending);
	prom_family(&pf, "agentxdp_rocelat_flows", PROM_GAUGE,
		    "Flows (responder QPs) tracked now");
	prom_gauge(&pf, "agentxdp_rocelat_flows", NULL, 0, in->live_flows);
	prom_family(&pf, "agentxdp_rocelat_latency_seconds", PROM_HISTOGRAM,
		    "Request to ACK / READ RESPONSE round-trip latency");
	prom_hist_log2(&pf, "agentxdp_rocelat_latency_seconds", NULL, 0,
		       in->tot->hist.slots, HIST_SLOTS, in->unit_s, -1);
	/* a gauge: a summary's quantile label would promise a sum and count
	 * of the same window, and the histogram above has the cumulative
	 * ones; "q", since promtool keeps "quantile" for summaries */
	prom_family(&pf, "agentxdp_rocelat_latency_quantile_seconds", PROM_GAUGE,
		    "Round-trip latency quantiles of the latest interval, label q "
		    "(within 3%; q=\"1\" is the maximum)");
	for (int i = 0; i < 4 && in->quantiles; i++) {
		struct prom_label l = { "q", qs[i] };

		prom_gauge_seconds(&pf, "agentxdp_rocelat_latency_quantile_seconds", &l, 1,
				   in->q_ns[i], 1e-9);
	}
	write_flows(&pf, in);
	prom_sources(&pf, "agentxdp_rocelat", in->sources, in->nsources);
	return prom_commit(&pf);
}

void rocelat_prom_free(void)
{
	prom_cap_free(&flow_cap);
}
