#!/usr/bin/env bats
# nfdrop on rulesets shaped like the ones it meets in the field: firewalld
# (zones reached by verdict maps on interface names), kube-proxy's nftables
# mode (service verdict maps on concatenations, address sets), Docker (user
# chains from FORWARD, RETURNs) and iptables-nft / iptables-legacy user
# chains with decoy rules before the real one. Ground truth is the dropping
# rule's own counter and the number of packets sent; a row without '?'
# must name the rule that dropped, and where the evidence cannot settle it
# the row must say so and list the real rule among the candidates.
#
# The stack path (this host) names the rule from the packet and the
# counters; run in the Soft-RoCE guest (tests/vm/run-suites) the fexit
# path names table and base chain from the kernel, the rule the same way.

load ../lib/common
load ../lib/nfdrop

setup() {
	nfdrop_setup nfx
}

setup_file() {
	nfdrop_modules
}

teardown() {
	ax_cleanup
}

# packets of rule number N of iptables-legacy CHAIN (table filter)
legacy_counter() {
	ip netns exec "$1" iptables-legacy -L "$2" -v -x -n --line-numbers |
		awk -v n="$3" '$1 == n { print $2 }'
}

# the issue's iptables ruleset with TOOL in ${P}b: INPUT drops 10.99.0.0/16
# and jumps to ROCE for the RoCE port; ROCE drops source ports 1-1000,
# then the rules given (each one string of iptables arguments)
roce_user_chain() {
	local ipt="ip netns exec ${P}b $1" r
	shift
	$ipt -A INPUT -s 10.99.0.0/16 -j DROP
	$ipt -N ROCE
	$ipt -A INPUT -p udp --dport 4791 -j ROCE
	$ipt -A ROCE -p udp --sport 1:1000 -j DROP
	for r in "$@"; do
		# shellcheck disable=SC2086 # one rule's words
		$ipt -A ROCE $r
	done
}

@test "iptables-nft user chain behind decoys: all 9 to the REJECT, replies rate-limited or not, equal to its counter" {
	command -v iptables-nft >/dev/null || skip "iptables-nft not installed"
	pair
	roce_user_chain iptables-nft "-p udp -j REJECT"
	h=$(nft_handle "${P}b" "ip filter ROCE" "meta l4proto udp counter.* reject")
	[ -n "$h" ]
	start_nfdrop --roce -N "${P}b"
	# more than the ICMP error burst: some REJECTs go out without a reply
	ax_send_roce "${P}a" 10.210.0.2 9
	stop_nfdrop "${P}b" Ip:InReceives 9
	[ "$(nft_counter "${P}b" "ip filter ROCE" "$h")" -eq 9 ]
	expect '.hook == "input"' .packets 9 .table filter .chain INPUT \
		.rule_chain ROCE .rule_handle "$h" .verdict REJECT '.inferred | length' 0
	[ "$(packets '.rule_handle != '"$h")" -eq 0 ]
}

# the issue's nft ruleset: a verdict map jumps to the chain, a named set
# holds the port; DECOY_COUNTER is "counter " or "" on a decoy the packet
# cannot rule out (ct mark is not evaluated; the packets' is 0)
vmap_ruleset() {
	ip netns exec "${P}b" nft -f - <<-NFT
	table inet axt {
		set blocked_ports { type inet_service; elements = { 4791, 5001 } }
		chain in {
			type filter hook input priority 0;
			ip saddr 10.99.0.0/16 drop
			udp dport vmap { 4791 : jump roce, 5000 : drop }
		}
		chain roce {
			udp sport 1-1000 counter drop
			ct mark 5 ${DECOY_COUNTER}drop
			udp dport @blocked_ports counter drop
		}
	}
	NFT
	H=$(nft_handle "${P}b" "inet axt roce" "udp dport @blocked_ports counter")
	[ -n "$H" ]
}

