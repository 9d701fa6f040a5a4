#!/usr/bin/env bats
# rxeqp against real rdma_rxe traffic: perftest and tests/vm/rc_client on the
# Soft-RoCE test bed (scripts/testbed.sh), with an iptables REJECT, RNR and
# netem loss as the injected faults. Runs inside the Soft-RoCE VM
# (tests/vm/run-suites) or as root on a host whose kernel has rdma_rxe;
# elsewhere every test skips.
#
# Ground truth: perftest's iteration counts, rxe's own port counters
# (rdma statistic), rc_client's completions, netem's drop count. QP numbers
# are made asymmetric first (rxe-b's run 3 ahead of rxe-a's), so a mix-up of
# requester and responder, or of the two devices, shows.

load ../lib/common

TESTBED="$AX_ROOT/scripts/testbed.sh"
RXEQP="$AX_BUILD/rxeqp"
RC="$AX_BUILD/vm/rc_client"
STATE_DIR=${BATS_FILE_TMPDIR:-/tmp}

setup_file() {
	# build/vm/rc_client needs libibverbs-dev at build time
	ax_file_needs --rxe rdma ib_write_bw ib_send_lat iptables tc jq "$RXEQP" "$RC" || return 0
	"$TESTBED" up
	# asymmetric QP numbers: 1 QP on rxe-a, 4 on rxe-b (rxe numbers cyclically)
	"$RC" -p 3 -n 1 >/dev/null
}

teardown_file() {
	ax_file_ran || return 0
	"$TESTBED" down >/dev/null 2>&1 || true
}

setup() {
	ax_file_skip
}

teardown() {
	local rule
	ax_file_ran || return 0
	rdma link del rxe-axqa 2>/dev/null || true
	rdma link del rxe-axqb 2>/dev/null || true
	ax_cleanup
	if [ -f "$STATE_DIR/iptables" ]; then
		while read -r rule; do
			# shellcheck disable=SC2086 # a rule is a word list
			iptables -D $rule 2>/dev/null || true
		done <"$STATE_DIR/iptables"
		rm -f "$STATE_DIR/iptables"
	fi
	tc qdisc del dev veth-a root 2>/dev/null || true
}

reject_sport() { # reject_sport PORT: REJECT RoCE from source port PORT on veth-b
	local rule="INPUT -i veth-b -p udp --dport 4791 --sport $1 -j REJECT"
	echo "$rule" >>"$STATE_DIR/iptables"
	# shellcheck disable=SC2086
	iptables -I $rule
}

# start_rxeqp VAR OUT ARGS...: rxeqp in the background until it is
# tracing, its PID in VAR; loading takes seconds under emulation (the wait
# is bounded in wall time)
# prom_sum FILE COUNTER DEV: agentxdp_rxeqp_COUNTER_total summed over
# DEV's series
prom_sum() {
	awk -v m="agentxdp_rxeqp_$2_total{dev=\"$3\"," 'index($0, m) == 1 { s += $NF } END { print s + 0 }' "$1"
}

start_rxeqp() {
	ax_tool_start "$1" "$2" 120 Tracing "$RXEQP" "${@:3}"
}

# wait_gone FILE: until every QP that carried traffic in FILE (rxeqp -j
# with an interval) has had its destruction reported. The applications
# have exited by then, but rxe may still be tearing their QPs down; rxeqp
# reports a QP destroyed once, then sums it into its device's qpn="other"
# at the next collection (the one at exit at the latest). Waiting for that
# record instead of a fixed sleep makes the end of the traffic an event.
wait_gone() {
	local end=$((SECONDS + 60))
	until last_qps "$1" 2>/dev/null | jq -e -s \
		'map(select(.tx_pkts + .rx_pkts > 0)) | length > 0 and all(.destroyed)' >/dev/null 2>&1; do
		if [ "$SECONDS" -gt "$end" ]; then
			echo "rxeqp did not report the QPs of $1 destroyed:" >&2
			last_qps "$1" >&2
			return 1
		fi
		sleep 0.2
	done
}

