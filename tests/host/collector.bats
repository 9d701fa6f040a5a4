#!/usr/bin/env bats
# rocediag --mirror, a collector: rocegen's traffic on a veth mirrored by
# tc (mirred) into VXLAN towards a collector namespace (tests/lib/mirror.bash,
# as a switch's remote mirror session), rocediag --mirror on the
# collector's NIC. Its verdicts rest on latency alone: the flow the
# responder delays is SLOW, the others OK; drops, rules and rdma_rxe are
# said to be no collector's; it counts the RoCE packets rocelat on the
# mirrored veth itself counts.

bats_require_minimum_version 1.5.0
load ../lib/common
load ../lib/mirror

DIAG=$AX_BUILD/rocediag
RL=$AX_BUILD/rocelat
GEN=$AX_BUILD/rocegen
WAIT=15
P=axcol
A=10.226.0.1
B=10.226.0.2

setup_file() {
	[ -z "${AGENTXDP_VM:-}" ] || { export AX_FILE_SKIP="host-only: tests/vm/mirror.bats runs live mirrors in the guest"; return 0; }
	ax_file_needs jq "$DIAG" "$RL" "$GEN" || return 0
}

setup() {
	ax_file_skip
	T=$BATS_TEST_TMPDIR
}

teardown() {
	mirror_cleanup
	ax_cleanup
}

# the last JSON object of type $2 in $1
last_of() {
	jq -c "select(.type==\"$2\")" "$1" | tail -1
}

@test "rocediag --mirror on a collector's NIC: the delayed flow SLOW, the others OK, RoCE counted as on the veth, the host's sources 'not on a collector'" {
	local prom=$T/col.prom qp
	ax_netns_pair $P $A/24 $B/24
	ip netns exec ${P}a tc actions add action mirred egress mirror dev lo index 77 2>"$T/mirred.err" ||
		skip "tc mirred (act_mirred) not available on $(uname -r): $(cat "$T/mirred.err")"
	ip netns exec ${P}a tc actions del action mirred index 77
	mirror_collector ${P}a ${P}c 10.227.0.1 10.227.0.2
	mirror_tunnel ${P}a vxlan vxc 10.227.0.1 10.227.0.2 4244
	mirror_session ${P}a ${P}va vxc

	ax_bg ip netns exec ${P}b "$GEN" responder -q --timeout 60 --delay-us 300 --delay-us 49153=20000
	local resp=$AX_LAST_PID
	ax_wait_udp ${P}b 4791
	ax_tool_start --err DG "$T/diag.out" 90 '^Tracing' \
		ip netns exec ${P}c "$DIAG" -i ${P}cc --mirror -j --prom "$prom"
	ax_tool_start --err VL "$T/veth.out" 30 '^Tracing' ip netns exec ${P}a "$RL" -i ${P}va -j
	# the banner: no hardware RNIC line on a mirror port
	! grep -q 'hardware RNIC' "$T/diag.out.err"
	ip netns exec ${P}a "$GEN" requester -q -d $B -f 3 -n 90 --window 1 \
		--ack-timeout-us 500000 --timeout 30 > "$T/req.out"
	mirror_drained ${P}a vxc ${P}c ${P}cc
	mirror_session_end ${P}a ${P}va
	ax_tool_stop DG
	ax_tool_stop VL
	ax_stop "$resp" INT
	cat "$T/diag.out" >&2

	# three QPs from A to B, each under its path
	[ "$(jq -c 'select(.type=="qp")' "$T/diag.out" | wc -l)" -eq 3 ]
	for qp in 49152 49154; do
		[ "$(jq -r "select(.type==\"qp\" and .sport==$qp) | [.req, .resp, .verdict] | join(\" \")" "$T/diag.out")" = "$A $B OK" ]
	done
	qp=$(jq -c 'select(.type=="qp" and .sport==49153)' "$T/diag.out")
	[ "$(jq -r '[.req, .resp, .verdict] | join(" ")' <<<"$qp")" = "$A $B SLOW" ]
	jq -e '.latency.p50_us >= 20000 and .latency.kind == "rtt" and (.drops == null) and (.rxe == null)' <<<"$qp" > /dev/null
	# what it cannot see, and why
	[ "$(last_of "$T/diag.out" summary | jq -r '.cannot_see | join("|")')" = \
	  "drops: not on a collector (--mirror)|netfilter rules: not on a collector (--mirror)|rdma_rxe QP state: not on a collector (--mirror)|RDMA ports and QPs: not on a collector (--mirror)|work requests: not on a collector (--mirror)" ]
	grep -qx 'agentxdp_rocediag_source_up{source="latency"} 1' "$prom"
	grep -qx 'agentxdp_rocediag_source_info{source="drops",reason="drops: not on a collector (--mirror)",off_by_option="true",absent="false"} 1' "$prom"
	grep -qx 'agentxdp_rocediag_source_info{source="rules",reason="netfilter rules: not on a collector (--mirror)",off_by_option="true",absent="false"} 1' "$prom"
	grep -qx 'agentxdp_rocediag_source_info{source="rdma_rxe",reason="rdma_rxe QP state: not on a collector (--mirror)",off_by_option="true",absent="false"} 1' "$prom"
	grep -qx 'agentxdp_rocediag_source_info{source="rdma",reason="RDMA ports and QPs: not on a collector (--mirror)",off_by_option="true",absent="false"} 1' "$prom"
	grep -qx 'agentxdp_rocediag_source_info{source="verbs",reason="work requests: not on a collector (--mirror)",off_by_option="true",absent="false"} 1' "$prom"
	# every RoCE packet of the veth (both directions) reached it once
	[ "$(sed -n 's/^agentxdp_rocediag_roce_packets_total //p' "$prom")" = \
	  "$(last_of "$T/veth.out" counters | jq -r .roce_packets)" ]
	[ "$(last_of "$T/veth.out" counters | jq -r .roce_packets)" -ge 180 ]
}
