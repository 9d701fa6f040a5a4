#!/usr/bin/env bash
# rocelat benchmark (run by `make bench` through bench/run; needs root and
# a built tree). ROUNDS rounds (3) of each part, median (min..max).
#
# 1. Cost per packet through BPF_PROG_TEST_RUN of rocelat_xdp, as a ratio
#    to an empty XDP program measured in the same run: a non-RoCE frame
#    (one large repeat; target <= 1.5x), a RoCE request and the ACK that
#    completes it (one call each, new PSN per call, since a repeated
#    request is a retransmission; target <= 4x). Each call is a system
#    call, so caches and TLB start cold: the cost of an isolated packet.
# 2. Steady state: rocelat_tc with warm caches, as on a busy link
#    (bench/rocelat_steady.bpf.c steps the PSN and tail-calls it: batches
#    of 32 new requests, then their 32 ACKs, in tc test runs). rocelat's
#    own ns per packet in clock reads (bpf_ktime_get_ns, measured the same
#    way): target <= 2.5 per request and per ACK.
# 3. Packets per second through a veth pair: a UDP flood of RoCE requests
#    (build/udpflood), the received-packet rate with no program, an empty
#    XDP program, rocelat (native XDP, the default on veth) and rocelat
#    --skb-mode, each on a veth pair of its own with its program attached
#    throughout; per round the kinds' floods in turn, 7 of each, and the
#    median of each kind's. Floods are sent from one CPU (receivers and
#    loaders on the other). Target: rocelat/none >= 0.9.
#
# Environment: ROUNDS, AX_BENCH_QUICK, ROCELAT_BENCH_CALLS (50000),
# ROCELAT_BENCH_BATCHES (20000), ROCELAT_BENCH_PACKETS (300000).
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/lib/common.bash
source bench/lib.bash
B=$AX_BUILD
HELPER=$B/bench/rocelat_bench
CALLS=${ROCELAT_BENCH_CALLS:-$(bench_size 50000 2000)}
BATCHES=${ROCELAT_BENCH_BATCHES:-$(bench_size 20000 500)}
FLOOD_N=${ROCELAT_BENCH_PACKETS:-$(bench_size 300000 20000)}
FLOODS=$(bench_size 7 3)

[ "$(id -u)" -eq 0 ] || { echo "bench/rocelat.sh: needs root" >&2; exit 1; }
for f in "$B/rocelat" "$B/rocegen" "$B/udpflood" "$HELPER" "$B/bench/rocelat_steady.bpf.o"; do
	[ -e "$f" ] || { echo "bench/rocelat.sh: $f missing: build first (make)" >&2; exit 1; }
done
trap ax_cleanup EXIT

# helper OUTPUT: print it, and keep its "RESULT k=v ..." figures
keep_results() {
	local kv
	printf '%s\n' "$1" | grep -v '^RESULT '
	for kv in $(sed -n 's/^RESULT //p' <<<"$1"); do
		bench_add "${kv%%=*}" "${kv#*=}"
	done
}

# names of this run's own: a test and a make bench may run at once
P=axlb$$
# pps: a veth pair per kind (none, empty XDP, rocelat, rocelat
# --skb-mode), each with its program attached for the whole bench, so that
# the kinds' floods alternate every few hundred ms: on this VM the
# machine's speed drifts by a third over seconds, which one flood per kind
# and attach, in turn, measured as the programs' cost
KINDS=(none empty rocelat rocelat-skb)
for k in "${!KINDS[@]}"; do
	ax_netns_pair $P$k 10.78.$k.1/24 10.78.$k.2/24
	out=$(mktemp)
	# a receiver that reads (no ICMP unreachable back to the flood)
	ax_bg ip netns exec $P${k}b "${BENCH_ASIDE[@]}" "$B/rocegen" responder --count-only -q >/dev/null 2>&1
	case ${KINDS[$k]} in
	empty)
		ax_bg ip netns exec $P${k}b "${BENCH_ASIDE[@]}" "$HELPER" xdp-pass $P${k}vb >"$out"
		ax_wait_for "$out" attached 30 >/dev/null
		;;
	rocelat | rocelat-skb)
		ax_bg ip netns exec $P${k}b "${BENCH_ASIDE[@]}" "$B/rocelat" -i $P${k}vb \
			$([ "${KINDS[$k]}" = rocelat-skb ] && echo --skb-mode) >"$out" 2>&1
		ax_wait_for "$out" Tracing 30 >/dev/null
		;;
	esac
	rm -f "$out"
done

# rx_packets of pair K's receiving veth
rx_count() {
	ip netns exec $P${1}b cat /sys/class/net/$P${1}vb/statistics/rx_packets
}

# flood K: packets per second received at pair K's receiving veth, of one
# flood of FLOOD_N / FLOODS packets. The count is read once the receive
# side has settled (the CPUs' backlogs empty and rx_packets unchanged
# from one read to the next: XDP's veth ring drains through NAPI, not
# the backlog); the time to drain, where the count still moved after the
# sender ended, counts with the sender's seconds
flood() {
	local before after prev=-1 out secs t0 moved=0 end=$((SECONDS + 10))
	before=$(rx_count "$1")
	out=$(ip netns exec $P${1}a "${BENCH_SEND[@]}" "$B/udpflood" 10.78.$1.2 4791 $((FLOOD_N / FLOODS)))
	t0=$EPOCHREALTIME
	after=$(rx_count "$1")
	while ! { ax_backlog_empty && [ "$after" = "$prev" ]; }; do
		if [ "$SECONDS" -gt "$end" ]; then
			echo "bench: pair $1's rx_packets still moving 10 s after the flood" >&2
			return 1
		fi
		[ "$prev" = -1 ] || [ "$after" = "$prev" ] || moved=$(awk -v a="$EPOCHREALTIME" -v b="$t0" 'BEGIN { print a - b }')
		prev=$after
		after=$(rx_count "$1")
	done
	secs=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$out")
	awk -v n=$((after - before)) -v s="$secs" -v d="$moved" 'BEGIN { s += d; printf "%d\n", (s > 0 ? n / s : 0) }'
}

