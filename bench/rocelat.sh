#!/usr/bin/env bash
# rocelat benchmark (run by `make bench` through bench/run; needs root and
# a built tree).
#
# 1. Cost per packet through BPF_PROG_TEST_RUN, as a ratio to an empty XDP
#    program measured in the same run: a non-RoCE frame (large repeat), a
#    RoCE request and the ACK that completes it (one call each, new PSN per
#    call, since a repeated request is a retransmission). Targets: non-RoCE
#    <= 1.5x, RoCE <= 4x. Each call is a system call, so caches and TLB
#    start cold: this is the cost of an isolated packet.
# 1b. Steady state: the same handler with warm caches, as on a busy link
#    (bench/rocelat_steady.bpf.c: batches of 32 new requests, then their
#    32 ACKs, each a repeat of one packet whose PSN the wrapper steps);
#    rocelat's own ns per packet and the ratio to an empty program.
# 2. Packets per second through a veth pair (namespaces axlb*a/b): a UDP
#    flood of RoCE requests (tests/lib/udpflood.c, shared with the other benches),
#    received-packet rate with no program, with an empty XDP program, and
#    with rocelat attached (native XDP, the default on veth, and
#    --skb-mode). Target: rocelat/none >= 0.9.
#
# Prints "RESULT name=value" lines; exits non-zero only when it could not
# measure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${AX_BUILD:-$ROOT/build}
HELPER=$B/bench/rocelat_bench
FLOOD_N=${ROCELAT_BENCH_PACKETS:-300000}
ROUNDS=${ROCELAT_BENCH_ROUNDS:-5}
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

# the same handler with warm caches: bench/rocelat_steady.bpf.c includes
# bpf/rocelat.bpf.c and steps the PSN after each run of a repeat
STEADY=$B/bench/rocelat_steady.bpf.o
ARCH=$(uname -m | sed 's/x86_64/x86/; s/aarch64/arm64/')
${CLANG:-clang} -O2 -g -target bpf -D__TARGET_ARCH_$ARCH -Wall -Wextra \
	-Wno-unused-parameter -Ivmlinux/$ARCH -Ibpf -Ibpf/lib -Ibtf \
	-c bench/rocelat_steady.bpf.c -o "$STEADY"
echo "== rocelat: steady state (warm caches, BPF_PROG_TEST_RUN repeat) =="
"$HELPER" steady "$STEADY" "${ROCELAT_BENCH_BATCHES:-20000}"

[ -x "$B/udpflood" ] || { echo "bench/rocelat.sh: build first (make)" >&2; exit 1; }
echo "== rocelat: packets per second through a veth pair ($FLOOD_N packets x ${ROUNDS} rounds) =="
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

# one flood (udpflood: RoCE-shaped SEND_ONLY requests, AckReq, PSN =
# sequence); prints packets per second received at the receiving veth
measure() {
	local before after out secs
	before=$(rx_packets)
	out=$(ip netns exec "${NS}a" "$B/udpflood" 10.78.0.2 4791 "$FLOOD_N")
	after=$(rx_packets)
	secs=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<< "$out")
	awk -v n=$(( after - before )) -v s="$secs" 'BEGIN { printf "%d\n", n / s }'
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

# conditions interleaved round by round, the median of each (a loaded
# 2-core host swings single runs by a factor of two)
declare -A ALL=()
for r in $(seq "$ROUNDS"); do
	for what in none empty rocelat rocelat-skb; do
		pps=$(run_with $what)
		echo "round $r: $what: $pps pps"
		ALL[$what]="${ALL[$what]:-} $pps"
	done
done
median() {
	tr ' ' '\n' <<< "$1" | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
none=$(median "${ALL[none]}")
empty=$(median "${ALL[empty]}")
lat=$(median "${ALL[rocelat]}")
skb=$(median "${ALL[rocelat-skb]}")
[ "$none" -gt 0 ] && [ "$empty" -gt 0 ] || { echo "bench/rocelat.sh: no packets received" >&2; exit 1; }
printf 'median of %d rounds:\n' "$ROUNDS"
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
