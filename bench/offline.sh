#!/usr/bin/env bash
# rocelat -r benchmark (run by `make bench` through bench/run; a built
# tree; root only for the --in-kernel part). ROUNDS rounds (3), median
# (min..max).
#
# The capture: roce_captures.py's ConnectX-shaped one (4 QPs, coalesced
# ACKs, READs, atomics) repeated by bench/repeat_pcap.py to 1,000,000
# packets (quick: 20,000), each copy later than the last and its PSNs
# moved on, so that every copy's requests are new ones (455 MB).
# Each round reads it with:
#   - rocelat -r, natively (its default, no privileges);
#   - rocelat -r --in-kernel (BPF_PROG_TEST_RUN a packet);
#   - tshark -r FILE -Y infiniband, Wireshark's InfiniBand dissector.
# Figures: rocelat's packets per second of CPU time (user + system, of
# the whole command: a shared machine lengthens wall times unevenly), and
# the ratios of CPU times: tshark / rocelat (target >= 50) and --in-kernel
# / native. The three read the file in the same round, from the page
# cache (after two untimed reads); all three must count every packet
# (tshark's lines, rocelat's roce_packets), or the bench fails.
# Memory: rocelat -r's peak resident memory on that file and on one five
# times as long (2.2 GB; quick: 2x), as pcap and as pcapng (editcap), and
# the ratios long/short (target <= 1.1: it does not grow with the
# recording).
#
# Environment: ROUNDS, AX_BENCH_QUICK, ROCELAT_OFFLINE_PACKETS.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/lib/common.bash
source bench/lib.bash
RL=$AX_BUILD/rocelat
N=${ROCELAT_OFFLINE_PACKETS:-$(bench_size 1000000 20000)}
PY=${PYTHON_SCAPY:-/usr/bin/python3}

for c in "$RL" tshark jq "$PY"; do
	command -v "$c" >/dev/null || { echo "bench/offline.sh: $c missing (make; scripts/setup-deps.sh)" >&2; exit 1; }
