#!/usr/bin/env bats
# nfdrop where more than the packet decides the rule: chains of one hook
# at the same priority in different tables (the kernel runs the one whose
# hook was registered last first, and nothing in the ruleset dump says when
# a chain was registered), rulesets changed while nfdrop runs,
# --trace-rules drops tied to their own packets, and bridged packets that
# run the IP hooks (br_netfilter). Ground truth is the dropping rules' own
# counters; a row without '?' must name the rule those counters name, and
# where nothing can tell the rows must say so and list the real rule.

load ../lib/common
load ../lib/nfdrop

setup() {
	nfdrop_setup nfo
}

setup_file() {
	nfdrop_modules
}

teardown() {
	ax_cleanup
	nfdrop_br_netfilter_unload
}

# NAME's rule handle and counter; rows: the one row of the drops
tied_check_certain() {
	local name=$1 h
	h=$(nft_handle "${P}b" "inet $name in" ".*drop")
	[ -n "$h" ]
	[ "$(nft_counter "${P}b" "inet $name in" "$h")" -eq 10 ]
	expect '.hook == "input"' .packets 10 .table "$name" .chain in \
		.rule_handle "$h" .verdict DROP '.inferred | length' 0
}

@test "two tables at one hook and priority: the later-loaded one ran, named certain only by its counter" {
	pair
	tied_table t1 "udp dport 4791 counter drop"
	tied_table t2 "ip saddr 10.210.0.1 counter drop"
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 10
	stop_nfdrop "${P}b" Ip:InReceives 10
	h1=$(nft_handle "${P}b" "inet t1 in" ".*drop")
	[ "$(nft_counter "${P}b" "inet t1 in" "$h1")" -eq 0 ]
	tied_check_certain t2
}

@test "two tables at one hook and priority, loaded the other way round: the other rule" {
	pair
	tied_table t2 "ip saddr 10.210.0.1 counter drop"
	tied_table t1 "udp dport 4791 counter drop"
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 10
	stop_nfdrop "${P}b" Ip:InReceives 10
	h2=$(nft_handle "${P}b" "inet t2 in" ".*drop")
	[ "$(nft_counter "${P}b" "inet t2 in" "$h2")" -eq 0 ]
	tied_check_certain t1
}

@test "three tables at one hook and priority in two load orders: the last loaded, by its counter" {
	pair
	tied_table t3 "udp dport 4791 counter drop"
	tied_table t1 "ip saddr 10.210.0.1 counter drop"
	tied_table t2 "meta l4proto udp counter drop"
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 10
	stop_nfdrop "${P}b" Ip:InReceives 10
	tied_check_certain t2
	for t in t1 t3; do
		h=$(nft_handle "${P}b" "inet $t in" ".*drop")
		[ "$(nft_counter "${P}b" "inet $t in" "$h")" -eq 0 ]
	done
	ip netns exec "${P}b" nft flush ruleset
	tied_table t2 "meta l4proto udp counter drop"
	tied_table t3 "udp dport 4791 counter drop"
	tied_table t1 "ip saddr 10.210.0.1 counter drop"
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 10
	stop_nfdrop "${P}b" Ip:InReceives 20
	tied_check_certain t1
}

@test "two tables at one hook and priority without counters: not certain, both rules listed" {
	pair
	tied_table t1 "udp dport 4791 drop"
	tied_table t2 "ip saddr 10.210.0.1 drop"
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 10
	stop_nfdrop "${P}b" Ip:InReceives 10
	h1=$(nft_handle "${P}b" "inet t1 in" ".*drop")
	h2=$(nft_handle "${P}b" "inet t2 in" ".*drop")
	if fexit_path; then
		# the kernel names the chain: its one rule is certain
		expect '.hook == "input"' .packets 10 .table t2 .rule_handle "$h2" \
			'.inferred | length' 0
		return
	fi
	[ "$(packets '.hook == "input"')" -eq 10 ]
	[ "$(jq -s '[.[] | select(.note != null) | .note | test("several tables")] | all' "$OUT")" = true ]
	[ "$(packets '(.inferred | index("rule")) == null')" -eq 0 ]
	# every row lists both rules
	n=$(jq -s '[.[] | select(.type == "nf_drop_count") |
		[.candidates[] | .table + ":" + (.drop_rules[] | .handle | tostring)] |
		select(index("t1:'"$h1"'") != null and index("t2:'"$h2"'") != null)] | length' "$OUT")
	[ "$n" -ge 1 ]
	[ "$n" -eq "$(jq -s '[.[] | select(.type == "nf_drop_count")] | length' "$OUT")" ]
}

