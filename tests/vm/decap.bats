#!/usr/bin/env bats
# The decapsulating parser on Debian's 6.1 (the guest): its verifier is the
# one that rejected rocelat's handler with decapsulation inlined (1M
# instructions, then 544 bytes of stack over the call chain). The parser's
# own unit test, rocelat -r of its tunnel frames (also through the build
# for kernels without bpf_loop, whose inlined loops once went past this
# verifier's million instructions), and rocelat --mirror attached to a
# veth. The host runs the full mirror-capture suite
# (tests/host/rocelat_mirror.bats); scapy under emulation would take
# minutes here. The 5.10 guest loads no rocelat object (no BPF
# compare-and-exchange: kernels.bats), 6.12 the bpf_loop build.

bats_require_minimum_version 1.5.0
load ../lib/common
load ../lib/rocelat_bounded

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

@test "rocelat -r --in-kernel decapsulates on 6.1: the RoCE frames of the parser's test capture all counted, and the bounded-loop build (kernels 5.13-5.16) passes 6.1's verifier and reports them as the native and bpf_loop builds do, byte for byte" {
	local want n
	# decap.expect: one row per frame, column 4 the inner QPN where the
	# frame is RoCE (gen_decap.py's truth)
	want=$(awk -F'\t' '$4 != "-"' "$AX_BUILD/tests/decap.expect" | wc -l)
	n=$(ROCELAT_VERIFIER_STATS=1 rl_bounded_same "$AX_BUILD/tests/decap.pcap")
	grep -E '^processed [0-9]+ insns' "$BATS_TEST_TMPDIR/bounded.out.err" >&2
	output=$(cat "$BATS_TEST_TMPDIR/bounded.out")
	[ "$(jq -r 'select(.type=="counters") | .roce_packets' <<< "$output")" -eq "$want" ]
	[ "$(jq -r 'select(.type=="counters") | .tunnel_not_roce + .tunnel_unknown' <<< "$output")" -gt 0 ]
	# (the capture times no request: 0 samples; the claim is the equal
	# reports and the counts above)
	echo "decap.pcap: $n samples, the same report from the three builds" >&2
	[[ $n =~ ^[0-9]+$ ]]
}

@test "rocelat --mirror (XDP with decapsulation) loads and reports on 6.1" {
	ax_netns_pair axdc 10.91.0.1/24 10.91.0.2/24
	run -0 --separate-stderr ip netns exec axdca "$RL" -i axdcva --mirror -j 1 1
	[ "$(jq -r 'select(.type=="counters") | .roce_packets' <<< "$output")" -eq 0 ]
}
