#!/usr/bin/env bats
# --prom FILE: the Prometheus text file each aggregating tool writes for
# node_exporter's textfile collector. Checked with promtool (Debian's
# prometheus package) and against ground truth: the packets we dropped.

bats_require_minimum_version 1.5.0
load ../lib/common

RXEDROP=$AX_BUILD/rxedrop
A=10.213.0.1
B=10.213.0.2
# tools start slowly under emulation (BTF parsing)
WAIT=${AGENTXDP_VM:+90}
WAIT=${WAIT:-20}

# In the Soft-RoCE guest only the rxeqp case runs (it needs rdma_rxe): the
# writer is user space, checked here, and the guest's time is shared by
# every suite (static.bats runs rxedrop there).
host_only() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "host-only: the writer is user space; the guest runs the rxeqp case"
}

setup() {
	ax_need_root
	command -v promtool >/dev/null || skip "promtool not installed (Debian package prometheus)"
	T=$BATS_TEST_TMPDIR
	PROM=$T/metrics/tool.prom
	mkdir -p "$T/metrics"
}

# the two namespaces the drops happen between
pair() {
	P=axp$BATS_TEST_NUMBER
	ax_netns_pair "$P" "$A/24" "$B/24"
}

teardown() {
	ax_cleanup
}

# value of the sample matching an extended regex of name{labels}
sample() {
	sed -nE "s/^$1 ([0-9.e+-]+)\$/\\1/p" "$PROM" | tail -1
}

# NO_SOCKET drops at __udp4_lib_rcv (RoCE to a port nobody listens on)
nosocket() {
	local v
	v=$(sample 'agentxdp_rxedrop_drops_total\{location="__udp4_lib_rcv",reason="NO_SOCKET"\}')
	echo "${v:-0}"
}

# until FILE's NO_SOCKET counter reaches N (a periodic write happened)
wait_nosocket() {
	local i
	for ((i = 0; i < WAIT * 10; i++)); do
		[ -f "$PROM" ] && [ "$(nosocket)" -ge "$1" ] && return 0
		sleep 0.1
	done
	echo "counter stuck at $(nosocket), want $1" >&2
	cat "$PROM" >&2 || true
	return 1
}

promtool_ok() {
	run promtool check metrics < "${1:-$PROM}"
	echo "$output" >&2
	[ "$status" -eq 0 ]
}

# snapshot_with REGEX: until the file (rewritten every interval) has a
# sample line matching REGEX, then a copy of that version in $SNAP, which
# promtool checks: the samples of an interval with traffic, not the empty
# families of the interval after it
snapshot_with() {
	local i
	SNAP=$T/snap.prom
	for ((i = 0; i < WAIT * 10; i++)); do
		if [ -f "$PROM" ]; then
			cp "$PROM" "$SNAP"
			grep -Eq "$1" "$SNAP" && { promtool_ok "$SNAP"; return; }
		fi
		sleep 0.1
	done
	echo "no sample matching '$1' in $PROM:" >&2
	cat "$PROM" >&2 || true
	return 1
}

start_rxedrop() {
	host_only
	[ -x "$RXEDROP" ] || skip "build first: make"
	pair
	ax_tool_start RX_PID "$T/out" "$WAIT" Tracing "$RXEDROP" "$@"
}

