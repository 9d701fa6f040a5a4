#!/usr/bin/env bats
# scripts/testbed.sh against real rdma_rxe. Runs inside the Soft-RoCE VM
# (tests/vm/run-suites), or as root on any host whose kernel has rdma_rxe;
# elsewhere every test skips.

load ../lib/common

TESTBED="$AX_ROOT/scripts/testbed.sh"
REJECT=(INPUT -i veth-b -p udp --dport 4791 -j REJECT)

setup_file() {
	ax_file_needs --rxe rdma ib_write_bw tcpdump iptables || return 0
}

setup() {
	ax_file_skip
}

teardown() {
	ax_file_ran || return 0
	# Whatever a test left behind, also when it failed half-way. Tests on a
	# working bed share one (KEEP_BED=1): up and down cost 10-20 s each
	# under emulation.
	iptables -D "${REJECT[@]}" 2>/dev/null || true
	[ "${KEEP_BED:-0}" -eq 1 ] || "$TESTBED" down >/dev/null 2>&1 || true
}

teardown_file() {
	ax_file_ran || return 0
	"$TESTBED" down >/dev/null 2>&1 || true
}

bed_up() {
	KEEP_BED=1
	"$TESTBED" up
}

# Everything up/down may touch, as text: routing rules, links, rdma links,
# the firewall, and the IPv4/IPv6 per-interface and global sysctls.
snapshot() {
	echo "== rules"
	ip -4 rule show
	ip -6 rule show
	echo "== links"
	ip -o link show | awk -F': ' '{ print $2 }' | sort
	echo "== rdma"
	rdma link show
	echo "== iptables"
	iptables -S
	echo "== sysctl"
	sysctl -a 2>/dev/null | grep -E '^net\.ipv[46]\.(conf|neigh)\.|^net\.ipv4\.(ip_forward|fib_)' | sort
}

counter() { # counter rxe-a/1 sent_pkts
	rdma statistic show link "$1" | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'
}

@test "down without up does nothing and succeeds" {
	snapshot >"$BATS_TEST_TMPDIR/before"
	run "$TESTBED" down
	[ "$status" -eq 0 ]
	[[ $output == *"nothing to do"* ]]
	snapshot >"$BATS_TEST_TMPDIR/after"
	diff -u "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "up twice then down restores rules, links, sysctls and firewall exactly" {
	# Load what up and reject will autoload, so the snapshots compare
	# configuration, not which modules happened to be loaded.
	iptables -S >/dev/null
	snapshot >"$BATS_TEST_TMPDIR/before"

	run "$TESTBED" up
	[ "$status" -eq 0 ]
	run "$TESTBED" up
	[ "$status" -eq 0 ]
	[[ $output == *"already up"* ]]

	# The policy routing is in place and the local lookup moved below it.
	run ip -4 rule show
	[[ $output == *"100:"*"from 10.10.0.1 to 10.10.0.2 iif lo lookup 101"* ]]
	[[ $output == *"1000:"*"from all lookup local"* ]]
	! grep -qE '^0:.*lookup local' <<<"$output"
	run ip -4 route get 10.10.0.2 from 10.10.0.1
	[[ $output == *"dev veth-a"* ]]
	[ "$(cat /proc/sys/net/ipv4/conf/veth-b/accept_local)" -eq 1 ]

	# down also removes the firewall rule that reject on added.
	run "$TESTBED" reject on
	[ "$status" -eq 0 ]
	iptables -C "${REJECT[@]}"

	run "$TESTBED" down
	echo "$output"
	[ "$status" -eq 0 ]
	[ ! -e /run/agentxdp-testbed ]
	snapshot >"$BATS_TEST_TMPDIR/after"
	diff -u "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "verify passes on a clean bed" {
	bed_up
	TESTBED_ITERS=50 run "$TESTBED" verify
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"verify: PASS"* ]]
}

@test "verify fails when an iptables REJECT eats UDP 4791 on veth-b" {
	bed_up
	iptables -I "${REJECT[@]}"
	# rxe retries forever (retry_cnt 7), so only the timeout ends the run.
	TESTBED_ITERS=50 TESTBED_TIMEOUT=15 run "$TESTBED" verify
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *"verify: FAIL"* ]]
	# The PASS that lied: RoCE was on the wire, yet nothing completed.
	grep -qE 'capture on veth-b: [1-9][0-9]* RoCE v2 packets' <<<"$output"
	[[ $output == *"ib_write_bw: 0 iterations completed"* ]]
}

@test "rdma port counters move with traffic" {
	bed_up
	local a_sent a_rcvd b_rcvd
	a_sent=$(counter rxe-a/1 sent_pkts)
	a_rcvd=$(counter rxe-a/1 rcvd_pkts)
	b_rcvd=$(counter rxe-b/1 rcvd_pkts)

	TESTBED_ITERS=50 TESTBED_SIZE=65536 run "$TESTBED" traffic
	echo "$output"
	[ "$status" -eq 0 ]

	# 50 writes of 64 KiB at MTU 1024 are at least 3200 request packets
	# (more with retransmissions), and every write's last packet is ACKed.
	local d_sent d_b d_a
	d_sent=$(($(counter rxe-a/1 sent_pkts) - a_sent))
	d_b=$(($(counter rxe-b/1 rcvd_pkts) - b_rcvd))
	d_a=$(($(counter rxe-a/1 rcvd_pkts) - a_rcvd))
	echo "rxe-a sent +$d_sent, rxe-b received +$d_b, rxe-a received +$d_a"
	[ "$d_sent" -ge 3200 ]
	[ "$d_b" -ge 3200 ]
	[ "$d_a" -ge 50 ]
}
