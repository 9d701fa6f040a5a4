#!/usr/bin/env bash
# rocelat at scale (run by `make bench` through bench/run; needs root and a
# built tree). ROUNDS rounds (3) of each case, median (min..max).
#
# Cases: 100, 1,000, 5,000 and 10,000 QPs of one pair of hosts, and
# 10,000 across 64 pairs of hosts (156 each), all starting at once with one
# message in flight each (rocegen --window 1, MSGS messages a QP), rocelat
# --max-flows 11264 (the default) on the requester's veth, a tcpdump capture of the
# same traffic read back with -r. Figures, all ratios within one run:
#   coverage live and -r: latency samples / requests rocegen completed
#     less those it retransmitted, whose answers no tool can time (Karn;
#     64 requesters on one CPU retransmit now and then) (target 1);
#   cost per packet: rocelat's programs' run time per call (BPF run-time
#     statistics, bpfstat), as a ratio to the 100-QP case of the same
#     round (target <= 1.5: the pairing costs no more with more QPs);
#   kernel memory per tracked flow: rocelat's maps' memlock (bpftool) at
#     --max-flows 11264, divided by 11264, in bytes; the flow table's entry
#     alone; and the total at 11264 (the default, which holds 10,000 QPs
#     active at once), 4096 and 16384 flows, in MB (the issue's target:
#     10,000 flows within 64 MiB, 67.1 MB).
#
# Environment: ROUNDS, AX_BENCH_QUICK (100 and 1,000 QPs only, 3 messages
# a QP), ROCELAT_SCALE_MSGS (10), ROCELAT_SCALE_SIZES (QPs of one host
# pair, a list starting with 100: the cost's base), ROCELAT_SCALE_MAXF
# (--max-flows, 11264).
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/lib/common.bash
source bench/lib.bash
B=$AX_BUILD
MSGS=${ROCELAT_SCALE_MSGS:-$(bench_size 10 3)}
SIZES=${ROCELAT_SCALE_SIZES:-$(bench_size "100 1000 5000 10000" "100 1000")}
PAIRS=64
MAXF=${ROCELAT_SCALE_MAXF:-11264}

[ "$(id -u)" -eq 0 ] || { echo "bench/rocelat_scale.sh: needs root" >&2; exit 1; }
for f in "$B/rocelat" "$B/rocegen" "$BENCH_STATS"; do
	[ -x "$f" ] || { echo "bench/rocelat_scale.sh: $f missing: build first (make tests)" >&2; exit 1; }
done
command -v tcpdump >/dev/null || { bench_skipped rocelat_scale "no tcpdump"; exit 0; }
command -v bpftool >/dev/null || { bench_skipped rocelat_scale "no bpftool"; exit 0; }
T=$(mktemp -d)
cleanup() {
	ax_cleanup
	rm -rf "$T"
}
trap cleanup EXIT
bench_stats_on

P=axls$$
A=10.211.0.1 R=10.211.0.2
ax_netns_pair $P $A/16 $R/16
# the 64 requester addresses of the host-pairs case
for i in $(seq $PAIRS); do
	ip -n ${P}a addr add 10.211.1.$i/16 dev ${P}va
done
ax_bg ip netns exec ${P}b "${BENCH_ASIDE[@]}" "$B/rocegen" responder -q >/dev/null 2>&1
ax_wait_udp ${P}b 4791

# rocelat's figure KEY of its JSON counters in FILE
rl_counter() {
	jq -r "select(.type==\"counters\") | .$1" "$2" | tail -1
}

# run_case NAME QPS HOSTS: QPS QPs over HOSTS requester addresses (1: A),
# rocelat live and a capture; figures cov_NAME, cov_off_NAME, ns_NAME
run_case() {
	local name=$1 qps=$2 hosts=$3 per i pids=() completed=0 retx=0 c ids rt cnt
	per=$((qps / hosts))
	ax_bg ip netns exec ${P}a tcpdump -s 128 -B 131072 --immediate-mode -U -Z root \
		-i ${P}va -w "$T/cap.pcap" udp port 4791 2>"$T/tcpdump.err"
	local tcpd=$AX_LAST_PID
	ax_capture_ready "$tcpd" "$T/tcpdump.err" 30
	ax_tool_start RLP "$T/rl.out" 30 Tracing ip netns exec ${P}a "${BENCH_ASIDE[@]}" \
		"$B/rocelat" -i ${P}va -j --max-flows $MAXF
	ids=$(bench_prog_ids "$RLP")
	for i in $(seq "$hosts"); do
		local src=$A
		[ "$hosts" -eq 1 ] || src=10.211.1.$i
		ip netns exec ${P}a "${BENCH_SEND[@]}" "$B/rocegen" requester -d $R --src $src -q \
			--window 1 -f "$per" -n $((per * MSGS)) --ack-timeout-us 2000000 \
			--timeout 120 >"$T/req.$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i"
	done
	for i in $(seq "$hosts"); do
		grep -q ' status=ok' "$T/req.$i" || { cat "$T/req.$i" >&2; return 1; }
		c=$(sed -n 's/^rocegen: role=requester .* completed=\([0-9]*\).*/\1/p' "$T/req.$i")
		completed=$((completed + c))
		c=$(sed -n 's/^rocegen: role=requester .* retransmits=\([0-9]*\).*/\1/p' "$T/req.$i")
		retx=$((retx + c))
	done
	# shellcheck disable=SC2086 # a list of ids
	# the packet programs only: not the sweep, run once a report
	read -r rt cnt < <(bench_prog_stats $ids | awk '$4 != "rocelat_sweep" { r += $2; c += $3 } END { print r + 0, c + 0 }')
	ax_tool_stop RLP INT
	ax_capture_stop "$tcpd" "$T/tcpdump.err" 30
	"$B/rocelat" -r "$T/cap.pcap" -j --max-flows $MAXF >"$T/off.out" 2>"$T/off.err"
	# a retransmitted request's answer is ambiguous (Karn): no sample
	bench_add "cov_$name" "$(bench_ratio "$(rl_counter samples "$T/rl.out")" $((completed - retx)) 4)"
	bench_add "cov_off_$name" "$(bench_ratio "$(rl_counter samples "$T/off.out")" $((completed - retx)) 4)"
	bench_add "ns_$name" "$(bench_ratio "$rt" "$cnt" 1)"
	printf '  %-10s %6d QPs %3d host(s): completed %7d (%d retransmitted), samples live %7d, -r %7d, %s ns per packet\n' \
		"$name" "$qps" "$hosts" "$completed" "$retx" "$(rl_counter samples "$T/rl.out")" \
		"$(rl_counter samples "$T/off.out")" "$(bench_ratio "$rt" "$cnt" 1)"
	# where samples fall short, what rocelat saw instead
	[ "$(rl_counter samples "$T/rl.out")" -eq $((completed - retx)) ] ||
		jq -c 'select(.type=="counters") | {requests, tracked, retransmits, karn_discarded,
			timeouts, answers_held, ambiguous_answers, unmatched_answers, untracked_qps,
			flows_started, qps_paired}' "$T/rl.out" | tail -1 | sed 's/^/    live: /'
}