# counts mode counts every namespace on the host: exact while no other RoCE
# traffic dies on this machine (true in CI, where suites run one at a time)
@test "rxedrop --prom with an interval: cumulative counter equals the packets dropped, promtool clean" {
	start_rxedrop --prom "$PROM" 1
	ax_send_roce "${P}a" $B 60
	wait_nosocket 60
	promtool_ok
	# the table drains its map every interval; the counter must not
	ax_send_roce "${P}a" $B 40
	wait_nosocket 100
	# the kernel's count of the drops, so that one more in the tool's
	# last report would be a real over-count
	ax_wait_snmp "${P}b" Udp:NoPorts 100
	ax_tool_stop RX_PID
	[ "$(nosocket)" -eq 100 ]
	promtool_ok
	grep -q '^# TYPE agentxdp_rxedrop_drops_total counter$' "$PROM"
	[ "$(sample agentxdp_rxedrop_events_lost_total)" -eq 0 ]
	[ "$(sample agentxdp_rxedrop_rxe_consumed_total)" -eq 0 ]
	# only the target in the directory: no temp file left behind, and
	# readable by a node_exporter that is not root
	[ "$(ls -A "$T/metrics")" = tool.prom ]
	[ "$(stat -c %a "$PROM")" = 644 ]
}

@test "rxedrop --prom without an interval: file from the start, final count at exit" {
	start_rxedrop --prom "$PROM"
	# written right after attach, before any drop
	ax_until 10 "$PROM at attach" test -f "$PROM"
	promtool_ok
	grep -q '^# TYPE agentxdp_rxedrop_drops_total counter$' "$PROM"
	ax_send_roce "${P}a" $B 25
	# every drop done (the kernel's count) before the final write
	ax_wait_snmp "${P}b" Udp:NoPorts 25
	ax_tool_stop RX_PID
	[ "$(nosocket)" -eq 25 ]
	promtool_ok
	# the text table at exit agrees
	grep -Eq '^__udp4_lib_rcv\+0x[0-9a-f]+ +NO_SOCKET +25$' "$T/out"
}

@test "rxedrop -e --prom: counts in events mode too" {
	start_rxedrop -e -j --prom "$PROM"
	ax_send_roce "${P}a" $B 30
	ax_wait_snmp "${P}b" Udp:NoPorts 30
	ax_tool_stop RX_PID
	[ "$(nosocket)" -eq 30 ]
	[ "$(jq -s '[.[] | select(.type == "drop" and .reason == "NO_SOCKET")] | length' "$T/out")" -eq 30 ]
	promtool_ok
}

@test "--prom to a place that cannot be written: exit 1 at start, one line, every tool" {
	host_only
	local t bad args
	for t in $(ax_tools); do
		[ -x "$AX_BUILD/$t" ] || continue
		args=()
		[ "$t" = rocelat ] && args=(-i lo)	# it needs an interface first
		[ "$t" = roceinject ] && args=(-i lo --drop)	# and a fault
		for bad in "$T/no/such/dir/x.prom" "$T/metrics"; do
			run -1 "$AX_BUILD/$t" "${args[@]}" --prom "$bad" 1
			[ "${#lines[@]}" -eq 1 ] || { echo "$t: $output" >&2; false; }
			[[ "$output" == "$t: cannot write $bad: "* ]] || { echo "$t: $output" >&2; false; }
		done
	done
	# and nothing was left in the directory by the check
	[ -z "$(ls -A "$T/metrics")" ]
}