@test "a rule deleted while nfdrop runs: no row names the policy certain for more than its counter" {
	command -v iptables-nft >/dev/null || skip "iptables-nft not installed"
	pair
	ipt="ip netns exec ${P}b iptables-nft"
	$ipt -P INPUT DROP
	$ipt -A INPUT -p udp --dport 4791 -j DROP
	h=$(nft_handle "${P}b" "ip filter INPUT" "udp dport 4791.*drop")
	[ -n "$h" ]
	start_nfdrop -A -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 10
	ax_send_roce "${P}a" 10.210.0.2 10 04 5555
	# all 20 in before the rule goes: a packet still on its way would
	# meet the policy instead
	ax_wait_snmp "${P}b" Ip:InReceives 20
	$ipt -D INPUT -p udp --dport 4791 -j DROP
	stop_nfdrop
	[ "$(policy_counter "${P}b")" -eq 10 ]
	[ "$(packets '.hook == "input"')" -eq 20 ]
	# certain rows: the policy's at most its counter, the rule's its 10
	[ "$(packets '.verdict == "POLICY" and (.inferred | length) == 0')" -le 10 ]
	[ "$(packets '.rule_handle == '"$h"' and (.inferred | length) == 0')" -le 10 ]
	[ "$(packets '(.inferred | length) == 0 and .verdict != "POLICY" and .rule_handle != '"$h"'')" -eq 0 ]
}

# ${P}b also answers on 10.210.0.4; table inet tr drops RoCE to .2 and to
# .4, each by its own counted rule; H2 and H4 are their handles
two_dest_rules() {
	ip -n "${P}b" addr add 10.210.0.4/24 dev "${P}vb"
	ip netns exec "${P}b" nft -f - <<-NFT
	table inet tr {
		chain in {
			type filter hook input priority filter; policy accept;
			ip daddr 10.210.0.2 udp dport 4791 counter drop
			ip daddr 10.210.0.4 udp dport 4791 counter drop
		}
	}
	NFT
	H2=$(nft_handle "${P}b" "inet tr in" "ip daddr 10.210.0.2 .*drop")
	H4=$(nft_handle "${P}b" "inet tr in" "ip daddr 10.210.0.4 .*drop")
	[ -n "$H2" ] && [ -n "$H4" ]
}

@test "--trace-rules -e, two flows alternating: each event names its own flow's rule" {
	pair
	two_dest_rules
	start_nfdrop --roce -N "${P}b" --trace-rules -e
	for i in $(seq 10); do
		ax_send_roce "${P}a" 10.210.0.2 1
		ax_send_roce "${P}a" 10.210.0.4 1
	done
	wait_nf_events 20
	stop_nfdrop
	[ "$(nft_counter "${P}b" "inet tr in" "$H2")" -eq 10 ]
	[ "$(nft_counter "${P}b" "inet tr in" "$H4")" -eq 10 ]
	# no event names the other flow's rule, certain or traced
	bad=$(jq -s '[.[] | select(.type == "nf_drop") | select(.rule_handle != null) |
		select((.daddr == "10.210.0.2" and .rule_handle == '"$H4"') or
		       (.daddr == "10.210.0.4" and .rule_handle == '"$H2"'))] | length' "$OUT")
	[ "$bad" -eq 0 ]
	[ "$(jq -s '[.[] | select(.type == "nf_drop")] | length' "$OUT")" -eq 20 ]
}

@test "--trace-rules, a DNATed flow (4791 to 5555) beside a real RoCE flow: each its own rule" {
	pair
	dnat_rules
	# counts (--roce: the DNATed packets leave RoCE's scope after their trace began)
	for scope in --roce -A; do
		start_nfdrop "$scope" -N "${P}b" --trace-rules
		in=$(ip_in "${P}b")
		for i in $(seq 10); do
			ax_send_roce "${P}a" 10.210.0.2 1
			ax_send_roce "${P}a" 10.210.0.4 1
		done
		stop_nfdrop "${P}b" Ip:InReceives $((in + 20))
		# no row names the 5555 rule for the real RoCE flow
		[ "$(packets '.rule_handle == '"$H7"' and (.inferred | length) == 0')" -eq 10 ]
		[ "$(packets '.rule_handle == '"$H5"' and (.inferred | length) > 0')" -eq 0 ]
		h5=$(packets '.rule_handle == '"$H5"'')
		if [ "$scope" = -A ]; then
			[ "$h5" -eq 10 ]
			[ "$(packets 'true')" -eq 20 ]
		else
			[ "$h5" -eq 0 ]
			[ "$(packets 'true')" -eq 10 ]
		fi
	done
	[ "$(nft_counter "${P}b" "inet tr in" "$H5")" -eq 20 ]
	[ "$(nft_counter "${P}b" "inet tr in" "$H7")" -eq 20 ]
	# events: each packet its own flow's rule
	start_nfdrop -A -N "${P}b" --trace-rules -e
	for i in $(seq 10); do
		ax_send_roce "${P}a" 10.210.0.2 1
		ax_send_roce "${P}a" 10.210.0.4 1
	done
	wait_nf_events 20
	stop_nfdrop
	[ "$(nft_counter "${P}b" "inet tr in" "$H5")" -eq 30 ]
	[ "$(nft_counter "${P}b" "inet tr in" "$H7")" -eq 30 ]
	run jq -r -s '[.[] | select(.type == "nf_drop")] | group_by(.daddr)[] |
		"\(.[0].daddr) \(.[0].dport) \(length) \([.[] | .rule_handle] | unique)"' "$OUT"
	[ "${lines[0]}" = "10.210.0.2 4791 10 [$H7]" ]
	[ "${lines[1]}" = "10.210.0.4 5555 10 [$H5]" ]
	[ "${#lines[@]}" -eq 2 ]
}

