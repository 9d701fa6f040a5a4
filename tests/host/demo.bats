#!/usr/bin/env bats
# The README's first command, scripts/demo.sh: what it shows a newcomer is
# computed by the tools on its own test bed, and it leaves nothing behind.
# (The packages are installed by the test command already.)

load ../lib/common

setup() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "host-only: the demo's test bed is the host's"
	ax_need_root
}

# qp_line QPN [GREP_OPTION...]: the line of the test bed's QP to responder
# QPN in rocediag's screen
qp_line() {
	grep "${@:2}" -e "^QP 10\.203\.0\.1/[^ ]* -> 10\.203\.0\.2/$1 " <<< "$diag"
}

# the rocediag screen as a reader compares it: a line wrapped at 80 columns
# joined to the one it continues, only the test bed's QPs (rocediag sees
# drops host-wide) with their detail lines, every number N, every unit U
screen_shape() {
	awk '/^    / { sub(/^ +/, " "); l = l $0; next }
		{ if (NR > 1) print l; l = $0 } END { if (NR) print l }' |
		awk '/^QP / { keep = /^QP 10\.203\.0\.1\// }
			/^Tracing|^cannot see|^[0-9]+ QPs:/ { print; next }
			/^QP / && keep { print; next }
			/^  / && keep { print }' |
		sed -E -e 's/0x[0-9a-f]+/N/g' -e 's/[0-9]+(\.[0-9]+)?/N/g' \
			-e 's/N (us|ms|s)\b/N U/g' -e 's/ +/ /g'
}

