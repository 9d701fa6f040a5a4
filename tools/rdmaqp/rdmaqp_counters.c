// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The per-driver hw_counters tables (rdmaqp_counters.h). Names are the
 * sysfs names of each driver's source (cited per table); meanings are
 * ours, from those sources and the vendors' documentation.
 */
#include <stdio.h>
#include <string.h>
#include "rdmaqp_counters.h"
#include "lib/ibdev.h"

#define T RQ_CLS_TRAFFIC
#define L RQ_CLS_LOSS
#define C RQ_CLS_CONGESTION
#define E RQ_CLS_ERROR
#define R RQ_CLS_RESOURCE
#define N(a) (sizeof(a) / sizeof((a)[0]))

const char *const rdmaqp_cls_names[RQ_CLS_NR] = {
	[T] = "traffic", [L] = "loss", [C] = "congestion", [E] = "error", [R] = "resource",
};

/* drivers/infiniband/hw/mlx5/counters.c: basic_q_cnts, out_of_seq_q_cnts,
 * retrans_q_cnts, extended_err_cnts, roce_accl_cnts, cong_cnts,
 * ext_ppcnt_cnts */
static const struct rdmaqp_cdesc mlx5[] = {
	{ "rx_write_requests", T, "RDMA WRITE requests received" },
	{ "rx_read_requests", T, "RDMA READ requests received" },
	{ "rx_atomic_requests", T, "atomic requests received" },
	{ "rx_dct_connect", T, "DC target connect requests received" },
	{ "out_of_buffer", L, "packets dropped: no receive WQE posted (RQ empty)" },
	{ "out_of_sequence", L, "packets received out of sequence (a PSN gap)" },
	{ "duplicate_request", L, "duplicate requests received (the peer retransmitted)" },
	{ "rnr_nak_retry_err", E, "RNR NAK retries exhausted: the QP went to error" },
	{ "packet_seq_err", L, "PSN sequence error NAKs received" },
	{ "implied_nak_seq_err", L, "implied NAKs: a response skipped PSNs, requests resent" },
	{ "local_ack_timeout_err", L, "the ACK timer expired (a retransmission followed)" },
	{ "req_rnr_retries_exceeded", E, "RNR retries exhausted at the requester" },
	{ "req_transport_retries_exceeded", E, "transport retries exhausted at the requester" },
	{ "resp_local_length_error", E, "responder: local length errors" },
	{ "resp_cqe_error", E, "responder: completions in error" },
	{ "req_cqe_error", E, "requester: completions in error" },
	{ "req_remote_invalid_request", E, "requester: remote invalid request NAKs" },
	{ "req_remote_access_errors", E, "requester: remote access error NAKs" },
	{ "resp_remote_access_errors", E, "responder: remote access errors" },
	{ "resp_cqe_flush_error", E, "responder: completions flushed (QP in error)" },
	{ "req_cqe_flush_error", E, "requester: completions flushed (QP in error)" },
	{ "roce_adp_retrans", L, "adaptive retransmissions" },
	{ "roce_adp_retrans_to", L, "adaptive retransmission timeouts" },
	{ "roce_slow_restart", L, "slow restarts after a retransmission timeout" },
	{ "roce_slow_restart_cnps", C, "CNPs sent during slow restart" },
	{ "roce_slow_restart_trans", L, "slow restart state transitions" },
	{ "rp_cnp_handled", C, "CNPs received and handled: this port's sends slowed" },
	{ "rp_cnp_ignored", C, "CNPs received and ignored" },
	{ "np_cnp_sent", C, "CNPs sent: ECN-marked packets came in" },
	{ "np_ecn_marked_roce_packets", C, "RoCE packets received with ECN CE marked" },
	{ "rx_icrc_encapsulated", E, "RoCE packets received with a bad ICRC" },
};

/* drivers/infiniband/hw/irdma/verbs.c: irdma_hw_stat_names (sysfs names;
 * iWARP and RoCE share them) */
