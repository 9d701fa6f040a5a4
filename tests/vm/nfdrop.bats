#!/usr/bin/env bats
# nfdrop's fexit path, in the Soft-RoCE guest (Debian's 6.1 allows fentry
# and fexit; the development host refuses them): the kernel itself names
# table and chain. The seed's scenario (an iptables INPUT REJECT of UDP 4791
# on veth-b while ib_write_bw runs) is in wall2.bats, with rxedrop.
# tests/host/nfdrop.bats runs here too (tests/vm/run-suites), with the same
# scenarios through fexit. The cases of tests/host/nfdrop-order.bats (too
# slow to run whole under emulation) are here once each, through fexit:
# tables tied at one hook and priority, a rule deleted while running,
# --trace-rules with NAT, bridged packets, named counters and jumps.

load ../lib/common
load ../lib/nfdrop

setup_file() {
	# the fexit path: Debian's 6.1 in the guest allows it
	ax_file_needs --vm "$NFDROP" || return 0
	nfdrop_modules
}

setup() {
	ax_file_skip
	P=axv$BATS_TEST_NUMBER
	OUT=$BATS_TEST_TMPDIR/out
	ERR=$OUT.err
}

teardown() {
	ax_file_ran || return 0
	ax_cleanup
	nfdrop_br_netfilter_unload
}

# jq over the count rows: prints one line per expression
rowq() {
	jq -r -s "[.[] | select(.type == \"nf_drop_count\") | select($1)] | $2" "$OUT"
}

@test "fexit on nft_do_chain names table, chain and rule; the stack path agrees" {
	ax_netns_pair "$P" 10.220.0.1/24 10.220.0.2/24
	ip netns exec "${P}b" nft -f - <<-'NFT'
	table inet axv {
		chain in { type filter hook input priority 0; udp dport 4791 drop; }
		chain out { type filter hook output priority 0; }
	}
	NFT
	h=$(ip netns exec "${P}b" nft -a list chain inet axv in |
		sed -n 's/.*udp dport 4791 drop # handle \([0-9]*\)$/\1/p')
	start_nfdrop --method fexit --roce -N "${P}b"
	grep -q "fexit nft_do_chain" "$ERR"
	ax_send_roce "${P}a" 10.220.0.2 4
	stop_nfdrop "${P}b" Ip:InReceives 4
	run rowq '.hook == "input"' 'length, .[0].packets, .[0].source, .[0].table, .[0].chain, .[0].rule_handle, .[0].verdict, (.[0].inferred | length)'
	[ "${lines[*]}" = "1 4 fexit axv in $h DROP 0" ]
	# the kfree_skb + stack path on the same kernel: same names
	start_nfdrop --method kfree --roce -N "${P}b"
	ax_send_roce "${P}a" 10.220.0.2 3
	stop_nfdrop "${P}b" Ip:InReceives 7
	run rowq '.hook == "input"' 'length, .[0].packets, .[0].source, .[0].table, .[0].chain, .[0].rule_handle, .[0].verdict'
	[ "${lines[*]}" = "1 3 stack axv in $h DROP" ]
}

@test "fexit on ipt_do_table: iptables-legacy table, chain and rule position" {
	command -v iptables-legacy >/dev/null || skip "iptables-legacy not installed"
	ax_netns_pair "$P" 10.220.0.1/24 10.220.0.2/24
	ip netns exec "${P}b" iptables-legacy -A INPUT -p udp --dport 9 -j ACCEPT
	ip netns exec "${P}b" iptables-legacy -A INPUT -p udp --dport 4791 -j DROP
	start_nfdrop --method fexit --roce -N "${P}b"
	grep -q "ipt_do_table" "$ERR"
	ax_send_roce "${P}a" 10.220.0.2 4
	stop_nfdrop "${P}b" Ip:InReceives 4
	run rowq '.hook == "input"' 'length, .[0].packets, .[0].source, .[0].engine, .[0].table, .[0].chain, .[0].rule_handle, .[0].verdict, .[0].rejected'
	[ "${lines[*]}" = "1 4 fexit iptables-legacy filter INPUT 2 DROP 0" ]
}

