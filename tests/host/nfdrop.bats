#!/usr/bin/env bats
# nfdrop: which hook, table, chain and rule dropped a packet. Rules live in
# test namespaces (never in the root ruleset), packets are counted exactly
# against the number sent, names against what nft/iptables list themselves.
#
# On this machine (6.18, no fentry) nfdrop names the hook from the kernel
# stack and the chains from the ruleset, marking inferred fields; run by
# tests/vm/run-suites in the Soft-RoCE guest (6.1) the same file exercises
# the fexit path, where the kernel names table and chain itself. The few
# assertions that differ between the two look at which path is in use.

load ../lib/common
load ../lib/nfdrop

setup() {
	nfdrop_setup axn
}

setup_file() {
	nfdrop_modules
}

teardown() {
	ax_cleanup
}

# ruleset: the nft ruleset on stdin into the pair's receiving side
ruleset() {
	ip netns exec "${P}b" nft -f -
}

# drop_run N [NFDROP-OPTS...]: nfdrop watching the receiving side while N
# RoCE packets go to it, then stopped once the side received them all
# (its report in $OUT)
drop_run() {
	local n=$1 in
	shift
	in=$(ip_in "${P}b")
	start_nfdrop --roce -N "${P}b" "$@"
	ax_send_roce "${P}a" 10.210.0.2 "$n"
	stop_nfdrop "${P}b" Ip:InReceives $((in + n))
}

@test "nftables rule in input: hook, table, chain, rule handle and text, exact count" {
	pair
	ruleset <<-'NFT'
	table ip axt {
		chain in { type filter hook input priority 0; udp dport 4791 drop; }
	}
	NFT
	h=$(nft_handle "${P}b" "ip axt in" "udp dport 4791 drop")
	text=$(nft_text "${P}b" "ip axt in" "$h")
	drop_run 9
	expect '.hook == "input"' .packets 9 .netns_name "${P}b" .hook_family ip \
		.engine nftables .table_family ip .table axt .chain in \
		.chain_priority 0 .chain_policy accept .rule_handle "$h" .rule "$text" \
		.verdict DROP '.inferred | length' 0 .reason NETFILTER_DROP
}

@test "nftables REJECT in output (inet table): hook output, verdict REJECT" {
	pair
	ip netns exec "${P}a" nft -f - <<-'NFT'
	table inet axt {
		chain out { type filter hook output priority 0; udp dport 4791 reject; }
	}
	NFT
	h=$(nft_handle "${P}a" "inet axt out" "udp dport 4791 reject")
	start_nfdrop --roce -N "${P}a"
	send_fails_ok "${P}a" 10.210.0.2 5
	# rejected in the sender's own send: done when it returns
	stop_nfdrop
	expect '.hook == "output"' .packets 5 .table_family inet .table axt \
		.chain out .rule_handle "$h" .verdict REJECT
	# nothing dropped at the receiver's input
	[ "$(packets '.hook == "input"')" -eq 0 ]
}

@test "nftables rule in forward, three-namespace router: hook forward in the router's netns" {
	router
	ip netns exec "${P}r" nft -f - <<-'NFT'
	table inet axt {
		chain fw { type filter hook forward priority 0; udp dport 4791 ip daddr 10.211.2.1 drop; }
	}
	NFT
	h=$(nft_handle "${P}r" "inet axt fw" "udp dport 4791 ip daddr 10.211.2.1 drop")
	# no -N: nfdrop finds the namespace of each drop by itself
	start_nfdrop --roce
	ax_send_roce "${P}a" 10.211.2.1 7
	stop_nfdrop "${P}r" Ip:InReceives 7
	expect ".netns_name == \"${P}r\"" .packets 7 .hook forward .table axt \
		.chain fw .rule_handle "$h" .verdict DROP
	[ "$(packets ".netns_name == \"${P}a\" or .netns_name == \"${P}b\"")" -eq 0 ]
}

@test "drops at input, forward and output of one namespace at once: each hook counted exactly" {
	router
	ip netns exec "${P}r" nft -f - <<-'NFT'
	table inet axt {
		chain in { type filter hook input priority 0; udp dport 4791 drop; }
		chain fw { type filter hook forward priority 0; udp dport 4791 drop; }
		chain out { type filter hook output priority 0; udp dport 4791 drop; }
	}
	NFT
	start_nfdrop --roce -N "${P}r"
	for _ in 1 2; do
		ax_send_roce "${P}a" 10.211.1.254 2
		ax_send_roce "${P}a" 10.211.2.1 3
		send_fails_ok "${P}r" 10.211.1.1 4
	done
	# the router received the 10 it drops at input and forward; its own
	# 8 died in its sends
	stop_nfdrop "${P}r" Ip:InReceives 10
	expect '.hook == "input"' .packets 4 .chain in
	expect '.hook == "forward"' .packets 6 .chain fw
	expect '.hook == "output"' .packets 8 .chain out
}

