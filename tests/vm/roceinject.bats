#!/usr/bin/env bats
# roceinject against real rdma_rxe in the Soft-RoCE guest, with rxedrop
# naming which of rxe's silent receive checks dropped each packet.
#
# rdma_rxe's rxe_rcv frees a packet that fails one of its checks with
# kfree_skb, reason NOT_SPECIFIED, whichever check it was. roceinject
# makes exactly N packets fail one check on purpose (--count N, on
# veth-a's egress: ib_write_bw's requests from rxe-a to rxe-b); rxedrop,
# hooked on rxe_rcv and the checks that are functions of their own, must
# count N drops at rxe_rcv, each named by that check and no other:
#   --corrupt-icrc     rxe_icrc_check      rxe:icrc
#   --rewrite-qpn      no QP of that QPN   rxe:no_qp
#   --rewrite-pkey     check_keys          rxe:pkey_qkey
#   --truncate 8       the length check    rxe:header (inlined: by elimination)
# rxe retransmits the lost requests (retry_cnt 7: forever), so perftest
# completes once the injector stops at N.

load ../lib/common
load ../lib/vm_rocelat

INJ=$AX_BUILD/roceinject
RXEDROP=$AX_BUILD/rxedrop
WAIT=120	# s: a tool's load under TCG, perftest's server start
N=5

setup_file() {
	ax_file_needs --rxe rdma ib_write_bw jq timeout stdbuf "$INJ" "$RXEDROP" || return 0
}

setup() {
	rl_setup
}

teardown() {
	ax_file_ran || return 0
	perf_stop
}

teardown_file() {
	bed_down
}

# inject NAME FAULT...: roceinject on veth-a's requests, N packets with
# FAULT, during one ib_write_bw; its JSON in $T/NAME.inj
inject() {
	local name=$1
	shift
	ax_tool_start --err INJ_PID "$T/$name.inj" "$WAIT" '^Injecting' \
		"$INJ" -i veth-a --class requests --count "$N" -j "$@"
	perf_run "$name" ib_write_bw -s 1024 -t 1 -n 20 -F
	ax_until 10 "the count notice" grep -q -- "--count $N reached" "$T/$name.inj.err"
	ax_tool_stop INJ_PID
}

# injected FILE FAULT: what roceinject counts of FAULT over all its QPs
injected() {
	jq -s "[.[] | select(.type == \"qp\")] | group_by(.dqpn) | map(.[-1].$2) | add // 0" "$1"
}

@test "rxe's silent checks named: N packets with a bad ICRC, an unknown QPN, a wrong P_Key, a truncated BTH, each counted by rxedrop at rxe_rcv as that check" {
	bed_up
	ax_tool_start --err DROPS_PID "$T/drops" "$WAIT" Tracing "$RXEDROP" -j
	grep -q "receive checks named (fexit" "$T/drops.err" || { cat "$T/drops.err" >&2; false; }

	inject icrc --corrupt-icrc
	inject qpn --rewrite-qpn 0xabcde
	inject pkey --rewrite-pkey 0x1234
	inject trunc --truncate 8
	ax_tool_stop DROPS_PID

	local icrc qpn pkey trunc
	icrc=$(injected "$T/icrc.inj" icrc)
	qpn=$(injected "$T/qpn.inj" qpn)
	pkey=$(injected "$T/pkey.inj" pkey)
	trunc=$(injected "$T/trunc.inj" truncate)
	run jq -s -r '[.[] | select(.type == "drop_count")] |
		(map(select(.location == "rxe_rcv")) | group_by(.rxe_check) |
			map("\(.[0].rxe_check)=\(map(.count) | add)") | join(" ")),
		(map(select(.location != "rxe_rcv")) | map(.count) | add // 0),
		(map(select(.location != "rxe_rcv")) | group_by([.location, .reason]) |
			map("\(.[0].location)/\(.[0].reason)=\(map(.count) | add)") | join(" "))' "$T/drops"
	measured "injected icrc $icrc qpn $qpn pkey $pkey truncate $trunc; rxedrop at rxe_rcv: ${lines[0]}; elsewhere ${lines[1]} ${lines[2]:-}"
	[ "$icrc" -eq "$N" ] && [ "$qpn" -eq "$N" ] && [ "$pkey" -eq "$N" ] && [ "$trunc" -eq "$N" ]
	[ "${lines[0]}" = "header=$N icrc=$N no_qp=$N pkey_qkey=$N" ]
	[ "${lines[1]}" -eq 0 ]
	# perftest completed every iteration despite the losses
	local f
	for f in icrc qpn pkey trunc; do
		[ "$(perf_result "$T/$f.cli" 2)" -eq 20 ]
	done
}
