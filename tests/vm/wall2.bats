#!/usr/bin/env bats
# The seed's "Wall 2" in the Soft-RoCE guest: an iptables INPUT REJECT of
# UDP 4791 on veth-b while ib_write_bw runs. rxedrop and nfdrop watch the
# same run (one test bed, one traffic run: each costs tens of seconds under
# emulation) and must both name it:
#   - rxedrop: reason NETFILTER_DROP (its code from this kernel's BTF) on
#     veth-b, in counts mode and with one event per packet;
#   - nfdrop (fexit on 6.1): table filter, chain INPUT, the rule's handle,
#     verdict REJECT;
# each as many times as the rule's own packet counter says it matched.

load ../lib/common

RXEDROP=$AX_BUILD/rxedrop
NFDROP=$AX_BUILD/nfdrop
TESTBED=$AX_ROOT/scripts/testbed.sh

setup_file() {
	ax_file_needs --rxe rdma ib_write_bw iptables nft jq bpftool "$RXEDROP" "$NFDROP" || return 0
}

setup() {
	ax_file_skip
	T=$BATS_TEST_TMPDIR
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

# start NAME CMD...: in the background until its banner (stderr with -j)
start() {
	local name=$1
	shift
	ax_bg "$@" >"$T/$name" 2>"$T/$name.err"
	eval "${name}_pid=$AX_LAST_PID"
}

stop() { # stop NAME: SIGINT, exit 0
	local pid
	eval "pid=\$${1}_pid"
	ax_stop "$pid" INT
	[ "$AX_RC" -eq 0 ] || { cat "$T/$1.err"; return 1; }
}

@test "Wall 2: the iptables REJECT during ib_write_bw, named by rxedrop (NETFILTER_DROP on veth-b) and nfdrop (filter INPUT, the rule), counted as the rule counts" {
	"$TESTBED" up
	# the rule first: it loads nf_tables, whose nft_do_chain nfdrop's fexit
	# program attaches to (module functions exist only once loaded)
	"$TESTBED" reject on
	start counts "$RXEDROP" -j
	start events "$RXEDROP" -e -j -i veth-b
	start nf "$NFDROP" -j --roce
	ax_wait_for "$T/counts.err" "Tracing" 120
	ax_wait_for "$T/events.err" "Tracing" 120
	ax_wait_for "$T/nf.err" "Tracing" 120
	grep -q "fexit nft_do_chain" "$T/nf.err"
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
	stop counts
	stop events
	stop nf

	# ground truth: the rule as iptables-nft wrote it, its own counter, and
	# the reason's code in this kernel's BTF (6.1 and 6.18 differ)
	n=$(reject_packets)
	h=$(nft -a list chain ip filter INPUT 2>/dev/null |
		sed -n 's/.*iifname "veth-b" udp dport 4791 .*reject.* # handle \([0-9]*\)$/\1/p')
	code=$(bpftool btf dump file /sys/kernel/btf/vmlinux |
		sed -n "s/.*'SKB_DROP_REASON_NETFILTER_DROP' val=\([0-9]*\).*/\1/p")
	echo "# rule counter $n, handle $h, NETFILTER_DROP = $code" >&3
	[ "$n" -gt 0 ] && [ -n "$h" ] && [ -n "$code" ]

	# rxedrop, counts mode: every RoCE drop on the machine is this rule's
	run jq -s -r '[.[] | select(.type == "drop_count")] |
		(map(select(.reason == "NETFILTER_DROP")) | map(.count) | add // 0),
		(map(select(.reason != "NETFILTER_DROP")) | map(.count) | add // 0),
		(map(select(.reason == "NETFILTER_DROP")) | map(.reason_code) | unique | join(","))' "$T/counts"
	echo "rxedrop counts: $output"
	[ "${lines[*]}" = "$n 0 $code" ]

	# rxedrop, events: one per packet the rule matched, each a request of an
	# RDMA WRITE from rxe-a to rxe-b arriving on veth-b
	run jq -s -r 'map(select(.type == "drop")) |
		length,
		(map(select(.reason == "NETFILTER_DROP" and .reason_code == '"$code"' and
			.ifname == "veth-b" and .saddr == "10.10.0.1" and .daddr == "10.10.0.2" and
			.dport == 4791)) | length),
		(map(.opcode) | unique | join(","))' "$T/events"
	echo "rxedrop events: $output"
	[ "${lines[0]}" -eq "$n" ]
	[ "${lines[1]}" -eq "$n" ]
	[[ ${lines[2]} == *WRITE* ]]

	# nfdrop: the kernel's own table, chain and rule (fexit), all rejected
	run jq -r -s '[.[] | select(.type == "nf_drop_count") | select(.hook == "input" and .netns_name == "init")] |
		length, .[0].packets, .[0].rejected, .[0].source, .[0].engine, .[0].table_family,
		.[0].table, .[0].chain, .[0].rule_handle, .[0].verdict, .[0].reason, .[0].reason_code,
		(.[0].inferred | length)' "$T/nf"
	echo "nfdrop: ${lines[*]}"
	[ "${lines[*]}" = "1 $n $n fexit nftables ip filter INPUT $h REJECT NETFILTER_DROP $code 0" ]
}
