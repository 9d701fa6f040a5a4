#!/usr/bin/env bats
# The decapsulating parser on Debian's 6.1 (the guest): its verifier is the
# one that rejected rocelat's handler with decapsulation inlined (1M
# instructions, then 544 bytes of stack over the call chain). The parser's
# own unit test, rocelat -r of its tunnel frames, and rocelat --mirror
# attached to a veth. The host runs the full mirror-capture suite
# (tests/host/rocelat_mirror.bats); scapy under emulation would take
# minutes here.

bats_require_minimum_version 1.5.0
load ../lib/common

RL=$AX_BUILD/rocelat

setup_file() {
	ax_file_needs --vm "$RL" "$AX_BUILD/tests/parse_decap" jq || return 0
}

setup() {
	ax_file_skip
}

teardown() {
	ax_file_ran || return 0
	ax_cleanup
}

@test "parse_decap on 6.1: every scapy-built tunnel frame parsed field by field" {
	run "$AX_BUILD/tests/parse_decap"
	echo "$output" | grep -v '^ok' >&2
	[ "$status" -eq 0 ]
	[ "$(grep -c '^not ok' <<< "$output")" -eq 0 ]
	[ "$(grep -c '^ok' <<< "$output")" -gt 100 ]
}

@test "rocelat -r --in-kernel decapsulates on 6.1: the RoCE frames of the parser's test capture all counted" {
	local want
	# decap.expect: one row per frame, column 4 the inner QPN where the
	# frame is RoCE (gen_decap.py's truth)
	want=$(awk -F'\t' '$4 != "-"' "$AX_BUILD/tests/decap.expect" | wc -l)
	run -0 --separate-stderr "$RL" -r "$AX_BUILD/tests/decap.pcap" -j --in-kernel
	[ "$(jq -r 'select(.type=="counters") | .roce_packets' <<< "$output")" -eq "$want" ]
	[ "$(jq -r 'select(.type=="counters") | .tunnel_not_roce + .tunnel_unknown' <<< "$output")" -gt 0 ]
}

@test "rocelat --mirror (XDP with decapsulation) loads and reports on 6.1" {
	ax_netns_pair axdc 10.91.0.1/24 10.91.0.2/24
	run -0 --separate-stderr ip netns exec axdca "$RL" -i axdcva --mirror -j 1 1
	[ "$(jq -r 'select(.type=="counters") | .roce_packets' <<< "$output")" -eq 0 ]
}