stop_rxeqp() { # stop_rxeqp VAR: SIGINT, it must exit 0
	ax_tool_stop "$1"
}

counter() { # counter rxe-a sent_pkts
	rdma statistic show link "$1/1" | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'
}

snap_counters() { # snap_counters FILE: the port counters of both devices
	local d k
	for d in rxe-a rxe-b; do
		for k in sent_pkts rcvd_pkts duplicate_request out_of_seq_request \
			completer_retry_err retry_exceeded_err send_rnr_err rcvd_rnr_err \
			rdma_sends rdma_recvs; do
			echo "$d $k $(counter "$d" "$k")"
		done
	done >"$1"
}

delta() { # delta BEFORE AFTER DEV NAME
	echo $(($(awk -v d="$3" -v k="$4" '$1 == d && $2 == k { print $3 }' "$2") -
		$(awk -v d="$3" -v k="$4" '$1 == d && $2 == k { print $3 }' "$1")))
}

# the last "qp" record of every QP in a JSON-lines file, one per line
last_qps() {
	jq -c -s '[.[] | select(.type == "qp")] | group_by([.ifindex, .qpn]) | map(last) | .[]' "$1"
}

qp() { # qp FILE IFNAME QPN: that QP's last record
	last_qps "$1" | jq -c --arg i "$2" --argjson q "$3" 'select(.ifname == $i and .qpn == $q)'
}

f() { jq -r ".$2" <<<"$1"; } # f RECORD FIELD

sum_dev() { # sum_dev FILE IFNAME FIELD: summed over the QPs of one device
	last_qps "$1" | jq -s --arg i "$2" "[.[] | select(.ifname == \$i) | .$3] | add // 0"
}

