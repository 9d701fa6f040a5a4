#!/usr/bin/env bash
# rxedrop cost on the kfree_skb path: run_time_ns / run_cnt from
# kernel.bpf_stats_enabled, for counts mode, events mode and the bpftrace
# one-liner it replaces, under the same nftables drop flood, in one run.
# Also checks that counts mode loses nothing at this machine's drop rate.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/lib/common.bash
N=${N:-200000}
B=build/bench
mkdir -p $B
[ -x build/udpflood ] || { echo "$0: build first (make)" >&2; exit 1; }

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
mounted_tracefs=0
# bpftrace reads tracepoint formats from tracefs
if [ ! -d /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing && mounted_tracefs=1
fi
cleanup() {
	sysctl -q kernel.bpf_stats_enabled="$old_stats"
	ax_cleanup
	[ $mounted_tracefs = 0 ] || umount /sys/kernel/tracing
}
trap cleanup EXIT
sysctl -q kernel.bpf_stats_enabled=1
ax_netns_pair axbr 10.204.0.1/24 10.204.0.2/24
ip netns exec axbrb nft add table inet axbench
ip netns exec axbrb nft add chain inet axbench in '{ type filter hook input priority 0; }'
ip netns exec axbrb nft add rule inet axbench in udp dport 4791 drop

# tracing-type programs only: other work on the machine may load XDP/tc ones
prog_ids() {
	bpftool prog show -j | jq -r '.[] | select(.type == "tracing" or .type == "raw_tracepoint" or .type == "tracepoint") | .id' | sort -n
}

# measure NAME CMD...: start the tracer, flood, report ns per call
measure() {
	local name=$1; shift
	local before after ids out=$B/$name.out rt=0 cnt=0 id
	before=$(prog_ids)
	"$@" >"$out" 2>&1 &
	local pid=$!
	for _ in $(seq 100); do
		after=$(prog_ids)
		ids=$(comm -13 <(echo "$before") <(echo "$after"))
		grep -q . <<<"$ids" && grep -qi "^tracing\|^attaching" "$out" && break
		sleep 0.1
	done
	sleep 0.5
	ip netns exec axbra build/udpflood 10.204.0.2 4791 "$N" > $B/$name.flood
	sleep 0.5
	for id in $ids; do
		read -r r c < <(bpftool prog show id "$id" -j | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"')
		rt=$((rt + r)); cnt=$((cnt + c))
	done
	# SIGTERM: a background bpftrace ignores SIGINT (inherited SIG_IGN)
	kill -TERM $pid; wait $pid || true
	local ns
	ns=$(awk -v r=$rt -v c=$cnt 'BEGIN { printf "%.1f", c ? r / c : 0 }')
	SAMPLES[$name]="${SAMPLES[$name]:-} $ns"
	printf '%-22s %10s calls %8s ns/call  (%s)\n' "$name" "$cnt" "$ns" "$(cat $B/$name.flood)"
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# interleaved rounds, median of each: the machine is shared and noisy
ROUNDS=${ROUNDS:-3}
declare -A SAMPLES NS
for r in $(seq "$ROUNDS"); do
	measure rxedrop-counts build/rxedrop
	counted=$(awk '/NETFILTER_DROP/ {s += $3} END {print s + 0}' $B/rxedrop-counts.out)
	measure rxedrop-events build/rxedrop -e
	events=$(grep -c NETFILTER_DROP $B/rxedrop-events.out || true)
	lost=$(sed -n 's/WARNING: \([0-9]*\) events lost.*/\1/p' $B/rxedrop-events.out)
	if command -v bpftrace >/dev/null; then
		measure bpftrace-oneliner bpftrace -e 'tracepoint:skb:kfree_skb { @drops[ksym(args->location), args->reason] = count(); }'
	fi
done
for k in "${!SAMPLES[@]}"; do NS[$k]=$(median <<<"${SAMPLES[$k]}"); done
echo
echo "median ns/call over $ROUNDS rounds: counts ${NS[rxedrop-counts]}, events ${NS[rxedrop-events]}, bpftrace ${NS[bpftrace-oneliner]:-n/a}"
echo "drops sent: $N; counts mode counted: $counted; events mode printed: $events (lost reported: ${lost:-0})"
if [ -n "${NS[bpftrace-oneliner]:-}" ]; then
	awk -v a="${NS[rxedrop-counts]}" -v b="${NS[bpftrace-oneliner]}" -v e="${NS[rxedrop-events]}" 'BEGIN {
		printf "ratio counts/bpftrace: %.2f (target <= 1.0)\n", b ? a / b : 0
		printf "ratio events/bpftrace: %.2f\n", b ? e / b : 0 }'
fi