@test "nft verdict map and named set: the jump followed, the set matched, the decoy ruled out by its counter" {
	pair
	DECOY_COUNTER="counter " vmap_ruleset
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 17
	stop_nfdrop "${P}b" Ip:InReceives 17
	[ "$(nft_counter "${P}b" "inet axt roce" "$H")" -eq 17 ]
	expect '.hook == "input"' .packets 17 .table axt .chain in .rule_chain roce \
		.rule_handle "$H" .verdict DROP '.inferred | length' 0 \
		'.matches_evaluated | index("@blocked_ports") != null' true \
		'.matches_not_understood | join(",")' ct
	if ! fexit_path; then
		expect '.hook == "input"' '.evidence | join(",")' packet,counters
	fi
}

@test "-e: every event named from the packet and the counters, the decoy ruled out by its counter" {
	pair
	DECOY_COUNTER="counter " vmap_ruleset
	start_nfdrop --roce -N "${P}b" -e
	ax_send_roce "${P}a" 10.210.0.2 17
	stop_nfdrop "${P}b" Ip:InReceives 17
	[ "$(nft_counter "${P}b" "inet axt roce" "$H")" -eq 17 ]
	run jq -s -r '[.[] | select(.type == "nf_drop")] |
		length, ([.[] | select(.rule_handle == '"$H"' and (.inferred | length) == 0)] | length)' "$OUT"
	[ "${lines[*]}" = "17 17" ] || { cat "$OUT"; false; }
}

@test "nft verdict map, a decoy neither the packet nor a counter rules out: inferred, the real rule listed" {
	host_only
	pair
	DECOY_COUNTER="" vmap_ruleset
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 17
	stop_nfdrop "${P}b" Ip:InReceives 17
	[ "$(nft_counter "${P}b" "inet axt roce" "$H")" -eq 17 ]
	expect '.hook == "input"' .packets 17 \
		'.inferred | index("rule") != null' true \
		'[.candidates[].drop_rules[] | .handle] | index('"$H"') != null' true \
		'[.candidates[].drop_rules[]] | length' 2
}

@test "--trace-rules through a verdict map and a set: the exact rule, ruleset byte-identical afterwards" {
	pair
	DECOY_COUNTER="" vmap_ruleset
	before=$(ip netns exec "${P}b" nft -s list ruleset)
	start_nfdrop --roce -N "${P}b" --trace-rules
	ax_send_roce "${P}a" 10.210.0.2 17
	stop_nfdrop "${P}b" Ip:InReceives 17
	expect '.hook == "input"' .packets 17 .source trace .table axt .chain in \
		.rule_chain roce .rule_handle "$H" .verdict DROP '.inferred | length' 0
	[ "$(ip netns exec "${P}b" nft -s list ruleset)" = "$before" ]
}

# firewalld's shape in ${P}b: filter_INPUT accepts established traffic,
# drops invalid, sends each interface to its zone by a verdict map (${P}vb
# to zone "roce", whose target is a counted drop) and rejects the rest.
# INVALID_COUNTER is "counter " or "" (firewalld's own: no counter)
firewalld_ruleset() {
	ip netns exec "${P}b" nft -f - <<-NFT
	table inet firewalld {
		chain filter_INPUT {
			type filter hook input priority filter + 10; policy accept;
			ct state { established, related } accept
			ct status dnat accept
			iifname "lo" accept
			ct state invalid ${INVALID_COUNTER:-}drop
			jump filter_INPUT_ZONES
			reject with icmpx admin-prohibited
		}
		chain filter_INPUT_ZONES {
			iifname vmap { "${P}vb" : goto filter_IN_roce, "${P}xx" : goto filter_IN_drop }
			goto filter_IN_public
		}
		chain filter_IN_public {
			jump filter_IN_public_allow
			meta l4proto { icmp, ipv6-icmp } accept
			reject with icmpx admin-prohibited
		}
		chain filter_IN_public_allow { tcp dport 22 accept; }
		chain filter_IN_drop { counter drop; }
		chain filter_IN_roce {
			jump filter_IN_roce_allow
			meta l4proto { icmp, ipv6-icmp } accept
			counter drop
		}
		chain filter_IN_roce_allow {
			udp dport 5000 accept
			ip saddr 10.99.0.0/16 udp dport 4791 accept
		}
	}
	NFT
	H_ZONE=$(nft_handle "${P}b" "inet firewalld filter_IN_roce" "counter.* drop")
	H_INVALID=$(nft_handle "${P}b" "inet firewalld filter_INPUT" "ct state invalid .*drop")
}