done
T=$(mktemp -d /var/tmp/ax-offline.XXXXXX)
trap 'rm -rf "$T"' EXIT
"$PY" tests/lib/roce_captures.py "$T" >/dev/null 2>&1
"$PY" bench/repeat_pcap.py "$T/connectx.pcap" "$T/big.pcap" "$N"
rm -f "$T"/*.json
total=$(capinfos -M -c "$T/big.pcap" | awk '/Number of packets/ { print $NF }')

# cpu_time OUT CMD...: CMD's user + system seconds, its stdout in OUT
cpu_time() {
	local out=$1 TIMEFORMAT='%U %S' t
	shift
	t=$( { time "$@" >"$out" 2>/dev/null; } 2>&1 )
	awk -v t="$t" 'BEGIN { split(t, v, " "); printf "%.3f", v[1] + v[2] }'
}

# max_rss_mb CMD...: CMD's peak resident memory, MB
max_rss_mb() {
	"$PY" -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print("%.1f" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))' "$@"
}

# the RoCE packets rocelat counted (its JSON counters)
rl_packets() {
	jq -r 'select(.type == "counters") | .roce_packets' "$1"
}

kernel=1
[ "$(id -u)" -eq 0 ] || kernel=0
# two reads before the rounds, not timed: the page cache counts a read
# of a page as a use, and on its second use moves it to the active list,
# which costs that read a tenth more CPU time (a file just written: 88,
# 101, 88, 86, 86 ms); round 1's rocelat alone would pay it
for _ in 1 2; do "$RL" -r "$T/big.pcap" -j >/dev/null; done
for r in $(seq "$ROUNDS"); do
	nat=$(cpu_time "$T/native.out" "$RL" -r "$T/big.pcap" -j)
	[ "$(rl_packets "$T/native.out")" = "$total" ] ||
		{ echo "bench/offline.sh: rocelat counted $(rl_packets "$T/native.out") of $total packets" >&2; exit 1; }
	ts=$(cpu_time "$T/tshark.out" tshark -r "$T/big.pcap" -Y infiniband)
	[ "$(wc -l <"$T/tshark.out")" = "$total" ] ||
		{ echo "bench/offline.sh: tshark showed $(wc -l <"$T/tshark.out") of $total packets" >&2; exit 1; }
	bench_add native:pps "$(bench_ratio "$total" "$nat" 0)"
	bench_add tshark:ratio "$(bench_ratio "$ts" "$nat" 1)"
	line="round $r: native $nat s, tshark $ts s"
	if [ $kernel = 1 ]; then
		ker=$(cpu_time "$T/kernel.out" "$RL" -r "$T/big.pcap" -j --in-kernel)
		diff <(jq -c 'del(.read_seconds, .packets_per_s, .mb_per_s)' "$T/native.out") \
			<(jq -c 'del(.read_seconds, .packets_per_s, .mb_per_s)' "$T/kernel.out") >/dev/null ||
			{ echo "bench/offline.sh: --in-kernel reported otherwise than the native build" >&2; exit 1; }
		bench_add kernel:pps "$(bench_ratio "$total" "$ker" 0)"
		bench_add kernel:ratio "$(bench_ratio "$ker" "$nat" 1)"
		line+=", --in-kernel $ker s"
	fi
	echo "$line (CPU time, $total packets)"
done

# memory: the same recording, and one LONG times as long
LONG=$(bench_size 5 2)
"$PY" bench/repeat_pcap.py "$T/connectx.pcap" "$T/long.pcap" $((total * LONG))
editcap -F pcapng "$T/long.pcap" "$T/long.pcapng"
for r in $(seq "$ROUNDS"); do
	small=$(max_rss_mb "$RL" -r "$T/big.pcap")
	large=$(max_rss_mb "$RL" -r "$T/long.pcap")
	ng=$(max_rss_mb "$RL" -r "$T/long.pcapng")
	bench_add rss:small "$small"
	bench_add rss:large "$large"
	bench_add rss:ratio "$(bench_ratio "$large" "$small")"
	bench_add rss:ng_ratio "$(bench_ratio "$ng" "$small")"
	echo "round $r: peak memory $small MB ($total packets), $large MB ($LONG times as many), $ng MB (the same as pcapng)"
done
long_mb=$(du -m "$T/long.pcap" | cut -f1)
rm -f "$T/long.pcap" "$T/long.pcapng"

echo
echo "rocelat -r, $total packets ($(du -m "$T/big.pcap" | cut -f1) MB), CPU time, median (min..max) of $ROUNDS rounds:"
echo "  native:      $(bench_fig native:pps) packets/s"
[ $kernel = 0 ] || echo "  --in-kernel: $(bench_fig kernel:pps) packets/s; native is $(bench_fig kernel:ratio) times faster"
echo "  tshark -Y infiniband takes $(bench_fig tshark:ratio) times rocelat's time (target >= 50)"
echo "  peak memory: $(bench_fig rss:small) MB; $(bench_fig rss:large) MB for $long_mb MB of capture, ratio $(bench_fig rss:ratio); as pcapng, ratio $(bench_fig rss:ng_ratio) (targets <= 1.1)"
bench_result offline "rocelat -r packets/s (CPU time, native)" native:pps "-"
bench_result offline "rocelat -r peak memory, ${long_mb} MB capture / 1/$LONG of it" rss:ratio "<= 1.1"
bench_result offline "the same, the long one as pcapng" rss:ng_ratio "<= 1.1"
bench_result offline "tshark -Y infiniband / rocelat -r (CPU time)" tshark:ratio ">= 50"
if [ $kernel = 1 ]; then
	bench_result offline "rocelat -r --in-kernel / native (CPU time)" kernel:ratio "-"
else
	bench_skipped offline "--in-kernel needs root"
fi
