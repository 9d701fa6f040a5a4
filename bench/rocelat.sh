#!/usr/bin/env bash
# rocelat benchmark (run by `make bench` through bench/run; needs root and
# a built tree).
#
# 1. Cost per packet through BPF_PROG_TEST_RUN, as a ratio to an empty XDP
#    program measured in the same run: a non-RoCE frame (large repeat), a
#    RoCE request and the ACK that completes it (one call each, new PSN per
#    call, since a repeated request is a retransmission). Targets: non-RoCE
#    <= 1.5x, RoCE <= 4x.
# 2. Packets per second through a veth pair (namespaces axlb*a/b): a UDP
#    flood of RoCE requests, received-packet rate with no program, with an
#    empty XDP program, and with rocelat attached (native XDP, the default on
#    veth, and --skb-mode). Target: rocelat/none >= 0.9. Native XDP moves
#    veth onto its NAPI path, which alone costs more than rocelat: compare
#    with the empty XDP program too.
#
# Prints "RESULT name=value" lines; exits non-zero only when it could not
# measure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${AX_BUILD:-$ROOT/build}
HELPER=$B/bench/rocelat_bench
SECS=${ROCELAT_BENCH_SECS:-3}
ROUNDS=${ROCELAT_BENCH_ROUNDS:-2}
CALLS=${ROCELAT_BENCH_CALLS:-200000}
NS=axlb$$
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	ip netns del "${NS}a" 2>/dev/null || true
	ip netns del "${NS}b" 2>/dev/null || true
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || { echo "bench/rocelat.sh: needs root" >&2; exit 1; }
[ -x "$B/rocelat" ] && [ -f "$B/rocelat.skel.h" ] || { echo "bench/rocelat.sh: build first (make)" >&2; exit 1; }
mkdir -p "$B/bench"
if [ ! -x "$HELPER" ] || [ "$HELPER" -ot bench/rocelat_bench.c ] || [ "$HELPER" -ot "$B/rocelat.skel.h" ]; then
	${CC:-cc} -O2 -g -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE \
		-I"$B" -Itools -Ibpf -Itests/unit bench/rocelat_bench.c \
		-lbpf -lelf -lz -o "$HELPER"
fi

echo "== rocelat: cost per packet (BPF_PROG_TEST_RUN) =="
"$HELPER" cost "$CALLS"

echo "== rocelat: packets per second through a veth pair (${SECS}s x ${ROUNDS} rounds) =="
ip netns add "${NS}a"
ip netns add "${NS}b"
ip link add "${NS}va" netns "${NS}a" type veth peer name "${NS}vb" netns "${NS}b"
ip -n "${NS}a" addr add 10.78.0.1/24 dev "${NS}va"
ip -n "${NS}b" addr add 10.78.0.2/24 dev "${NS}vb"
ip -n "${NS}a" link set "${NS}va" up
ip -n "${NS}b" link set "${NS}vb" up
# a receiver that reads (no ICMP unreachable back to the flood)
ip netns exec "${NS}b" "$B/rocegen" responder --count-only -q > /dev/null 2>&1 &
PIDS+=($!)
sleep 0.3

rx_packets() {
	ip netns exec "${NS}b" cat "/sys/class/net/${NS}vb/statistics/rx_packets"
}

# one flood; prints received packets per second at the receiving veth
measure() {
	local before after
	before=$(rx_packets)
	ip netns exec "${NS}a" "$HELPER" flood 10.78.0.2 "$SECS" > /dev/null
	after=$(rx_packets)
	echo $(( (after - before) / SECS ))
}

run_with() {
	local what=$1 pid="" out
	case $what in
	none) ;;
	empty)
		out=$(mktemp)
		ip netns exec "${NS}b" "$HELPER" xdp-pass "${NS}vb" > "$out" &
		pid=$!
		for _ in $(seq 50); do grep -q attached "$out" && break; sleep 0.1; done
		rm -f "$out"
		;;
	rocelat|rocelat-skb)
		out=$(mktemp)
		ip netns exec "${NS}b" "$B/rocelat" -i "${NS}vb" \
			$([ $what = rocelat-skb ] && echo --skb-mode) > "$out" 2>&1 &
		pid=$!
		for _ in $(seq 50); do grep -q Tracing "$out" && break; sleep 0.1; done
		rm -f "$out"
		;;
	esac
	measure
	if [ -n "$pid" ]; then
		kill -INT "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
}

declare -A SUM=([none]=0 [empty]=0 [rocelat]=0 [rocelat-skb]=0)
for r in $(seq "$ROUNDS"); do
	for what in none empty rocelat rocelat-skb; do
		pps=$(run_with $what)
		echo "round $r: $what: $pps pps"
		SUM[$what]=$(( SUM[$what] + pps ))
	done
done
none=$(( SUM[none] / ROUNDS ))
empty=$(( SUM[empty] / ROUNDS ))
lat=$(( SUM[rocelat] / ROUNDS ))
skb=$(( SUM[rocelat-skb] / ROUNDS ))
[ "$none" -gt 0 ] && [ "$empty" -gt 0 ] || { echo "bench/rocelat.sh: no packets received" >&2; exit 1; }
printf 'no program:      %9d pps\n' "$none"
printf 'empty XDP:       %9d pps\n' "$empty"
printf 'rocelat:         %9d pps  ratio to none %s (target >= 0.9), to empty XDP %s\n' \
	"$lat" "$(awk -v a="$lat" -v b="$none" 'BEGIN { printf "%.2f", a / b }')" \
	"$(awk -v a="$lat" -v b="$empty" 'BEGIN { printf "%.2f", a / b }')"
printf 'rocelat skb mode: %9d pps  ratio to none %s\n' "$skb" \
	"$(awk -v a="$skb" -v b="$none" 'BEGIN { printf "%.2f", a / b }')"
echo "RESULT pps_none=$none pps_empty_xdp=$empty pps_rocelat=$lat pps_rocelat_skb=$skb" \
	"pps_ratio_skb=$(awk -v a="$skb" -v b="$none" 'BEGIN { printf "%.2f", a / b }')" \
	"pps_ratio=$(awk -v a="$lat" -v b="$none" 'BEGIN { printf "%.2f", a / b }')" \
	"pps_ratio_vs_empty_xdp=$(awk -v a="$lat" -v b="$empty" 'BEGIN { printf "%.2f", a / b }')"
