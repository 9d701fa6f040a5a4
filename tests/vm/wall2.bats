#!/usr/bin/env bats
# rxedrop and nfdrop on real rdma_rxe traffic in the Soft-RoCE guest.
#
# The seed's "Wall 2": an iptables INPUT REJECT of UDP 4791 on veth-b
# while ib_write_bw runs. rxedrop and nfdrop watch the same run (one test
# bed, one traffic run: each costs tens of seconds under emulation) and
# must both name it:
#   - rxedrop: reason NETFILTER_DROP (its code from this kernel's BTF) on
#     veth-b, in counts mode and with one event per packet;
#   - nfdrop (fexit on 6.1): table filter, chain INPUT, the rule's handle,
#     verdict REJECT;
# each as many times as the rule's own packet counter says it matched.
#
# Clean traffic: rxe on 6.1 frees every packet its QPs took in with
# kfree_skb() (reason NOT_SPECIFIED, in rxe_responder and rxe_completer),
# not consume_skb(). Those are no drops: rxedrop's program leaves them out
# by their caller and counts them apart
# (agentxdp_rxedrop_rxe_consumed_total), as many as rxe's own port
# counters say it received.

load ../lib/common
load ../lib/vm_rocelat

RXEDROP=$AX_BUILD/rxedrop
NFDROP=$AX_BUILD/nfdrop
WAIT=120	# s: a tool's load under TCG, perftest's server start

setup_file() {
	ax_file_needs --rxe rdma ib_write_bw iptables nft jq bpftool timeout stdbuf \
		"$RXEDROP" "$NFDROP" || return 0
}

setup() {
	rl_setup
}

teardown() {
	ax_file_ran || return 0
	perf_stop
	"$TESTBED" down >/dev/null 2>&1 || true
}

# packets the REJECT rule matched, by its own counter
reject_packets() {
	iptables -L INPUT -v -x -n | awk '/REJECT/ && /veth-b/ && /dpt:4791/ { print $1 }'
}

# rxedrop -e has printed an event for every packet the REJECT rule matched
# so far (on veth-b): the drops are done and seen, none still on its way
rejects_seen() {
	[ "$(grep -c '"type":"drop"' "$T/events")" -ge "$(reject_packets)" ]
}

@test "Wall 2: the iptables REJECT during ib_write_bw, named by rxedrop (NETFILTER_DROP on veth-b) and nfdrop (filter INPUT, the rule), counted as the rule counts" {
	"$TESTBED" up
	# the rule first: it loads nf_tables, whose nft_do_chain nfdrop's fexit
	# program attaches to (module functions exist only once loaded)
	"$TESTBED" reject on
	# the three load side by side; each banner on stderr (-j)
	ax_tool_start COUNTS_PID "$T/counts" 0 "" "$RXEDROP" -j
	ax_tool_start EVENTS_PID "$T/events" 0 "" "$RXEDROP" -e -j -i veth-b
	ax_tool_start NF_PID "$T/nf" 0 "" "$NFDROP" -j --roce
	ax_tool_wait --err COUNTS_PID 120 Tracing
	ax_tool_wait --err EVENTS_PID 120 Tracing
	ax_tool_wait --err NF_PID 120 Tracing
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
	ax_until 120 "rxedrop events for every packet the rule matched" rejects_seen
	ax_tool_stop COUNTS_PID
	ax_tool_stop EVENTS_PID
	ax_tool_stop NF_PID

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

@test "clean ib_write_bw: no drop counted, though rdma_rxe frees every packet it took in with kfree_skb; those counted apart, as many as rxe received" {
	local n=300 prom=$T/drop.prom
	bed_up
	# shellcheck disable=SC2034 # read through delta's namerefs
	local -A c0 c1
	ax_tool_start COUNTS_PID "$T/counts" 0 "" "$RXEDROP" -j --prom "$prom"
	ax_tool_start EVENTS_PID "$T/events" 0 "" "$RXEDROP" -e -j
	ax_tool_wait --err COUNTS_PID "$WAIT" Tracing
	ax_tool_wait --err EVENTS_PID "$WAIT" Tracing
	counters c0
	# one single-packet WRITE in flight and rxe's timer out of reach
	# (-u 31): nothing resent, nothing out of sequence
	perf_run clean ib_write_bw -s 1024 -t 1 -u 31 -F -n "$n"
	counters c1
	ax_tool_stop COUNTS_PID
	ax_tool_stop EVENTS_PID

	local rcvd dup consumed drops events
	rcvd=$(($(delta c0 c1 rxe-a.rcvd_pkts) + $(delta c0 c1 rxe-b.rcvd_pkts)))
	dup=$(delta c0 c1 rxe-b.duplicate_request)
	consumed=$(awk '$1 == "agentxdp_rxedrop_rxe_consumed_total" { print $2 }' "$prom")
	drops=$(jq -s '[.[] | select(.type == "drop_count") | .count] | add // 0' "$T/counts")
	events=$(jq -s '[.[] | select(.type == "drop")] | length' "$T/events")
	measured "clean write_bw: rxe received $rcvd (rxe-a $(delta c0 c1 rxe-a.rcvd_pkts), rxe-b $(delta c0 c1 rxe-b.rcvd_pkts)), duplicates $dup; rxedrop drops $drops, events $events, rxe consumed $consumed"
	# rxe: the messages went once each, each answered
	[ "$(perf_result "$T/clean.cli" 2)" -eq "$n" ]
	[ "$(delta c0 c1 rxe-a.sent_pkts)" -eq "$n" ]
	[ "$dup" -eq 0 ]
	[ "$(delta c0 c1 rxe-b.rcvd_pkts)" -eq "$n" ]
	# rxedrop: no drop in either mode; every packet rxe took in left out
	[ "$drops" -eq 0 ]
	[ "$events" -eq 0 ]
	[ "$consumed" -eq "$rcvd" ]
}
