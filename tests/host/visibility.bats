#!/usr/bin/env bats
# Never silently blind: what rocediag and rocelat say they cannot see.
# Their banners and --help name the RoCE no host tool sees (a hardware
# RNIC's own); their --prom files count the RoCE packets seen (exact
# against the datagrams we send) and say, per source, whether it is up,
# why not (the banner's own "cannot see" line) and whether an option
# turned it off. Then the collector's side: rocelat -r over recordings of
# two mirror sessions splits its -F table per session, and its --prom
# file holds a series per flow and session, against the recordings'
# ground truth (tests/lib/mirror_captures.py).

bats_require_minimum_version 1.5.0
load ../lib/common

DIAG=$AX_BUILD/rocediag
RL=$AX_BUILD/rocelat
P=axvis
A=10.223.0.1
B=10.223.0.2
RNIC="not seen: a hardware RNIC's own RoCE, which bypasses the kernel:"

setup_file() {
	[ -z "${AGENTXDP_VM:-}" ] || { export AX_FILE_SKIP="host-only: output code, no rdma_rxe needed"; return 0; }
	ax_file_needs promtool "$DIAG" "$RL" "$AX_BUILD/udpflood" || return 0
}

setup() {
	ax_file_skip
	T=$BATS_TEST_TMPDIR
	PROM=$T/m.prom
}

teardown() {
	ax_cleanup
}

# a --prom file's sample lines of family $1 (without HELP/TYPE)
samples() {
	grep "^$1[{ ]" "$PROM"
}

# --help as one line: where a phrase is wrapped, it is whole here
help_joined() {
	"$1" --help | tr '\n' ' ' | tr -s ' '
}

@test "rocediag and rocelat: --help, the man pages and the package description say a hardware RNIC's own RoCE is not seen" {
	local t
	for t in rocediag rocelat; do
		[[ "$(help_joined "$AX_BUILD/$t")" == *"hardware RNIC's own RoCE (ConnectX and the like send and receive it in the NIC, bypassing the kernel)"* ]] ||
			{ echo "$t --help" >&2; false; }
		# the page is made from --help: the same words
		man -l "$AX_ROOT/man/$t.8" 2>/dev/null | tr '\n' ' ' | tr -s ' ' |
			grep -qF "hardware RNIC's own RoCE (ConnectX and the like send and receive it in the NIC, bypassing the kernel)" ||
			{ echo "man $t" >&2; false; }
	done
	# and the package's description
	sed -n '/^Description:/,$p' "$AX_ROOT/debian/control" | sed 's/^ //' | tr '\n' ' ' |
		grep -qF "Not seen: a hardware RNIC's own RoCE (ConnectX and the like send and receive it in the NIC, bypassing the kernel)."
}

