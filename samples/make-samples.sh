#!/usr/bin/env bash
# Makes the recordings in samples/, as root, from our own bytes: two network
# namespaces joined by a veth pair (the demo's test bed), rocegen's
# requester and responder between them, tcpdump on the requester's veth.
#
#   rocegen-3flows.pcap  three RC flows, 60 SENDs each, 4 outstanding:
#     UDP source port 49152 answered at once, 49153 after 2 ms (the slow
#     path), 49154 with every 10th AckReq request ignored by the responder
#     (the requester times out and goes back: retransmits)
#   rocegen-3flows.txt   the requester's own per-flow count (--flow-stats),
#     the ground truth tests/host/samples.bats checks rocelat -r against
#
# usage: samples/make-samples.sh [OUTDIR]   (default: samples/)
# Needs build/rocegen (make), iproute2 and tcpdump. Leaves nothing behind.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath "${1:-samples}")
source tests/lib/common.bash
P=axsmp$$
P=${P:0:9}
tmp=$(mktemp -d)
trap 'ax_cleanup; rm -rf "$tmp"' EXIT
[ -x build/rocegen ] || { echo "build first: make" >&2; exit 1; }
ax_netns_pair "$P" 10.204.0.1/24 10.204.0.2/24

ax_bg ip netns exec "${P}b" build/rocegen responder -q --timeout 60 \
	--delay-us 49153=2000 --drop-every 49154=10
ax_wait_udp "${P}b" 4791
ax_bg ip netns exec "${P}a" tcpdump -n -i "${P}va" -w "$tmp/cap.pcap" \
	udp port 4791 2>"$tmp/tcpdump.err"
ax_capture_ready "$AX_LAST_PID" "$tmp/tcpdump.err"
TD=$AX_LAST_PID
# the first PSN of each flow fixed, the capture reproducible in its counts
ip netns exec "${P}a" build/rocegen requester -q -d 10.204.0.2 -f 3 -n 180 \
	--window 4 --psn 1000 --ack-timeout-us 20000 --timeout 20 --flow-stats \
	>"$tmp/rocegen.txt"
ax_capture_stop "$TD" "$tmp/tcpdump.err"
cp "$tmp/cap.pcap" "$out/rocegen-3flows.pcap"
cp "$tmp/rocegen.txt" "$out/rocegen-3flows.txt"
echo "wrote $out/rocegen-3flows.pcap ($(stat -c %s "$out/rocegen-3flows.pcap") bytes) and rocegen-3flows.txt"
