#!/usr/bin/env bats
# nfdrop's fexit path, in the Soft-RoCE guest (Debian's 6.1 allows fentry
# and fexit; the development host refuses them): the kernel itself names
# table and chain. The seed's scenario (an iptables INPUT REJECT of UDP 4791
# on veth-b while ib_write_bw runs) is in wall2.bats, with rxedrop.
# tests/host/nfdrop.bats runs here too (tests/vm/run-suites), with the same
# scenarios through fexit.

load ../lib/common

NFDROP=$AX_BUILD/nfdrop

setup_file() {
	# the fexit path: Debian's 6.1 in the guest allows it
	ax_file_needs --vm "$NFDROP" || return 0
}

setup() {
	ax_file_skip
	P=axv$BATS_TEST_NUMBER
	OUT=$BATS_TEST_TMPDIR/out
	ERR=$BATS_TEST_TMPDIR/err
	for m in nf_tables ip_tables iptable_filter nf_reject_ipv4; do
		modprobe -q "$m" 2>/dev/null || true
	done
}

teardown() {
	ax_file_ran || return 0
	ax_cleanup
}

start_nfdrop() {
	ax_bg "$NFDROP" -j "$@" >"$OUT" 2>"$ERR"
	NF_PID=$AX_LAST_PID
	ax_wait_for "$ERR" "Tracing" 120
}

stop_nfdrop() {
	sleep 1
	ax_stop "$NF_PID" INT
	[ "$AX_RC" -eq 0 ] || { cat "$ERR"; return 1; }
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
	stop_nfdrop
	run rowq '.hook == "input"' 'length, .[0].packets, .[0].source, .[0].table, .[0].chain, .[0].rule_handle, .[0].verdict, (.[0].inferred | length)'
	[ "${lines[*]}" = "1 4 fexit axv in $h DROP 0" ]
	# the kfree_skb + stack path on the same kernel: same names
	start_nfdrop --method kfree --roce -N "${P}b"
	ax_send_roce "${P}a" 10.220.0.2 3
	stop_nfdrop
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
	stop_nfdrop
	run rowq '.hook == "input"' 'length, .[0].packets, .[0].source, .[0].engine, .[0].table, .[0].chain, .[0].rule_handle, .[0].verdict, .[0].rejected'
	[ "${lines[*]}" = "1 4 fexit iptables-legacy filter INPUT 2 DROP 0" ]
}
