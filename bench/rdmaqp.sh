#!/usr/bin/env bash
# rdmaqp's polling cost at scale, in the Soft-RoCE VM: QPS QPs (1000: an
# ib_write_bw -q QPS/2 pair on the test bed, stopped once connected so the
# QPs stay in RTS, idle) polled every second, with --budget 256 and with a
# budget over the QP count (every QP every interval, one dump per device).
# Per mode and round: rdmaqp's CPU time per interval (its on-CPU ns from
# /proc/PID/schedstat, user and kernel: the queries run in its syscalls)
# over SECS steady intervals, and the QP queries per interval counted apart
# from rdmaqp: the function tracer on rdma_rxe's rxe_query_qp (what
# ib_query_qp calls, once per QP a dump or a single query reports), in a
# tracing instance of its own (the global tracer untouched; removed at the
# end), its calls by rdmaqp's PID grouped into the bursts of its polls.
# rdmaqp's own "poll" records (JSON) are printed beside it.
#
# guest part: all of it. On the host this re-runs itself inside the guest
# (tests/vm/run; bench/run runs it with the other guest parts); where the
# guest cannot be built or booted it says so and exits 0.
#
# Environment: ROUNDS (3), QPS (1000), SECS (10). AX_BENCH_QUICK=1 skips it
# on the host (minutes in the guest).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
QPS=${QPS:-1000}
SECS=${SECS:-10}
BUDGET=256

source tests/lib/common.bash
source bench/lib.bash

if [ "${AGENTXDP_VM:-}" != 1 ]; then
	[ -x build/rdmaqp ] || { echo "rdmaqp bench: build/rdmaqp not built (make)"; exit 1; }
	if [ "$BENCH_QUICK" = 1 ]; then
		bench_skipped rdmaqp "quick mode: needs the Soft-RoCE guest (minutes under emulation)"
		exit 0
	fi
	if [ "${AX_BENCH_GUEST:-}" = later ]; then
		echo "rdmaqp bench: runs in the Soft-RoCE guest after the host's benches"
		exit 0
	fi
	rc=0
	tests/vm/run --timeout 1500 --env ROUNDS="$ROUNDS" --env QPS="$QPS" --env SECS="$SECS" \
		${AX_BENCH_SUMMARY:+--env AX_BENCH_SUMMARY="$AX_BENCH_SUMMARY"} \
		-- bench/rdmaqp.sh || rc=$?
	case $rc in
	0) ;;
	125) bench_skipped rdmaqp "the Soft-RoCE guest could not be built or booted" ;;
	*) exit "$rc" ;;
	esac
	exit 0
fi

# ---- inside the guest ----
B=$(mktemp -d)
T=/sys/kernel/tracing
[ -d $T/instances ] || T=/sys/kernel/debug/tracing
INST=$T/instances/ax_rdmaqp_bench
TRACER='' srv='' cli=''
cleanup() {
	[ -z "$TRACER" ] || { kill -INT "$TRACER" 2>/dev/null || true; wait "$TRACER" 2>/dev/null || true; }
	[ ! -d "$INST" ] || { echo nop >"$INST/current_tracer"; rmdir "$INST"; } || true
	# stopped perftest: KILL ends it where INT would wait for a CONT
	[ -z "$srv$cli" ] || kill -KILL "$srv" "$cli" 2>/dev/null || true
	ax_perf_stop 2>/dev/null || true
	ax_cleanup
	scripts/testbed.sh down >/dev/null 2>&1 || true
	rm -rf "$B"
}
trap cleanup EXIT
scripts/testbed.sh up >/dev/null

# the QPs: QPS/2 a side, connected, then stopped (they stay, idle)
ax_perf_start "$B/perf" 900 18520 ib_write_bw -q $((QPS / 2)) -s 64 -D 600
nqp() { rdma res show qp | wc -l; }
enough() { [ "$(nqp)" -ge "$QPS" ]; }
ax_until 300 "$QPS QPs" enough
srv=$(pgrep -P "$AX_PERF_SRV") cli=$(pgrep -P "$AX_PERF_CLI")
kill -STOP "$srv" "$cli"
echo "QPs on the test bed: $(nqp) (ib_write_bw -q $((QPS / 2)) a side, stopped; and the GSI QPs)"

