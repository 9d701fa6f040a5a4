#!/usr/bin/env bats
# rxedrop against real rdma_rxe traffic, in the Soft-RoCE guest: the seed's
# "Wall 2", an iptables INPUT REJECT of UDP 4791 on veth-b while ib_write_bw
# runs, must come out as NETFILTER_DROP (named from this kernel's BTF) on
# veth-b, as many times as the rule's own counter says it matched.
# tests/host/rxedrop.bats runs in the guest too (tests/vm/run-suites), with
# packets from a UDP socket; this file is the rdma_rxe case.

load ../lib/common

RXEDROP=$AX_BUILD/rxedrop
TESTBED=$AX_ROOT/scripts/testbed.sh

setup_file() {
	ax_file_needs --rxe rdma ib_write_bw iptables jq bpftool "$RXEDROP" || return 0
}

setup() {
	ax_file_skip
	COUNTS=$BATS_TEST_TMPDIR/counts
	EVENTS=$BATS_TEST_TMPDIR/events
}

teardown() {
	ax_file_ran || return 0
	ax_cleanup
	"$TESTBED" down >/dev/null 2>&1 || true
}

# packets the REJECT rule matched, by its own counter
reject_packets() {
	iptables -L INPUT -v -x -n | awk '/REJECT/ && /veth-b/ && /dpt:4791/ { print $1 }'
}

@test "Wall 2: the iptables REJECT of UDP 4791 during ib_write_bw is NETFILTER_DROP on veth-b, counted as the rule counts" {
	"$TESTBED" up
	# two observers at once: in-kernel counts (every RoCE drop on the
	# machine) and one event per drop on veth-b
	ax_bg "$RXEDROP" -j >"$COUNTS" 2>"$COUNTS.err"
	local counts_pid=$AX_LAST_PID
	ax_bg "$RXEDROP" -e -j -i veth-b >"$EVENTS" 2>"$EVENTS.err"
	local events_pid=$AX_LAST_PID
	ax_wait_for "$COUNTS.err" "Tracing" 120
	ax_wait_for "$EVENTS.err" "Tracing" 120
	"$TESTBED" reject on
	# rxe retries forever under the REJECT: only the timeout ends the run.
	# Under emulation perftest's server may listen too late for its
	# client: try again until RoCE has met the rule.
	local n=0
	for _ in 1 2 3; do
		TESTBED_TIMEOUT=20 TESTBED_ITERS=20 "$TESTBED" traffic || true
		n=$(reject_packets)
		[ "$n" -gt 0 ] && break
	done
	sleep 1
	ax_stop "$counts_pid" INT
	[ "$AX_RC" -eq 0 ] || { cat "$COUNTS.err"; false; }
	ax_stop "$events_pid" INT
	[ "$AX_RC" -eq 0 ] || { cat "$EVENTS.err"; false; }
	n=$(reject_packets)
	echo "rule counter: $n"
	[ "$n" -gt 0 ]

	# the reason code, from this kernel's BTF (6.1 and 6.18 differ)
	code=$(bpftool btf dump file /sys/kernel/btf/vmlinux |
		sed -n "s/.*'SKB_DROP_REASON_NETFILTER_DROP' val=\([0-9]*\).*/\1/p")
	[ -n "$code" ]

	# counts mode: every RoCE drop on the machine is this rule's
	jq -c 'select(.type == "drop_count")' "$COUNTS"
	run jq -s -r '[.[] | select(.type == "drop_count")] |
		(map(select(.reason == "NETFILTER_DROP")) | map(.count) | add // 0),
		(map(select(.reason != "NETFILTER_DROP")) | map(.count) | add // 0),
		(map(select(.reason == "NETFILTER_DROP")) | map(.reason_code) | unique | join(","))' "$COUNTS"
	[ "${lines[*]}" = "$n 0 $code" ]

	# events: one per packet the rule matched, each a RoCE v2 packet from
	# rxe-a to rxe-b arriving on veth-b, a request of an RDMA WRITE
	run jq -s -r 'map(select(.type == "drop")) |
		length,
		(map(select(.reason == "NETFILTER_DROP" and .reason_code == '"$code"' and
			.ifname == "veth-b" and .saddr == "10.10.0.1" and .daddr == "10.10.0.2" and
			.dport == 4791)) | length),
		(map(.opcode) | unique | join(","))' "$EVENTS"
	echo "$output"
	[ "${lines[0]}" -eq "$n" ]
	[ "${lines[1]}" -eq "$n" ]
	[[ ${lines[2]} == *WRITE* ]]
}
