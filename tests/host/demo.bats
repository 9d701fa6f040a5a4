#!/usr/bin/env bats
# The README's first command, scripts/demo.sh: what it shows a newcomer is
# computed by the tools on its own test bed, and it leaves nothing behind.
# (The packages are installed by the test command already.)

load ../lib/common

setup() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "host-only: the demo's test bed is the host's"
	ax_need_root
}

@test "demo: rocelat names the 5 ms flow as the outlier, rxedrop the firewall rule's 100 drops" {
	run env AGENTXDP_DEMO_NO_SETUP=1 bash "$AX_ROOT/scripts/demo.sh"
	echo "$output"
	[ "$status" -eq 0 ]
	# the responder delays source port 49153 by 5 ms, 49152 by 0.5 ms
	[[ "$output" =~ OUTLIER:\ 10\.203\.0\.1\ -\>\ 10\.203\.0\.2\ qpn\ 0x12\ sport\ 49153\ .*median\ ([0-9.]+)\ ms ]]
	awk -v m="${BASH_REMATCH[1]}" 'BEGIN { exit !(m >= 4 && m < 16) }'
	# every one of the 200 requests was answered and timed
	[[ "$output" == *"requests=200 tracked=200 acks=200"* ]]
	[[ "$output" == *" samples=200 "* ]]
	# the nft rule drops the 100 requests, and rxedrop counts exactly those
	[ "$(awk '$2 == "NETFILTER_DROP" { print $3 }' <<< "$output")" -eq 100 ]
	# then one decoded line per packet, PSNs 1..5
	[ "$(grep -c 'RC_SEND_ONLY qp=0x12 psn=[1-5] nft_do_chain+0x[0-9a-f]* NETFILTER_DROP$' <<< "$output")" -eq 5 ]
	# nothing of the test bed is left
	! ip netns list | grep -q '^axdemo'
}