# The other tools: every tool lists --prom (it comes from the shared CLI
# core), so --help cannot tell whether a tool writes anything; its sources
# (tools/<tool>/*.c) must read the path from their struct cli_env:
# env.cli.prom_path, cfg->cli.prom_path, cfg.cli->prom_path.
# Skipped, with the reason, while they do not.
needs_prom() {
	[ -x "$AX_BUILD/$1" ] || skip "$1 not built"
	cat "$AX_ROOT"/tools/"$1"/*.c 2>/dev/null | grep -qE 'cli(\.|->)prom_path' ||
		skip "$1 accepts --prom (shared CLI) but does not write metrics yet"
}

# every sample's metric name starts with agentxdp_<tool>_
names_ok() {
	local bad
	bad=$(grep -v '^#' "$PROM" | grep -v "^agentxdp_$1_" || true)
	[ -z "$bad" ] || { echo "metrics without the agentxdp_$1_ prefix:" >&2; echo "$bad" >&2; return 1; }
}

# rocegen requester in ${P}a at about 1000 messages a second for ~20 s
start_traffic() {
	ax_bg ip netns exec "${P}b" "$AX_BUILD/rocegen" responder --timeout 60 > "$T/resp.out" 2>&1
	ax_wait_udp "${P}b" 4791
	ax_bg ip netns exec "${P}a" "$AX_BUILD/rocegen" requester -d $B -q -n 20000 \
		--interval-us 1000 --timeout 40 > "$T/req.out" 2>&1
}

@test "rocelat --prom: promtool clean while samples exist, quantiles in whole ns" {
	host_only
	needs_prom rocelat
	[ -x "$AX_BUILD/rocegen" ] || skip "rocegen not built"
	pair
	ax_tool_start RL_PID "$T/out" "$WAIT" Tracing \
		ip netns exec "${P}a" "$AX_BUILD/rocelat" -i "${P}va" --prom "$PROM" 1
	start_traffic
	snapshot_with '^agentxdp_rocelat_latency_quantile_seconds\{q="0.5"\} '
	PROM=$SNAP names_ok rocelat
	# four quantiles, ordered, each a whole number of nanoseconds
	run awk '/^agentxdp_rocelat_latency_quantile_seconds\{/ {
		n++; v = $2 * 1e9; if (v < prev || v - int(v + 0.5) > 1e-3 || int(v + 0.5) - v > 1e-3) bad = 1
		if (length($2) > 13) bad = 1; prev = v } END { exit !(n == 4 && !bad) }' "$SNAP"
	[ "$status" -eq 0 ] || { grep quantile "$SNAP" >&2; false; }
	ax_tool_stop RL_PID
	promtool_ok
}

@test "rocediag --prom: promtool clean while QPs exist, agentxdp_rocediag_ names" {
	host_only
	needs_prom rocediag
	[ -x "$AX_BUILD/rocegen" ] || skip "rocegen not built"
	pair
	ax_tool_start RD_PID "$T/out" 90 Tracing "$AX_BUILD/rocediag" -N "${P}a" -i "${P}va" --prom "$PROM" 1
	start_traffic
	snapshot_with '^agentxdp_rocediag_qp_verdict\{'
	PROM=$SNAP names_ok rocediag
	ax_tool_stop RD_PID
	promtool_ok
}

@test "nfdrop --prom: promtool clean, agentxdp_nfdrop_ names" {
	host_only
	needs_prom nfdrop
	pair
	ip netns exec "${P}b" nft -f - <<-'NFT'
	table inet axp_filter {
		chain input { type filter hook input priority 0; udp dport 4791 drop; }
	}
	NFT
	ax_tool_start NF_PID "$T/out" 90 Tracing "$AX_BUILD/nfdrop" --roce --prom "$PROM" 1
	ax_send_roce "${P}a" $B 40
	snapshot_with '^agentxdp_nfdrop_drops_total\{.*\} 40$'
	PROM=$SNAP names_ok nfdrop
	ax_tool_stop NF_PID
	promtool_ok
	names_ok nfdrop
	grep -q '^agentxdp_nfdrop_' "$PROM"
}

# runs in the Soft-RoCE guest (rdma_rxe), skipped on a host without it
@test "rxeqp --prom: promtool clean, agentxdp_rxeqp_ names (its counts under traffic: tests/vm/rxeqp.bats, ib_send_lat)" {
	needs_prom rxeqp
	[ -d /sys/module/rdma_rxe ] || modprobe -q rdma_rxe 2>/dev/null ||
		skip "rxeqp needs rdma_rxe (Soft-RoCE), which this kernel lacks: the VM tier runs it"
	ax_tool_start QP_PID "$T/out" "$WAIT" Tracing "$AX_BUILD/rxeqp" --prom "$PROM" 1
	# the file appears whole (renamed into place) at its first write
	ax_until "$WAIT" "$PROM to be written" test -s "$PROM"
	ax_tool_stop QP_PID
	promtool_ok
	names_ok rxeqp
}