@test "firewalld-shaped zones (iifname vmap, gotos): the zone's rule, certain; 'ct state invalid' ruled out by the packet's conntrack state" {
	pair
	firewalld_ruleset
	h=$H_ZONE
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 8
	stop_nfdrop "${P}b" Ip:InReceives 8
	[ "$(nft_counter "${P}b" "inet firewalld filter_IN_roce" "$h")" -eq 8 ]
	[ "$(packets 'true')" -eq 8 ]
	if fexit_path; then
		expect '.hook == "input"' .chain filter_INPUT .source fexit
	fi
	# each packet is a new UDP flow (conntrack state "new", read at the
	# drop): 'ct state invalid drop' (no counter) cannot match it, the
	# other zones, the public reject and the final reject are not reached
	expect '.hook == "input"' .packets 8 .table firewalld .chain filter_INPUT \
		.rule_chain filter_IN_roce .rule_handle "$h" .verdict DROP \
		'.inferred | length' 0 '.evidence | join(",")' packet \
		'.matches_evaluated | index("iifname") != null' true \
		'.matches_evaluated | index("ct state") != null' true \
		'.matches_not_understood | join(",")' "" '.ct_states | join(",")' new
}

# send_tcp DPORT FLAGS N: N TCP segments from ${P}a port 40001 to ${P}b,
# sequence numbers of no connection
send_tcp() {
	ip netns exec "${P}a" /usr/bin/python3 -c '
import sys
from scapy.all import IP, TCP, send
send(IP(dst="10.210.0.2")/TCP(sport=40001, dport=int(sys.argv[1]), flags=sys.argv[2],
     seq=1000, ack=2000 if "A" in sys.argv[2] else 0), count=int(sys.argv[3]), verbose=0)' "$@"
}

@test "firewalld-shaped zones, TCP ACKs without a connection: 'ct state invalid drop' named, equal to its counter" {
	/usr/bin/python3 -c 'import scapy' 2>/dev/null || skip "python3-scapy not installed"
	pair
	INVALID_COUNTER="counter " firewalld_ruleset
	hi=$H_INVALID
	[ -n "$hi" ]
	# a per-namespace sysctl: gone with ${P}b in teardown, the host's stays
	ip netns exec "${P}b" sysctl -qw net.netfilter.nf_conntrack_tcp_loose=0
	start_nfdrop -A -4 -N "${P}b"
	# lone ACKs: with nf_conntrack_tcp_loose=0 conntrack does not pick
	# them up mid-stream but marks them invalid (no entry attached)
	send_tcp 4791 A 6
	wait_nft_counter "${P}b" "inet firewalld filter_INPUT" "$hi" 6
	stop_nfdrop
	[ "$(nft_counter "${P}b" "inet firewalld filter_INPUT" "$hi")" -eq 6 ]
	[ "$(nft_counter "${P}b" "inet firewalld filter_IN_roce" "$H_ZONE")" -eq 0 ]
	expect '.hook == "input"' .packets 6 .table firewalld .chain filter_INPUT \
		.rule_chain filter_INPUT .rule_handle "$hi" .verdict DROP \
		'.inferred | length' 0 '.evidence | join(",")' packet \
		'.matches_evaluated | index("ct state") != null' true \
		'.ct_states | join(",")' invalid
	[ "$(packets 'true')" -eq 6 ]
	# -e: each event names the rule and carries the state it was judged by
	start_nfdrop -A -4 -e -N "${P}b"
	send_tcp 4791 A 3
	wait_nft_counter "${P}b" "inet firewalld filter_INPUT" "$hi" 9
	stop_nfdrop
	[ "$(nft_counter "${P}b" "inet firewalld filter_INPUT" "$hi")" -eq 9 ]
	[ "$(jq -s '[.[] | select(.type == "nf_drop" and .ct_states == ["invalid"] and
		.rule_handle == '"$hi"' and (.inferred | length) == 0 and
		.dport == 4791)] | length' "$OUT")" -eq 3 ]
}

