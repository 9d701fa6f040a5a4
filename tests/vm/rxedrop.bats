#!/usr/bin/env bats
# rxedrop against real rdma_rxe on the Soft-RoCE test bed: rxe on 6.1 frees
# every packet its QPs took in with kfree_skb() (reason NOT_SPECIFIED, in
# rxe_responder and rxe_completer), not consume_skb(). Those are no drops:
# rxedrop's program leaves them out by their caller and counts them apart
# (agentxdp_rxedrop_rxe_consumed_total). Ground truth: rxe's own port
# counters (rdma statistic: rcvd_pkts, sent_pkts, duplicate_request) and
# perftest's iteration count. Runs inside the Soft-RoCE VM
# (tests/vm/run-suites) or as root on a host with rdma_rxe; else skips.

load ../lib/common
load ../lib/vm_rocelat

RXEDROP=$AX_BUILD/rxedrop
WAIT=120	# s: a tool's load under TCG, perftest's server start

setup_file() {
	ax_file_needs --rxe rdma ib_write_bw jq timeout stdbuf "$RXEDROP" || return 0
	bed_up
}

teardown_file() {
	bed_down
}

setup() {
	rl_setup
}

teardown() {
	ax_file_ran || return 0
	perf_stop
}

@test "clean ib_write_bw: no drop counted, though rdma_rxe frees every packet it took in with kfree_skb; those counted apart, as many as rxe received" {
	local n=300 prom=$T/drop.prom
	# shellcheck disable=SC2034 # read through delta's namerefs
	local -A c0 c1
	ax_bg "$RXEDROP" -j --prom "$prom" >"$T/counts" 2>"$T/counts.err"
	local cpid=$AX_LAST_PID
	ax_bg "$RXEDROP" -e -j >"$T/events" 2>"$T/events.err"
	local epid=$AX_LAST_PID
	AX_WAIT_BANNER_S=$WAIT ax_wait_banner "$cpid" "$T/counts.err"
	AX_WAIT_BANNER_S=$WAIT ax_wait_banner "$epid" "$T/events.err"
	counters c0
	# one single-packet WRITE in flight and rxe's timer out of reach
	# (-u 31): nothing resent, nothing out of sequence
	perf_run clean ib_write_bw -s 1024 -t 1 -u 31 -F -n "$n"
	counters c1
	ax_stop "$cpid" INT
	[ "$AX_RC" -eq 0 ]
	ax_stop "$epid" INT
	[ "$AX_RC" -eq 0 ]

	local rcvd dup consumed drops events
	rcvd=$(($(delta c0 c1 rxe-a.rcvd_pkts) + $(delta c0 c1 rxe-b.rcvd_pkts)))
	dup=$(delta c0 c1 rxe-b.duplicate_request)
	consumed=$(awk '$1 == "agentxdp_rxedrop_rxe_consumed_total" { print $2 }' "$prom")
	drops=$(jq -s '[.[] | select(.type == "drop_count") | .count] | add // 0' "$T/counts")
	events=$(jq -s '[.[] | select(.type == "drop")] | length' "$T/events")
	measured "clean write_bw: rxe received $rcvd (rxe-a $(delta c0 c1 rxe-a.rcvd_pkts), rxe-b $(delta c0 c1 rxe-b.rcvd_pkts)), duplicates $dup; rxedrop drops $drops, events $events, rxe consumed $consumed"
	# rxe: the messages went once each, each answered
	[ "$(perf_result "$T/clean.cli" 2)" -eq "$n" ]
	[ "$(delta c0 c1 rxe-a.sent_pkts)" -eq "$n" ]
	[ "$dup" -eq 0 ]
	[ "$(delta c0 c1 rxe-b.rcvd_pkts)" -eq "$n" ]
	# rxedrop: no drop in either mode; every packet rxe took in left out
	[ "$drops" -eq 0 ]
	[ "$events" -eq 0 ]
	[ "$consumed" -eq "$rcvd" ]
}
