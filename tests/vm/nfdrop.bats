#!/usr/bin/env bats
# nfdrop's fexit path, in the Soft-RoCE guest (Debian's 6.1 allows fentry
# and fexit; the development host refuses them): the kernel itself names
# table and chain, and the seed's scenario, an iptables INPUT REJECT of UDP
# 4791 on veth-b while ib_write_bw runs, is named exactly.
# tests/host/nfdrop.bats runs here too (tests/vm/run-suites), with the same
# scenarios through fexit.

load ../lib/common

NFDROP=$AX_BUILD/nfdrop
TESTBED=$AX_ROOT/scripts/testbed.sh
REJECT=(INPUT -i veth-b -p udp --dport 4791 -j REJECT)

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
	iptables -D "${REJECT[@]}" 2>/dev/null || true
	[ ! -x "$TESTBED" ] || "$TESTBED" down >/dev/null 2>&1 || true
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

# packets the seed's REJECT rule matched, by its own counter
reject_packets() {
	iptables -L INPUT -v -x -n | awk '/REJECT/ && /veth-b/ && /dpt:4791/ { print $1 }'
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

@test "the seed's scenario: iptables INPUT REJECT of UDP 4791 on veth-b during ib_write_bw" {
	[ -x "$TESTBED" ] || skip "scripts/testbed.sh missing"
	modinfo rdma_rxe >/dev/null 2>&1 || skip "no rdma_rxe module"
	command -v ib_write_bw >/dev/null || skip "perftest not installed"
	"$TESTBED" up
	start_nfdrop --roce
	grep -q "fexit nft_do_chain" "$ERR"
	"$TESTBED" reject on
	# rxe retries forever under the REJECT: only the timeout ends the run.
	# Under emulation perftest's server may listen too late for its
	# client: try again until RoCE has met the rule.
	for _ in 1 2 3; do
		TESTBED_TIMEOUT=20 TESTBED_ITERS=20 "$TESTBED" traffic || true
		n=$(reject_packets)
		[ "$n" -gt 0 ] && break
	done
	stop_nfdrop
	# ground truth: the rule as iptables-nft wrote it and its own counter
	h=$(nft -a list chain ip filter INPUT 2>/dev/null |
		sed -n 's/.*iifname "veth-b" udp dport 4791 .*reject.* # handle \([0-9]*\)$/\1/p')
	n=$(reject_packets)
	code=$(bpftool btf dump file /sys/kernel/btf/vmlinux |
		sed -n "s/.*'SKB_DROP_REASON_NETFILTER_DROP' val=\([0-9]*\).*/\1/p")
	[ -n "$h" ] && [ "$n" -gt 0 ] && [ -n "$code" ]
	run rowq '.hook == "input" and .netns_name == "init"' 'length, .[0].packets, .[0].rejected, .[0].source, .[0].engine, .[0].table_family, .[0].table, .[0].chain, .[0].rule_handle, .[0].verdict, .[0].reason, .[0].reason_code, (.[0].inferred | length)'
	echo "$output"
	jq -c -s '.[] | select(.type == "nf_drop_count") | del(.candidates)' "$OUT"
	[ "${lines[*]}" = "1 $n $n fexit nftables ip filter INPUT $h REJECT NETFILTER_DROP $code 0" ]
}