@test "ib_write_bw: per-QP requests, packets, NAKs and duplicates agree with perftest and rxe's port counters" {
	local out=$BATS_TEST_TMPDIR/j.out iters=200 a b A B
	snap_counters "$BATS_TEST_TMPDIR/before"
	start_rxeqp RXEQP_PID "$out" -j --prom "$BATS_TEST_TMPDIR/rxeqp.prom" 1
	TESTBED_ITERS=$iters TESTBED_SIZE=65536 TESTBED_TIMEOUT=120 run "$TESTBED" traffic
	echo "$output" | tail -n 3
	[ "$status" -eq 0 ]
	wait_gone "$out"
	snap_counters "$BATS_TEST_TMPDIR/after"
	stop_rxeqp RXEQP_PID
	last_qps "$out"

	# perftest's client QP on rxe-a is the requester, its server QP on rxe-b
	A=$(last_qps "$out" | jq -c 'select(.ifname == "veth-a" and .tx_reqs > 0)')
	a=$(f "$A" qpn)
	B=$(last_qps "$out" | jq -c --argjson q "$a" 'select(.ifname == "veth-b" and .dqpn == $q)')
	b=$(f "$B" qpn)
	[ -n "$a" ]
	[ -n "$b" ]
	[ "$(f "$A" dev)" = rxe-a ]
	[ "$(f "$B" dev)" = rxe-b ]
	[ "$a" -ne "$b" ]			# asymmetric numbers: no mix-up possible
	[ "$(f "$A" dqpn)" -eq "$b" ]
	[ "$(f "$A" daddr)" = 10.10.0.2 ]
	[ "$(f "$B" daddr)" = 10.10.0.1 ]
	# one UDP source port for both directions (rdma_get_udp_sport)
	[ "$(f "$A" sport)" -eq "$(f "$B" sport)" ]
	[ "$(f "$A" sport)" -ge 49152 ]

	# one request per iteration; 64 KiB at MTU 1024 is 64 packets, each sent
	# once plus whatever went again
	[ "$(f "$A" tx_reqs)" -eq "$iters" ]
	[ $(($(f "$A" tx_req_pkts) - $(f "$A" retx_pkts))) -eq $((iters * 64)) ]
	[ "$(f "$B" tx_reqs)" -eq 0 ]
	[ "$(f "$A" rx_req_pkts)" -eq 0 ]
	# every message asks for an ACK; rxe answers each, and a duplicate again
	[ "$(f "$B" tx_acks)" -ge "$iters" ]
	[ "$(f "$A" rx_acks)" -eq "$(f "$B" tx_acks)" ]
	[ "$(f "$A" lat_samples)" -ge 1 ]

	# the per-QP sums are rxe's per-port counters
	local d
	for d in a b; do
		[ "$(sum_dev "$out" "veth-$d" tx_pkts)" -eq "$(delta "$BATS_TEST_TMPDIR"/{before,after} "rxe-$d" sent_pkts)" ]
		[ "$(sum_dev "$out" "veth-$d" rx_pkts)" -eq "$(delta "$BATS_TEST_TMPDIR"/{before,after} "rxe-$d" rcvd_pkts)" ]
	done
	# rxeqp calls a request a duplicate when it is behind where resp.psn
	# will be once the requests queued before it are done (check_psn, where
	# rxe counts, is inlined): a retransmission queued behind its original
	# too, which 6.12's work-queued responder shows often
	[ "$(f "$B" dup_reqs)" -eq "$(delta "$BATS_TEST_TMPDIR"/{before,after} rxe-b duplicate_request)" ]
	[ "$(f "$B" seq_err_nak_sent)" -eq "$(delta "$BATS_TEST_TMPDIR"/{before,after} rxe-b out_of_seq_request)" ]
	[ "$(f "$A" retries)" -eq "$(delta "$BATS_TEST_TMPDIR"/{before,after} rxe-a completer_retry_err)" ]

	# the same totals in the Prometheus file, which keeps a destroyed QP's
	# counts in its device's qpn="other" series
	grep tx_reqs_total "$BATS_TEST_TMPDIR/rxeqp.prom" || true
	[ "$(awk '/^agentxdp_rxeqp_tx_reqs_total\{.*ifname="veth-a"/ { s += $NF } END { print s + 0 }' \
		"$BATS_TEST_TMPDIR/rxeqp.prom")" -eq "$iters" ]
	grep -q '^agentxdp_rxeqp_tx_reqs_total{dev="rxe-a",ifname="veth-a",qpn="other",daddr="",dqpn=""} ' \
		"$BATS_TEST_TMPDIR/rxeqp.prom"
	if command -v promtool >/dev/null; then
		run promtool check metrics <"$BATS_TEST_TMPDIR/rxeqp.prom"
		echo "$output"
		[ "$status" -eq 0 ]
	fi
}