@test "TCP ports (-A): 'tcp dport' evaluated on the packet, the decoy on another port ruled out, certain" {
	/usr/bin/python3 -c 'import scapy' 2>/dev/null || skip "python3-scapy not installed"
	pair
	ip netns exec "${P}b" nft -f - <<-'NFT'
	table inet axt {
		chain in {
			type filter hook input priority 0;
			tcp dport 6666 drop
			tcp sport 40001 tcp dport 5555 counter drop
		}
	}
	NFT
	h=$(nft_handle "${P}b" "inet axt in" "tcp sport 40001 tcp dport 5555 counter")
	[ -n "$h" ]
	start_nfdrop -A -4 -N "${P}b"
	send_tcp 5555 S 5
	wait_nft_counter "${P}b" "inet axt in" "$h" 5
	stop_nfdrop
	[ "$(nft_counter "${P}b" "inet axt in" "$h")" -eq 5 ]
	# the decoy has no counter: only the packet's port rules it out
	expect '.hook == "input"' .packets 5 .table axt .chain in .rule_handle "$h" \
		.verdict DROP '.inferred | length' 0 '.evidence | join(",")' packet \
		'.matches_evaluated | index("th dport") != null' true
}

@test "ct state in a chain before conntrack (prerouting, priority raw): not judged by the state at the drop" {
	pair
	# at raw priority no entry is attached yet ('ct state new' never
	# matches there); the drop at priority 0 sees state new
	ip netns exec "${P}b" nft -f - <<-'NFT'
	table ip axr {
		chain raw { type filter hook prerouting priority raw; ct state new udp dport 4791 drop; }
		chain pre { type filter hook prerouting priority 0; udp dport 4791 counter drop; }
	}
	NFT
	h=$(nft_handle "${P}b" "ip axr pre" "udp dport 4791 counter")
	hr=$(nft_handle "${P}b" "ip axr raw" "ct state new")
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 5
	stop_nfdrop "${P}b" Ip:InReceives 5
	[ "$(nft_counter "${P}b" "ip axr pre" "$h")" -eq 5 ]
	[ "$(packets 'true')" -eq 5 ]
	# never the raw rule as a certain answer
	expect '.hook == "prerouting"' \
		'(.inferred | index("rule") != null) or .rule_handle == '"$h" true
	if ! fexit_path; then
		# the raw rule has no counter, and its ct state is not known:
		# both stay, the row says so
		expect '.hook == "prerouting"' .packets 5 '.inferred | index("rule") != null' true \
			'[.candidates[].drop_rules[] | .handle] | sort | map(tostring) | join(",")' \
			"$(printf '%s\n' "$h" "$hr" | sort -n | paste -sd,)" \
			'.matches_not_understood | index("ct state") != null' true
	fi
}

@test "firewalld-shaped zones with --trace-rules: exactly the zone's drop; ruleset byte-identical after exit and after kill -9 + the next run" {
	pair
	firewalld_ruleset
	h=$H_ZONE
	before=$(ip netns exec "${P}b" nft -s list ruleset)
	start_nfdrop --roce -N "${P}b" --trace-rules
	ax_send_roce "${P}a" 10.210.0.2 8
	stop_nfdrop "${P}b" Ip:InReceives 8
	expect '.hook == "input"' .packets 8 .source trace .chain filter_INPUT \
		.rule_chain filter_IN_roce .rule_handle "$h" '.inferred | length' 0
	[ "$(ip netns exec "${P}b" nft -s list ruleset)" = "$before" ]
	# killed: the helper table stays until the next run removes it
	start_nfdrop --roce -N "${P}b" --trace-rules
	ax_tool_stop NF_PID KILL
	[ "$(ip netns exec "${P}b" nft -s list ruleset)" != "$before" ]
	start_nfdrop --roce -N "${P}b" --trace-rules
	grep -q "removed 1 trace table" "$ERR"
	ax_send_roce "${P}a" 10.210.0.2 4
	stop_nfdrop "${P}b" Ip:InReceives 12
	expect '.hook == "input"' .packets 4 .source trace .rule_handle "$h"
	[ "$(ip netns exec "${P}b" nft -s list ruleset)" = "$before" ]
}