@test "chain policy drop with no matching rule: verdict POLICY, no rule named" {
	pair
	ruleset <<-'NFT'
	table ip axt {
		chain in { type filter hook input priority 0; policy drop; udp dport 9 accept; }
	}
	NFT
	drop_run 6
	expect '.hook == "input"' .packets 6 .chain in .chain_policy drop \
		.verdict POLICY .rule_handle null '.inferred | length' 0
}

@test "iptables-nft rule: table filter, chain INPUT, handle as nft lists it" {
	command -v iptables-nft >/dev/null || skip "iptables-nft not installed"
	pair
	ip netns exec "${P}b" iptables-nft -A INPUT -p udp --dport 4791 -j DROP
	h=$(nft_handle "${P}b" "ip filter INPUT" "udp dport 4791 counter.* drop")
	[ -n "$h" ]
	drop_run 6
	expect '.hook == "input"' .packets 6 .engine nftables .table_family ip \
		.table filter .chain INPUT .rule_handle "$h" .verdict DROP
}

@test "iptables-legacy REJECT next to an nftables chain: the legacy rule, by position" {
	command -v iptables-legacy >/dev/null || skip "iptables-legacy not installed"
	pair
	ip netns exec "${P}b" iptables-legacy -A INPUT -p udp --dport 9 -j ACCEPT
	ip netns exec "${P}b" iptables-legacy -A INPUT -p udp --dport 4791 -j REJECT
	# an nftables chain at the same hook that could drop other packets
	ruleset <<-'NFT'
	table ip axt {
		chain in { type filter hook input priority 0; udp dport 5000 drop; }
	}
	NFT
	line=$(ip netns exec "${P}b" iptables-legacy-save | grep -- '-A INPUT .*REJECT')
	drop_run 5
	expect '.hook == "input"' .packets 5 .engine iptables-legacy .table filter \
		.chain INPUT .rule_handle 2 .rule "$line" .verdict REJECT
	if ! fexit_path; then
		# the stack path: freed in nf_hook_slow, no nft_do_chain on the stack
		expect '.hook == "input"' .location nf_hook_slow .source stack
	else
		expect '.hook == "input"' .source fexit
	fi
}

@test "REJECT and DROP in one chain are told apart" {
	pair
	ruleset <<-'NFT'
	table inet axt {
		chain in {
			type filter hook input priority 0;
			udp dport 4791 reject
			udp dport 4792 drop
		}
	}
	NFT
	hr=$(nft_handle "${P}b" "inet axt in" "udp dport 4791 reject")
	hd=$(nft_handle "${P}b" "inet axt in" "udp dport 4792 drop")
	start_nfdrop -A -N "${P}b"
	# within the ICMP error burst (6), so every REJECT reply really goes out
	ax_send_roce "${P}a" 10.210.0.2 4
	ax_send_roce "${P}a" 10.210.0.2 5 04 4792
	stop_nfdrop "${P}b" Ip:InReceives 9
	[ "$(packets '.hook == "input"')" -eq 9 ]
	expect '.hook == "input" and .rejected > 0' .packets 4 .rejected 4 \
		.verdict REJECT .rule_handle "$hr" '.inferred | length' 0
	# no reply: on the fexit path every REJECT reply is seen, so not the
	# REJECT; on the stack path replies are seen only after rate
	# limiting, but the packet's port (4792) matches only the DROP rule
	expect '.hook == "input" and .rejected == 0' .packets 5 \
		.verdict DROP .rule_handle "$hd" '.inferred | length' 0
}

# ICMPv6 destination-unreachable errors namespace NS has received
icmp6_unreach_in() {
	ip netns exec "$1" awk '$1 == "Icmp6InDestUnreachs" { print $2 }' /proc/net/snmp6
}

@test "IPv6 REJECT and DROP in one chain: rejected equals the ICMPv6 errors the sender got" {
	pair
	# counters: IPv6 has no per-namespace count of these packets alone
	# (neighbour discovery and MLD count too), the rules' own say when
	# all were dropped
	ruleset <<-'NFT'
	table inet axt {
		chain in {
			type filter hook input priority 0;
			udp dport 4791 counter reject
			udp dport 4792 counter drop
		}
	}
	NFT
	hr=$(nft_handle "${P}b" "inet axt in" "udp dport 4791 counter.*reject")
	hd=$(nft_handle "${P}b" "inet axt in" "udp dport 4792 counter.*drop")
	# every error goes out: the truth is what arrives, not a rate limit
	ip netns exec "${P}b" sysctl -qw net.ipv6.icmp.ratelimit=0
	before=$(icmp6_unreach_in "${P}a")
	start_nfdrop -A -N "${P}b"
	ax_send_roce "${P}a" fd00:210::2 10
	ax_send_roce "${P}a" fd00:210::2 5 04 4792
	ax_until 30 "10 ICMPv6 errors" eval '[ $(($(icmp6_unreach_in "${P}a") - before)) -ge 10 ]'
	wait_nft_counter "${P}b" "inet axt in" "$hd" 5
	stop_nfdrop
	got=$(($(icmp6_unreach_in "${P}a") - before))
	[ "$got" -eq 10 ]
	[ "$(packets '.hook_family == "ip6"')" -eq 15 ]
	expect '.hook_family == "ip6" and .rejected > 0' .packets 10 .rejected "$got" \
		.verdict REJECT .rule_handle "$hr" '.inferred | length' 0
	expect '.hook_family == "ip6" and .rejected == 0' .packets 5 \
		.verdict DROP .rule_handle "$hd" '.inferred | length' 0
}