# ICMP destination-unreachable errors namespace NS has received
icmp_unreach_in() {
	ip netns exec "$1" awk '$1 == "Icmp:" && !c { for (i = 2; i <= NF; i++) if ($i == "InDestUnreachs") c = i; next }
		$1 == "Icmp:" { print $c }' /proc/net/snmp
}

@test "--trace-rules, REJECT and DROP flows alternating: 'rejected' on the REJECT's row only, equal to the errors sent" {
	pair
	ip netns exec "${P}b" nft -f - <<-NFT
	table inet tr {
		chain in {
			type filter hook input priority filter; policy accept;
			udp dport 4791 counter reject
			udp dport 4792 counter drop
		}
	}
	NFT
	hr=$(nft_handle "${P}b" "inet tr in" "udp dport 4791 .*reject")
	hd=$(nft_handle "${P}b" "inet tr in" "udp dport 4792 .*drop")
	ip netns exec "${P}b" sysctl -qw net.ipv4.icmp_ratelimit=0
	before=$(icmp_unreach_in "${P}a")
	start_nfdrop -A -N "${P}b" --trace-rules
	for i in $(seq 6); do
		ax_send_roce "${P}a" 10.210.0.2 1
		ax_send_roce "${P}a" 10.210.0.2 1 04 4792
	done
	ax_until 30 "6 ICMP errors" eval '[ $(($(icmp_unreach_in "${P}a") - before)) -ge 6 ]'
	stop_nfdrop "${P}b" Ip:InReceives 12
	[ "$(nft_counter "${P}b" "inet tr in" "$hr")" -eq 6 ]
	[ "$(nft_counter "${P}b" "inet tr in" "$hd")" -eq 6 ]
	got=$(($(icmp_unreach_in "${P}a") - before))
	[ "$got" -eq 6 ]
	[ "$(packets '.rule_handle == '"$hr"' and .verdict == "REJECT" and (.inferred | length) == 0')" -eq 6 ]
	[ "$(jq -s '[.[] | select(.type == "nf_drop_count" and .rule_handle == '"$hr"') | .rejected] | add' "$OUT")" -eq "$got" ]
	[ "$(packets '.rule_handle == '"$hd"' and .verdict == "DROP" and (.inferred | length) == 0')" -eq 6 ]
	[ "$(jq -s '[.[] | select(.type == "nf_drop_count" and .rule_handle != '"$hr"') | .rejected] | add' "$OUT")" -eq 0 ]
}

@test "--trace-rules under two concurrent floods: certain counts within the counters, the rest said" {
	pair
	two_dest_rules
	n=100000
	# the guest emulates its CPU: a smaller flood keeps the file in its budget
	[ -z "${AGENTXDP_VM:-}" ] || n=3000
	start_nfdrop --roce -N "${P}b" --trace-rules
	ax_send_roce "${P}a" 10.210.0.2 "$n" &
	f1=$!
	ax_send_roce "${P}a" 10.210.0.4 "$n"
	wait "$f1"
	stop_nfdrop "${P}b" Ip:InReceives $((2 * n))
	c2=$(nft_counter "${P}b" "inet tr in" "$H2")
	c4=$(nft_counter "${P}b" "inet tr in" "$H4")
	[ "$c2" -eq "$n" ] && [ "$c4" -eq "$n" ]
	[ "$(packets 'true')" -eq $((2 * n)) ]
	sure2=$(packets '.rule_handle == '"$H2"' and (.inferred | length) == 0')
	sure4=$(packets '.rule_handle == '"$H4"' and (.inferred | length) == 0')
	echo "certain: $sure2 $sure4 of $n each" >&3
	[ "$sure2" -le "$c2" ] && [ "$sure4" -le "$c4" ]
	# what is not certain is in rows that say so, and the trace's losses
	# are in its JSON
	[ "$(packets '(.inferred | length) > 0')" -eq $((2 * n - sure2 - sure4)) ]
	[ "$(jq -s '[.[] | select(.type == "nf_trace_stats")] | length' "$OUT")" -ge 1 ]
	untraced=$(jq -s '[.[] | select(.type == "nf_trace_stats") | .packets_untraced] | add' "$OUT")
	lost=$(jq -s '[.[] | select(.type == "nf_trace_stats") | .trace_overruns] | add' "$OUT")
	echo "untraced $untraced, overruns $lost" >&3
	[ "$lost" -eq 0 ] || [ "$untraced" -gt 0 ]
}

