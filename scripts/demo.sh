#!/usr/bin/env bash
# The demo on a built-in test bed, as root on Debian 12: two network
# namespaces joined by a veth pair, RoCE v2 traffic between them, and a
# firewall rule in the receiver that silently eats it. rxedrop names the
# drop: kernel function and reason. Everything it creates is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
make -j"$(nproc)" >/dev/null

source tests/lib/common.bash
trap ax_cleanup EXIT
P=axdemo
ax_netns_pair $P 10.203.0.1/24 10.203.0.2/24

echo
echo "== Test bed: ${P}a (10.203.0.1) --veth-- ${P}b (10.203.0.2)"
echo "== The receiver's firewall drops UDP 4791 (RoCE v2):"
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
out=$(mktemp)
trap 'ax_cleanup; rm -f "$out"' EXIT
echo "== Sending 100 RoCE v2 requests while rxedrop counts drops:"
ax_bg build/rxedrop >"$out"
ax_wait_for "$out" Tracing >/dev/null
ax_send_roce ${P}a 10.203.0.2 100
sleep 0.5
ax_stop "$AX_LAST_PID" INT
cat "$out"
echo "== One event per dropped packet (-e), the RoCE header decoded:"
ax_bg build/rxedrop -e >"$out"
ax_wait_for "$out" Tracing >/dev/null
ax_send_roce ${P}a 10.203.0.2 5
sleep 0.5
ax_stop "$AX_LAST_PID" INT
cat "$out"
