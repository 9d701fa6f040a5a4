#!/usr/bin/env bash
# nfdrop's cost per packet: bpf stats (run_time_ns / run_cnt, with
# kernel.bpf_stats_enabled) of every program nfdrop attaches, under a drop
# flood (an nftables rule drops every packet) and a pass flood (the same
# chain is traversed and nothing matches; the packets then meet no socket),
# in one run, with the ratio to the flood's own cost per packet (udpflood's
# wall time / packets, measured with no tracer attached).
#
# Which programs run depends on the kernel: here (no fentry) kfree_skb and
# icmp_send; where fexit is allowed also fexit nft_do_chain, which runs for
# every packet a base chain sees, dropped or not. Other work on the machine
# frees skbs too: the figures are medians over ROUNDS interleaved rounds.
# The fexit path is measured in the Soft-RoCE guest (emulated CPU: compare
# ratios, not nanoseconds):
#   tests/vm/run -- env N=20000 ROUNDS=1 bash bench/nfdrop.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/lib/common.bash
N=${N:-200000}
ROUNDS=${ROUNDS:-3}
NFDROP=${NFDROP:-build/nfdrop}
B=build/bench
mkdir -p $B
[ -x "$NFDROP" ] || { echo "bench/nfdrop.sh: $NFDROP not built (make)" >&2; exit 1; }
[ -x build/udpflood ] || { echo "$0: build first (make)" >&2; exit 1; }

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	sysctl -q kernel.bpf_stats_enabled="$old_stats"
	ax_cleanup
}
trap cleanup EXIT
sysctl -q kernel.bpf_stats_enabled=1
ax_netns_pair axnbn 10.205.0.1/24 10.205.0.2/24
ip netns exec axnbnb nft -f - <<'NFT'
table inet axnbench {
	chain in { type filter hook input priority 0; udp dport 4791 drop; }
}
NFT
DROP_PORT=4791
PASS_PORT=4792

# "id run_time_ns run_cnt name" of nfdrop's programs with an id above $1
# (bpftool here cannot name a program's process; ids only grow)
prog_stats() {
	bpftool prog show -j | jq -r --argjson min "$1" '.[] |
		select(.id > $min and (.name | startswith("nfdrop_"))) |
		"\(.id) \(.run_time_ns // 0) \(.run_cnt // 0) \(.name)"' | sort -n
}

max_prog_id() {
	bpftool prog show -j | jq '[.[].id] | max // 0'
}

# flood PORT -> ns per packet of the flood itself
flood() {
	local out
	out=$(ip netns exec axnbna build/udpflood 10.205.0.2 "$1" "$N")
	awk -v n="$N" '{ for (i = 1; i <= NF; i++) if ($i ~ /^seconds=/) { split($i, s, "="); printf "%.1f", s[2] * 1e9 / n } }' <<<"$out"
}

declare -A SAMPLES
add() { SAMPLES[$1]="${SAMPLES[$1]:-} $2"; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# measure KIND PORT: nfdrop attached, one flood, per-program deltas
measure() {
	local kind=$1 port=$2 pid before after id rt cnt name r0 c0 total=0 fl min
	min=$(max_prog_id)
	"$NFDROP" -j --roce >"$B/nfdrop-$kind.out" 2>"$B/nfdrop-$kind.err" &
	pid=$!
	ax_wait_for "$B/nfdrop-$kind.err" Tracing 60 >/dev/null
	before=$(prog_stats "$min")
	fl=$(flood "$port")
	sleep 0.3
	after=$(prog_stats "$min")
	kill -INT $pid
	wait $pid || true
	while read -r id rt cnt name; do
		# only programs there before the flood: another nfdrop started
		# meanwhile (a test run) is not ours
		grep -q "^$id " <<<"$before" || continue
		read -r _ r0 c0 _ < <(grep "^$id " <<<"$before")
		rt=$((rt - r0))
		cnt=$((cnt - c0))
		total=$((total + rt))
		add "$kind:$name:cnt" "$cnt"
		add "$kind:$name:ns" "$(awk -v r=$rt -v c=$cnt 'BEGIN { printf "%.1f", c ? r / c : 0 }')"
	done <<<"$after"
	add "$kind:total" "$(awk -v t=$total -v n="$N" 'BEGIN { printf "%.1f", t / n }')"
	add "$kind:flood_traced" "$fl"
	add "$kind:counted" "$(jq -s '[.[] | select(.type == "nf_drop_count" and .netns_name == "axnbnb") | .packets] | add // 0' "$B/nfdrop-$kind.out")"
	NAMES=$(awk '{ print $4 }' <<<"$before")
}

for r in $(seq "$ROUNDS"); do
	add drop:flood_alone "$(flood $DROP_PORT)"
	add pass:flood_alone "$(flood $PASS_PORT)"
	measure drop $DROP_PORT
	measure pass $PASS_PORT
done

echo "nfdrop $(grep -o '(.*)' $B/nfdrop-drop.err | head -1), $N packets per flood, median of $ROUNDS rounds"
for kind in drop pass; do
	alone=$(median <<<"${SAMPLES[$kind:flood_alone]}")
	traced=$(median <<<"${SAMPLES[$kind:flood_traced]}")
	total=$(median <<<"${SAMPLES[$kind:total]}")
	counted=$(median <<<"${SAMPLES[$kind:counted]}")
	echo
	echo "$kind flood: the flood alone ${alone} ns/packet, with nfdrop ${traced} ns/packet; counted $counted drops"
	for name in $NAMES; do
		printf '  %-20s %10s calls %9s ns/call\n' "$name" \
			"$(median <<<"${SAMPLES[$kind:$name:cnt]}")" \
			"$(median <<<"${SAMPLES[$kind:$name:ns]}")"
	done
	awk -v t="$total" -v a="$alone" 'BEGIN {
		printf "  BPF time per flood packet: %.1f ns = %.3f of the flood'"'"'s own cost per packet\n", t, a ? t / a : 0 }'
done
