#!/usr/bin/env bash
# The demo on a built-in test bed, as root on Debian 12: two network
# namespaces joined by a veth pair, three RoCE v2 flows between them from
# rocegen, and two gray failures that rocediag names in one screen:
#   1. the responder answers one flow 10x slower than the others: SLOW;
#   2. a firewall rule in the responder eats another flow's requests:
#      DROPPED-LOCALLY, with the rule and as many drops as its counter;
#   3. the third flow is clean: OK.
# Then rocelat alone on the same traffic: the latency histogram, the
# per-flow table and the outlier that rocediag's SLOW rests on.
# Everything it creates is removed on exit, also on Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
# tests/host/demo.bats runs the demo after the test command installed
# everything: AGENTXDP_DEMO_NO_SETUP=1 skips the packages. The demo needs
# the build and the test bed only, not the test suite's packages
[ -n "${AGENTXDP_DEMO_NO_SETUP:-}" ] || bash scripts/setup-deps.sh --demo
make -j"$(nproc)" tools >/dev/null

source tests/lib/common.bash
P=axdemo
out=$(mktemp)
out2=$(mktemp)
trap 'ax_cleanup; rm -f "$out" "$out2"' EXIT
ax_netns_pair $P 10.203.0.1/24 10.203.0.2/24

# 300 messages over three flows (QPs 0x11, 0x12, 0x13 from UDP source
# ports 49152, 49153, 49154), 4 outstanding per flow; the firewalled flow
# gives up after its retries (rocegen exits 2: incomplete)
traffic() {
	ip netns exec ${P}a build/rocegen requester -q -d 10.203.0.2 -f 3 -n 300 \
		--window 4 --timeout 5 || true
}

echo
echo "== Test bed: requester ${P}a (10.203.0.1) --veth-- responder ${P}b (10.203.0.2)"
echo "== Three RC flows (UDP source ports 49152, 49153, 49154). The responder"
echo "   answers 49152 after 0.5 ms and 49153 after 5 ms (a slow path), and its"
echo "   firewall drops every request from 49154:"
ip netns exec ${P}b nft -f - <<'NFT'
table inet demo_filter {
	chain input {
		type filter hook input priority 0; policy accept;
		udp sport 49154 udp dport 4791 counter drop
	}
}
NFT
ip netns exec ${P}b nft list ruleset | sed 's/^/   /'
ax_bg ip netns exec ${P}b build/rocegen responder -q --timeout 60 \
	--delay-us 49152=500 --delay-us 49153=5000

echo
echo "== rocediag -i ${P}va while rocegen sends 300 messages (one report at Ctrl-C):"
ax_bg ip netns exec ${P}a build/rocediag -i ${P}va >"$out" 2>&1
RD=$AX_LAST_PID
ax_wait_for "$out" Tracing >/dev/null
traffic >"$out2"
sleep 0.3
ax_stop "$RD" INT
cat "$out"
echo "== The requester's own count (rocegen):"
sed -n 's/.* \(requests=[0-9]*\) .* \(retransmits=[0-9]*\) .* \(completed=[0-9]*\) \(failed=[0-9]*\) .*/   \1 \2 \3 \4/p' "$out2"
echo "== The rule's own counter (nft list table inet demo_filter):"
ip netns exec ${P}b nft list table inet demo_filter | sed -n 's/^[[:space:]]*/   /; /counter/p'

echo
echo "== The same traffic again, timed by rocelat alone, the latency source"
echo "   rocediag is built on: histogram, per-flow table, outlier, counters."
ax_bg ip netns exec ${P}a build/rocelat -i ${P}va -F >"$out" 2>&1
RL=$AX_LAST_PID
ax_wait_for "$out" Tracing >/dev/null
traffic >/dev/null
sleep 0.3
ax_stop "$RL" INT
echo
echo "== rocelat -i ${P}va -F (XDP ingress + tc egress on the requester's veth):"
cat "$out"

cat <<'NEXT'

== Next, on your own host (as root; `make install` puts the tools in
   /usr/local/sbin, or use build/<tool>). Where RoCE is visible: a Soft-RoCE
   host's own traffic, a mirror (SPAN/ERSPAN) port, a capture; not the RDMA
   traffic of a ConnectX host itself (the NIC bypasses the kernel):
   rocediag -i IFACE             per QP: OK, SLOW, LOSSY, DROPPED-LOCALLY or STUCK, and why
   rocelat -r CAPTURE.pcap -F    latency per flow from a tcpdump/ibdump recording
   rxedrop -e                    every RoCE packet the kernel drops, where and why
NEXT