@test "ib_send_lat: each side sends and receives exactly the iterations; the table shows both QPs" {
	local out=$BATS_TEST_TMPDIR/j.out tab=$BATS_TEST_TMPDIR/table.out n=100 rc=0 A B
	snap_counters "$BATS_TEST_TMPDIR/before"
	start_rxeqp QP_J "$out" -j --prom "$BATS_TEST_TMPDIR/qp.prom" 1
	start_rxeqp QP_T "$tab" --noclear 1
	ax_perf_start "$BATS_TEST_TMPDIR/lat" 60 18516 ib_send_lat -F -n "$n"
	wait "$AX_PERF_CLI" || rc=$?
	grep -v '^ *$' "$BATS_TEST_TMPDIR/lat.cli" | tail -n 3
	[ "$rc" -eq 0 ]
	wait "$AX_PERF_SRV" || true
	wait_gone "$out"
	snap_counters "$BATS_TEST_TMPDIR/after"
	stop_rxeqp QP_J
	stop_rxeqp QP_T

	A=$(last_qps "$out" | jq -c 'select(.ifname == "veth-a" and .tx_reqs > 0)')
	B=$(last_qps "$out" | jq -c --argjson q "$(f "$A" qpn)" 'select(.ifname == "veth-b" and .dqpn == $q)')
	echo "A=$A"
	echo "B=$B"
	[ "$(f "$B" dqpn)" -eq "$(f "$A" qpn)" ]
	[ "$(f "$A" qpn)" -ne "$(f "$B" qpn)" ]
	# ping-pong: both QPs are requester and responder, n SENDs each way, one
	# packet each (2 bytes)
	[ "$(f "$A" tx_reqs)" -eq "$n" ]
	[ "$(f "$B" tx_reqs)" -eq "$n" ]
	[ $(($(f "$A" tx_req_pkts) - $(f "$A" retx_pkts))) -eq "$n" ]
	[ $(($(f "$B" tx_req_pkts) - $(f "$B" retx_pkts))) -eq "$n" ]
	[ "$(f "$B" rx_req_pkts)" -eq "$(f "$A" tx_req_pkts)" ]
	[ "$(f "$A" rx_req_pkts)" -eq "$(f "$B" tx_req_pkts)" ]
	# rxe counts completed SENDs and RECVs per port
	[ "$(delta "$BATS_TEST_TMPDIR"/{before,after} rxe-a rdma_sends)" -eq "$n" ]
	[ "$(delta "$BATS_TEST_TMPDIR"/{before,after} rxe-b rdma_recvs)" -eq "$n" ]
	[ "$(sum_dev "$out" veth-a tx_pkts)" -eq "$(delta "$BATS_TEST_TMPDIR"/{before,after} rxe-a sent_pkts)" ]
	# --prom's file at exit (perftest's QPs folded into qpn="other" by
	# then): the same from perftest's and rxe's own counts
	local prom=$BATS_TEST_TMPDIR/qp.prom
	cat "$prom"
	[ "$(prom_sum "$prom" tx_reqs rxe-a)" -eq "$n" ]
	[ "$(prom_sum "$prom" tx_reqs rxe-b)" -eq "$n" ]
	[ "$(prom_sum "$prom" tx_pkts rxe-a)" -eq "$(delta "$BATS_TEST_TMPDIR"/{before,after} rxe-a sent_pkts)" ]

	# the table: a header and both QPs with their peers, in 80 columns.
	# Whether an interval printed them alive ("RTS") depends on how long
	# perftest ran; that rxeqp showed each destroyed in RTS ("RTS*") does
	# not: perftest had destroyed them before rxeqp stopped, and the table
	# at exit shows what the last interval did not.
	cat "$tab"
	grep -q '^QP  *STATE  *TX_PKT  *RX_PKT  *RETX  *TMO  *RNR  *SEQ  *DUP  *ERR  *P50us  *PEER$' "$tab"
	local qa qb
	qa=0x$(printf %x "$(f "$A" qpn)") qb=0x$(printf %x "$(f "$B" qpn)")
	grep -qE "^rxe-a/$qa +RTS\* .* 10\.10\.0\.2/$qb( |\$)" "$tab"
	grep -qE "^rxe-b/$qb +RTS\* .* 10\.10\.0\.1/$qa( |\$)" "$tab"
	# ... once each: a destroyed QP leaves the table after that row
	[ "$(grep -cE "^rxe-a/$qa +[A-Z]+\* " "$tab")" -eq 1 ]
	[ "$(grep -cE "^rxe-b/$qb +[A-Z]+\* " "$tab")" -eq 1 ]
	[ -z "$(awk 'length($0) > 80' "$tab")" ]
}

