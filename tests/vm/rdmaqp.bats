#!/usr/bin/env bats
# rdmaqp on real rdma_rxe: what a hardware-RoCE host would show, checked
# where the ground truth is rxe's own. Runs inside the Soft-RoCE VM
# (tests/vm/run-suites) or as root on a host whose kernel has rdma_rxe;
# elsewhere every test skips. tests/host/rdmaqp.bats covers a host without
# RDMA devices; tests/unit/rdma_btf.c the hardware drivers' modules.
#
# Ground truth: rxe's port counters (sysfs hw_counters), perftest's and
# rc_client's PIDs, rc_client's completion status.

load ../lib/common
bats_require_minimum_version 1.5.0

TESTBED="$AX_ROOT/scripts/testbed.sh"
RDMAQP="$AX_BUILD/rdmaqp"
DIAG="$AX_BUILD/rocediag"
RC="$AX_BUILD/vm/rc_client"
STATE_DIR=${BATS_FILE_TMPDIR:-/tmp}
# a tracing instance of the tests' own: rxe_query_qp counted apart from
# rdmaqp, the global tracer untouched
FTRACE=/sys/kernel/tracing/instances/ax_rdmaqp_test

setup_file() {
	ax_file_needs --rxe rdma ib_write_bw iptables jq pgrep promtool "$RDMAQP" "$DIAG" "$RC" || return 0
	"$TESTBED" up
}

teardown_file() {
	ax_file_ran || return 0
	"$TESTBED" down >/dev/null 2>&1 || true
}

setup() {
	ax_file_skip
}

teardown() {
	ax_file_ran || return 0
	if [ -f "$STATE_DIR/stopped" ]; then
		# shellcheck disable=SC2046 # a PID list
		kill -CONT $(cat "$STATE_DIR/stopped") 2>/dev/null || true
		rm -f "$STATE_DIR/stopped"
	fi
	if [ -f "$STATE_DIR/iptables" ]; then
		iptables -D INPUT -i veth-b -p udp --dport 4791 -j DROP 2>/dev/null || true
		rm -f "$STATE_DIR/iptables"
	fi
	if [ -d "$FTRACE" ]; then
		echo nop >"$FTRACE/current_tracer" || true
		rmdir "$FTRACE" || true
	fi
	ax_perf_stop
	ax_cleanup
}

hw() { # hw DEV COUNTER: rxe's own port counter
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"
}

# last_qps FILE: the QP objects of the last complete interval of rdmaqp -j
# (the one before the last time seen: the last may be half written)
last_qps() {
	jq -c -s 'map(select(.type == "qp")) | (map(.time) | unique) as $t
		| if ($t | length) < 2 then empty else .[] | select(.time == $t[-2]) end' "$1"
}

# four RC QPs of rxe-a sending in the last complete interval
sending() {
	last_qps "$1" | jq -e -s '[.[] | select(.dev == "rxe-a" and .qp_type == "RC" and .tx.pkts > 0)]
		| length == 4' >/dev/null
}

# a whole interval in which no RC QP's PSN moved, with four that sent
quiet() {
	last_qps "$1" | jq -e -s '[.[] | select(.qp_type == "RC")] as $rc
		| ($rc | length) == 8 and all($rc[]; .tx.pkts + .rx.pkts == 0)
		and ([$rc[] | select(.dev == "rxe-a" and .tx.pkts_total > 0)] | length) == 4' >/dev/null
}

# budget_sums FILE TX RX: the last totals of each RC QP of rdmaqp --budget's
# FILE sum to TX (rxe-a's send PSNs) and RX (rxe-b's receive PSNs)
budget_sums() {
	jq -e -s --argjson tx "$2" --argjson rx "$3" '[.[] | select(.type == "qp" and .qp_type == "RC")]
		| ([.[] | select(.dev == "rxe-a")] | group_by(.qpn) | map(last.tx.pkts_total) | add) == $tx
		and ([.[] | select(.dev == "rxe-b")] | group_by(.qpn) | map(last.rx.pkts_total) | add) == $rx' \
		"$1" >/dev/null 2>&1
}