@test "two chains at one hook could drop: the packet matches the first's rule, certain on both paths" {
	pair
	ruleset <<-'NFT'
	table ip axa {
		chain in { type filter hook input priority 0; udp dport 4791 ip saddr 10.210.0.1 drop; }
	}
	table ip axz {
		chain in { type filter hook input priority 10; udp dport 4791 drop; }
	}
	NFT
	h=$(nft_handle "${P}b" "ip axa in" "udp dport 4791 ip saddr 10.210.0.1 drop")
	drop_run 6
	# the packet (10.210.0.1 to port 4791) meets axa's rule first: it never
	# reaches axz, whose rule would drop it too
	expect '.hook == "input"' .packets 6 .table axa .chain in \
		.rule_handle "$h" '.inferred | length' 0
	if ! fexit_path; then
		expect '.hook == "input"' .source stack \
			'.matches_evaluated | index("ip saddr") != null' true
	fi
}

@test "two chains at one hook, the packet matches neither first rule exactly: inferred and listed" {
	host_only
	pair
	# ct mark and meta pkttype are not matched against the packet: both
	# chains' rules stay candidates, and the answer says so
	ruleset <<-'NFT'
	table ip axa {
		chain in { type filter hook input priority 0; udp dport 4791 ct mark 0 drop; }
	}
	table ip axz {
		chain in { type filter hook input priority 10; udp dport 4791 meta pkttype host drop; }
	}
	NFT
	drop_run 6
	expect '.hook == "input"' .packets 6 .source stack \
		'[.inferred[] | select(. == "table" or . == "chain" or . == "rule")] | length' 3 \
		'[.candidates[] | .table] | join(",")' axa,axz \
		'[.candidates[] | .priority | tostring] | join(",")' 0,10 \
		'.matches_not_understood | join(",")' ct,meta
}

@test "--trace-rules names the exact rule and leaves the ruleset byte-identical" {
	pair
	ruleset <<-'NFT'
	table ip axa {
		chain in { type filter hook input priority 0; udp dport 4791 ip saddr 10.210.0.1 drop; udp dport 4791 drop; }
	}
	table ip axz {
		chain in { type filter hook input priority 10; policy drop; }
	}
	NFT
	h=$(nft_handle "${P}b" "ip axa in" "udp dport 4791 ip saddr 10.210.0.1 drop")
	text=$(nft_text "${P}b" "ip axa in" "$h")
	before=$(ip netns exec "${P}b" nft list ruleset)
	start_nfdrop --roce -N "${P}b" --trace-rules
	# the helper table is there while it runs
	ip netns exec "${P}b" nft list tables | grep -q "agentxdp_nfdrop_trace_$NF_PID"
	ax_send_roce "${P}a" 10.210.0.2 5
	stop_nfdrop "${P}b" Ip:InReceives 5
	expect '.hook == "input"' .packets 5 .source trace .table axa .chain in \
		.rule_handle "$h" .rule "$text" '.inferred | length' 0
	[ "$(ip netns exec "${P}b" nft list ruleset)" = "$before" ]
}

@test "--trace-rules after kill -9: the next run removes the leftover table, ruleset identical" {
	host_only
	pair
	ruleset <<-'NFT'
	table inet axt {
		chain in { type filter hook input priority 0; udp dport 4791 drop; }
	}
	NFT
	before=$(ip netns exec "${P}b" nft list ruleset)
	start_nfdrop --roce -N "${P}b" --trace-rules
	local pid=$NF_PID
	ax_tool_stop NF_PID KILL
	ip netns exec "${P}b" nft list tables | grep -q "agentxdp_nfdrop_trace_$pid"
	[ "$(ip netns exec "${P}b" nft list ruleset)" != "$before" ]
	start_nfdrop --roce -N "${P}b" --trace-rules
	grep -q "removed 1 trace table" "$ERR"
	ax_send_roce "${P}a" 10.210.0.2 3
	stop_nfdrop "${P}b" Ip:InReceives 3
	expect '.hook == "input"' .packets 3 .source trace
	[ "$(ip netns exec "${P}b" nft list ruleset)" = "$before" ]
	# SIGTERM cleans up as well as SIGINT
	start_nfdrop --roce -N "${P}b" --trace-rules
	ax_tool_stop NF_PID TERM
	[ "$(ip netns exec "${P}b" nft list ruleset)" = "$before" ]
}