@test "REJECT of one QP's UDP port: its retransmit timer fires until retries run out and it goes to ERR; the others carry on" {
	local ev=$BATS_TEST_TMPDIR/ev.out out=$BATS_TEST_TMPDIR/j.out go=$BATS_TEST_TMPDIR/go
	local hpid fpid qa qb sport ha
	snap_counters "$BATS_TEST_TMPDIR/before"
	start_rxeqp QP_EV "$ev" -e -j
	start_rxeqp QP_J "$out" -j 1
	# H: healthy, long timeout (~1 s: few spurious timer firings); F: 3
	# retries of ~17 ms, waits for the firewall rule before sending
	ax_bg "$RC" -t 18 -n 4000 -d 8 -T 120 -w "$go" >"$BATS_TEST_TMPDIR/h.out"
	hpid=$AX_LAST_PID
	ax_bg "$RC" -p 1 -r 3 -t 12 -T 60 -w "$go" >"$BATS_TEST_TMPDIR/f.out"
	fpid=$AX_LAST_PID
	ax_wait_for "$BATS_TEST_TMPDIR/h.out" ready 30
	ax_wait_for "$BATS_TEST_TMPDIR/f.out" ready 30
	read -r qa qb sport < <(sed -n 's/^ready qpn_a=\(0x[0-9a-f]*\) qpn_b=\(0x[0-9a-f]*\) sport=\([0-9]*\)$/\1 \2 \3/p' "$BATS_TEST_TMPDIR/f.out")
	qa=$((qa)) qb=$((qb))
	ha=$(($(sed -n 's/^ready qpn_a=\(0x[0-9a-f]*\).*/\1/p' "$BATS_TEST_TMPDIR/h.out")))
	reject_sport "$sport"
	touch "$go"
	local frc=0
	wait "$fpid" || frc=$?	# rc_client bounds itself (-T)
	cat "$BATS_TEST_TMPDIR/f.out"
	[ "$frc" -eq 3 ]
	grep -q 'status=12 ' "$BATS_TEST_TMPDIR/f.out"	# IBV_WC_RETRY_EXC_ERR
	wait "$hpid" || true
	cat "$BATS_TEST_TMPDIR/h.out"
	grep -q '^done ok=4000 err=0 ' "$BATS_TEST_TMPDIR/h.out"
	wait_gone "$out"
	snap_counters "$BATS_TEST_TMPDIR/after"
	stop_rxeqp QP_EV
	stop_rxeqp QP_J

	# F's requester on rxe-a: one firing per retry plus the last, then ERR
	# (by rxe, not by the application), with RETRY_EXC_ERR
	local ev_f ev_h
	ev_f=$(jq -c --argjson q "$qa" 'select(.ifname == "veth-a" and .qpn == $q)' "$ev")
	[ "$(jq -s '[.[] | select(.event == "retx_timer")] | length' <<<"$ev_f")" -ge 4 ]
	jq -e -s 'any(.[]; .event == "state" and .old_state == "RTS" and .new_state == "ERR" and .cause == "rxe")' <<<"$ev_f"
	jq -e -s 'any(.[]; .event == "cqe_err" and .status == "RETRY_EXC_ERR")' <<<"$ev_f"
	# the firings came before the error, counting the retries down
	jq -e -s 'any(.[]; .event == "retx_timer" and .retries_left == 0)' <<<"$ev_f"
	# the correlation key names the port the firewall matched
	[ "$(f "$(qp "$out" veth-a "$qa")" sport)" -eq "$sport" ]
	[ "$(f "$(qp "$out" veth-a "$qa")" state)" = ERR ]
	[ "$(f "$(qp "$out" veth-a "$qa")" retries)" -eq 3 ]
	[ "$(delta "$BATS_TEST_TMPDIR"/{before,after} rxe-a retry_exceeded_err)" -eq 1 ]

	# F's responder on rxe-b got nothing and never arms a retransmit timer
	[ "$qa" -ne "$qb" ]
	[ "$(f "$(qp "$out" veth-b "$qb")" rx_pkts)" -eq 0 ]
	[ "$(jq -s --argjson q "$qb" 'any(.[]; .ifname == "veth-b" and .qpn == $q and (.event == "retx_timer" or .new_state == "ERR"))' "$ev")" = false ]

	# H, through the same veth at the same time, neither erred nor fired as
	# often while F was failing
	ev_h=$(jq -c --argjson q "$ha" 'select(.ifname == "veth-a" and .qpn == $q)' "$ev")
	[ "$(jq -s 'any(.[]; .event == "cqe_err" or .new_state == "ERR")' <<<"$ev_h")" = false ]
	local t0 t1
	t0=$(jq -s 'map(select(.event == "retx_timer")) | first.time' <<<"$ev_f")
	t1=$(jq -s 'map(select(.event == "state" and .new_state == "ERR")) | first.time' <<<"$ev_f")
	[ "$(jq -s --argjson a "$t0" --argjson b "$t1" '[.[] | select(.event == "retx_timer" and .time >= $a - 0.1 and .time <= $b)] | length' <<<"$ev_h")" -lt 4 ]
	[ "$(f "$(qp "$out" veth-a "$ha")" cqe_errs)" -eq 0 ]
}

