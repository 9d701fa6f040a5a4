#!/usr/bin/env bats
# Jumbo frames on the Soft-RoCE test bed: veth-a and veth-b at MTU 9000,
# rdma_rxe at RoCE MTU 4096 (ib_write_bw -m 4096), so that every request
# of a 64 KiB WRITE is a 4 KiB-payload frame of 4,170 bytes: more than a
# page holds with XDP's headroom, a multi-buffer frame for an XDP program
# with frags. rocelat (XDP ingress with frags where the kernel has them,
# 5.18+; tc ingress before, said in its banner) and roceinject (tc) are
# checked against rxe's own port counters and perftest's iterations;
# rocediag (rocelat's programs) likewise.

load ../lib/common
load ../lib/vm_rocelat

INJ=$AX_BUILD/roceinject
WAIT=120	# s: a tool's load under TCG, perftest's server start
N=5

setup_file() {
	ax_file_needs --rxe rdma ib_write_bw jq timeout stdbuf bpftool "$RL" "$INJ" \
		"$AX_BUILD/rocediag" || return 0
	bed_up
	ip link set dev veth-a mtu 9000
	ip link set dev veth-b mtu 9000
}

teardown_file() {
	if ax_file_ran; then
		ip link set dev veth-a mtu 1500 2>/dev/null || true
		ip link set dev veth-b mtu 1500 2>/dev/null || true
	fi
	bed_down
}

setup() {
	rl_setup
}

teardown() {
	ax_file_ran || return 0
	ax_tool_stop RL_PID || true
	ax_tool_stop DIAG_PID || true
	ax_tool_stop INJ_PID || true
	perf_stop
}

# the banner's ingress: XDP with frags where the kernel loads them (5.18+),
# else tc ingress with the reason
frags_kernel() {
	local v
	v=$(uname -r)
	v=${v%%-*}
	awk -v v="$v" 'BEGIN { split(v, a, "."); exit !(a[1] > 5 || (a[1] == 5 && a[2] >= 18)) }'
}

@test "MTU 9000, ib_write_bw -m 4096: rocelat sees every 4 KiB request rxe-a sent, times every WRITE; the banner says how" {
	local n=100 size=65536 out=$T/rl.out sent orig
	local -A c0 c1 r
	counters c0
	start_rocelat "$out" -j -F
	cat "$out.err"
	if frags_kernel; then
		grep -q "(XDP native with frags, MTU 9000, tc[x]* egress)" "$out.err"
	else
		grep -q "(tc[x]* ingress (XDP refused at MTU 9000), tc[x]* egress)" "$out.err"
		grep -q "^rocelat: note: XDP refused on veth-a at MTU 9000: " "$out.err"
	fi
	perf_run write ib_write_bw -n "$n" -s "$size" -m 4096 -t 8 -F
	stop_rocelat
	counters c1
	rl_load "$out" r
	# perftest ran at RoCE MTU 4096 and completed
	grep -Eq "^ *Mtu *: *4096" "$T/write.cli"
	[ "$(perf_result "$T/write.cli" 2)" -eq "$n" ]
	sent=$((${c1[rxe-a.sent_pkts]} - ${c0[rxe-a.sent_pkts]}))
	orig=$((n * size / 4096))
	echo "rxe-a sent $sent (originals $orig); rocelat requests ${r[c.requests]} retransmits ${r[c.retransmits]} tracked ${r[c.tracked]} samples ${r[c.samples]} parse_errors ${r[c.parse_errors]}"
	# rxe-a only requests here: every one of its packets seen, none
	# unparsed, and every packet beyond the originals a retransmission
	[ "${r[c.requests]}" -eq "$sent" ]
	[ "${r[c.parse_errors]}" -eq 0 ]
	[ "${r[c.retransmits]}" -eq $((sent - orig)) ]
	# one timed request per WRITE (AckReq on its last packet)
	[ "${r[c.tracked]}" -eq "$n" ]
	[ "${r[c.samples]}" -eq $((n - ${r[c.karn_discarded]})) ]
	# rxe-b's ACKs, one per AckReq request, all arrive at veth-a's ingress
	[ "${r[c.acks]}" -ge "$n" ]
	measured "MTU 9000/RoCE 4096: rxe-a sent $sent, rocelat requests ${r[c.requests]}, samples ${r[c.samples]} of $n WRITEs, acks ${r[c.acks]}"
}

