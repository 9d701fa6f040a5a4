#!/usr/bin/env bash
# rxeqp's cost under real rdma_rxe traffic, in the Soft-RoCE VM: ns per call
# of each attached program (run_time_ns / run_cnt with
# kernel.bpf_stats_enabled) during ib_write_bw, for fentry and for the
# kprobe fallback (and fentry with --no-latency), and ib_write_bw's bandwidth
# without rxeqp and with it, as ratios from the same run. Rounds are
# interleaved and medians taken: qemu emulates both vCPUs on a shared host.
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

# "name run_cnt ns_per_call" of rxeqp's programs (the division in jq: a
# process per program costs seconds under emulation)
prog_stats() {
	bpftool prog show -j | jq -r '.[] | select(.name | startswith("rxeqp_")) |
		(.run_cnt // 0) as $c | ((.run_time_ns // 0) / (if $c > 0 then $c else 1 end) + 0.5 | floor) as $ns |
		"\(.name) \($c) \($ns)"' | sort
}

declare -A BW COST CALLS
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
RATIO_F= RATIO_K= RATIO_L=

for r in $(seq "$ROUNDS"); do
	for mode in none fentry kprobe nolat; do
		if [ "$mode" != none ]; then
			args=(-j 5)
			[ "$mode" = kprobe ] && args+=(--kprobe)
			[ "$mode" = nolat ] && args+=(--no-latency)
			build/rxeqp "${args[@]}" >"$B/rxeqp.out" 2>"$B/rxeqp.err" &
			TRACER=$!
			ax_wait_for "$B/rxeqp.err" Tracing 120 >/dev/null ||
				{ kill -INT "$TRACER"; exit 1; }
		fi
		bw=$(write_bw)
		BW[$mode]="${BW[$mode]:-} $bw"
		if [ -n "$TRACER" ]; then
			while read -r name cnt ns; do
				COST[$mode/$name]="${COST[$mode/$name]:-} $ns"
				CALLS[$mode/$name]=$cnt
			done < <(prog_stats)
			kill -INT "$TRACER"
			wait "$TRACER" || true
			TRACER=
		fi
		printf 'round %d %-7s %8s MB/s\n' "$r" "$mode" "$bw"
	done
	# the ratios of this round: the three runs were back to back
	n=${BW[none]##* } f=${BW[fentry]##* } k=${BW[kprobe]##* } l=${BW[nolat]##* }
	RATIO_F="$RATIO_F $(awk -v n="$n" -v f="$f" 'BEGIN { printf "%.2f", (n > 0 ? f / n : 0) }')"
	RATIO_K="$RATIO_K $(awk -v n="$n" -v k="$k" 'BEGIN { printf "%.2f", (n > 0 ? k / n : 0) }')"
	RATIO_L="$RATIO_L $(awk -v n="$n" -v l="$l" 'BEGIN { printf "%.2f", (n > 0 ? l / n : 0) }')"
done

echo
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo ?)
echo "guest clocksource: $cs (bpf_ktime_get_ns reads it; hpet, as under TCG, is an emulated"
echo "MMIO read: the request-to-ACK timing pays it per ACK, compare nolat = --no-latency)"
echo "rxeqp per-program cost during ib_write_bw -n $ITERS -s $SIZE (kernel $(uname -r), qemu TCG):"
echo "ns/call = run_time_ns / run_cnt per round; min and median over $ROUNDS rounds (a vCPU"
echo "descheduled by the host inflates a round's mean, never shrinks it: min is the estimate)"
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
echo "ib_write_bw MB/s per round (nolat: fentry with --no-latency):"
for m in none fentry kprobe nolat; do
	printf '  %-7s %s   (median %s)\n' "$m" "${BW[$m]}" "$(median <<<"${BW[$m]}")"
done
echo "bandwidth ratio with/without rxeqp, per round: fentry$RATIO_F; kprobe$RATIO_K; nolat$RATIO_L"
echo "median ratio: fentry $(median <<<"$RATIO_F"), kprobe $(median <<<"$RATIO_K"), nolat $(median <<<"$RATIO_L")"
for r in $RATIO_F; do bench_add fentry "$r"; done
for r in $RATIO_K; do bench_add kprobe "$r"; done
for r in $RATIO_L; do bench_add nolat "$r"; done
bench_result rxeqp "MB/s with rxeqp / without (guest, fentry)" fentry "-"
bench_result rxeqp "MB/s with rxeqp / without (guest, --kprobe)" kprobe "-"
bench_result rxeqp "MB/s with rxeqp / without (guest, --no-latency)" nolat "-"