@test "RNR: SENDs without receive buffers are RNR-NAKed by the responder QP and retried by the requester QP until rnr_retry runs out" {
	local out=$BATS_TEST_TMPDIR/j.out qa qb A B
	snap_counters "$BATS_TEST_TMPDIR/before"
	start_rxeqp RXEQP_PID "$out" -j 1
	run "$RC" -o send -q -R 2 -m 1 -n 4 -p 1 -T 60
	echo "$output"
	[ "$status" -eq 3 ]
	[[ $output == *"status=13 "* ]]	# IBV_WC_RNR_RETRY_EXC_ERR
	read -r qa qb < <(sed -n 's/^ready qpn_a=\(0x[0-9a-f]*\) qpn_b=\(0x[0-9a-f]*\).*/\1 \2/p' <<<"$output")
	wait_gone "$out"
	snap_counters "$BATS_TEST_TMPDIR/after"
	stop_rxeqp RXEQP_PID
	A=$(qp "$out" veth-a $((qa)))
	B=$(qp "$out" veth-b $((qb)))
	echo "A=$A"
	echo "B=$B"
	# rnr_retry 2: two RNR timer waits, the third RNR NAK ends it
	[ "$(f "$B" rnr_nak_sent)" -eq 3 ]
	[ "$(f "$A" rnr_nak_rcvd)" -eq "$(f "$B" rnr_nak_sent)" ]
	[ "$(f "$A" rnr_timer)" -eq 2 ]
	[ "$(f "$A" rnr_nak_sent)" -eq 0 ]
	[ "$(f "$B" rnr_nak_rcvd)" -eq 0 ]
	[ "$(f "$B" rnr_nak_sent)" -eq "$(delta "$BATS_TEST_TMPDIR"/{before,after} rxe-b send_rnr_err)" ]
	[ "$(f "$A" rnr_nak_rcvd)" -eq "$(delta "$BATS_TEST_TMPDIR"/{before,after} rxe-a rcvd_rnr_err)" ]
	[ "$(f "$A" state)" = ERR ]
	[ "$(f "$B" state)" = RTS ]
	# one error completion, the other three flushed
	[ "$(f "$A" cqe_errs)" -eq 1 ]
	[ "$(f "$A" cqe_flushes)" -eq 3 ]
}