@test "demo: rocediag names the slowed flow SLOW, the firewalled one DROPPED-LOCALLY with its rule and count, the clean one OK; rocelat the outlier" {
	local diag n retx
	run env AGENTXDP_DEMO_NO_SETUP=1 bash "$AX_ROOT/scripts/demo.sh"
	echo "$output"
	[ "$status" -eq 0 ]
	# rocediag's screen: from its banner to the requester's count. It sees
	# drops host-wide, so only the test bed's QPs (10.203.0.0/24) are ours;
	# a line wrapped at 80 columns joined to the one it continues
	diag=$(sed -n '/^Tracing RoCE v2 queue pairs/,/^== The requester/p' <<< "$output" |
		awk '/^    / { sub(/^ +/, " "); l = l $0; next }
			{ if (NR > 1) print l; l = $0 } END { if (NR) print l }')
	grep -qE '^[0-9]+ QPs: ' <<< "$diag"
	# README's sample of this screen is this screen: the same lines in
	# the same order, numbers aside (README's is of a host without
	# rdma_rxe, as this one's kernel has no modules)
	local readme
	readme=$(awk '/names both$/ { h = 1 } h && /^```$/ { n++; next } n == 1' "$AX_ROOT/README.md")
	[ -n "$readme" ]
	[ -e /sys/kernel/btf/rdma_rxe ] ||
		diff -u <(screen_shape <<< "$readme") \
			<(sed -n '/^Tracing RoCE v2 queue pairs/,/^== The requester/p' <<< "$output" |
			  sed '$d' | screen_shape) >&2
	[ "$(grep -c '^QP 10\.203\.0\.1/' <<< "$diag")" -eq 3 ]

	# the rule's own counter, as nft printed it after the rocediag run
	[[ "$(sed -n '/^== The rule.s own counter/,$p' <<< "$output")" =~ udp\ sport\ 49154\ udp\ dport\ 4791\ counter\ packets\ ([0-9]+)\  ]]
	n=${BASH_REMATCH[1]}
	[ "$n" -gt 0 ]
	# firewalled (requests from 49154 to QP 0x13): as many drops as the
	# counter, at nft_do_chain in the responder, and the exact rule
	qp_line 0x13 -A2 > "$BATS_TEST_TMPDIR/dropped"
	[[ "$(qp_line 0x13)" =~ ^QP\ 10\.203\.0\.1/[^\ ]+\ -\>\ 10\.203\.0\.2/0x13\ \(sport\ 49154\):\ DROPPED-LOCALLY\ ([0-9]+)\ packets\ dropped\ on\ this\ host,.*\ ([0-9]+)\ retransmits ]]
	[ "${BASH_REMATCH[1]}" -eq "$n" ]
	retx=${BASH_REMATCH[2]}
	grep -qx "  dropped: $n packets at nft_do_chain (NETFILTER_DROP) on axdemovb" "$BATS_TEST_TMPDIR/dropped"
	grep -qx '  by: inet demo_filter input handle [0-9]*: udp sport 49154 udp dport 4791 counter drop' "$BATS_TEST_TMPDIR/dropped"
	# its retransmits are the requester's own (rocegen's ground truth), and
	# every message of the other two flows completed
	[[ "$output" =~ requests=[0-9]+\ retransmits=$retx\ completed=200\  ]]
	# slowed (the responder delays 49153 by 5 ms, 49152 by 0.5 ms)
	[[ "$(qp_line 0x12)" =~ ^QP\ 10\.203\.0\.1/0x[0-9a-f]+\ -\>\ 10\.203\.0\.2/0x12\ \(sport\ 49153\):\ SLOW\ +p50\ ([0-9.]+)\ ms\ =\ [0-9.]+x ]]
	awk -v m="${BASH_REMATCH[1]}" 'BEGIN { exit !(m >= 4 && m < 16) }'
	[[ "$(qp_line 0x11)" =~ ^QP\ 10\.203\.0\.1/0x[0-9a-f]+\ -\>\ 10\.203\.0\.2/0x11\ \(sport\ 49152\):\ OK\ +p50\ [0-9.]+\ (us|ms),.*\ 0\ drops,\ 0\ retransmits ]]
	# what this kernel lacks is said, not guessed
	[ -e /sys/kernel/btf/rdma_rxe ] || grep -q '^cannot see rdma_rxe QP state: ' <<< "$diag"

	# rocelat alone on the same traffic: 49153 is the outlier, every
	# answered request timed
	[[ "$output" =~ OUTLIER:\ 10\.203\.0\.1\ -\>\ 10\.203\.0\.2\ qpn\ 0x12\ sport\ 49153\ .*median\ ([0-9.]+)\ ms ]]
	awk -v m="${BASH_REMATCH[1]}" 'BEGIN { exit !(m >= 4 && m < 16) }'
	[[ "$output" == *" acks=200"* ]]
	[[ "$output" == *" samples=200 "* ]]
	# it ends with what to run next, each a command the tools accept
	local next
	next=$(sed -n '/^== Next, on your own host/,$p' <<< "$output" | grep -E '^   (rocediag|rocelat|rxedrop) -')
	[ "$(wc -l <<< "$next")" -eq 3 ]
	while read -r tool opt _; do
		"$AX_BUILD/$tool" --help | grep -qE -- "(^|[ ,])$opt([ ,=]|$)" || { echo "$tool has no $opt" >&2; false; }
	done <<< "$next"
	# nothing of the test bed is left
	! ip netns list | grep -q '^axdemo'
}

@test "demo: installs the build and the test bed only, and builds no test (no scapy, qemu, prometheus, tshark)" {
	local pkgs extra
	pkgs=$(bash "$AX_ROOT/scripts/setup-deps.sh" --demo --list)
	# the demo's packages are the build's plus iproute2 and nftables
	extra=$(comm -13 <(bash "$AX_ROOT/scripts/setup-deps.sh" --list | sort) <(sort <<< "$pkgs"))
	[ -z "$extra" ]
	! grep -qxE 'qemu-system-x86|prometheus|tshark|python3-scapy|lintian|stress-ng|bpftrace|perftest' <<< "$pkgs"
	grep -qx nftables <<< "$pkgs"
	[ "$(wc -l <<< "$pkgs")" -lt 20 ]
	# what the demo builds needs none of the tests' generators
	run make -n -C "$AX_ROOT" OUTPUT="$BATS_TEST_TMPDIR/out" tools
	[ "$status" -eq 0 ]
	! grep -qE 'scapy|gen_[a-z_]*\.py|tests/' <<< "$output"
}
