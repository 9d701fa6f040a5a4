#!/usr/bin/env bash
# The demo on a built-in test bed, as root on Debian 12: two network
# namespaces joined by a veth pair, RoCE v2 traffic between them from
# rocegen, and two gray failures:
#   1. one of two flows (ECMP paths) answers 10x slower: rocelat finds it;
#   2. a firewall rule in the receiver silently eats RoCE: rxedrop names it.
# Everything it creates is removed on exit, also on Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
# tests/host/demo.bats runs the demo after the test command installed
# everything: AGENTXDP_DEMO_NO_SETUP=1 skips the packages
[ -n "${AGENTXDP_DEMO_NO_SETUP:-}" ] || bash scripts/setup-deps.sh
make -j"$(nproc)" >/dev/null

source tests/lib/common.bash
P=axdemo
out=$(mktemp)
trap 'ax_cleanup; rm -f "$out"' EXIT
ax_netns_pair $P 10.203.0.1/24 10.203.0.2/24

echo
echo "== Test bed: requester ${P}a (10.203.0.1) --veth-- responder ${P}b (10.203.0.2)"
echo "== Two RC flows (UDP source ports 49152 and 49153); the responder answers"
echo "   flow 49152 after 0.5 ms and flow 49153 after 5 ms: a slow path."
ax_bg ip netns exec ${P}b build/rocegen responder -q --timeout 60 \
	--delay-us 49152=500 --delay-us 49153=5000
ax_bg ip netns exec ${P}a build/rocelat -i ${P}va -F >"$out" 2>&1
RL=$AX_LAST_PID
ax_wait_for "$out" Tracing >/dev/null
ip netns exec ${P}a build/rocegen requester -q -d 10.203.0.2 -f 2 -n 200 --window 4 >/dev/null || true
sleep 0.3
ax_stop "$RL" INT
echo
echo "== rocelat -i ${P}va -F (XDP ingress + tc egress on the requester's veth):"
cat "$out"

echo
echo "== Now the receiver's firewall drops UDP 4791 (RoCE v2):"
ip netns exec ${P}b nft -f - <<'NFT'
table inet demo_filter {
	chain input {
		type filter hook input priority 0; policy accept;
		udp dport 4791 counter drop
	}
}
NFT
ip netns exec ${P}b nft list ruleset | sed 's/^/   /'
echo
echo "== rxedrop while 100 RoCE requests are sent:"
ax_bg build/rxedrop >"$out"
ax_wait_for "$out" Tracing >/dev/null
ax_send_roce ${P}a 10.203.0.2 100
sleep 0.5
ax_stop "$AX_LAST_PID" INT
cat "$out"
echo
echo "== rxedrop -e: one line per dropped packet, the RoCE header decoded:"
ax_bg build/rxedrop -e >"$out"
ax_wait_for "$out" Tracing >/dev/null
ax_send_roce ${P}a 10.203.0.2 5
sleep 0.5
ax_stop "$AX_LAST_PID" INT
cat "$out"