mkdir "$INST"
echo rxe_query_qp >"$INST/set_ftrace_filter"
echo 16384 >"$INST/buffer_size_kb"

# on-CPU ns of PID (schedstat: user and kernel)
cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }

# bursts PID: the rxe_query_qp calls of PID in the trace, one count a
# poll, the start's dump first
bursts() { ax_ftrace_bursts "$INST/trace" "$1" rxe_query_qp; }

# run MODE BUDGET: one start of rdmaqp, SECS intervals measured after two
run_mode() {
	local mode=$1 budget=$2 pid c0 c1 q steady cpu
	: >"$INST/trace"
	echo function >"$INST/current_tracer"
	echo 1 >"$INST/tracing_on"
	build/rdmaqp -j --budget "$budget" 1 >"$B/$mode.out" 2>"$B/$mode.err" &
	TRACER=$!
	pid=$TRACER
	ax_wait_for "$B/$mode.err" Tracing 120 >/dev/null
	sleep 2
	c0=$(cpu_ns "$pid")
	sleep "$SECS"
	c1=$(cpu_ns "$pid")
	kill -INT "$pid"
	wait "$pid" || true
	TRACER=
	# stop recording, then read: a new current_tracer empties the buffer
	echo 0 >"$INST/tracing_on"
	bursts "$pid" >"$B/$mode.bursts"
	echo nop >"$INST/current_tracer"
	# the start's dump apart: the steady polls (the last may be cut short)
	steady=$(sed '1d;$d' "$B/$mode.bursts" | tr '\n' ' ')
	q=$(tr ' ' '\n' <<<"$steady" | grep . | sort -g | tail -n 1)
	cpu=$(awk -v a="$c0" -v b="$c1" -v s="$SECS" 'BEGIN { printf "%.1f", (b - a) / s / 1e6 }')
	bench_add "$mode/cpu" "$cpu"
	bench_add "$mode/max" "${q:-0}"
	bench_add "$mode/mean" "$(tr ' ' '\n' <<<"$steady" | awk 'NF { s += $1; n++ } END { printf "%.0f", n ? s / n : 0 }')"
	printf '%-9s round: CPU %s ms/interval; rxe_query_qp per poll (ftrace): start %s, then %s\n' \
		"$mode" "$cpu" "$(head -n 1 "$B/$mode.bursts")" "$steady"
	printf '%-9s        rdmaqp says: %s\n' "$mode" "$(jq -r -s 'map(select(.type == "poll"))
		| map("\(.queried)/\(.qps)") | join(" ")' "$B/$mode.out")"
	grep Budget "$B/$mode.err" | sed 's/^/          /'
}

for r in $(seq "$ROUNDS"); do
	run_mode budget "$BUDGET"
	run_mode all 1000000
done

echo
echo "rdmaqp polling $(nqp) QPs every second (kernel $(uname -r), qemu TCG, $(nproc) vCPUs):"
printf '%-9s %-22s %-26s %s\n' MODE "CPU ms/interval" "queries/poll max (mean)" ""
for m in budget all; do
	printf '%-9s %-22s %-26s\n' "$m" "$(bench_fig "$m/cpu")" \
		"$(bench_fig "$m/max") ($(bench_pick "$m/mean" median))"
done
bench_result rdmaqp "QP queries per poll, --budget $BUDGET, $QPS QPs (max)" budget/max "<= $BUDGET"
bench_result rdmaqp "QP queries per poll, no bound, $QPS QPs (max)" all/max "-"
bench_result rdmaqp "CPU ms per 1 s interval, --budget $BUDGET, $QPS QPs" budget/cpu "-"
bench_result rdmaqp "CPU ms per 1 s interval, no bound, $QPS QPs" all/cpu "-"
