#!/usr/bin/env bash
# nfdrop's cost per packet: BPF statistics (run_time_ns / run_cnt, held on
# by bpfstat) of every program nfdrop attaches, under a drop
# flood (an nftables rule drops every packet) and a pass flood (the same
# chain is traversed and nothing matches; the packets then meet no socket),
# in one run, with the ratio to the flood's own cost per packet (udpflood's
# wall time / packets, measured with no tracer attached, the least of three
# floods per round).
#
# Which programs run depends on the kernel: here (no fentry) kfree_skb and
# icmp_send; where fexit is allowed also fexit nft_do_chain, which runs for
# every packet a base chain sees, dropped or not. Other work on the machine
# frees skbs too: the figures are medians (min..max) over ROUNDS (3)
# interleaved rounds. Environment: N (200000), ROUNDS, AX_BENCH_QUICK.
#
# guest part: the fexit path, in the Soft-RoCE guest (emulated CPU: compare
# ratios, not nanoseconds; GUEST_N packets per flood, 10000), except in
# quick mode. bench/run runs it with the other guest parts, after the
# host's benches; run alone, this script boots the guest itself.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/lib/common.bash
source bench/lib.bash
N=${N:-$(bench_size 200000 5000)}
NFDROP=${NFDROP:-$AX_BUILD/nfdrop}
# per run: names and files of their own (a test and a make bench may
# run at once)
P=axnb$$
[ -x "$NFDROP" ] || { echo "bench/nfdrop.sh: $NFDROP not built (make)" >&2; exit 1; }
[ -x "$AX_BUILD/udpflood" ] && [ -x "$BENCH_STATS" ] || { echo "$0: build first (make)" >&2; exit 1; }
B=$(mktemp -d)
cleanup() {
	ax_cleanup
	rm -rf "$B"
}
trap cleanup EXIT
bench_stats_on
ax_netns_pair $P 10.205.0.1/24 10.205.0.2/24
ip netns exec ${P}b nft -f - <<'NFT'
table inet axnbench {
	chain in { type filter hook input priority 0; udp dport 4791 drop; }
}
NFT
DROP_PORT=4791
PASS_PORT=4792

# flood PORT -> ns per packet of the flood itself
flood() {
	local out
	out=$(ip netns exec ${P}a "${BENCH_SEND[@]}" "$AX_BUILD/udpflood" 10.205.0.2 "$1" "$N")
	awk -v n="$N" '{ for (i = 1; i <= NF; i++) if ($i ~ /^seconds=/) { split($i, s, "="); printf "%.1f", s[2] * 1e9 / n } }' <<<"$out"
}

# flood_alone PORT -> the flood's own ns per packet, with no tracer: the
# least of three floods (a slow stretch of the machine makes a flood
# slower, never faster; one flood each moved the ratio by a third)
flood_alone() {
	local a b c
	a=$(flood "$1")
	b=$(flood "$1")
	c=$(flood "$1")
	printf '%s\n' "$a" "$b" "$c" | sort -g | head -1
}

# trace_start: nfdrop attached; TRACER and IDS, the programs its process
# holds
trace_start() {
	: >"$B/nfdrop.err"
	"${BENCH_ASIDE[@]}" "$NFDROP" -j --roce >"$B/nfdrop.out" 2>>"$B/nfdrop.err" &
	TRACER=$!
	AX_PIDS+=("$TRACER")
	ax_wait_for "$B/nfdrop.err" Tracing 120 >/dev/null
	IDS=$(bench_prog_ids "$TRACER")
	[ -n "$IDS" ] || { echo "$0: nfdrop holds no BPF program" >&2; exit 1; }
}

# measure KIND PORT: one flood with nfdrop attached, per-program deltas
measure() {
	local kind=$1 port=$2 before after id rt cnt name r0 c0 total=0 fl
	# shellcheck disable=SC2086 # a list of ids
	before=$(bench_prog_stats $IDS)
	fl=$(flood "$port")
	# every flood packet is freed (kfree_skb) once, in softirq: wait for it
	# shellcheck disable=SC2086
	bench_wait_calls $(($(awk '{ s += $3 } END { print s + 0 }' <<<"$before") + N)) $IDS
	# shellcheck disable=SC2086
	after=$(bench_prog_stats $IDS)
	while read -r id rt cnt name; do
		read -r _ r0 c0 _ < <(grep "^$id " <<<"$before")
		rt=$((rt - r0))
		cnt=$((cnt - c0))
		total=$((total + rt))
		bench_add "$kind:$name:cnt" "$cnt"
		bench_add "$kind:$name:ns" "$(awk -v r=$rt -v c=$cnt 'BEGIN { printf "%.1f", c ? r / c : 0 }')"
	done <<<"$after"
	bench_add "$kind:total" "$(awk -v t=$total -v n="$N" 'BEGIN { printf "%.1f", t / n }')"
	bench_add "$kind:flood_traced" "$fl"
	NAMES=$(awk '{ print $4 }' <<<"$before")
}