@test "rocediag -i on an interface with no RoCE: the banner says what it cannot see; --prom counts 0 RoCE packets, then exactly the 37 sent" {
	ax_netns_pair $P $A/24 $B/24
	ax_tool_start D "$T/out" 90 Tracing "$DIAG" -N ${P}a -i ${P}va --prom "$PROM" 1
	ax_until 20 "the first --prom write" test -s "$PROM"
	# the banner: sources, then what no source sees
	grep -qxF "$RNIC" "$T/out"
	grep -qx '    mirror it to rocelat --mirror' "$T/out"
	ax_until 20 "a report with the count" grep -qx 'agentxdp_rocediag_roce_packets_total 0' "$PROM"
	[ "$(samples agentxdp_rocediag_source_up)" = 'agentxdp_rocediag_source_up{source="latency"} 1
agentxdp_rocediag_source_up{source="drops"} 1
agentxdp_rocediag_source_up{source="rules"} 1
agentxdp_rocediag_source_up{source="rdma_rxe"} '"$([ -e /sys/kernel/btf/rdma_rxe ] && echo 1 || echo 0)"'
agentxdp_rocediag_source_up{source="rdma"} '"$(ls /sys/class/infiniband/* >/dev/null 2>&1 && echo 1 || echo 0)"'
agentxdp_rocediag_source_up{source="verbs"} '"$([ -e /sys/kernel/btf/ib_core ] && ls /sys/class/infiniband/* >/dev/null 2>&1 && echo 1 || echo 0)" ]
	# RDMA netlink and port counters: up where there is an RDMA device;
	# with none (no device, or no RDMA in the kernel) absent, no reason,
	# nothing in the banner
	ls /sys/class/infiniband/* >/dev/null 2>&1 ||
		grep -qx 'agentxdp_rocediag_source_info{source="rdma",reason="",off_by_option="false",absent="true"} 1' "$PROM"
	# the kernel QPs' work requests (verbslat) likewise
	ls /sys/class/infiniband/* >/dev/null 2>&1 ||
		grep -qx 'agentxdp_rocediag_source_info{source="verbs",reason="",off_by_option="false",absent="true"} 1' "$PROM"
	# rdma_rxe missing is no option's doing; where the module is not
	# loaded at all (this host, a hardware RNIC's) it is absent, which the
	# fleet alert leaves alone; loaded but unreadable, it is not
	local absent=false
	[ -e /sys/module/rdma_rxe ] || [ -e /sys/kernel/btf/rdma_rxe ] || absent=true
	[ -e /sys/kernel/btf/rdma_rxe ] ||
		grep -q '^agentxdp_rocediag_source_info{source="rdma_rxe",reason="rdma_rxe QP state: [^"]\+",off_by_option="false",absent="'"$absent"'"} 1$' "$PROM"
	promtool check metrics < "$PROM"
	ax_send_roce ${P}b $A 37
	ax_until 20 "37 RoCE packets" grep -qx 'agentxdp_rocediag_roce_packets_total 37' "$PROM"
	ax_tool_stop D
	# and at exit, the same count
	grep -qx 'agentxdp_rocediag_roce_packets_total 37' "$PROM"
}

@test "rocediag without -i, with --no-rules and --no-rxe: latency, rules and rdma_rxe down by option, no packet count, each reason the banner's 'cannot see' line" {
	local src reason line
	ax_tool_start D "$T/out" 90 Tracing "$DIAG" --no-rules --no-rxe --prom "$PROM" 1
	ax_until 20 "the first --prom write" test -s "$PROM"
	ax_tool_stop D
	# no number it did not measure
	[ -z "$(samples agentxdp_rocediag_roce_packets_total)" ]
	grep -q '^# TYPE agentxdp_rocediag_roce_packets_total counter$' "$PROM"
	grep -qx 'agentxdp_rocediag_source_up{source="latency"} 0' "$PROM"
	grep -qx 'agentxdp_rocediag_source_info{source="latency",reason="latency: no -i given",off_by_option="true",absent="false"} 1' "$PROM"
	grep -qx 'agentxdp_rocediag_source_up{source="rules"} 0' "$PROM"
	grep -qx 'agentxdp_rocediag_source_info{source="rules",reason="netfilter rules: --no-rules",off_by_option="true",absent="false"} 1' "$PROM"
	grep -qx 'agentxdp_rocediag_source_info{source="drops",reason="",off_by_option="false",absent="false"} 1' "$PROM"
	# every reason of a source down is a "cannot see" line of the banner
	# (wrapped lines joined)
	while IFS= read -r reason; do
		line=$(awk '/^    / { sub(/^ +/, " "); l = l $0; next } { if (NR > 1) print l; l = $0 } END { print l }' "$T/out" |
			grep -xF "cannot see $reason") || { echo "not in the banner: $reason" >&2; cat "$T/out" >&2; false; }
	done < <(sed -n 's/^agentxdp_rocediag_source_info{source="[a-z_]*",reason="\([^"]\+\)".*/\1/p' "$PROM")
	grep -qx 'agentxdp_rocediag_source_up{source="rdma_rxe"} 0' "$PROM"
	grep -qx 'agentxdp_rocediag_source_info{source="rdma_rxe",reason="rdma_rxe QP state: --no-rxe",off_by_option="true",absent="false"} 1' "$PROM"
	promtool check metrics < "$PROM"
}

@test "rocelat --prom: ingress and egress up, the RoCE packets exact; --no-egress and --mirror turn egress off by option, and --mirror drops the RNIC line" {
	ax_netns_pair $P $A/24 $B/24
	ax_tool_start L "$T/out" 30 Tracing "$RL" -N ${P}a -i ${P}va --prom "$PROM" 1
	grep -qxF "$RNIC" "$T/out"
	grep -qx '    mirror it to a port (--mirror) or capture it (-r)' "$T/out"
	ax_send_roce ${P}b $A 23
	ax_until 20 "23 RoCE packets" grep -qx 'agentxdp_rocelat_roce_packets_total 23' "$PROM"
	[ "$(samples agentxdp_rocelat_source_up)" = 'agentxdp_rocelat_source_up{source="ingress"} 1
agentxdp_rocelat_source_up{source="egress"} 1' ]
	grep -qx 'agentxdp_rocelat_source_info{source="egress",reason="",off_by_option="false",absent="false"} 1' "$PROM"
	promtool check metrics < "$PROM"
	ax_tool_stop L

	ax_tool_start L "$T/out2" 30 Tracing "$RL" -N ${P}a -i ${P}va --no-egress --prom "$PROM" 1
	ax_until 20 "the --no-egress run's file" grep -qx 'agentxdp_rocelat_source_up{source="egress"} 0' "$PROM"
	ax_tool_stop L
	grep -qx 'agentxdp_rocelat_source_info{source="egress",reason="egress: --no-egress",off_by_option="true",absent="false"} 1' "$PROM"

	ax_tool_start L "$T/out3" 30 Tracing "$RL" -N ${P}a -i ${P}va --mirror --skb-mode --prom "$PROM" 1
	ax_until 20 "the --mirror run's file" grep -qx 'agentxdp_rocelat_source_up{source="egress"} 0' "$PROM"
	ax_tool_stop L
	grep -qx 'agentxdp_rocelat_source_info{source="egress",reason="egress: --mirror (both directions arrive on ingress)",off_by_option="true",absent="false"} 1' "$PROM"
	! grep -q 'hardware RNIC' "$T/out3"
}

# the mirror captures, once per file
mirror_caps() {
	[ -n "${CAP:-}" ] && return 0
	ax_file_needs_captures "scapy" || skip "$AX_FILE_SKIP"
	CAP=$BATS_FILE_TMPDIR/cap
	[ -s "$CAP/connectx_two_mirrors.json" ] && return 0
	mkdir -p "$CAP"
	/usr/bin/python3 "$AX_ROOT/tests/lib/mirror_captures.py" "$CAP" 2> "$CAP/err" || { cat "$CAP/err" >&2; false; }
}

# the truth's flows of capture $1 as "session|dqpn" lines, sorted
truth_flows() {
	jq -r '.flows[] | "\(.session.kind) \(.session.src) id \(.session.id)|0x\(.dqpn | tostring)"' "$CAP/$1.json" |
		awk -F'|' '{ printf "%s|0x%x\n", $1, substr($2, 3) }' | sort
}

@test "rocelat -r over two mirror sessions -F: a table per session, each holding that session's flows of the truth" {
	mirror_caps
	local s=connectx_two_mirrors got
	"$RL" -r "$CAP/$s.pcap" -F > "$T/out"
	cat "$T/out" >&2
	# "mirror session KIND SRC id N:" then a header and the session's rows
	got=$(awk '/^mirror session / { ses = $0; sub(/^mirror session /, "", ses); sub(/:$/, "", ses); next }
		ses != "" && /^[0-9]/ { print ses "|" $3 } /^$/ { ses = "" }' "$T/out" | sort)
	[ "$got" = "$(truth_flows $s)" ]
	[ "$(grep -c '^mirror session ' "$T/out")" -eq 2 ]
	# a capture of one session: one table, no session line
	"$RL" -r "$CAP/connectx_erspan2.pcap" -F > "$T/one"
	! grep -q '^mirror session' "$T/one"
	grep -q '^REQUESTER ' "$T/one"
	# plain frames next to mirrored ones: their table is "none"
	"$RL" -r "$CAP/connectx.pcap" "$CAP/connectx_erspan2.pcap" -F > "$T/mixed"
	grep -qx 'mirror session none:' "$T/mixed"
}

@test "rocelat -r --prom over two mirror sessions: a p50 and p99 per flow and session, the truth's medians within 3%, promtool clean" {
	mirror_caps
	local s=connectx_two_mirrors f ses qpn p50 got
	"$RL" -r "$CAP/$s.pcap" --prom "$PROM" > /dev/null
	promtool check metrics < "$PROM"
	[ "$(samples agentxdp_rocelat_flow_latency_seconds | grep -c 'q="0.5"')" -eq "$(jq '.flows | length' "$CAP/$s.json")" ]
	[ "$(samples agentxdp_rocelat_flow_latency_seconds | grep -c 'q="0.99"')" -eq "$(jq '.flows | length' "$CAP/$s.json")" ]
	grep -qx 'agentxdp_rocelat_source_up{source="capture"} 1' "$PROM"
	while IFS='|' read -r ses qpn p50; do
		got=$(sed -n "s/^agentxdp_rocelat_flow_latency_seconds{req=\"10.1.0.1\",req_qpn=\"0x[0-9a-f]*\",resp=\"10.1.0.2\",resp_qpn=\"$qpn\",sport=\"[0-9]*\",kind=\"rtt\",session=\"$ses\",q=\"0.5\"} //p" "$PROM")
		[ -n "$got" ] || { echo "no series for $ses $qpn" >&2; false; }
		awk -v g="$got" -v w="$p50" 'BEGIN { d = g * 1e9 - w; if (d < 0) d = -d; exit !(d <= 0.03 * w) }' ||
			{ echo "$ses $qpn: p50 $got s, truth $p50 ns" >&2; false; }
	done < <(jq -r '.flows[] | "\(.session.kind) \(.session.src) id \(.session.id)|\(.dqpn)|\(.p50)"' "$CAP/$s.json" |
		awk -F'|' '{ printf "%s|0x%x|%s\n", $1, $2, $3 }')
}