# pps_round: FLOODS floods of each kind in turn, the median of each kind's
pps_round() {
	local i k r
	local -A rates=()
	for i in $(seq "$FLOODS"); do
		for k in "${!KINDS[@]}"; do
			r=$(flood "$k") || exit 1
			rates[$k]+=" $r"
		done
	done
	for k in "${!KINDS[@]}"; do
		bench_add "pps_${KINDS[$k]}" "$(tr ' ' '\n' <<<"${rates[$k]}" | grep . | sort -n |
			awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
		printf '  %-12s %9s pps\n' "${KINDS[$k]}" "${BENCH_SAMPLES[pps_${KINDS[$k]}]##* }"
	done
}

for r in $(seq "$ROUNDS"); do
	echo "== round $r: cost per packet (BPF_PROG_TEST_RUN of rocelat_xdp, $CALLS calls each)"
	keep_results "$("$HELPER" cost "$CALLS")"
	echo "== round $r: steady state (tc test runs, warm caches)"
	keep_results "$("$HELPER" steady "$B/bench/rocelat_steady.bpf.o" "$BATCHES")"
	echo "== round $r: packets per second through a veth pair ($FLOODS floods of $((FLOOD_N / FLOODS)) packets per kind, the kinds in turn)"
	pps_round
	bench_add pps_ratio "$(bench_ratio "${BENCH_SAMPLES[pps_rocelat]##* }" "${BENCH_SAMPLES[pps_none]##* }")"
	bench_add pps_ratio_skb "$(bench_ratio "${BENCH_SAMPLES[pps_rocelat-skb]##* }" "${BENCH_SAMPLES[pps_none]##* }")"
	bench_add pps_ratio_empty "$(bench_ratio "${BENCH_SAMPLES[pps_rocelat]##* }" "${BENCH_SAMPLES[pps_empty]##* }")"
done

echo
echo "rocelat, median (min..max) of $ROUNDS rounds:"
echo "  non-RoCE packet / empty XDP (repeat):       $(bench_fig cost_nonroce_ratio)  (target <= 1.5)"
echo "  RoCE request / empty XDP (one call each):   $(bench_fig cost_request_ratio)  (target <= 4)"
echo "  ACK / empty XDP (one call each):            $(bench_fig cost_ack_ratio)  (target <= 4)"
echo "  request, decapsulation on / off:            $(bench_fig cost_decap_plain_ratio)"
echo "  request in ERSPAN III / plain, decap off:   $(bench_fig cost_erspan3_ratio)"
echo "  one clock read (bpf_ktime_get_ns), ns:      $(bench_fig steady_clock_ns)"
echo "  own cost per request, ns:                   $(bench_fig steady_request_ns)"
echo "  own cost per request, clock reads:          $(bench_fig steady_request_clocks)  (target <= 2.5)"
echo "  own cost per ACK, ns:                       $(bench_fig steady_ack_ns)"
echo "  own cost per ACK, clock reads:              $(bench_fig steady_ack_clocks)  (target <= 2.5)"
echo "  timing program's floor / empty:             $(bench_fig steady_floor_ratio)"
echo "  steady-state samples all taken (1 = yes):   $(bench_fig steady_samples_ok)"
echo "  pps no program / empty XDP / rocelat / skb: $(bench_pick pps_none median) / $(bench_pick pps_empty median) / $(bench_pick pps_rocelat median) / $(bench_pick pps_rocelat-skb median)"
echo "  pps rocelat / none:                         $(bench_fig pps_ratio)"
echo "  pps rocelat / empty XDP:                    $(bench_fig pps_ratio_empty)  (target >= 0.9)"
echo "  pps rocelat --skb-mode / none:              $(bench_fig pps_ratio_skb)"
bench_result rocelat "non-RoCE packet / empty XDP" cost_nonroce_ratio "<= 1.5"
bench_result rocelat "request / empty XDP, one call each" cost_request_ratio "<= 4"
bench_result rocelat "ACK / empty XDP, one call each" cost_ack_ratio "<= 4"
bench_result rocelat "request, decapsulation on / off" cost_decap_plain_ratio "-"
bench_result rocelat "request in ERSPAN III / plain" cost_erspan3_ratio "-"
bench_result rocelat "own cost per request, clock reads" steady_request_clocks "<= 2.5"
bench_result rocelat "own cost per ACK, clock reads" steady_ack_clocks "<= 2.5"
bench_result rocelat "timing floor / empty program" steady_floor_ratio "-"
# the target is rocelat's own cost: against an empty XDP program, since
# native XDP on veth alone (an empty program) costs 0.83 of the pps here
bench_result rocelat "pps rocelat / empty XDP" pps_ratio_empty ">= 0.9"
bench_result rocelat "pps rocelat / no program" pps_ratio "-"
bench_result rocelat "pps rocelat --skb-mode / no program" pps_ratio_skb "-"