# trace_stop FLOODS: nfdrop's drops of the FLOODS drop floods it saw
trace_stop() {
	ax_stop "$TRACER" INT
	echo "nfdrop counted $(jq -s --arg ns "${P}b" '[.[] | select(.type == "nf_drop_count" and .netns_name == $ns) | .packets] | add // 0' "$B/nfdrop.out") of $(($1 * N)) drop flood packets"
}

# nth KEY I: round I's figure
nth() {
	local v
	read -ra v <<<"${BENCH_SAMPLES[$1]}"
	echo "${v[$2 - 1]}"
}

# Rounds per start of nfdrop: one on the host, interleaved with the floods
# alone; all in the guest, where a start takes about 25 s
PER=1
[ "${AGENTXDP_VM:-}" != 1 ] || PER=$ROUNDS
for ((r = 1; r <= ROUNDS; r += PER)); do
	last=$((r + PER - 1 < ROUNDS ? r + PER - 1 : ROUNDS))
	for ((i = r; i <= last; i++)); do
		bench_add drop:flood_alone "$(flood_alone $DROP_PORT)"
		bench_add pass:flood_alone "$(flood_alone $PASS_PORT)"
	done
	trace_start
	for ((i = r; i <= last; i++)); do
		measure drop $DROP_PORT
		measure pass $PASS_PORT
		for kind in drop pass; do
			# three decimals: the pass flood's BPF time is a few % of its own
			bench_add "$kind:ratio" "$(bench_ratio "$(nth "$kind:total" "$i")" "$(nth "$kind:flood_alone" "$i")" 3)"
		done
		echo "round $i: BPF time per packet / the flood's own cost: drop ${BENCH_SAMPLES[drop:ratio]##* }, pass ${BENCH_SAMPLES[pass:ratio]##* }"
	done
	trace_stop $((last - r + 1))
done

how=$(grep -o '(.*)' "$B/nfdrop.err" | head -1)
echo "nfdrop $how, $N packets per flood, median (min..max) of $ROUNDS rounds"
for kind in drop pass; do
	echo
	echo "$kind flood: the flood alone $(bench_fig "$kind:flood_alone") ns/packet, with nfdrop $(bench_fig "$kind:flood_traced") ns/packet"
	for name in $NAMES; do
		# a program this flood never ran (icmp_send under a drop flood)
		# has no cost per call to show
		if [ "$(bench_pick "$kind:$name:cnt" max)" = 0 ]; then
			printf '  %-20s %10s calls (not run by this flood)\n' "$name" 0
			continue
		fi
		printf '  %-20s %10s calls %9s ns/call\n' "$name" \
			"$(bench_pick "$kind:$name:cnt" median)" "$(bench_fig "$kind:$name:ns")"
	done
	echo "  BPF time per flood packet: $(bench_fig "$kind:total") ns = $(bench_fig "$kind:ratio") of the flood's own cost per packet"
done
where="host, kfree_skb"
[ "${AGENTXDP_VM:-}" != 1 ] || where="guest, $(grep -q fexit <<<"$how" && echo fexit || echo kfree_skb)"
bench_result nfdrop "drop flood: BPF time / flood's ($where)" drop:ratio "-"
bench_result nfdrop "pass flood: BPF time / flood's ($where)" pass:ratio "-"

# the fexit path, where the kernel allows it: Debian's 6.1 in the guest
[ "${AGENTXDP_VM:-}" != 1 ] || exit 0
if [ "$BENCH_QUICK" = 1 ]; then
	bench_skipped nfdrop "fexit path: quick mode (needs the Soft-RoCE guest, minutes under emulation)"
	exit 0
fi
if [ "${AX_BENCH_GUEST:-}" = later ]; then
	echo "nfdrop bench: the fexit path runs in the Soft-RoCE guest after the host's benches"
	exit 0
fi
echo
echo "== nfdrop in the Soft-RoCE guest (fexit path; emulated CPU: compare ratios, not nanoseconds)"
rc=0
tests/vm/run --timeout 600 --env N="${GUEST_N:-10000}" --env ROUNDS="$ROUNDS" \
	${AX_BENCH_SUMMARY:+--env AX_BENCH_SUMMARY="$AX_BENCH_SUMMARY"} -- bash bench/nfdrop.sh || rc=$?
case $rc in
0) ;;
125) bench_skipped nfdrop "fexit path: the Soft-RoCE guest could not be built or booted" ;;
*) exit "$rc" ;;
esac
