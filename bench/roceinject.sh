#!/usr/bin/env bash
# roceinject's cost on the packets it does not select: run_time_ns /
# run_cnt with BPF statistics on (bpfstat hold), against an empty tc
# program (build/bench/tcpass: r0 = TC_ACT_UNSPEC) on the same hook, the
# requester's veth egress, and the same packets: both attached at once
# (tcx runs the empty program, then roceinject), so that a slow spell of
# the shared machine slows both alike and the ratio holds still.
#
# Traffic: rocegen's requester (8 QPs, 16 messages outstanding each)
# against its responder in a second namespace. roceinject drops the
# requests to a QP no flow has (-Q 0xabcde): every RoCE packet is parsed
# and refused by the selectors, the cost every other QP pays while one is
# being injected into (target <= 1.5). The same traffic on UDP port 4793
# (rocegen --port) is not RoCE to roceinject: its cost on the rest of a
# host's traffic, shown as it is.
#
# A tracer's programs are the ones its process holds open (fdinfo), so
# programs that other work on the machine loads meanwhile are never
# counted; each reading waits until both programs saw the whole flood.
# Environment: N (200000 messages per flood), ROUNDS (3), AX_BENCH_QUICK.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/lib/common.bash
source bench/lib.bash
N=${N:-$(bench_size 200000 5000)}
# per run: names and files of their own (a test and a make bench may
# run at once)
P=axib$$
A=10.209.0.1 B=10.209.0.2
TCPASS=$AX_BUILD/bench/tcpass
for f in "$AX_BUILD/roceinject" "$AX_BUILD/rocegen" "$TCPASS" "$BENCH_STATS"; do
	[ -x "$f" ] || { echo "bench/roceinject.sh: $f missing: build first (make tests)" >&2; exit 1; }
done
T=$(mktemp -d)
cleanup() {
	ax_cleanup
	rm -rf "$T"
}
trap cleanup EXIT
bench_stats_on
ax_netns_pair $P $A/24 $B/24
# a responder on the RoCE port and one on 4793 (control ports of their own)
ax_bg ip netns exec ${P}b "${BENCH_ASIDE[@]}" "$AX_BUILD/rocegen" responder -q >/dev/null 2>&1
ax_bg ip netns exec ${P}b "${BENCH_ASIDE[@]}" "$AX_BUILD/rocegen" responder -q \
	--port 4793 --ctl-port 4794 >/dev/null 2>&1
ax_bg ip netns exec ${P}a "${BENCH_ASIDE[@]}" "$TCPASS" ${P}va egress >"$T/empty.out"
EMPTY_PID=$AX_LAST_PID
ax_wait_for "$T/empty.out" attached 30 >/dev/null
EMPTY_IDS=$(bench_prog_ids "$EMPTY_PID")
[ -n "$EMPTY_IDS" ] || { echo "bench/roceinject.sh: tcpass holds no BPF program" >&2; exit 1; }

# inj_start: roceinject on the requester's egress, its program INJ_IDS
inj_start() {
	: >"$T/inj.err"
	ax_bg ip netns exec ${P}a "${BENCH_ASIDE[@]}" "$AX_BUILD/roceinject" -i ${P}va \
		--drop -Q 0xabcde -j >"$T/inj.out" 2>"$T/inj.err"
	INJ_PID=$AX_LAST_PID
	ax_wait_for "$T/inj.err" '^Injecting' 60 >/dev/null
	INJ_IDS=$(bench_prog_ids "$INJ_PID")
	[ -n "$INJ_IDS" ] || { echo "bench/roceinject.sh: roceinject holds no BPF program" >&2; exit 1; }
}

# stats IDS: "run_time_ns run_cnt" of those programs, summed
stats() {
	# shellcheck disable=SC2086 # a list of ids
	bench_prog_stats $1 | awk '{ r += $2; c += $3 } END { print r + 0, c + 0 }'
}