# kernel memory of rocelat's maps (memlock, bpftool) at --max-flows FLOWS:
# the total in MB as figure mem_mb_FLOWS; at $MAXF also per flow
# (mem_per_flow) and the flow table's entry alone (mem_entry: the pending
# map's memlock over its entries)
memory_of() {
	local flows=$1 id tot=0 m line
	ax_tool_start RLP "$T/mem.out" 30 Tracing ip netns exec ${P}a "$B/rocelat" -i ${P}va --max-flows "$flows"
	for id in $({ grep -h '^map_id:' /proc/"$RLP"/fdinfo/* 2>/dev/null || true; } | awk '{ print $2 }' | sort -un); do
		line=$(bpftool map show id "$id")
		m=$(sed -n 's/.*memlock \([0-9]*\)B.*/\1/p' <<<"$line")
		tot=$((tot + ${m:-0}))
		if [ "$flows" = "$MAXF" ] && grep -q ' name pending ' <<<"$line"; then
			bench_add mem_entry $((m / $(sed -n 's/.*max_entries \([0-9]*\).*/\1/p' <<<"$line")))
		fi
	done
	ax_tool_stop RLP INT
	bench_add "mem_mb_$flows" "$(bench_ratio "$tot" 1000000 1)"
	[ "$flows" != "$MAXF" ] || bench_add mem_per_flow $((tot / MAXF))
}

memory_per_flow() {
	local f

	memory_of "$MAXF"
	for f in 11264 4096 16384; do
		[ "$f" = "$MAXF" ] || memory_of "$f"
	done
}

for r in $(seq "$ROUNDS"); do
	echo "== round $r: coverage and cost per packet ($MSGS messages a QP, one in flight)"
	for n in $SIZES; do
		run_case "q$n" "$n" 1
		bench_add "cost_q$n" "$(bench_ratio "${BENCH_SAMPLES[ns_q$n]##* }" "${BENCH_SAMPLES[ns_q100]##* }")"
	done
	if [ "$BENCH_QUICK" != 1 ]; then
		run_case "h$PAIRS" $((10000 / PAIRS * PAIRS)) $PAIRS
		bench_add "cost_h$PAIRS" "$(bench_ratio "${BENCH_SAMPLES[ns_h$PAIRS]##* }" "${BENCH_SAMPLES[ns_q100]##* }")"
	fi
	memory_per_flow
done

echo
echo "rocelat at scale, median (min..max) of $ROUNDS rounds:"
cases=()
for n in $SIZES; do cases+=("q$n"); done
[ "$BENCH_QUICK" = 1 ] || cases+=("h$PAIRS")
for c in "${cases[@]}"; do
	echo "  $c coverage live / -r:        $(bench_fig "cov_$c") / $(bench_fig "cov_off_$c")  (target 1)"
	echo "  $c ns per packet, / 100 QPs:  $(bench_fig "ns_$c"), $(bench_fig "cost_$c")  (target <= 1.5)"
	bench_result rocelat_scale "$c coverage live" "cov_$c" ">= 1"
	bench_result rocelat_scale "$c coverage -r" "cov_off_$c" ">= 1"
	[ "$c" = q100 ] ||
		bench_result rocelat_scale "$c cost per packet / 100 QPs" "cost_$c" "<= 1.5"
done
echo "  kernel memory per flow, bytes: $(bench_fig mem_per_flow) (at --max-flows $MAXF; the flow-table entry $(bench_fig mem_entry))"
echo "  kernel memory, MB: $(bench_fig mem_mb_11264) at --max-flows 11264 (default), $(bench_fig mem_mb_4096) at 4096, $(bench_fig mem_mb_16384) at 16384"
bench_result rocelat_scale "kernel memory per flow, bytes" mem_per_flow "-"
bench_result rocelat_scale "flow-table entry, bytes" mem_entry "-"
bench_result rocelat_scale "kernel memory at 11264 flows (the default), MB" mem_mb_11264 "<= 67.1"
