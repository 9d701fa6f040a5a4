#!/usr/bin/env bash
# rxedrop cost on the kfree_skb path: run_time_ns / run_cnt with BPF
# statistics on, for counts mode and events mode, each attached side by side
# with the bpftrace one-liner it replaces to one nftables drop flood, in rounds.
# Also checks that counts mode loses nothing at this machine's drop rate:
# what it counted against the nft rule's own counter over its run (the
# closing table's "counted / dropped", target 1).
#
# A tracer's programs are the ones its process holds open (fdinfo), so
# programs that other work on the machine loads meanwhile are never
# counted; each reading waits until the programs saw the whole flood.
# Environment: N (200000 drops per flood), ROUNDS (3), AX_BENCH_QUICK.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/lib/common.bash
source bench/lib.bash
N=${N:-$(bench_size 200000 5000)}
# per run: names and files of their own, so that two runs on one machine
# (a test and a make bench) never meet
P=axbr$$
[ -x "$AX_BUILD/udpflood" ] && [ -x "$AX_BUILD/rxedrop" ] && [ -x "$BENCH_STATS" ] ||
	{ echo "$0: build first (make)" >&2; exit 1; }
B=$(mktemp -d)

mounted_tracefs=0
# bpftrace reads tracepoint formats from tracefs
if [ ! -d /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing && mounted_tracefs=1
fi
cleanup() {
	ax_cleanup
	rm -rf "$B"
	[ $mounted_tracefs = 0 ] || umount /sys/kernel/tracing
}
trap cleanup EXIT
bench_stats_on
ax_netns_pair $P 10.204.0.1/24 10.204.0.2/24
ip netns exec ${P}b nft add table inet axbench
ip netns exec ${P}b nft add chain inet axbench in '{ type filter hook input priority 0; }'
ip netns exec ${P}b nft add rule inet axbench in udp dport 4791 counter drop
# the truth of a round's drops: the rule's own counter
dropped() {
	ip netns exec ${P}b nft list chain inet axbench in |
		sed -n 's/.*counter packets \([0-9]*\) bytes.*/\1/p'
}

# Each mode runs beside the one-liner on one flood: each kfree_skb call
# runs both programs, so a slow spell of the shared machine slows them
# alike and the ratios hold still (run one after the other,
# counts/bpftrace ranged 0.92..1.47 in one make bench here).
declare -A PID=() IDS=() BEFORE=()

# start NAME CMD...: the tracer in the background, its programs running
start() {
	local name=$1 out end
	out=$B/$name.out
	shift
	# emptied here, not by the background job's redirection: a banner
	# left from the last round must not pass for this tracer's (its
	# programs would not be loaded yet; libbpf's probe programs may be)
	: >"$out"
	"${BENCH_ASIDE[@]}" "$@" >>"$out" 2>&1 &
	PID[$name]=$!
	AX_PIDS+=("$!")
	ax_wait_for "$out" '^Tracing\|^Attaching' 60 >/dev/null
	# bpftrace says "Attaching" before it has: until the programs run,
	# one packet at a time to a closed port (freed, not counted as RoCE)
	end=$((SECONDS + 30))
	while :; do
		IDS[$name]=$(bench_prog_ids "${PID[$name]}")
		# shellcheck disable=SC2086 # a list of ids
		[ -n "${IDS[$name]}" ] && [ "$(bench_calls ${IDS[$name]})" -gt 0 ] && break
		[ "$SECONDS" -le "$end" ] || { echo "$0: $name's programs (${IDS[$name]:-none}) never ran" >&2; exit 1; }
		ip netns exec ${P}a "$AX_BUILD/udpflood" 10.204.0.2 4792 1 >/dev/null
		sleep 0.1
	done
}

# stats NAME: "run_time_ns run_cnt" of its programs, summed
stats() {
	# shellcheck disable=SC2086
	bench_prog_stats ${IDS[$1]} | awk '{ r += $2; c += $3 } END { print r + 0, c + 0 }'
}

# flood: N drops while every tracer runs; each one's ns per call
flood() {
	local name rt cnt rt0 cnt0
	for name in "${!PID[@]}"; do BEFORE[$name]=$(stats "$name"); done
	ip netns exec ${P}a "${BENCH_SEND[@]}" "$AX_BUILD/udpflood" 10.204.0.2 4791 "$N" >"$B/flood"
	for name in "${!PID[@]}"; do
		read -r rt0 cnt0 <<<"${BEFORE[$name]}"
		# shellcheck disable=SC2086
		bench_wait_calls $((cnt0 + N)) ${IDS[$name]}
		read -r rt cnt < <(stats "$name")
		bench_add "$name" "$(awk -v r=$((rt - rt0)) -v c=$((cnt - cnt0)) 'BEGIN { printf "%.1f", r / c }')"
		printf '%-18s %9s calls %8s ns/call\n' "$name" $((cnt - cnt0)) "${BENCH_SAMPLES[$name]##* }"
	done
	cat "$B/flood"
}

# stop: every tracer ended (SIGTERM: a background bpftrace ignores
# SIGINT, inherited SIG_IGN)
stop() {
	local name
	for name in "${!PID[@]}"; do ax_stop "${PID[$name]}" TERM; done
	PID=() IDS=()
}

have_bpftrace=0
command -v bpftrace >/dev/null && have_bpftrace=1
ONELINER='tracepoint:skb:kfree_skb { @drops[ksym(args->location), args->reason] = count(); }'
# one flood per mode, the one-liner beside it (as bpftrace_MODE): events
# mode's reader and ring buffer would weigh on counts mode's figure
for r in $(seq "$ROUNDS"); do
	echo "round $r:"
	for mode in counts events; do
		d0=$(dropped)
		if [ $mode = counts ]; then start counts "$AX_BUILD/rxedrop"
		else start events "$AX_BUILD/rxedrop" -e; fi
		[ $have_bpftrace = 0 ] || start bpftrace_$mode bpftrace -e "$ONELINER"
		flood
		stop
		[ $mode != counts ] || bench_add dropped $(($(dropped) - d0))
		[ $have_bpftrace = 0 ] ||
			bench_add $mode/bpftrace "$(bench_ratio "${BENCH_SAMPLES[$mode]##* }" "${BENCH_SAMPLES[bpftrace_$mode]##* }")"
	done
	bench_add counted "$(awk '/NETFILTER_DROP/ { s += $3 } END { print s + 0 }' "$B/counts.out")"
	bench_add counted/dropped "$(bench_ratio "${BENCH_SAMPLES[counted]##* }" "${BENCH_SAMPLES[dropped]##* }" 4)"
	bench_add printed "$(grep -c NETFILTER_DROP "$B/events.out" || true)"
	bench_add lost "$(sed -n 's/WARNING: \([0-9]*\) events lost.*/\1/p' "$B/events.out" | grep . || echo 0)"
done

echo
echo "ns/call, median (min..max) of $ROUNDS rounds, $N drops per flood:"
echo "  counts mode:         $(bench_fig counts)"
echo "  bpftrace one-liner:  $(bench_fig bpftrace_counts)"
echo "  events mode:         $(bench_fig events)"
echo "  one-liner beside it: $(bench_fig bpftrace_events)"
echo "counts mode counted $(bench_fig counted) of $(bench_fig dropped) the rule dropped (ratio $(bench_fig counted/dropped)); events mode printed $(bench_fig printed), lost $(bench_fig lost)"
bench_result rxedrop "counts mode: counted / the rule's drops" counted/dropped ">= 1"
if [ $have_bpftrace = 1 ]; then
	echo "ratio counts/bpftrace: $(bench_fig counts/bpftrace) (target <= 0.6)"
	echo "ratio events/bpftrace: $(bench_fig events/bpftrace)"
	bench_result rxedrop "counts mode / bpftrace one-liner" counts/bpftrace "<= 0.6"
	bench_result rxedrop "events mode / bpftrace one-liner" events/bpftrace "-"
else
	bench_skipped rxedrop "bpftrace not installed (no one-liner to compare with)"
fi