@test "kube-proxy-shaped (service vmaps on ip daddr . l4proto . th dport, address sets): the reject-chain, certain" {
	pair
	ip netns exec "${P}b" nft -f - <<-'NFT'
	table ip kube-proxy {
		set cluster-ips { type ipv4_addr; elements = { 10.96.0.1, 10.96.0.10 } }
		map no-endpoint-services {
			type ipv4_addr . inet_proto . inet_service : verdict
			elements = { 10.96.0.10 . tcp . 53 : goto reject-chain,
				     10.210.0.2 . udp . 4791 : goto reject-chain }
		}
		map no-endpoint-nodeports {
			type inet_proto . inet_service : verdict
			elements = { udp . 30001 : drop }
		}
		map firewall-ips {
			type ipv4_addr . inet_proto . inet_service : verdict
			elements = { 10.210.0.9 . udp . 4791 : drop }
		}
		chain filter-input {
			type filter hook input priority -110; policy accept;
			ip daddr 10.0.0.0/8 jump cluster-ips-check
			ct state new jump nodeport-endpoints-check
			ct state new jump service-endpoints-check
			jump firewall-check
		}
		chain cluster-ips-check {
			ip daddr @cluster-ips reject
			ip daddr { 10.96.0.0/12 } drop
		}
		chain nodeport-endpoints-check {
			ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @no-endpoint-nodeports
		}
		chain service-endpoints-check {
			ip daddr . meta l4proto . th dport vmap @no-endpoint-services
		}
		chain firewall-check {
			ip daddr . meta l4proto . th dport vmap @firewall-ips
		}
		chain reject-chain { counter reject; }
	}
	NFT
	h=$(nft_handle "${P}b" "ip kube-proxy reject-chain" "counter.* reject")
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 12
	stop_nfdrop "${P}b" Ip:InReceives 12
	[ "$(nft_counter "${P}b" "ip kube-proxy reject-chain" "$h")" -eq 12 ]
	expect '.hook == "input"' .packets 12 .table kube-proxy .chain filter-input \
		.rule_chain reject-chain .rule_handle "$h" .verdict REJECT \
		'.inferred | length' 0 \
		'.matches_evaluated | index("@no-endpoint-services") != null' true
}

# Docker's FORWARD chains in the router ${P}r, with TOOL (iptables-nft or
# iptables-legacy): packets from ${P}a to ${P}b are isolated in
# DOCKER-ISOLATION-STAGE-2 (rule 2), past decoys on a docker0 that does
# not exist and a FORWARD policy of DROP
docker_chains() {
	local ipt="ip netns exec ${P}r $1"
	$ipt -P FORWARD DROP
	$ipt -N DOCKER
	$ipt -N DOCKER-ISOLATION-STAGE-1
	$ipt -N DOCKER-ISOLATION-STAGE-2
	$ipt -N DOCKER-USER
	$ipt -A FORWARD -j DOCKER-USER
	$ipt -A FORWARD -j DOCKER-ISOLATION-STAGE-1
	$ipt -A FORWARD -o "${P}r1" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
	$ipt -A FORWARD -o "${P}r1" -j DOCKER
	$ipt -A FORWARD -i "${P}r1" ! -o "${P}r1" -j ACCEPT
	$ipt -A DOCKER -d 10.211.2.1/32 ! -i "${P}r1" -o "${P}r1" -p tcp --dport 80 -j ACCEPT
	$ipt -A DOCKER-USER -i docker0 -j DROP
	$ipt -A DOCKER-USER -j RETURN
	$ipt -A DOCKER-ISOLATION-STAGE-1 -i "${P}r0" ! -o "${P}r0" -j DOCKER-ISOLATION-STAGE-2
	$ipt -A DOCKER-ISOLATION-STAGE-1 -j RETURN
	$ipt -A DOCKER-ISOLATION-STAGE-2 -o docker0 -j DROP
	$ipt -A DOCKER-ISOLATION-STAGE-2 -o "${P}r1" -j DROP
	$ipt -A DOCKER-ISOLATION-STAGE-2 -j RETURN
}