@test "netem loss on veth-a: retransmits on the QP whose requests cross it, and rxeqp's per-QP losses add up to netem's drops" {
	local out=$BATS_TEST_TMPDIR/j.out xa xb ya yb X XB Y YA dropped lost_x lost_acks n=300
	start_rxeqp RXEQP_PID "$out" -j 1
	tc qdisc add dev veth-a root netem loss 3%
	# X writes rxe-a -> rxe-b (its requests cross veth-a), Y the other way
	# (only its ACKs cross veth-a); retry_cnt 7 retries forever, 1 s timer
	ax_bg "$RC" -t 18 -r 7 -n "$n" -s 16384 -T 150 >"$BATS_TEST_TMPDIR/x.out"
	local xpid=$AX_LAST_PID
	ax_bg "$RC" -a rxe-b -b rxe-a -t 18 -r 7 -n "$n" -s 16384 -T 150 >"$BATS_TEST_TMPDIR/y.out"
	local ypid=$AX_LAST_PID
	local xrc=0 yrc=0
	wait "$xpid" || xrc=$?	# rc_client bounds itself (-T)
	wait "$ypid" || yrc=$?
	cat "$BATS_TEST_TMPDIR"/{x,y}.out
	[ "$xrc" -eq 0 ]
	[ "$yrc" -eq 0 ]
	dropped=$(tc -s qdisc show dev veth-a | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p')
	tc qdisc del dev veth-a root
	wait_gone "$out"
	stop_rxeqp RXEQP_PID
	read -r xa xb < <(sed -n 's/^ready qpn_a=\(0x[0-9a-f]*\) qpn_b=\(0x[0-9a-f]*\).*/\1 \2/p' "$BATS_TEST_TMPDIR/x.out")
	read -r ya yb < <(sed -n 's/^ready qpn_a=\(0x[0-9a-f]*\) qpn_b=\(0x[0-9a-f]*\).*/\1 \2/p' "$BATS_TEST_TMPDIR/y.out")
	X=$(qp "$out" veth-a $((xa)))
	XB=$(qp "$out" veth-b $((xb)))
	Y=$(qp "$out" veth-b $((ya)))
	YA=$(qp "$out" veth-a $((yb)))
	printf '%s\n' "X=$X" "XB=$XB" "Y=$Y" "YA=$YA" "netem dropped $dropped"

	# 16 KiB writes: 16 packets each, every one sent once plus retransmissions
	[ $(($(f "$X" tx_req_pkts) - $(f "$X" retx_pkts))) -eq $((n * 16)) ]
	[ $(($(f "$Y" tx_req_pkts) - $(f "$Y" retx_pkts))) -eq $((n * 16)) ]
	# what netem dropped on veth-a: X's requests and Y's ACKs, nothing else
	# RoCE; seen per QP as sent here, not received there
	lost_x=$(($(f "$X" tx_req_pkts) - $(f "$XB" rx_req_pkts)))
	lost_acks=$(($(f "$YA" tx_acks) - $(f "$Y" rx_acks)))
	echo "lost: X requests $lost_x, Y ACKs $lost_acks"
	[ "$lost_x" -ge 1 ]
	[ $((lost_x + lost_acks)) -le "$dropped" ]
	[ $((lost_x + lost_acks)) -ge $((dropped - 5)) ]	# ARP/ND may meet netem too
	# each lost request was sent again; the responder's sequence NAKs all
	# reached X (they travel the clean direction)
	[ "$(f "$X" retx_pkts)" -ge "$lost_x" ]
	[ "$(f "$XB" seq_err_nak_sent)" -ge 1 ]
	[ "$(f "$X" seq_err_nak_rcvd)" -eq "$(f "$XB" seq_err_nak_sent)" ]
	# in proportion: X, whose data met the loss, retransmitted a larger
	# share of its requests than Y, which only lost ACKs
	[ $(($(f "$X" retx_pkts) * 1000 / $(f "$X" tx_req_pkts))) -gt $(($(f "$Y" retx_pkts) * 1000 / $(f "$Y" tx_req_pkts))) ]
}

@test "kprobe fallback: same per-QP counts and state events, -i filter, text events" {
	local out=$BATS_TEST_TMPDIR/j.out ev=$BATS_TEST_TMPDIR/ev.out qa qb A
	start_rxeqp QP_J "$out" --kprobe -j -i veth-a 1
	grep -q 'via kprobe' "$out.err"
	start_rxeqp QP_EV "$ev" --kprobe -e -T
	grep -q 'via kprobe' "$ev"
	run "$RC" -o send -n 50 -s 1024 -T 60
	echo "$output"
	[ "$status" -eq 0 ]
	read -r qa qb < <(sed -n 's/^ready qpn_a=\(0x[0-9a-f]*\) qpn_b=\(0x[0-9a-f]*\).*/\1 \2/p' <<<"$output")
	wait_gone "$out"
	stop_rxeqp QP_J
	stop_rxeqp QP_EV
	A=$(qp "$out" veth-a $((qa)))
	echo "A=$A"
	[ "$(f "$A" tx_reqs)" -eq 50 ]
	[ $(($(f "$A" tx_req_pkts) - $(f "$A" retx_pkts))) -eq 50 ]
	[ "$(f "$A" cqes)" -eq 50 ]
	[ "$(f "$A" destroyed)" = true ]
	# -i veth-a: nothing of rxe-b
	[ "$(jq -s 'any(.[]; .ifname != "veth-a")' "$out")" = false ]
	# state changes as text, with time, QP, transition and peer
	cat "$ev"
	grep -qE "^[0-9:]{8} rxe-a/$qa +state +RESET -> INIT \(modify_qp\)" "$ev"
	grep -qE "^[0-9:]{8} rxe-a/$qa +state +RTR -> RTS \(modify_qp\)  peer 10\.10\.0\.2/$qb$" "$ev"
	grep -qE "^[0-9:]{8} rxe-b/$qb +destroy " "$ev"
}

# every namespace numbers its devices from 1: a twin of veth-a (the same
# interface index, in namespace axqn) under rxe devices of their own, whose
# QPs have the same numbers as rxe-a's (every rxe device numbers from 17)
twin_rxe() {
	local idx
	idx=$(cat /sys/class/net/veth-a/ifindex)
	ip netns add axqn
	AX_NETNS+=(axqn)
	ip -n axqn link set lo up
	ip -n axqn link add axqva index "$idx" type veth peer name axqvb
	ip -n axqn addr add 10.213.0.1/24 dev axqva
	ip -n axqn addr add 10.213.0.2/24 dev axqvb
	ip -n axqn link set axqva up
	ip -n axqn link set axqvb up
	ip netns exec axqn rdma link add rxe-axqa type rxe netdev axqva
	ip netns exec axqn rdma link add rxe-axqb type rxe netdev axqvb
	[ "$(ip -n axqn -o link show axqva | cut -d: -f1)" = "$idx" ]
}

@test "-i is scoped by namespace: QPs of an rxe device on the same interface index elsewhere never count" {
	local out=$BATS_TEST_TMPDIR/ns.out all=$BATS_TEST_TMPDIR/all.out qa A
	twin_rxe
	# the control: without -i, rxeqp sees the twin's QPs
	start_rxeqp QP_ALL "$all" -j 1
	start_rxeqp RXEQP_PID "$out" -j -i veth-a 1
	# the twin's QP pair is made (6.1's rdma_rxe resolves its peer in
	# the initial namespace only, so its connection may time out: the
	# QPs exist either way, on rxe-axqa, over the same interface index)
	ip netns exec axqn "$RC" -a rxe-axqa -b rxe-axqb -o send -n 50 -s 1024 -T 10 || true
	ax_until 60 "the control's rows of rxe-axqa's QPs" \
		jq -e -s 'any(.[]; .type == "qp" and .dev == "rxe-axqa")' "$all"
	stop_rxeqp QP_ALL
	run "$RC" -o send -n 50 -s 1024 -T 60
	echo "$output"
	[ "$status" -eq 0 ]
	read -r qa < <(sed -n 's/^ready qpn_a=\(0x[0-9a-f]*\) .*/\1/p' <<<"$output")
	wait_gone "$out"
	stop_rxeqp RXEQP_PID
	# only rxe-a's QPs, and its QP's counts exactly rc_client's
	[ "$(jq -s 'any(.[]; .type == "qp" and .dev != "rxe-a")' "$out")" = false ]
	A=$(qp "$out" veth-a $((qa)))
	echo "A=$A"
	[ "$(f "$A" tx_reqs)" -eq 50 ]
	[ "$(f "$A" cqes)" -eq 50 ]
}