@test "fexit, two tables at one hook and priority: the later-loaded chain, equal to its counter" {
	pair
	tied_table t1 "udp dport 4791 counter drop"
	tied_table t2 "ip saddr 10.210.0.1 counter drop"
	h1=$(nft_handle "${P}b" "inet t1 in" ".*drop")
	h2=$(nft_handle "${P}b" "inet t2 in" ".*drop")
	start_nfdrop --method fexit --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 10
	stop_nfdrop "${P}b" Ip:InReceives 10
	[ "$(nft_counter "${P}b" "inet t1 in" "$h1")" -eq 0 ]
	[ "$(nft_counter "${P}b" "inet t2 in" "$h2")" -eq 10 ]
	expect '.hook == "input"' .packets 10 .source fexit .table t2 .rule_handle "$h2" \
		'.inferred | length' 0
}

@test "fexit, a rule deleted while nfdrop runs: nothing certain beyond the counters" {
	command -v iptables-nft >/dev/null || skip "iptables-nft not installed"
	pair
	ipt="ip netns exec ${P}b iptables-nft"
	$ipt -P INPUT DROP
	$ipt -A INPUT -p udp --dport 4791 -j DROP
	h=$(nft_handle "${P}b" "ip filter INPUT" "udp dport 4791.*drop")
	[ -n "$h" ]
	start_nfdrop --method fexit -A -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 10
	ax_send_roce "${P}a" 10.210.0.2 10 04 5555
	# all 20 in before the rule goes: a packet still on its way would
	# meet the policy instead
	ax_wait_snmp "${P}b" Ip:InReceives 20
	$ipt -D INPUT -p udp --dport 4791 -j DROP
	stop_nfdrop
	[ "$(policy_counter "${P}b")" -eq 10 ]
	[ "$(packets '.hook == "input" and .source == "fexit"')" -eq 20 ]
	[ "$(packets '.verdict == "POLICY" and (.inferred | length) == 0')" -le 10 ]
	[ "$(packets '.rule_handle == '"$h"' and (.inferred | length) == 0')" -le 10 ]
	[ "$(packets '(.inferred | length) == 0 and .verdict != "POLICY" and .rule_handle != '"$h"'')" -eq 0 ]
}