@test "IPv6 drop in an inet table: hook family ip6, IPv4 not counted with -6" {
	pair
	ruleset <<-'NFT'
	table inet axt {
		chain in { type filter hook input priority 0; udp dport 4791 counter drop; }
	}
	NFT
	h=$(nft_handle "${P}b" "inet axt in" "udp dport 4791 counter.*drop")
	start_nfdrop --roce -N "${P}b" -6
	ax_send_roce "${P}a" fd00:210::2 6
	ax_send_roce "${P}a" 10.210.0.2 3
	# all 9 dropped, by the rule's own counter (IPv6 has no count of its own)
	wait_nft_counter "${P}b" "inet axt in" "$h" 9
	stop_nfdrop
	expect '.hook == "input"' .packets 6 .hook_family ip6 .table_family inet \
		.chain in .verdict DROP
}

@test "-e events carry addresses, ports, RoCE opcode, QP and PSN, and the rule" {
	pair
	ruleset <<-'NFT'
	table ip axt {
		chain in { type filter hook input priority 0; udp dport 4791 drop; }
	}
	NFT
	h=$(nft_handle "${P}b" "ip axt in" "udp dport 4791 drop")
	start_nfdrop -e --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 6
	stop_nfdrop "${P}b" Ip:InReceives 6
	run jq -r -s '[.[] | select(.type == "nf_drop")] |
		(length | tostring),
		([.[].psn] | sort | map(tostring) | join(",")),
		([.[] | select(.saddr == "10.210.0.1" and .daddr == "10.210.0.2" and
			.dport == 4791 and .dqpn == 18 and .opcode == "RC_SEND_ONLY" and
			.ifname == "'"${P}vb"'" and .table == "axt" and .chain == "in" and
			.rule_handle == '"$h"' and .verdict == "DROP")] | length | tostring)' "$OUT"
	[ "${lines[0]}" = 6 ]
	[ "${lines[1]}" = 1,2,3,4,5,6 ]
	[ "${lines[2]}" = 6 ]
}

@test "interval and count: reports every second, exits by itself, counts add up" {
	host_only
	pair
	ruleset <<-'NFT'
	table ip axt {
		chain in { type filter hook input priority 0; udp dport 4791 drop; }
	}
	NFT
	start_nfdrop --roce -N "${P}b" 1 3
	ax_send_roce "${P}a" 10.210.0.2 10
	# it ends on its own after three reports, with exit status 0
	ax_until 10 "nfdrop's exit after 3 reports" ax_tool_ended NF_PID
	ax_tool_stop NF_PID
	[ "$AX_RC" -eq 0 ]
	[ "$(packets '.hook == "input"')" -eq 10 ]
}

@test "--hook, --family and -i filter; text output names hook, table and chain" {
	host_only
	pair
	ruleset <<-'NFT'
	table ip axt {
		chain in { type filter hook input priority 0; udp dport 4791 drop; }
	}
	NFT
	drop_run 3 --hook output
	[ "$(packets true)" -eq 0 ]
	drop_run 3 --family ip6
	[ "$(packets true)" -eq 0 ]
	# -i names an interface of -N's namespace
	drop_run 3 -i lo
	[ "$(packets true)" -eq 0 ]
	drop_run 2 -i "${P}vb"
	[ "$(packets '.hook == "input"')" -eq 2 ]
	in=$(ip_in "${P}b")
	ax_tool_start --out NF_PID "$OUT" 90 Tracing "$NFDROP" --roce -N "${P}b" --hook INPUT -4
	ax_send_roce "${P}a" 10.210.0.2 3
	stop_nfdrop "${P}b" Ip:InReceives $((in + 3))
	grep -Eq "^${P}b +ip input +ip axt +in +DROP +3$" "$OUT"
	grep -q "rule: in handle [0-9]*: udp dport 4791 drop" "$OUT"
}