static const struct rdmaqp_cdesc irdma[] = {
	{ "ip4InDiscards", L, "IPv4 packets received and discarded" },
	{ "ip4InTruncatedPkts", E, "IPv4 packets received truncated" },
	{ "ip4OutNoRoutes", E, "IPv4 packets not sent: no route" },
	{ "ip6InDiscards", L, "IPv6 packets received and discarded" },
	{ "ip6InTruncatedPkts", E, "IPv6 packets received truncated" },
	{ "ip6OutNoRoutes", E, "IPv6 packets not sent: no route" },
	{ "rxVlanErrors", E, "packets received with a VLAN error" },
	{ "tcpRetransSegs", L, "iWARP: TCP segments retransmitted" },
	{ "tcpInOptErrors", E, "iWARP: TCP option errors" },
	{ "tcpInProtoErrors", E, "iWARP: TCP protocol errors" },
	{ "ip4InOctets", T, "IPv4 bytes received" },
	{ "ip4InPkts", T, "IPv4 packets received" },
	{ "ip4InReasmRqd", T, "IPv4 fragments received needing reassembly" },
	{ "ip4InMcastOctets", T, "IPv4 multicast bytes received" },
	{ "ip4InMcastPkts", T, "IPv4 multicast packets received" },
	{ "ip4OutOctets", T, "IPv4 bytes sent" },
	{ "ip4OutPkts", T, "IPv4 packets sent" },
	{ "ip4OutSegRqd", T, "IPv4 packets sent that needed fragmenting" },
	{ "ip4OutMcastOctets", T, "IPv4 multicast bytes sent" },
	{ "ip4OutMcastPkts", T, "IPv4 multicast packets sent" },
	{ "ip6InOctets", T, "IPv6 bytes received" },
	{ "ip6InPkts", T, "IPv6 packets received" },
	{ "ip6InReasmRqd", T, "IPv6 fragments received needing reassembly" },
	{ "ip6InMcastOctets", T, "IPv6 multicast bytes received" },
	{ "ip6InMcastPkts", T, "IPv6 multicast packets received" },
	{ "ip6OutOctets", T, "IPv6 bytes sent" },
	{ "ip6OutPkts", T, "IPv6 packets sent" },
	{ "ip6OutSegRqd", T, "IPv6 packets sent that needed fragmenting" },
	{ "ip6OutMcastOctets", T, "IPv6 multicast bytes sent" },
	{ "ip6OutMcastPkts", T, "IPv6 multicast packets sent" },
	{ "tcpInSegs", T, "iWARP: TCP segments received" },
	{ "tcpOutSegs", T, "iWARP: TCP segments sent" },
	{ "iwInRdmaReads", T, "RDMA READ requests received" },
	{ "iwInRdmaSends", T, "SENDs received" },
	{ "iwInRdmaWrites", T, "RDMA WRITEs received" },
	{ "iwOutRdmaReads", T, "RDMA READ requests sent" },
	{ "iwOutRdmaSends", T, "SENDs sent" },
	{ "iwOutRdmaWrites", T, "RDMA WRITEs sent" },
	{ "iwRdmaBnd", T, "memory window binds" },
	{ "iwRdmaInv", T, "memory key invalidations" },
	{ "RxUDP", T, "RoCEv2 (UDP) packets received" },
	{ "TxUDP", T, "RoCEv2 (UDP) packets sent" },
	{ "RxECNMrkd", C, "RoCE packets received with ECN CE marked" },
	{ "cnpHandled", C, "CNPs received and handled: this port's sends slowed" },
	{ "cnpIgnored", C, "CNPs received and ignored" },
	{ "cnpSent", C, "CNPs sent: ECN-marked packets came in" },
};

/* drivers/infiniband/hw/bnxt_re/hw_counters.c: bnxt_re_stat_descs (6.12;
 * Debian's 6.1 builds no bnxt_re) */
