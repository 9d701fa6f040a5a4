#!/usr/bin/env bats
# samples/: recordings the suite made from its own bytes (rocegen between
# two namespaces, tcpdump on the veth; samples/make-samples.sh), installed
# with the package for `rocelat -r`. rocelat's counts must equal those of
# the requester that made them (its --flow-stats, next to each recording),
# and the recipe must still make a recording with the same properties.

bats_require_minimum_version 1.5.0
load ../lib/common

# the requester's per-flow KEY for source port SPORT, from rocegen's TXT
truth() {
	sed -nE "s/^rocegen: role=requester-flow sport=$2 .* $3=([0-9]+)( .*|$)/\1/p" "$1"
}
# rocelat's JSON flow record field KEY for SPORT
flow() {
	jq -r "select(.type == \"flow\" and .sport == $2) | .$3" <<< "$1"
}

# check_sample PCAP TXT: rocelat -r's flows and counters against rocegen's
check_sample() {
	local pcap=$1 txt=$2 out total retx naks s
	out=$("$AX_BUILD/rocelat" -r "$pcap" -F -j)
	cat "$txt" >&2
	jq -c 'select(.type == "flow") | {sport, samples, retransmits, naks, timeouts, untimed}' <<< "$out" >&2
	[ "$(jq -r 'select(.type == "flow") | .sport' <<< "$out" | sort | paste -sd' ')" = "49152 49153 49154" ]
	for s in 49152 49153 49154; do
		# every retransmission and NAK the requester counted, per flow
		[ "$(flow "$out" $s retransmits)" -eq "$(truth "$txt" $s retransmits)" ]
		[ "$(flow "$out" $s naks)" -eq "$(truth "$txt" $s naks)" ]
		[ "$(flow "$out" $s timeouts)" -eq 0 ]
	done
	# the clean flows: every message timed
	[ "$(flow "$out" 49152 samples)" -eq "$(truth "$txt" 49152 completed)" ]
	[ "$(flow "$out" 49153 samples)" -eq "$(truth "$txt" 49153 completed)" ]
	# the lossy one: fewer (Karn), more than none
	[ "$(flow "$out" 49154 samples)" -lt "$(truth "$txt" 49154 completed)" ]
	[ "$(flow "$out" 49154 samples)" -gt 0 ]
	# every RoCE packet of the recording: sent + retransmitted requests,
	# ACKs and NAKs, as the requester counted them
	total=$(sed -nE 's/^rocegen: role=requester .* sent=([0-9]+) retransmits=([0-9]+) .* acks=([0-9]+) dup_acks=([0-9]+) naks=([0-9]+) .*/\1 + \2 + \3 + \4 + \5/p' "$txt")
	[ "$(jq -r 'select(.type == "counters") | .roce_packets' <<< "$out")" -eq $((total)) ]
	# the responder's 2 ms on 49153: its p50, and the outlier line
	awk -v m="$(flow "$out" 49153 p50)" 'BEGIN { exit !(m >= 2000 && m < 3000) }'
	[ "$(jq -r 'select(.type == "outlier") | .sport' <<< "$out")" = 49153 ]
}

@test "samples/rocegen-3flows.pcap: rocelat -r counts what the requester that made it counted" {
	command -v jq >/dev/null || skip "jq not installed"
	[ -s "$AX_ROOT/samples/rocegen-3flows.pcap" ]
	check_sample "$AX_ROOT/samples/rocegen-3flows.pcap" "$AX_ROOT/samples/rocegen-3flows.txt"
	# and the text table a reader tries first names the slow flow
	run "$AX_BUILD/rocelat" -r "$AX_ROOT/samples/rocegen-3flows.pcap" -F
	[ "$status" -eq 0 ]
	[[ "$output" == *"OUTLIER: 10.204.0.1 -> 10.204.0.2 qpn 0x12 sport 49153: "* ]]
}

@test "samples/make-samples.sh makes a recording with the same properties, and leaves nothing behind" {
	ax_need_root
	command -v jq >/dev/null || skip "jq not installed"
	command -v tcpdump >/dev/null || skip "tcpdump not installed"
	local before
	before=$(ip netns list | sort)
	run bash "$AX_ROOT/samples/make-samples.sh" "$BATS_TEST_TMPDIR"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	check_sample "$BATS_TEST_TMPDIR/rocegen-3flows.pcap" "$BATS_TEST_TMPDIR/rocegen-3flows.txt"
	[ "$(ip netns list | sort)" = "$before" ]
}