# every namespace numbers its devices from 1: the pair's twin (${P}t: same
# addresses, the same rule, the same interface indexes) drops too, and
# nfdrop -N ${P}b -i ${P}vb counts only ${P}b's drops, as its nft counter
@test "-i is scoped by namespace: drops at the same interface index elsewhere never count" {
	pair
	ax_netns_pair "${P}t" 10.210.0.1/24 10.210.0.2/24
	[ "$(ip -n "${P}b" -o link show "${P}vb" | cut -d: -f1)" = \
	  "$(ip -n "${P}tb" -o link show "${P}tvb" | cut -d: -f1)" ]
	local ns
	for ns in "${P}b" "${P}tb"; do
		ip netns exec "$ns" nft -f - <<-'NFT'
		table ip axt {
			chain in { type filter hook input priority 0; udp dport 4791 counter drop; }
		}
		NFT
	done
	start_nfdrop --roce -N "${P}b" -i "${P}vb"
	ax_send_roce "${P}a" 10.210.0.2 4
	ax_send_roce "${P}ta" 10.210.0.2 7
	# the twin's drops too, or one counted by mistake could come too late
	ax_wait_snmp "${P}tb" Ip:InReceives 7
	stop_nfdrop "${P}b" Ip:InReceives 4
	local counted
	counted=$(ip netns exec "${P}b" nft list chain ip axt in | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
	[ "$counted" -eq 4 ]
	# the twin's rule dropped its 7 (the precondition), none counted
	[ "$(ip netns exec "${P}tb" nft list chain ip axt in | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')" -eq 7 ]
	[ "$(packets true)" -eq "$counted" ]
	[ "$(packets ".netns_name != \"${P}b\"")" -eq 0 ]
}

@test "bad input: unknown family or hook, unknown netns, no privileges: one-line error, exit 1" {
	run "$NFDROP" --family bogus
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == *"unknown family 'bogus'"* ]]
	run "$NFDROP" --hook inptu
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == *"unknown hook 'inptu'"* ]]
	run "$NFDROP" -N axn-no-such-netns
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"no such network namespace"* ]]
	run "$NFDROP" -s
	[ "$status" -eq 1 ]
	run "$NFDROP" --method sideways
	[ "$status" -eq 1 ]
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$NFDROP"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"needs CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN"* ]]
}

@test "--prom: cumulative counter per hook, table, chain, rule and verdict" {
	host_only
	pair
	ruleset <<-'NFT'
	table ip axt {
		chain in { type filter hook input priority 0; udp dport 4791 drop; }
	}
	NFT
	h=$(nft_handle "${P}b" "ip axt in" "udp dport 4791 drop")
	prom=$BATS_TEST_TMPDIR/nfdrop.prom
	series="agentxdp_nfdrop_drops_total{netns=\"${P}b\",hook_family=\"ip\",hook=\"input\",table_family=\"ip\",table=\"axt\",chain=\"in\",rule_handle=\"$h\",verdict=\"DROP\",inferred=\"false\"}"
	start_nfdrop --roce -N "${P}b" --prom "$prom" 1
	# written at start, before any drop
	ax_wait_for "$prom" "agentxdp_nfdrop_events_lost_total" 10
	ax_send_roce "${P}a" 10.210.0.2 4
	# an interval's report drained the first 4 and wrote them to the file
	ax_until 30 "the first 4 in $prom" grep -qxF "$series 4" "$prom"
	ax_send_roce "${P}a" 10.210.0.2 3
	stop_nfdrop "${P}b" Ip:InReceives 7
	# counts drained every interval add up in the file
	grep -qxF "$series 7" "$prom"
	if command -v promtool >/dev/null; then
		promtool check metrics <"$prom"
	fi
}