# on veth-b's ingress: a drop on veth-a's egress would be seen by rxe-a
# (the send fails, it is sent again at once, and counted once)
@test "MTU 9000, ib_write_bw -m 4096: roceinject drops exactly $N of rxe-a's 4 KiB requests at veth-b; rxe-b receives exactly $N fewer than rxe-a sent" {
	local sent rcvd drops
	local -A c0 c1
	counters c0
	ax_tool_start --err INJ_PID "$T/drop.inj" "$WAIT" '^Injecting' \
		"$INJ" -i veth-b --direction ingress --class requests --count "$N" --drop -j
	perf_run drop ib_write_bw -s 65536 -m 4096 -t 1 -n 20 -F
	ax_until 10 "the count notice" grep -q -- "--count $N reached" "$T/drop.inj.err"
	ax_tool_stop INJ_PID
	counters c1
	grep -Eq "^ *Mtu *: *4096" "$T/drop.cli"
	[ "$(perf_result "$T/drop.cli" 2)" -eq 20 ]
	drops=$(jq -s '[.[] | select(.type == "qp")] | group_by(.dqpn) | map(.[-1].drop) | add // 0' "$T/drop.inj")
	sent=$((${c1[rxe-a.sent_pkts]} - ${c0[rxe-a.sent_pkts]}))
	rcvd=$((${c1[rxe-b.rcvd_pkts]} - ${c0[rxe-b.rcvd_pkts]}))
	echo "roceinject dropped $drops; rxe-a sent $sent, rxe-b received $rcvd"
	[ "$drops" -eq "$N" ]
	[ $((sent - rcvd)) -eq "$N" ]
	measured "MTU 9000/RoCE 4096: roceinject dropped $drops, rxe-a sent $sent, rxe-b received $rcvd"
}

@test "MTU 9000, ib_write_bw -m 4096: rocediag's QP of rxe-a: its resent packets exactly what rxe-a sent beyond the messages' own, every WRITE timed or discarded as a retransmission's" {
	local n=50 size=65536 sent orig q rl samples
	local -A c0 c1
	counters c0
	ax_tool_start DIAG_PID "$T/diag.out" 180 Tracing "$AX_BUILD/rocediag" -i veth-a --no-rules -j
	cat "$T/diag.out.err"
	if frags_kernel; then
		! grep -q "note: XDP refused" "$T/diag.out.err" || false
	fi
	perf_run diag ib_write_bw -n "$n" -s "$size" -m 4096 -t 8 -F
	ax_tool_stop DIAG_PID
	counters c1
	grep -Eq "^ *Mtu *: *4096" "$T/diag.cli"
	[ "$(perf_result "$T/diag.cli" 2)" -eq "$n" ]
	q=$(perf_qpn "$T/diag.cli" remote)
	jq -c "select(.type == \"qp\" and .req == \"$A\" and .resp_qpn == $q)" "$T/diag.out" | cut -c1-400
	rl=$(jq -r "select(.type == \"qp\" and .req == \"$A\" and .resp_qpn == $q) | .latency.retransmits" "$T/diag.out" | tail -1)
	samples=$(jq -r "select(.type == \"qp\" and .req == \"$A\" and .resp_qpn == $q) | .latency.samples" "$T/diag.out" | tail -1)
	sent=$((${c1[rxe-a.sent_pkts]} - ${c0[rxe-a.sent_pkts]}))
	orig=$((n * size / 4096))
	echo "rxe-a sent $sent (originals $orig); rocediag: retransmits $rl samples $samples"
	[ "$rl" -eq $((sent - orig)) ]
	[ "$samples" -le "$n" ]
	[ "$samples" -ge $((n - rl)) ]
	measured "MTU 9000/RoCE 4096: rocediag samples $samples of $n WRITEs, retransmits $rl = rxe-a's resent $((sent - orig))"
}