@test "Docker-shaped FORWARD (iptables-nft): user chains, RETURNs, oif matches: the isolation rule, certain" {
	command -v iptables-nft >/dev/null || skip "iptables-nft not installed"
	router
	docker_chains iptables-nft
	h=$(ip netns exec "${P}r" nft -a list chain ip filter DOCKER-ISOLATION-STAGE-2 |
		sed -n "s/^[[:space:]]*oifname \"${P}r1\" counter.* drop # handle \([0-9]*\)$/\1/p")
	[ -n "$h" ]
	start_nfdrop --roce -N "${P}r"
	ax_send_roce "${P}a" 10.211.2.1 7
	stop_nfdrop "${P}r" Ip:InReceives 7
	[ "$(nft_counter "${P}r" "ip filter DOCKER-ISOLATION-STAGE-2" "$h")" -eq 7 ]
	expect '.hook == "forward"' .packets 7 .table filter .chain FORWARD \
		.rule_chain DOCKER-ISOLATION-STAGE-2 .rule_handle "$h" .verdict DROP \
		'.inferred | length' 0 \
		'.matches_evaluated | index("oifname") != null' true
}

@test "Docker-shaped FORWARD (iptables-legacy): the same rule, by position, equal to its counter" {
	command -v iptables-legacy >/dev/null || skip "iptables-legacy not installed"
	router
	docker_chains iptables-legacy
	line=$(ip netns exec "${P}r" iptables-legacy-save |
		grep -- "-A DOCKER-ISOLATION-STAGE-2 -o ${P}r1 -j DROP")
	start_nfdrop --roce -N "${P}r"
	ax_send_roce "${P}a" 10.211.2.1 7
	stop_nfdrop "${P}r" Ip:InReceives 7
	[ "$(legacy_counter "${P}r" DOCKER-ISOLATION-STAGE-2 2)" -eq 7 ]
	expect '.hook == "forward"' .packets 7 .engine iptables-legacy .table filter \
		.chain FORWARD .rule_chain DOCKER-ISOLATION-STAGE-2 .rule_handle 2 \
		.rule "$line" .verdict DROP '.inferred | length' 0
}

@test "iptables-legacy user chain, decoys before the real rule, conntrack matches: the ct state and the counters decide" {
	command -v iptables-legacy >/dev/null || skip "iptables-legacy not installed"
	pair
	# INVALID: ruled out by the packet's state (new); the mark match is
	# not evaluated: ruled out by its counter
	roce_user_chain iptables-legacy "-m conntrack --ctstate INVALID -j DROP" \
		"-m conntrack --ctstate NEW -m mark --mark 0x5 -j DROP" \
		"-m conntrack --ctstate NEW -j DROP"
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 10
	stop_nfdrop "${P}b" Ip:InReceives 10
	[ "$(legacy_counter "${P}b" ROCE 4)" -eq 10 ]
	expect '.hook == "input"' .packets 10 .engine iptables-legacy .chain INPUT \
		.rule_chain ROCE .rule_handle 4 .verdict DROP '.inferred | length' 0
	if ! fexit_path; then
		expect '.hook == "input"' '.evidence | join(",")' packet,counters
	fi
}