static const struct rdmaqp_cdesc bnxt_re[] = {
	{ "active_pds", R, "protection domains in use" },
	{ "active_ahs", R, "address handles in use" },
	{ "active_qps", R, "QPs in use" },
	{ "active_rc_qps", R, "RC QPs in use" },
	{ "active_ud_qps", R, "UD QPs in use" },
	{ "active_srqs", R, "shared receive queues in use" },
	{ "active_cqs", R, "completion queues in use" },
	{ "active_mrs", R, "memory regions in use" },
	{ "active_mws", R, "memory windows in use" },
	{ "watermark_qps", R, "most QPs in use at once" },
	{ "rx_pkts", T, "RoCE packets received" },
	{ "rx_bytes", T, "RoCE bytes received" },
	{ "tx_pkts", T, "RoCE packets sent" },
	{ "tx_bytes", T, "RoCE bytes sent" },
	{ "recoverable_errors", E, "recoverable errors" },
	{ "tx_roce_errors", E, "RoCE packets not sent: errors" },
	{ "tx_roce_discards", L, "RoCE packets discarded on send" },
	{ "rx_roce_errors", E, "RoCE packets received in error" },
	{ "rx_roce_discards", L, "RoCE packets discarded on receive" },
	{ "to_retransmits", L, "retransmissions after a timeout" },
	{ "seq_err_naks_rcvd", L, "PSN sequence error NAKs received" },
	{ "max_retry_exceeded", E, "transport retries exhausted: the QP went to error" },
	{ "rnr_naks_rcvd", L, "RNR NAKs received (the peer had no receive posted)" },
	{ "missing_resp", L, "responses missing (a read or atomic unanswered)" },
	{ "unrecoverable_err", E, "unrecoverable errors" },
	{ "bad_resp_err", E, "bad responses received" },
	{ "local_qp_op_err", E, "local QP operation errors" },
	{ "local_protection_err", E, "local protection errors" },
	{ "mem_mgmt_op_err", E, "memory management operation errors" },
	{ "remote_invalid_req_err", E, "remote invalid request errors" },
	{ "remote_access_err", E, "remote access errors" },
	{ "remote_op_err", E, "remote operation errors" },
	{ "dup_req", L, "duplicate requests received (the peer retransmitted)" },
	{ "res_exceed_max", E, "responder: a request over the maximum" },
	{ "res_length_mismatch", E, "responder: length mismatches" },
	{ "res_exceeds_wqe", E, "responder: a message longer than the WQE" },
	{ "res_opcode_err", E, "responder: bad opcodes" },
	{ "res_rx_invalid_rkey", E, "responder: invalid rkeys" },
	{ "res_rx_no_perm", E, "responder: access without permission" },
	{ "res_rx_range_err", E, "responder: accesses out of range" },
	{ "res_srq_err", E, "responder: SRQ errors" },
	{ "res_oos_drop_count", L, "responder: packets dropped out of sequence" },
	{ "res_irrq_oflow", E, "responder: inbound read queue overflows" },
	{ "rx_out_of_buffer", L, "packets dropped: no receive buffer" },
	{ "rx_out_of_sequence", L, "packets received out of sequence" },
	{ "tx_cnp_pkts", C, "CNPs sent: ECN-marked packets came in" },
	{ "rx_cnp_pkts", C, "CNPs received: this port's sends slowed" },
	{ "rx_ecn_marked_pkts", C, "RoCE packets received with ECN CE marked" },
	{ "tx_roce_pkts", T, "RoCE packets sent (the NIC's count)" },
	{ "rx_roce_pkts", T, "RoCE packets received (the NIC's count)" },
	{ "rx_roce_good_pkts", T, "RoCE packets received good" },
	{ "tx_read_req", T, "RDMA READ requests sent" },
	{ "tx_write_req", T, "RDMA WRITE requests sent" },
	{ "tx_send_req", T, "SEND requests sent" },
	{ "rx_read_req", T, "RDMA READ requests received" },
	{ "rx_write_req", T, "RDMA WRITE requests received" },
	{ "rx_send_req", T, "SEND requests received" },
};