# query_bursts PID: rxe_query_qp calls of PID in the tracing instance, one
# count a poll
query_bursts() { ax_ftrace_bursts "$FTRACE/trace" "$1" rxe_query_qp; }

# polls FILE: the poll records of rdmaqp -j in FILE so far
polls() {
	jq -s 'map(select(.type == "poll")) | length' "$1"
}

# more_polls FILE N: more than N poll records in FILE
more_polls() {
	[ "$(polls "$1")" -gt "$2" ]
}

# prom_sample FILE NAME{LABELS}: the value of that exact series
prom_sample() {
	awk -v s="$2" '$1 == s { print $2 }' "$1"
}

@test "ib_write_bw -q 4: per-QP packets from PSNs equal rxe's counters, owners are perftest's; --prom and the rxe table agree; --budget 2 within its budget (ftrace), every QP each round" {
	local out=$BATS_TEST_TMPDIR/q.out perf=$BATS_TEST_TMPDIR/perf srv cli last
	local sent0 rcvd0 dup0 oos0 sent rcvd dup oos ta rb pm=$BATS_TEST_TMPDIR/m/rdmaqp.prom snap
	sent0=$(hw rxe-a sent_pkts) rcvd0=$(hw rxe-b rcvd_pkts)
	dup0=$(hw rxe-b duplicate_request) oos0=$(hw rxe-b out_of_seq_request)
	local bo=$BATS_TEST_TMPDIR/b.out bpid
	mkdir -p "${pm%/*}"
	# beside it, --budget 2: 10 QPs (8 RC, 2 GSI) are 5 polls a round
	mkdir "$FTRACE"
	echo rxe_query_qp >"$FTRACE/set_ftrace_filter"
	echo function >"$FTRACE/current_tracer"
	ax_tool_start --err RQB "$bo" 120 "" "$RDMAQP" -j --budget 2 1
	bpid=$RQB
	ax_tool_start --err RQ "$out" 120 Tracing "$RDMAQP" -j --prom "$pm" 1
	ax_tool_wait --err RQB 120 Tracing
	grep -Eq "eBPF: [45] hooks via fentry" "$out.err"
	# one-packet writes, two outstanding per QP: few spurious retransmits
	ax_perf_start "$perf" 90 18520 ib_write_bw -q 4 -s 1024 -t 2 -D 60
	ax_until 60 "four QPs sending" sending "$out"
	# stopped, the QPs stay; what is in flight completes, then nothing moves
	srv=$(pgrep -P "$AX_PERF_SRV") cli=$(pgrep -P "$AX_PERF_CLI")
	echo "$srv $cli" >"$STATE_DIR/stopped"
	kill -STOP "$srv" "$cli"
	ax_until 30 "the QPs to go quiet" quiet "$out"
	sent=$(($(hw rxe-a sent_pkts) - sent0)) rcvd=$(($(hw rxe-b rcvd_pkts) - rcvd0))
	dup=$(($(hw rxe-b duplicate_request) - dup0)) oos=$(($(hw rxe-b out_of_seq_request) - oos0))
	last=$(last_qps "$out")
	echo "$last"
	ta=$(jq -s '[.[] | select(.dev == "rxe-a" and .qp_type == "RC") | .tx.pkts_total] | add' <<<"$last")
	rb=$(jq -s '[.[] | select(.dev == "rxe-b" and .qp_type == "RC") | .rx.pkts_total] | add' <<<"$last")
	echo "rxe-a sent_pkts $sent, rxe-b rcvd_pkts $rcvd duplicate_request $dup out_of_seq_request $oos; PSN sums: rxe-a tx $ta, rxe-b rx $rb"
	# counted from the PSNs the modifies set (eBPF), not from a sample
	jq -e -s 'all(.[] | select(.dev == "rxe-a" and .qp_type == "RC"); .tx.counted_from == "modify")' <<<"$last"
	jq -e -s 'all(.[] | select(.dev == "rxe-b" and .qp_type == "RC"); .rx.counted_from == "modify")' <<<"$last"
	# each pair: the requester's send PSN is where the responder's receive PSN is
	jq -e -s '[.[] | select(.dev == "rxe-b" and .qp_type == "RC")] as $b
		| all(.[] | select(.dev == "rxe-a" and .qp_type == "RC"); . as $q
			| any($b[]; .qpn == $q.peer_qpn and .rx.psn == $q.tx.psn
				and .rx.pkts_total == $q.tx.pkts_total))' <<<"$last"
	[ "$ta" -gt 0 ]
	[ "$ta" -eq "$rb" ]
	# rxe: every packet rxe-b took in is a new PSN, a duplicate or out of sequence
	[ "$sent" -eq "$rcvd" ]
	[ "$((rcvd - dup - oos))" -eq "$rb" ]
	# owners: netlink's pid and the creator eBPF saw, both perftest's
	jq -e -s --argjson c "$cli" --argjson s "$srv" 'all(.[] | select(.qp_type == "RC");
		(if .dev == "rxe-a" then $c else $s end) as $p
		| .pid == $p and .comm == "ib_write_bw" and .created.pid == $p
		and .created.comm == "ib_write_bw" and .created.cgroup_id > 0)' <<<"$last"
	# the port's record: rxe's table names its counters; veth has no pauses
	jq -e -s 'map(select(.type == "port" and .dev == "rxe-a")) | last
		| .driver == "rxe" and .counters.sent_pkts.class == "traffic"
		and .counters.sent_pkts.meaning == "packets sent"
		and .counters.duplicate_request.class == "loss" and .netdev == "veth-a"
		and .pause == null
		and (.pause_missing | test("^veth-a: no pause counters among its [0-9]+ ethtool statistics$"))' "$out"
	# --prom: a quiet interval's file, promtool clean, each QP's series its
	# PSN total, the port's series rxe's own counter
	snap=$BATS_TEST_TMPDIR/snap.prom
	cp "$pm" "$snap"
	promtool check metrics <"$snap"
	jq -r 'select(.dev == "rxe-a" and .qp_type == "RC") | "\(.qpn) \(.tx.pkts_total)"' <<<"$last" |
		while read -r q n; do
			[ "$(prom_sample "$snap" "agentxdp_rdmaqp_qp_tx_packets_total{dev=\"rxe-a\",qpn=\"$q\"}")" = "$n" ] ||
				{ echo "QP $q: prom $(grep "qpn=\"$q\"" "$snap"), want $n" >&2; false; }
		done
	[ "$(prom_sample "$snap" 'agentxdp_rdmaqp_port_stats_total{dev="rxe-a",port="1",counter="sent_pkts",source="hw_counters",class="traffic"}')" = "$(hw rxe-a sent_pkts)" ]
	[ "$(prom_sample "$snap" 'agentxdp_rdmaqp_source_up{source="pause"}')" = 0 ]
	ax_tool_stop RQ
	# --budget 2: within a round of the stop, its totals are rxe's too
	ax_until 30 "--budget 2's totals to reach $ta" budget_sums "$bo" "$ta" "$rb"
	# stop recording (a new current_tracer would empty the buffer), and
	# let the poll under way end before the tool does: the poll of its
	# exit is not traced (it came within 0.4 s of the last one, one burst)
	local np
	np=$(polls "$bo")
	echo 0 >"$FTRACE/tracing_on"
	ax_until 30 "a poll after the trace's end" more_polls "$bo" "$np"
	ax_tool_stop RQB
	grep "^Budget: 2 QP queries per interval" "$bo.err"
	local bursts queried
	bursts=$(query_bursts "$bpid")
	queried=$(jq -s 'map(select(.type == "poll") | .queried) | add' "$bo")
	echo "--budget 2: rxe_query_qp per poll (ftrace): ${bursts//$'\n'/ }; rdmaqp says $queried in all"
	# the kernel's count: at most the budget each poll, and rdmaqp's own
	[ "$(wc -l <<<"$bursts")" -ge 5 ]
	awk '$1 > 2 { exit 1 }' <<<"$bursts"
	# rdmaqp's own count: a poll's record comes after its queries, so the
	# np polls recorded before the trace's end are all in it; after them
	# at most two more, one that ended meanwhile and one cut
	local traced before
	traced=$(awk '{ s += $1 } END { print s }' <<<"$bursts")
	before=$(jq -s --argjson n "$np" 'map(select(.type == "poll")) | .[:$n] | map(.queried) | add' "$bo")
	echo "traced $traced, the $np polls recorded before the trace's end $before"
	[ "$traced" -ge "$before" ] && [ "$traced" -le "$((before + 2 * 2))" ]
	# a round of 5 once the 10 QPs were known; every QP of the full view
	# queried every 5 polls or sooner from its first query to the end, its
	# packets of each query summing to its total (none lost, none twice)
	jq -e -s 'any(.[]; .type == "poll" and .bounded and .qps == 10 and .round_intervals == 5)' "$bo"
	jq -e -s --argjson full "$(jq -s -c 'map("\(.dev)/\(.qpn)")' <<<"$last")" '
		(map(select(.type == "poll") | .time)) as $pt
		| [.[] | select(.type == "qp")] | group_by("\(.dev)/\(.qpn)") as $g
		| ($g | map("\(.[0].dev)/\(.[0].qpn)") | sort) == ($full | sort)
		and all($g[]; [.[] | select(.queried) | . as $q | $pt | index($q.time)] as $i
			| ($i | length) >= 2 and ($pt | length) - 1 - $i[-1] < 5
			and all(range(1; $i | length); $i[.] - $i[. - 1] <= 5))
		and all($g[]; (map(.tx.pkts // 0) | add) == last.tx.pkts_total
			and (map(.rx.pkts // 0) | add) == last.rx.pkts_total)
		and all(.[] | select(.type == "qp" and (.queried | not)); .tx.pkts == null and .span_s == null)' "$bo"
}

# rocediag's first STUCK record of QP $2 on rxe-a in FILE, from rdmaqp's
# evidence
diag_stuck() {
	jq -c -s --argjson q "$2" 'map(select(.type == "qp" and .verdict == "STUCK"
		and .rdmaqp.dev == "rxe-a" and .rdmaqp.qpn == $q)) | first // empty' "$1"
}

has_stuck() {
	[ -n "$(diag_stuck "$1" "$2")" ]
}

@test "a QP that runs out of retries: RTS -> ERR seen, its life from create to destroy; rocediag --no-rxe: STUCK from rdmaqp within one interval" {
	local ev=$BATS_TEST_TMPDIR/ev.out go=$BATS_TEST_TMPDIR/go hold=$BATS_TEST_TMPDIR/hold
	local dg=$BATS_TEST_TMPDIR/diag.out rcpid qa rc=0 stuck t_err
	# rxeqp off: rocediag as on a hardware RNIC's host, rdmaqp's sources
	# alone (no rules: their loading is the slow part); loading while
	# rdmaqp does
	ax_tool_start --err DG "$dg" 120 "" "$DIAG" --no-rxe --no-rules -j \
		--prom "$BATS_TEST_TMPDIR/diag.prom" 1
	ax_tool_start --err RQE "$ev" 120 Tracing "$RDMAQP" -e -j
	ax_tool_wait --err DG 120 Tracing
	grep -q "RDMA netlink QPs and port counters" "$dg.err"
	# 1 retry of ~1 ms: the requester gives up at once under a drop
	ax_bg "$RC" -p 1 -r 1 -t 8 -n 20 -T 60 -w "$go" -W "$hold" >"$BATS_TEST_TMPDIR/f.out"
	rcpid=$AX_LAST_PID
	ax_wait_for "$BATS_TEST_TMPDIR/f.out" ready 30
	qa=$(($(sed -n 's/^ready qpn_a=\(0x[0-9a-f]*\).*/\1/p' "$BATS_TEST_TMPDIR/f.out")))
	touch "$STATE_DIR/iptables"
	iptables -I INPUT -i veth-b -p udp --dport 4791 -j DROP
	touch "$go"
	ax_wait_for "$BATS_TEST_TMPDIR/f.out" "^done" 60
	cat "$BATS_TEST_TMPDIR/f.out"
	grep -q 'status=12 ' "$BATS_TEST_TMPDIR/f.out"	# IBV_WC_RETRY_EXC_ERR
	# rxe moved it to ERR itself (no ib_core call): the poll sees it
	ax_until 30 "RTS -> ERR of QP $qa" jq -e -s --argjson q "$qa" 'any(.[];
		.event == "state" and .dev == "rxe-a" and .qpn == $q and .old_state == "RTS"
		and .new_state == "ERR" and .source == "netlink")' "$ev"
	ax_until 30 "rocediag: STUCK of QP $qa" has_stuck "$dg" "$qa"
	stuck=$(diag_stuck "$dg" "$qa")
	echo "$stuck"
	jq -e '.rdmaqp.state == "ERR" and .rdmaqp.err
		and (.why | startswith("rxe-a QP in ERR (RDMA netlink)"))
		and (.why | contains("drops unknown"))' <<<"$stuck"
	# within one interval (1 s) of the ERR rdmaqp's poll saw (itself up to
	# a second late)
	t_err=$(jq -s --argjson q "$qa" 'map(select(.event == "state" and .qpn == $q
		and .new_state == "ERR")) | first | .time' "$ev")
	jq -e --argjson t "$t_err" '.time - $t <= 1.5' <<<"$stuck"
	ax_tool_stop DG
	# the agent's file carries the port's counters under rdmaqp's names
	# (what the fleet's AgentXDPOutlierPort reads): after the QP's ERR
	# nothing moves them, so each equals sysfs now
	local c v want
	for c in sent_pkts retry_exceeded_err; do
		want=$(cat "/sys/class/infiniband/rxe-a/ports/1/hw_counters/$c")
		v=$(sed -n "s/^agentxdp_rdmaqp_port_stats_total{dev=\"rxe-a\",port=\"1\",counter=\"$c\",source=\"hw_counters\",.*} //p" \
			"$BATS_TEST_TMPDIR/diag.prom")
		echo "$c: rocediag --prom $v, sysfs $want"
		[ "$v" = "$want" ]
	done
	[ "$want" -ge 1 ]
	touch "$hold"
	wait "$rcpid" || rc=$?
	[ "$rc" -eq 3 ]
	ax_until 30 "destroy of QP $qa" jq -e -s --argjson q "$qa" 'any(.[];
		.event == "destroy" and .dev == "rxe-a" and .qpn == $q)' "$ev"
	ax_tool_stop RQE
	cat "$ev"
	# created by rc_client, moved to RTS with the send PSN it chose
	jq -e -s --argjson q "$qa" --argjson p "$rcpid" 'any(.[]; .event == "create"
		and .dev == "rxe-a" and .qpn == $q and .pid == $p and .comm == "rc_client"
		and .qp_type == "RC" and .user)' "$ev"
	jq -e -s --argjson q "$qa" 'any(.[]; .event == "modify" and .dev == "rxe-a"
		and .qpn == $q and .old_state == "RTR" and .new_state == "RTS" and (.sq_psn | type) == "number")' "$ev"
}

@test "an unknown device: one line naming the ones there are, exit 1, nothing attached" {
	run --separate-stderr "$RDMAQP" -d nosuch 1 1
	echo "status $status, stdout '$output', stderr '$stderr'"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "rdmaqp: no RDMA device nosuch (there are: "*"rxe-a"*")" ]]
	[ "$(bpftool prog show 2>/dev/null | grep -c ' name rdmaqp_' || true)" -eq 0 ]
}