@test "-T: a TIME column in -e, aligned with the header; above each counts table" {
	host_only
	# names that fit the NETNS column (the suite's carry the PID)
	P=axnT$BATS_TEST_NUMBER
	pair
	ruleset <<-'NFT'
	table ip axt {
		chain in { type filter hook input priority 0; udp dport 4791 drop; }
	}
	NFT
	ax_tool_start --out NF_PID "$OUT" 90 Tracing "$NFDROP" --roce -N "${P}b" -e -T
	ax_send_roce "${P}a" 10.210.0.2 3
	stop_nfdrop "${P}b" Ip:InReceives 3
	cat "$OUT" >&2
	grep -Eq '^TIME +NETNS +IFACE +HOOK +TABLE/CHAIN #RULE +VERDICT +PACKET$' "$OUT"
	[ "$(grep -Ec "^[0-9]{2}:[0-9]{2}:[0-9]{2} ${P}b +${P}vb +ip input +ip axt/in #[0-9]+ +DROP +10\.210\.0\.1:[0-9]+ -> 10\.210\.0\.2:4791 RC_SEND_ONLY" "$OUT")" -eq 3 ]
	ax_columns_aligned "$OUT" TIME TIME NETNS IFACE HOOK TABLE/CHAIN VERDICT PACKET

	ax_tool_start --out NF_PID "$OUT" 90 Tracing "$NFDROP" --roce -N "${P}b" -T
	ax_send_roce "${P}a" 10.210.0.2 3
	stop_nfdrop "${P}b" Ip:InReceives 6
	cat "$OUT" >&2
	grep -B1 '^NETNS' "$OUT" | grep -Eq '^[0-9]{2}:[0-9]{2}:[0-9]{2}$'
	ax_columns_aligned "$OUT" NETNS NETNS HOOK TABLE CHAIN VERDICT
}

# -w: the dropped packets read back with tshark
load ../lib/pcapng

# the comment of each packet as nfdrop_row_comment() writes it, from the
# fields of a JSON event (ROW_COMMENT: of any record, EVENT_COMMENT: of
# the nf_drop events); a verdict JSON gives as "?" is "unknown" in words
ROW_COMMENT='"hook_family=\(.hook_family) hook=\(.hook)" +
	(if .table then " table_family=\(.table_family) table=\(.table) chain=\(.chain)" else "" end) +
	" verdict=\(if .verdict == "?" then "unknown" else .verdict end)" +
	(if (.inferred | length) > 0 then " inferred=" + (.inferred | join(",")) else "" end) +
	(if .rule_handle then " rule_chain=\(.rule_chain) rule_handle=\(.rule_handle) rule=\(.rule)"
	 else "" end)'
EVENT_COMMENT="select(.type == \"nf_drop\") | $ROW_COMMENT"

@test "-e -w: one pcapng packet per drop, comment = the event's hook, table, chain, rule" {
	pcap_need_tshark
	pair
	ruleset <<-'NFT'
	table inet axt {
		chain in { type filter hook input priority 0; udp dport 4791 counter drop; }
	}
	NFT
	h=$(nft_handle "${P}b" "inet axt in" "udp dport 4791 counter.*drop")
	PCAP=$BATS_TEST_TMPDIR/drops.pcapng
	start_nfdrop -e --roce -N "${P}b" -w "$PCAP"
	ax_send_roce "${P}a" 10.210.0.2 25
	ax_until 20 "25 events" bash -c "[ \$(grep -c '\"type\":\"nf_drop\"' $OUT) -ge 25 ]"
	ax_tool_stop NF_PID
	# the rule's own counter is the ground truth
	[ "$(nft_counter "${P}b" "inet axt in" "$h")" -eq 25 ]
	[ "$(pcap_count "$PCAP")" -eq 25 ]
	diff <(jq -r "$EVENT_COMMENT" "$OUT") <(pcap_fields "$PCAP" frame.comment)
	# the rule itself is named in every comment
	[ "$(pcap_fields "$PCAP" frame.comment | sort -u)" = \
	  "hook_family=ip hook=input table_family=inet table=axt chain=in verdict=DROP rule_chain=in rule_handle=$h rule=udp dport 4791 counter drop" ]
	diff <(for i in $(seq 1 25); do echo "10.210.0.1 10.210.0.2 4791 18 $i"; done) \
		<(pcap_headers "$PCAP")
	diff <(jq -r 'select(.type == "nf_drop") | "\(.saddr) \(.daddr) \(.dport) \(.dqpn) \(.psn)"' "$OUT") \
		<(pcap_headers "$PCAP")
	[ "$(pcap_fields "$PCAP" frame.interface_name frame.encap_type frame.len frame.cap_len |
		sort -u)" = "$(printf '%s\t1\t74\t74' "${P}vb")" ]
	diff <(jq -r 'select(.type == "nf_drop") | .time' "$OUT" | awk '{ printf "%.6f\n", $1 }') \
		<(pcap_fields "$PCAP" frame.time_epoch | awk '{ printf "%.6f\n", $1 }')
}

@test "-w without -e: each packet held until its report, commented as that report and -e -j name it" {
	host_only
	pcap_need_tshark
	pair
	ruleset <<-'NFT'
	table ip axt {
		chain in { type filter hook input priority 0; udp dport 4791 counter drop; }
	}
	NFT
	h=$(nft_handle "${P}b" "ip axt in" "udp dport 4791 counter.*drop")
	PCAP=$BATS_TEST_TMPDIR/drops.pcapng
	# the same drops seen by -e -j beside it: what it says of each packet
	EV=$BATS_TEST_TMPDIR/events.json
	ax_tool_start --err EV_PID "$EV" 90 Tracing "$NFDROP" -e -j --roce -N "${P}b"
	# counts every second: the packets go to the file at the report
	start_nfdrop --roce -N "${P}b" -w "$PCAP" --snaplen 128 1
	ax_send_roce "${P}a" 10.210.0.2 9
	ax_until 20 "9 packets counted" bash -c "[ \$(jq -s '[.[] | select(.type == \"nf_drop_count\") | .packets] | add // 0' $OUT) -ge 9 ]"
	# written by the report that counted them, before the exit
	[ "$(pcap_count "$PCAP")" -eq 9 ]
	ax_until 20 "9 events" bash -c "[ \$(grep -c '\"type\":\"nf_drop\"' $EV) -ge 9 ]"
	ax_tool_stop EV_PID
	ax_tool_stop NF_PID TERM
	[ "$(nft_counter "${P}b" "ip axt in" "$h")" -eq 9 ]
	[ "$(packets '.hook == "input"')" -eq 9 ]
	[ "$(packets '.hook == "input" and .table == "axt" and .chain == "in" and
		.rule_handle == '"$h"' and .verdict == "DROP" and (.inferred | length) == 0')" -eq 9 ]
	[ "$(pcap_count "$PCAP")" -eq 9 ]
	want="hook_family=ip hook=input table_family=ip table=axt chain=in verdict=DROP rule_chain=in rule_handle=$h rule=udp dport 4791 counter drop"
	# every comment: the count row's, and what -e -j said of the packet
	[ "$(pcap_fields "$PCAP" frame.comment | sort | uniq -c | awk '{ $1 = $1 } 1')" = "9 $want" ]
	[ "$(jq -r "select(.type == \"nf_drop_count\") | $ROW_COMMENT" "$OUT" | sort -u)" = "$want" ]
	diff <(jq -r "$EVENT_COMMENT" "$EV") <(pcap_fields "$PCAP" frame.comment)
	diff <(for i in $(seq 1 9); do echo "10.210.0.1 10.210.0.2 4791 18 $i"; done) \
		<(pcap_headers "$PCAP")
	[ "$(pcap_fields "$PCAP" frame.len frame.cap_len | sort -u)" = "$(printf '74\t74')" ]
	# no packet was written unsettled
	! grep -q "before a report settled" "$ERR"
}

@test "-e -w at the output hook: no mac header yet, written from the IP header as raw IP" {
	pcap_need_tshark
	pair
	ip netns exec "${P}a" nft -f - <<-'NFT'
	table inet axt {
		chain out { type filter hook output priority 0; udp dport 4791 counter drop; }
	}
	NFT
	h=$(nft_handle "${P}a" "inet axt out" "udp dport 4791 counter.*drop")
	PCAP=$BATS_TEST_TMPDIR/drops.pcapng
	start_nfdrop -e --roce -N "${P}a" -w "$PCAP"
	ip netns exec "${P}a" "$AX_BUILD/udpflood" 10.210.0.2 4791 6 >/dev/null 2>&1 || true
	ax_until 20 "6 events" bash -c "[ \$(grep -c '\"type\":\"nf_drop\"' $OUT) -ge 6 ]"
	ax_tool_stop NF_PID
	[ "$(nft_counter "${P}a" "inet axt out" "$h")" -eq 6 ]
	[ "$(pcap_count "$PCAP")" -eq 6 ]
	diff <(jq -r "$EVENT_COMMENT" "$OUT") <(pcap_fields "$PCAP" frame.comment)
	# link type raw IP (tshark's encapsulation 7), 60 bytes from the IP header
	[ "$(pcap_fields "$PCAP" frame.interface_name frame.encap_type frame.len frame.cap_len |
		sort -u)" = "$(printf '%s\t7\t60\t60' "${P}va")" ]
	diff <(for i in $(seq 1 6); do echo "10.210.0.1 10.210.0.2 4791 18 $i"; done) \
		<(pcap_headers "$PCAP")
}

@test "CLI: -w to an unwritable file, or a bad --snaplen: one line, exit 1" {
	run "$NFDROP" -w /nonexistent/dir/x.pcapng
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "${lines[0]}" = "nfdrop: cannot write /nonexistent/dir/x.pcapng: No such file or directory" ]
	# the same words in every tool: pcapng.c's argp child parses it
	for bad in 0 2049 x; do
		run "$NFDROP" -w "$BATS_TEST_TMPDIR/x.pcapng" --snaplen "$bad"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[ "${lines[0]}" = "nfdrop: invalid snap length: $bad (1-2048)" ]
	done
}

# ingress_run N CHAIN_SPEC H: nfdrop watching ${P}b while N RoCE packets
# arrive on ${P}vb, stopped once rule H of CHAIN_SPEC counted them (ingress
# drops come before Ip:InReceives)
ingress_run() {
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 "$1"
	wait_nft_counter "${P}b" "$2" "$3" "$1"
	stop_nfdrop
}

# a second veth pair in ${P}b, up, that no packet of the test reaches
other_devs() {
	ip -n "${P}b" link add "${P}d0" type veth peer name "${P}d1"
	ip -n "${P}b" link set "${P}d0" up
	ip -n "${P}b" link set "${P}d1" up
}

# ingress_counted CHAIN_SPEC TABLE_FAMILY TABLE CHAIN: 11 packets dropped
# by CHAIN_SPEC's counted rule (the truth), and nfdrop names it, certain
ingress_counted() {
	local h
	h=$(nft_handle "${P}b" "$1" "udp dport 4791 counter")
	ingress_run 11 "$1" "$h"
	[ "$(nft_counter "${P}b" "$1" "$h")" -eq 11 ]
	expect '.hook == "ingress"' .packets 11 .table_family "$2" .table "$3" .chain "$4" \
		.rule_handle "$h" .verdict DROP '.inferred | length' 0
}

@test "netdev ingress chains bound to other devices (one, a set, a name not there) never named" {
	pair
	other_devs
	ruleset <<-NFT
	table netdev other {
		chain in { type filter hook ingress device "${P}d0" priority -100; udp dport 4791 drop; }
		chain in2 { type filter hook ingress devices = { "${P}d0", "${P}d1" } priority -50; udp dport 4791 drop; }
	}
	table netdev real {
		chain in { type filter hook ingress devices = { "${P}d1", "${P}vb" } priority 10; udp dport 4791 counter drop; }
	}
	NFT
	# a device name with no device (6.16+ keeps such hooks for when one
	# comes), and a flowtable on the pair's device (not a chain), where
	# the kernel has them
	echo "table netdev ghost { chain in { type filter hook ingress device \"${P}zz\" priority -200; udp dport 4791 drop; }; }" |
		ruleset 2>/dev/null || true
	echo "table inet ft { flowtable f { hook ingress priority 0; devices = { \"${P}vb\" }; }; }" |
		ruleset 2>/dev/null || true
	ingress_counted "netdev real in" netdev real in
	expect '.hook == "ingress"' .hook_family netdev
}

@test "inet ingress chain bound to another device never named; the receiving device's is" {
	pair
	other_devs
	ruleset <<-NFT
	table inet other {
		chain ing { type filter hook ingress device "${P}d0" priority -5; udp dport 4791 drop; }
	}
	table inet real {
		chain ing { type filter hook ingress device "${P}vb" priority 0; udp dport 4791 counter drop; }
	}
	NFT
	ingress_counted "inet real ing" inet real ing
}

@test "nat chain drops a connection's first packets only; the filter chain after it the rest" {
	pair
	# conntrack on in ${P}b (a ct rule), the chains without their rules yet
	ruleset <<-'NFT'
	table ip f { chain in { type filter hook input priority 200; policy accept; }; }
	table ip ctx { chain o { type filter hook output priority 0; policy accept; ct mark 0x1234 accept; }; }
	table ip n { chain in { type nat hook input priority 100; policy accept; }; }
	NFT
	in=$(ip_in "${P}b")
	# sport 40000 gets a conntrack entry with its NAT binding made
	send_from "${P}a" 10.210.0.2 40000 3
	ax_wait_snmp "${P}b" Ip:InReceives $((in + 3))
	ip netns exec "${P}b" nft add rule ip n in udp dport 4791 counter drop
	ip netns exec "${P}b" nft add rule ip f in udp dport 4791 counter drop
	hn=$(nft_handle "${P}b" "ip n in" "udp dport 4791 counter")
	hf=$(nft_handle "${P}b" "ip f in" "udp dport 4791 counter")
	start_nfdrop --roce -N "${P}b"
	send_from "${P}a" 10.210.0.2 40000 5
	send_from "${P}a" 10.210.0.2 40001 4
	stop_nfdrop "${P}b" Ip:InReceives $((in + 12))
	# the truth, by the rules' own counters
	[ "$(nft_counter "${P}b" "ip f in" "$hf")" -eq 5 ]
	[ "$(nft_counter "${P}b" "ip n in" "$hn")" -eq 4 ]
	expect '.table == "f"' .packets 5 .hook input .chain in .rule_handle "$hf" \
		.verdict DROP '.inferred | length' 0
	expect '.table == "n"' .packets 4 .hook input .chain in .rule_handle "$hn" \
		.verdict DROP '.inferred | length' 0
	[ "$(packets 'true')" -eq 9 ]
}

@test "-e --prom: the file counts every drop, also those whose events were lost" {
	host_only
	pair
	ruleset <<-'NFT'
	table inet t {
		chain in { type filter hook input priority 0; udp dport 4791 counter drop; }
	}
	NFT
	h=$(nft_handle "${P}b" "inet t in" "udp dport 4791 counter")
	prom=$BATS_TEST_TMPDIR/nfdrop.prom
	in=$(ip_in "${P}b")
	start_nfdrop --roce -N "${P}b" -e --prom "$prom"
	ax_send_roce "${P}a" 10.210.0.2 50000
	stop_nfdrop "${P}b" Ip:InReceives $((in + 50000))
	[ "$(nft_counter "${P}b" "inet t in" "$h")" -eq 50000 ]
	lost=$(sed -n 's/^agentxdp_nfdrop_events_lost_total //p' "$prom")
	events=$(jq -s '[.[] | select(.type == "nf_drop")] | length' "$OUT")
	[ "$((events + lost))" -eq 50000 ]
	grep -qxF "agentxdp_nfdrop_drops_total{netns=\"${P}b\",hook_family=\"ip\",hook=\"input\",table_family=\"inet\",table=\"t\",chain=\"in\",rule_handle=\"$h\",verdict=\"DROP\",inferred=\"false\"} 50000" "$prom"
}

@test "-N with a path that is no network namespace: one line, exit 1" {
	for p in /tmp /etc/passwd /proc/self/ns/mnt; do
		run timeout 10 "$NFDROP" -N "$p"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ ${lines[0]} == *"not a network namespace: $p"* ]]
	done
}