@test "a rule deleted while one flow is dropped, then the policy drops it: nothing certain beyond the counters" {
	command -v iptables-nft >/dev/null || skip "iptables-nft not installed"
	pair
	ipt="ip netns exec ${P}b iptables-nft"
	$ipt -P INPUT DROP
	$ipt -A INPUT -p udp --dport 4791 -j DROP
	h=$(nft_handle "${P}b" "ip filter INPUT" "udp dport 4791.*drop")
	[ -n "$h" ]
	start_nfdrop -A -N "${P}b"
	# -C: one raw socket's fixed source port, so both runs are one flow
	ip netns exec "${P}a" "$AX_BUILD/udpflood" -C 10.210.0.2 4791 10 >/dev/null
	wait_nft_counter "${P}b" "ip filter INPUT" "$h" 10
	$ipt -D INPUT -p udp --dport 4791 -j DROP
	ip netns exec "${P}a" "$AX_BUILD/udpflood" -C 10.210.0.2 4791 10 >/dev/null
	stop_nfdrop "${P}b" Ip:InReceives 20
	[ "$(policy_counter "${P}b")" -eq 10 ]
	[ "$(packets '.hook == "input"')" -eq 20 ]
	[ "$(packets '.verdict == "POLICY" and (.inferred | length) == 0')" -le 10 ]
	[ "$(packets '.rule_handle == '"$h"' and (.inferred | length) == 0')" -le 10 ]
}

@test "a bridged packet dropped in raw prerouting through br_nf_pre_routing: ip prerouting, the rule certain" {
	bridged
	ip netns exec "${P}s" nft -f - <<-NFT
	table ip rawt {
		chain pre {
			type filter hook prerouting priority raw; policy accept;
			udp dport 4791 counter drop
		}
	}
	NFT
	h=$(nft_handle "${P}s" "ip rawt pre" "udp dport 4791.*drop")
	start_nfdrop --roce -N "${P}s"
	ax_send_roce "${P}a" 10.212.0.3 10
	# bridged IPv4 is not counted as received by the bridge's namespace
	wait_nft_counter "${P}s" "ip rawt pre" "$h" 10
	stop_nfdrop
	[ "$(nft_counter "${P}s" "ip rawt pre" "$h")" -eq 10 ]
	expect '.packets > 0' .packets 10 .hook_family ip .hook prerouting .table rawt \
		.chain pre .rule_handle "$h" '.inferred | length' 0
}

@test "named counters are read: the decoy's named counter rules it out, the rule certain and equal to its counter" {
	pair
	ip netns exec "${P}b" nft -f - <<-NFT
	table inet nc {
		counter decoy { }
		counter roce { }
		chain in {
			type filter hook input priority filter; policy accept;
			ct mark 0x5 counter name "decoy" drop
			udp dport 4791 counter name "roce" drop
		}
	}
	NFT
	h=$(nft_handle "${P}b" "inet nc in" "udp dport 4791.*drop")
	[ -n "$h" ]
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 10
	stop_nfdrop "${P}b" Ip:InReceives 10
	[ "$(named_counter "${P}b" nc roce)" -eq 10 ]
	[ "$(named_counter "${P}b" nc decoy)" -eq 0 ]
	# certain by the counters (ct mark is not evaluated on the packet)
	expect '.hook == "input"' .packets 10 .table nc .rule_handle "$h" .verdict DROP \
		'.inferred | length' 0 '.evidence | index("counters") != null' true
}

@test "a jumped-to chain that returns two ways, then another jump: the caller's policy is no candidate" {
	pair
	# a: a return on a match not evaluated (ct mark), or its end; both
	# ways lead on to the jump to b, whose rule drops every RoCE packet
	ip netns exec "${P}b" nft -f - <<-NFT
	table inet uf {
		chain a {
			ct mark 0x5 return
		}
		chain b {
			udp dport 4791 counter drop
		}
		chain in {
			type filter hook input priority filter; policy drop;
			iifname "lo" accept
			jump a
			jump b
		}
	}
	NFT
	h=$(nft_handle "${P}b" "inet uf b" "udp dport 4791.*drop")
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 10
	stop_nfdrop "${P}b" Ip:InReceives 10
	[ "$(nft_counter "${P}b" "inet uf b" "$h")" -eq 10 ]
	expect '.hook == "input"' .packets 10 .table uf .rule_chain b .rule_handle "$h" \
		'.inferred | length' 0
}