# flood KIND [ROCEGEN OPTIONS]: N messages; each program's ns per call,
# and the ratio, as figures of KIND
flood() {
	local kind=$1 e_rt0 e_cnt0 i_rt0 i_cnt0 e_rt e_cnt i_rt i_cnt
	shift
	read -r e_rt0 e_cnt0 < <(stats "$EMPTY_IDS")
	read -r i_rt0 i_cnt0 < <(stats "$INJ_IDS")
	ip netns exec ${P}a "${BENCH_SEND[@]}" "$AX_BUILD/rocegen" requester -d $B -q -f 8 \
		--window 16 -n "$N" --timeout 120 "$@" >"$T/req.out"
	grep -q ' status=ok' "$T/req.out" || { cat "$T/req.out" >&2; return 1; }
	# shellcheck disable=SC2086
	bench_wait_calls $((i_cnt0 + N)) $INJ_IDS
	read -r e_rt e_cnt < <(stats "$EMPTY_IDS")
	read -r i_rt i_cnt < <(stats "$INJ_IDS")
	bench_add "$kind:empty" "$(awk -v r=$((e_rt - e_rt0)) -v c=$((e_cnt - e_cnt0)) 'BEGIN { printf "%.1f", r / c }')"
	bench_add "$kind:inject" "$(awk -v r=$((i_rt - i_rt0)) -v c=$((i_cnt - i_cnt0)) 'BEGIN { printf "%.1f", r / c }')"
	bench_add "$kind:ratio" "$(bench_ratio "${BENCH_SAMPLES[$kind:inject]##* }" "${BENCH_SAMPLES[$kind:empty]##* }")"
	printf '  %-8s %9s calls: empty %6s ns/call, roceinject %6s ns/call (%9s calls), ratio %s\n' \
		"$kind" $((e_cnt - e_cnt0)) "${BENCH_SAMPLES[$kind:empty]##* }" \
		"${BENCH_SAMPLES[$kind:inject]##* }" $((i_cnt - i_cnt0)) "${BENCH_SAMPLES[$kind:ratio]##* }"
}

# inj_stop: roceinject ended; what it saw and selected this round
inj_stop() {
	ax_stop "$INJ_PID" INT
	[ "$AX_RC" -eq 0 ] || { cat "$T/inj.err" >&2; return 1; }
	jq -r 'select(.type == "summary") | "\(.roce) \(.matched) \(.injected)"' "$T/inj.out" | tail -1 >"$T/seen"
	read -r roce matched injected <"$T/seen"
	bench_add seen "$roce"
	bench_add selected "$matched"
	echo "  roceinject saw $roce RoCE packets, selected $matched, altered $injected"
}

for r in $(seq "$ROUNDS"); do
	echo "round $r ($N messages per flood, 8 QPs, both programs on ${P}va's egress):"
	inj_start
	flood roce
	flood nonroce --port 4793 --ctl-port 4794
	inj_stop
done
# the same hook: roceinject's banner names it, tcpass said it
hook=$(sed -n 's/.*(\(tcx\|tc\) egress).*/\1/p' "$T/inj.err" | head -1)
[ "attached $hook" = "$(cat "$T/empty.out")" ] || {
	echo "bench/roceinject.sh: not on the same hook: $(head -1 "$T/inj.err"); tcpass: $(cat "$T/empty.out")" >&2
	exit 1
}

echo
echo "ns/call, median (min..max) of $ROUNDS rounds, $N messages per flood ($hook egress):"
echo "  RoCE, not selected:  empty $(bench_fig roce:empty), roceinject $(bench_fig roce:inject)"
echo "  not RoCE (UDP 4793): empty $(bench_fig nonroce:empty), roceinject $(bench_fig nonroce:inject)"
echo "roceinject saw $(bench_fig seen) RoCE packets a round and selected $(bench_fig selected)"
echo "ratio RoCE not selected / empty tc: $(bench_fig roce:ratio) (target <= 1.5)"
echo "ratio not RoCE / empty tc:          $(bench_fig nonroce:ratio)"
bench_result roceinject "RoCE not selected / empty tc program" roce:ratio "<= 1.5"
bench_result roceinject "not RoCE / empty tc program" nonroce:ratio "-"