/* drivers/infiniband/sw/rxe/rxe_hw_counters.c: rxe_counter_descs */
static const struct rdmaqp_cdesc rxe[] = {
	{ "sent_pkts", T, "packets sent" },
	{ "rcvd_pkts", T, "packets received" },
	{ "duplicate_request", L, "duplicate requests received (the peer retransmitted)" },
	{ "out_of_seq_request", L, "requests received out of sequence (a PSN gap)" },
	{ "rcvd_rnr_err", L, "RNR NAKs received" },
	{ "send_rnr_err", L, "RNR NAKs sent (no receive posted here)" },
	{ "rcvd_seq_err", L, "PSN sequence error NAKs received" },
	{ "ack_deferred", T, "ACKs deferred (coalesced)" },
	{ "retry_exceeded_err", E, "transport retries exhausted: the QP went to error" },
	{ "retry_rnr_exceeded_err", E, "RNR retries exhausted: the QP went to error" },
	{ "completer_retry_err", L, "the requester retried (ACK timeout or NAK)" },
	{ "send_err", E, "packets the network stack refused to send" },
	{ "link_downed", E, "the netdev went down" },
	{ "rdma_sends", T, "SENDs completed" },
	{ "rdma_recvs", T, "receives completed" },
};

static const struct rdmaqp_family families[] = {
	{ "mlx5", "mlx5_ib", "drivers/infiniband/hw/mlx5/counters.c", mlx5, N(mlx5) },
	{ "irdma", "irdma", "drivers/infiniband/hw/irdma/verbs.c", irdma, N(irdma) },
	{ "bnxt_re", "bnxt_re", "drivers/infiniband/hw/bnxt_re/hw_counters.c", bnxt_re,
	  N(bnxt_re) },
	{ "rxe", "rdma_rxe", "drivers/infiniband/sw/rxe/rxe_hw_counters.c", rxe, N(rxe) },
};

const struct rdmaqp_family *rdmaqp_families(size_t *n)
{
	*n = N(families);
	return families;
}

const struct rdmaqp_cdesc *rdmaqp_counter_desc(const struct rdmaqp_family *f, const char *name)
{
	for (size_t i = 0; f && i < f->n; i++)
		if (!strcmp(f->c[i].name, name))
			return &f->c[i];
	return NULL;
}

/* the parent device's driver: mlx5_core, irdma (an auxiliary driver),
 * bnxt_re or bnxt_en */
static const struct rdmaqp_family *by_driver(const char *sysfs, const char *dev)
{
	static const char *const drv[][2] = { { "mlx5", "mlx5" }, { "irdma", "irdma" },
					      { "ice", "irdma" }, { "i40e", "irdma" },
					      { "bnxt", "bnxt_re" }, { "rdma_rxe", "rxe" } };
	char base[128];

	ibdev_driver(sysfs, dev, base, sizeof(base));
	if (!base[0])
		return NULL;
	for (size_t i = 0; i < N(drv); i++)
		if (!strncmp(base, drv[i][0], strlen(drv[i][0])))
			for (size_t f = 0; f < N(families); f++)
				if (!strcmp(families[f].name, drv[i][1]))
					return &families[f];
	return NULL;
}

const struct rdmaqp_family *rdmaqp_family_of(const char *sysfs, const char *dev,
					     const char *const *hw_names, size_t n)
{
	const struct rdmaqp_family *best = by_driver(sysfs, dev);
	size_t most = 0;

	if (best)
		return best;
	for (size_t f = 0; f < N(families); f++) {
		size_t known = 0;

		for (size_t i = 0; i < n; i++)
			known += rdmaqp_counter_desc(&families[f], hw_names[i]) != NULL;
		/* most of its counters, so one shared name does not decide */
		if (known > most && 2 * known > n) {
			most = known;
			best = &families[f];
		}
	}
	return best;
}
