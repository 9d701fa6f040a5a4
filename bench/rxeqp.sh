#!/usr/bin/env bash
# rxeqp's cost under real rdma_rxe traffic, in the Soft-RoCE VM: ns per call
# of each attached program (run_time_ns / run_cnt with
# kernel.bpf_stats_enabled) during ib_write_bw, for fentry and for the
# kprobe fallback (and fentry with --no-latency), and ib_write_bw's bandwidth
# without rxeqp and with it, as ratios from the same run: per mode one
# start of rxeqp and ROUNDS runs of ib_write_bw, each against the runs
# with no tracer just before and after the mode's; medians taken (qemu
# emulates both vCPUs on a shared host).
#
# guest part: all of it. On the host this re-runs itself inside the guest
# (tests/vm/run; bench/run runs it with the other guest parts); where the
# guest cannot be built or booted it says so and exits 0 (a benchmark never
# fails a build on its environment).
#
# Environment: ROUNDS (3), ITERS (300), SIZE (65536). AX_BENCH_QUICK=1
# skips it on the host (minutes in the guest, not seconds).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
# 300 x 64 KiB: about a second of transfer under emulation (100, a third
# of a second, gave ratios from 0.48 to 1.00 in one run)
ITERS=${ITERS:-300}
SIZE=${SIZE:-65536}

source tests/lib/common.bash
source bench/lib.bash

if [ "${AGENTXDP_VM:-}" != 1 ]; then
	[ -x build/rxeqp ] || { echo "rxeqp bench: build/rxeqp not built (make)"; exit 1; }
	if [ "$BENCH_QUICK" = 1 ]; then
		bench_skipped rxeqp "quick mode: needs the Soft-RoCE guest (minutes under emulation)"
		exit 0
	fi
	if [ "${AX_BENCH_GUEST:-}" = later ]; then
		echo "rxeqp bench: runs in the Soft-RoCE guest after the host's benches"
		exit 0
	fi
	rc=0
	tests/vm/run --timeout 1500 --env ROUNDS="$ROUNDS" --env ITERS="$ITERS" \
		--env SIZE="$SIZE" ${AX_BENCH_SUMMARY:+--env AX_BENCH_SUMMARY="$AX_BENCH_SUMMARY"} \
		-- bench/rxeqp.sh || rc=$?
	case $rc in
	0) ;;
	125) bench_skipped rxeqp "the Soft-RoCE guest could not be built or booted" ;;
	*) exit "$rc" ;;
	esac
	exit 0
fi

# ---- inside the guest ----
B=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
TRACER=
cleanup() {
	[ -z "$TRACER" ] || { kill -INT "$TRACER" 2>/dev/null || true; wait "$TRACER" 2>/dev/null || true; }
	sysctl -q kernel.bpf_stats_enabled="$old_stats"
	scripts/testbed.sh down >/dev/null 2>&1 || true
	rm -rf "$B"
}
trap cleanup EXIT
scripts/testbed.sh up >/dev/null
sysctl -q kernel.bpf_stats_enabled=1

# ib_write_bw rxe-a -> rxe-b once; prints the average bandwidth in MB/s
write_bw_once() {
	local spid bw end=$((SECONDS + 60))
	timeout -k 3 300 stdbuf -oL ib_write_bw -d rxe-b -F -x 1 -p 18520 -n "$ITERS" -s "$SIZE" \
		>"$B/server" 2>&1 </dev/null &
	spid=$!
	# bounded in wall time: a turn takes far longer than 0.1 s here
	until ss -Hltn "sport = :18520" | grep -q . || [ "$SECONDS" -gt "$end" ]; do
		sleep 0.1
	done
	timeout -k 3 300 stdbuf -oL ib_write_bw -d rxe-a -F -x 1 -p 18520 -n "$ITERS" -s "$SIZE" \
		10.10.0.2 >"$B/client" 2>&1 </dev/null || true
	wait "$spid" 2>/dev/null || true
	bw=$(awk '/#iterations/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { print $4; exit }' "$B/client")
	echo "${bw:-0}"
}

# write_bw: the bandwidth of one run that gave one. Under emulation a run
# now and then ends with no figure or 0.00 MB/s (its clock); that run is
# said and done again, not counted as a bandwidth of zero.
write_bw() {
	local bw try
	for try in 1 2 3; do
		bw=$(write_bw_once)
		awk -v b="$bw" 'BEGIN { exit !(b > 0) }' && break
		echo "ib_write_bw run $try gave no bandwidth ($bw); client and server said:" >&2
		tail -n 5 "$B/client" "$B/server" >&2
	done
	echo "$bw"
}