@test "fexit, --trace-rules -e, a DNATed flow (4791 to 5555) beside a RoCE flow: each event its own rule" {
	pair
	dnat_rules
	start_nfdrop --method fexit -A -N "${P}b" --trace-rules -e
	grep -q "fexit nft_do_chain" "$ERR"
	for i in $(seq 5); do
		ax_send_roce "${P}a" 10.210.0.2 1
		ax_send_roce "${P}a" 10.210.0.4 1
	done
	wait_nf_events 10
	stop_nfdrop
	[ "$(nft_counter "${P}b" "inet tr in" "$H5")" -eq 5 ]
	[ "$(nft_counter "${P}b" "inet tr in" "$H7")" -eq 5 ]
	run jq -r -s '[.[] | select(.type == "nf_drop")] | group_by(.daddr)[] |
		"\(.[0].daddr) \(.[0].dport) \(length) \([.[] | .rule_handle] | unique)"' "$OUT"
	[ "${lines[0]}" = "10.210.0.2 4791 5 [$H7]" ]
	[ "${lines[1]}" = "10.210.0.4 5555 5 [$H5]" ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "fexit, a bridged packet dropped in raw prerouting (br_nf_pre_routing): ip prerouting, the rule certain" {
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
	start_nfdrop --method fexit --roce -N "${P}s"
	ax_send_roce "${P}a" 10.212.0.3 10
	# bridged IPv4 is not counted as received by the bridge's namespace
	wait_nft_counter "${P}s" "ip rawt pre" "$h" 10
	stop_nfdrop
	[ "$(nft_counter "${P}s" "ip rawt pre" "$h")" -eq 10 ]
	expect '.packets > 0' .packets 10 .source fexit .hook_family ip .hook prerouting \
		.table rawt .chain pre .rule_handle "$h" '.inferred | length' 0
}

@test "fexit, named counters and a jumped-to chain that returns two ways: each rule certain, equal to its counter" {
	pair
	# 4791: the named-counter rule (its decoy's named counter rules the
	# decoy out); 4792 passes on to table uf, whose chain a returns two
	# ways before the jump to b, whose rule drops it
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
	table inet uf {
		chain a {
			ct mark 0x5 return
		}
		chain b {
			udp dport 4792 counter drop
		}
		chain in {
			type filter hook input priority 10; policy drop;
			iifname "lo" accept
			jump a
			jump b
		}
	}
	NFT
	hn=$(nft_handle "${P}b" "inet nc in" "udp dport 4791.*drop")
	hj=$(nft_handle "${P}b" "inet uf b" "udp dport 4792.*drop")
	start_nfdrop --method fexit -A -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 6
	ax_send_roce "${P}a" 10.210.0.2 4 04 4792
	stop_nfdrop "${P}b" Ip:InReceives 10
	[ "$(named_counter "${P}b" nc roce)" -eq 6 ]
	[ "$(named_counter "${P}b" nc decoy)" -eq 0 ]
	[ "$(nft_counter "${P}b" "inet uf b" "$hj")" -eq 4 ]
	expect '.table == "nc" and .hook_family == "ip"' .packets 6 .source fexit .rule_handle "$hn" .verdict DROP \
		'.inferred | length' 0
	expect '.table == "uf" and .hook_family == "ip"' .packets 4 .source fexit .rule_chain b .rule_handle "$hj" \
		'.inferred | length' 0
}

@test "fexit, iptables-nft NFQUEUE without a listener: freed in nf_queue, the rule, QUEUE, equal to its counter" {
	command -v iptables-nft >/dev/null || skip "iptables-nft not installed"
	pair
	ip netns exec "${P}b" iptables-nft -A INPUT -p udp --dport 4791 -j NFQUEUE --queue-num 3
	h=$(nft_handle "${P}b" "ip filter INPUT" "udp dport 4791 counter.*queue")
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 6
	stop_nfdrop "${P}b" Ip:InReceives 6
	[ "$(nft_counter "${P}b" "ip filter INPUT" "$h")" -eq 6 ]
	expect 'true' .packets 6 .table filter .chain INPUT .rule_handle "$h" .verdict QUEUE \
		.reason NOT_SPECIFIED '.inferred | length' 0
}

@test "fexit, ip and inet tables at one input hook, two flows: each flow's rule, equal to its counter" {
	pair
	ip netns exec "${P}b" nft -f - <<-NFT
	table ip x {
		chain in { type filter hook input priority 0; udp sport 1111 counter drop; }
	}
	table inet y {
		chain in { type filter hook input priority 10; udp sport 2222 counter drop; }
	}
	NFT
	hx=$(nft_handle "${P}b" "ip x in" "udp sport 1111.*drop")
	hy=$(nft_handle "${P}b" "inet y in" "udp sport 2222.*drop")
	start_nfdrop --roce -N "${P}b"
	send_from "${P}a" 10.210.0.2 1111 3
	send_from "${P}a" 10.210.0.2 2222 5
	stop_nfdrop "${P}b" Ip:InReceives 8
	[ "$(nft_counter "${P}b" "ip x in" "$hx")" -eq 3 ]
	[ "$(nft_counter "${P}b" "inet y in" "$hy")" -eq 5 ]
	expect '.table == "x"' .packets 3 .rule_handle "$hx" '.inferred | length' 0
	expect '.table == "y"' .packets 5 .rule_handle "$hy" '.inferred | length' 0
}

# restored N: the --trace-rules nfdrop said N times that it added its
# table again
restored() {
	[ "$(grep -c '"type":"nf_trace_table","time":[0-9.]*,"state":"restored"' "$OUT.t")" -ge "$1" ]
}

# certain: no inferred name
C='(.inferred | length) == 0'

@test "fexit, flush ruleset and reloads under rows, -e and --trace-rules: certain answers within each rule's counter, trace table restored" {
	pair
	reload_rules
	trio_start --roce -N "${P}b"
	# r1 drops 9999, r2 1111 (each rule handle 2), then r1 again
	send_from "${P}a" 10.210.0.2 9999 5
	ax_wait_snmp "${P}b" Ip:InReceives 5
	c1=$(nft_counter "${P}b" "inet t in" 2)
	reload_to r2
	ax_until 60 "the trace table restored" restored 1
	send_from "${P}a" 10.210.0.2 1111 3
	ax_wait_snmp "${P}b" Ip:InReceives 8
	c2=$(nft_counter "${P}b" "inet t in" 2)
	reload_to r1
	ax_until 60 "the trace table restored again" restored 2
	send_from "${P}a" 10.210.0.2 9999 6
	ax_wait_snmp "${P}b" Ip:InReceives 14
	c3=$(nft_counter "${P}b" "inet t in" 2)
	OUT=$OUT.e wait_nf_events 14
	trio_stop
	[ "$c1 $c2 $c3" = "5 3 6" ]
	grep -q "trace-rules table was deleted (flush ruleset?): added again" "$OUT.t.err"
	# certain rows within each rule's drops (11 and 3), none on another;
	# every drop counted; the trace saw each (its table back in time)
	for f in "$OUT.d" "$OUT.t"; do
		read -r n9 n1 no all tr < <(in_out "$f" sums nf_drop_count \
			"$C and (.rule // \"\" | test(\"9999\"))" "$C and (.rule // \"\" | test(\"1111\"))" \
			"$C and (.rule // \"\" | test(\"9999|1111\") | not)" true '.source == "trace"')
		[ "$n9" -le 11 ] && [ "$n1" -le 3 ] && [ "$no" -eq 0 ] && [ "$all" -eq 14 ] ||
			{ echo "$f: $n9 $n1 $no $all" >&2; cat "$f" >&2; false; }
		[ "$f" != "$OUT.t" ] || [ "$tr" -eq 14 ]
	done
	# -e: no certain event names the other flow's rule; every drop
	run in_out "$OUT.e" sums nf_drop "$C and .sport == 9999 and (.rule // \"\" | test(\"9999\") | not)" \
		"$C and .sport == 1111 and (.rule // \"\" | test(\"1111\") | not)" true
	[ "$output" = "0 0 14" ] || { echo "got $output" >&2; cat "$OUT.e" >&2; false; }
}

@test "fexit, stateless NAT in an earlier prerouting chain and nft queue without a listener, rows, -e, --trace-rules: the dropping rules, equal to their counters" {
	pair
	stateless_nat
	# nft queue, where no one listens: nf_queue() frees the packet
	ip netns exec "${P}b" nft -f - <<-'NFT'
	table inet q {
		chain in {
			type filter hook input priority 0; policy accept;
			udp sport 4444 counter queue num 3
		}
	}
	NFT
	hq=$(nft_handle "${P}b" "inet q in" "udp sport 4444 counter.*queue")
	[ -n "$hq" ]
	trio_start --roce -N "${P}b"
	send_from "${P}a" 10.210.0.4 3333 10
	send_from "${P}a" 10.210.0.2 4444 6
	ax_wait_snmp "${P}b" Ip:InReceives 16
	OUT=$OUT.e wait_nf_events 16
	trio_stop
	[ "$(nft_counter "${P}b" "ip sn filt" "$HB")" -eq 10 ]
	[ "$(nft_counter "${P}b" "inet q in" "$hq")" -eq 6 ]
	nat="(.table == \"sn\" and .rule_handle == $HB)"
	que="(.table == \"q\" and .rule_handle == $hq and .verdict == \"QUEUE\" and .reason == \"NOT_SPECIFIED\")"
	# rows: fexit names chain filt, whose one rule dropped: certain, its
	# counter; the queue rule, QUEUE, its counter; nothing else certain
	run in_out "$OUT.d" sums nf_drop_count "$C and $nat" "$C and $que" "$C and ($nat or $que | not)" true
	[ "$output" = "10 6 0 16" ] || { echo "got $output" >&2; cat "$OUT.d" >&2; false; }
	run in_out "$OUT.e" sums nf_drop "$C and $nat" "$C and $que" "$C and ($nat or $que | not)" true
	[ "$output" = "10 6 0 16" ] || { echo "got $output" >&2; cat "$OUT.e" >&2; false; }
	# the trace: within the counters
	read -r n q no all < <(in_out "$OUT.t" sums nf_drop_count "$C and $nat" "$C and $que" \
		"$C and ($nat or $que | not)" true)
	[ "$n" -le 10 ] && [ "$q" -le 6 ] && [ "$no" -eq 0 ] && [ "$all" -eq 16 ] ||
		{ echo "$n $q $no $all" >&2; cat "$OUT.t" >&2; false; }
}