@test "DNAT before the dropping chain: the chain before NAT is not judged by the translated address" {
	pair
	mac=$(ip -n "${P}b" -br link show "${P}vb" | awk '{ print $3 }')
	ip -n "${P}a" neigh replace 10.210.0.99 lladdr "$mac" dev "${P}va"
	# the raw-priority rule would match the address after DNAT, but the
	# packet met it before (to .99): it must not be named
	ip netns exec "${P}b" nft -f - <<-'NFT'
	table ip axnat {
		chain early { type filter hook prerouting priority -300; ip daddr 10.210.0.2 udp dport 4791 counter drop; }
		chain nat_pre { type nat hook prerouting priority -100; ip daddr 10.210.0.99 dnat to 10.210.0.2; }
		chain late { type filter hook prerouting priority 0; ip daddr 10.210.0.2 udp dport 4791 counter drop; }
	}
	NFT
	h=$(nft_handle "${P}b" "ip axnat late" "ip daddr 10.210.0.2 udp dport 4791 counter")
	he=$(nft_handle "${P}b" "ip axnat early" "ip daddr 10.210.0.2 udp dport 4791 counter")
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.99 6
	stop_nfdrop "${P}b" Ip:InReceives 6
	[ "$(nft_counter "${P}b" "ip axnat late" "$h")" -eq 6 ]
	[ "$(nft_counter "${P}b" "ip axnat early" "$he")" -eq 0 ]
	expect '.hook == "prerouting"' .packets 6 .chain late .rule_handle "$h" \
		'.inferred | length' 0
}

@test "300 packet signatures (one source port each): one row per rule, every packet counted" {
	host_only
	pair
	ip netns exec "${P}b" nft -f - <<-'NFT'
	table inet axt {
		chain in { type filter hook input priority 0; udp sport 1-1000 drop; udp dport 4791 counter drop; }
	}
	NFT
	h=$(nft_handle "${P}b" "inet axt in" "udp dport 4791 counter")
	start_nfdrop --roce -N "${P}b"
	# more signatures than nfdrop names before the report (the rest are
	# named at report time): a socket, so a source port, per packet
	ip netns exec "${P}a" /usr/bin/python3 -c '
import socket
for i in range(300):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(bytes([4, 0, 0xff, 0xff, 0, 0, 0, 0x12, 0x80, 0, 0, i % 256]) + bytes(20), ("10.210.0.2", 4791))
    s.close()
'
	stop_nfdrop "${P}b" Ip:InReceives 300
	[ "$(nft_counter "${P}b" "inet axt in" "$h")" -eq 300 ]
	expect '.hook == "input"' .packets 300 .rule_handle "$h" '.inferred | length' 0
}

@test "IPv6 and IPv4 through one inet chain: ip6 prefixes, ip rules skipped for IPv6, an address set per family" {
	pair
	ip netns exec "${P}b" nft -f - <<-'NFT'
	table inet axt {
		set v6peers { type ipv6_addr; flags interval; elements = { fd00:210::/120 } }
		chain in {
			type filter hook input priority 0;
			ip6 saddr fd00:99::/32 counter drop
			ip saddr 10.210.0.0/24 udp dport 4791 counter drop
			ip6 saddr @v6peers udp dport 4791 counter reject
			udp dport 4791 counter drop
		}
	}
	NFT
	h4=$(nft_handle "${P}b" "inet axt in" "ip saddr 10.210.0.0.24 udp dport 4791 counter")
	h6=$(nft_handle "${P}b" "inet axt in" "ip6 saddr @v6peers udp dport 4791 counter")
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" fd00:210::2 7
	ax_send_roce "${P}a" 10.210.0.2 5
	# IPv6 has no count of these packets alone: the rules' counters
	wait_nft_counter "${P}b" "inet axt in" "$h6" 7
	wait_nft_counter "${P}b" "inet axt in" "$h4" 5
	stop_nfdrop
	[ "$(nft_counter "${P}b" "inet axt in" "$h6")" -eq 7 ]
	[ "$(nft_counter "${P}b" "inet axt in" "$h4")" -eq 5 ]
	# the packets alone settle both (no counter needed)
	expect '.hook_family == "ip6"' .packets 7 .rule_handle "$h6" .verdict REJECT \
		'.inferred | length' 0 '.evidence | index("counters")' null \
		'.matches_evaluated | index("@v6peers") != null' true
	expect '.hook_family == "ip"' .packets 5 .rule_handle "$h4" .verdict DROP \
		'.inferred | length' 0 '.evidence | index("counters")' null
}