# "name run_cnt run_time_ns" of rxeqp's programs (one bpftool and one jq:
# a process costs a good part of a second under emulation)
prog_stats() {
	bpftool prog show -j | jq -r '.[] | select(.name | startswith("rxeqp_")) |
		"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"' | sort
}

declare -A BW COST CALLS CNT0 RT0 RATIO
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# run_none: one run with no tracer; NONE is its bandwidth
run_none() {
	NONE=$(write_bw)
	BW[none]+=" $NONE"
	printf '%-7s      %8s MB/s\n' none "$NONE"
}

# A start of rxeqp takes 7-8 s here and its stop about 2: one start per
# mode, ROUNDS runs with it, and a run with no tracer before and after
# each mode's. A run's ratio is to the mean of the two around its mode's.
run_none
for mode in fentry kprobe nolat; do
	args=(-j 5)
	[ "$mode" = kprobe ] && args+=(--kprobe)
	[ "$mode" = nolat ] && args+=(--no-latency)
	build/rxeqp "${args[@]}" >"$B/rxeqp.out" 2>"$B/rxeqp.err" &
	TRACER=$!
	ax_wait_for "$B/rxeqp.err" Tracing 120 >/dev/null || { kill -INT "$TRACER"; exit 1; }
	while read -r name cnt rt; do
		CNT0[$name]=$cnt RT0[$name]=$rt
	done < <(prog_stats)
	runs=
	for r in $(seq "$ROUNDS"); do
		bw=$(write_bw)
		runs+=" $bw"
		BW[$mode]+=" $bw"
		# this run's calls and ns per call of each program
		while read -r name cnt rt; do
			c=$((cnt - ${CNT0[$name]:-0})) t=$((rt - ${RT0[$name]:-0}))
			CNT0[$name]=$cnt RT0[$name]=$rt
			COST[$mode/$name]+=" $(((t + c / 2) / (c > 0 ? c : 1)))"
			CALLS[$mode/$name]=$c
		done < <(prog_stats)
		printf '%-7s run %d %8s MB/s\n' "$mode" "$r" "$bw"
	done
	kill -INT "$TRACER"
	wait "$TRACER" || true
	TRACER=
	before=$NONE
	run_none
	for bw in $runs; do
		RATIO[$mode]+=" $(awk -v b="$bw" -v n1="$before" -v n2="$NONE" 'BEGIN { n = (n1 + n2) / 2; printf "%.2f", (n > 0 ? b / n : 0) }')"
	done
done

echo
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo ?)
echo "guest clocksource: $cs (bpf_ktime_get_ns reads it; hpet, as under TCG, is an emulated"
echo "MMIO read: the request-to-ACK timing pays it per ACK, compare nolat = --no-latency)"
echo "rxeqp per-program cost during ib_write_bw -n $ITERS -s $SIZE (kernel $(uname -r), qemu TCG):"
echo "ns/call = run_time_ns / run_cnt per run; min and median over the $ROUNDS runs of each mode (a vCPU"
echo "descheduled by the host inflates a run's mean, never shrinks it: min is the estimate)"
printf '%-7s %-28s %9s %10s %10s\n' MODE PROGRAM CALLS MIN_NS MEDIAN_NS
# one awk for the table: "MODE/PROGRAM CALLS NS NS ..." a line
for k in "${!COST[@]}"; do
	echo "$k ${CALLS[$k]}${COST[$k]}"
done | sort | awk '{
	n = 0
	for (i = 3; i <= NF; i++) v[++n] = $i
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	split($1, m, "/")
	if ($2 + 0 == 0) { printf "%-7s %-28s %9s %10s %10s\n", m[1], m[2], 0, "-", "-"; next }
	printf "%-7s %-28s %9s %10s %10s\n", m[1], m[2], $2, v[1], v[int((n + 1) / 2)] }'
echo
echo "ib_write_bw MB/s per run (nolat: fentry with --no-latency):"
for m in none fentry kprobe nolat; do
	printf '  %-7s %s   (median %s)\n' "$m" "${BW[$m]}" "$(median <<<"${BW[$m]}")"
done
echo "bandwidth ratio with/without rxeqp, per run: fentry${RATIO[fentry]}; kprobe${RATIO[kprobe]}; nolat${RATIO[nolat]}"
echo "median ratio: fentry $(median <<<"${RATIO[fentry]}"), kprobe $(median <<<"${RATIO[kprobe]}"), nolat $(median <<<"${RATIO[nolat]}")"
for m in fentry kprobe nolat; do
	for r in ${RATIO[$m]}; do bench_add "$m" "$r"; done
done
bench_result rxeqp "MB/s with rxeqp / without (guest, fentry)" fentry "-"
bench_result rxeqp "MB/s with rxeqp / without (guest, --kprobe)" kprobe "-"
bench_result rxeqp "MB/s with rxeqp / without (guest, --no-latency)" nolat "-"
