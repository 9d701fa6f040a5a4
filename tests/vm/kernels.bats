#!/usr/bin/env bats
# Each tool's main claim on the kernel the guest boots, for the kernel lines
# other than the default one (tests/run boots Debian 11's 5.10 and Debian
# 13's 6.12 for this file: tests/vm/run-suites --kernel LINE); on 6.1 the
# full VM tier checks the same and more. Where a kernel lacks what a tool
# needs, the check is the tool's one refusal line, exactly, and exit 1:
#   - kfree_skb without a drop reason (before 5.17): rxedrop and nfdrop
#     count by location and say that reasons are unavailable;
#   - no BPF compare-and-exchange (before 5.12): rocelat refuses live and
#     -r --in-kernel, while -r (natively) reads captures (from 5.12 to
#     5.16 it runs its build without bpf_loop);
#   - no module BTF (before 5.11): rxeqp refuses, naming it;
#   - no BPF atomic fetch-and-add (before 5.12): roceinject refuses;
#     rocediag runs without latency and rule names, and says so.
# Ground truth: the nft rule's own counter for injected RoCE packets, rxe's
# port counters and perftest's iterations for real rdma_rxe traffic,
# rocegen's per-QP retransmits for roceinject's drops.

bats_require_minimum_version 1.5.0

load ../lib/common
load ../lib/vm_rocelat

RXEDROP=$AX_BUILD/rxedrop
NFDROP=$AX_BUILD/nfdrop
RXEQP=$AX_BUILD/rxeqp
INJ=$AX_BUILD/roceinject
DIAG=$AX_BUILD/rocediag
GEN=$AX_BUILD/rocegen
WAIT=90

setup_file() {
	ax_file_needs --vm --rxe rdma ib_send_lat nft jq tc tcpdump timeout stdbuf bpftool \
		"$RXEDROP" "$NFDROP" "$RXEQP" "$RL" "$INJ" "$DIAG" "$GEN" || return 0
	bed_up
}

teardown_file() {
	bed_down
}

setup() {
	rl_setup
	P=axk$BATS_TEST_NUMBER
	OUT=$T/out
	ERR=$OUT.err
	modprobe -q nf_tables 2>/dev/null || true
}

teardown() {
	ax_file_ran || return 0
	ax_tool_stop RL_PID || true
	perf_stop
	ax_cleanup
}

# kernel_at_least MAJOR MINOR
kernel_at_least() {
	local v maj min
	v=$(uname -r)
	maj=${v%%.*}
	min=${v#*.}
	min=${min%%[!0-9]*}
	((maj > $1 || (maj == $1 && min >= $2)))
}

# the kfree_skb tracepoint has the drop reason (5.17+): its BTF prototype
has_reason() {
	kernel_at_least 5 17
}

# nft_drop_bed: namespaces ${P}a/${P}b; in ${P}b an nft rule that counts and
# drops UDP 4791 on input (in a chain the base chain jumps to)
nft_drop_bed() {
	ax_netns_pair "$P" 10.231.0.1/24 10.231.0.2/24
	ip netns exec "${P}b" nft -f - <<-'NFT'
	table inet axk {
		chain roce { udp dport 4791 counter drop; }
		chain in { type filter hook input priority 0; jump roce; }
	}
	NFT
}

rule_packets() {
	ip netns exec "${P}b" nft list chain inet axk roce |
		sed -n 's/.*counter packets \([0-9]*\) bytes.*/\1/p'
}

@test "rxedrop: an nft drop of injected RoCE packets counted as the rule's counter counts; reasons named or said unavailable" {
	local n=37
	nft_drop_bed
	ax_tool_start --err TOOL_PID "$OUT" "$WAIT" Tracing "$RXEDROP" -j
	ax_send_roce "${P}a" 10.231.0.2 "$n"
	ax_until 30 "the rule's counter" test "$(rule_packets)" -eq "$n"
	ax_tool_stop TOOL_PID
	cat "$ERR" "$OUT"
	[ "$AX_RC" -eq 0 ]
	[ "$(jq -s '[.[] | select(.type == "drop_count") | .count] | add // 0' "$OUT")" -eq "$(rule_packets)" ]
	if has_reason; then
		[ "$(jq -rs '[.[] | select(.type == "drop_count") | .reason] | unique | join(",")' "$OUT")" = NETFILTER_DROP ]
		[ -z "$(grep 'reasons unavailable' "$ERR")" ]
	else
		# 5.10: nf_tables returns NF_DROP, nf_hook_slow frees the packet
		[ "$(jq -rs '[.[] | select(.type == "drop_count") | .location | split("+")[0]] | unique | join(",")' "$OUT")" = nf_hook_slow ]
		[ "$(jq -rs '[.[] | select(.type == "drop_count") | .reason] | unique | join(",")' "$OUT")" = - ]
		grep -q "drop reasons unavailable: this kernel's kfree_skb has none (5.17+), counted by location" "$ERR"
	fi
}

@test "nfdrop: the same drop counted as the rule's counter counts, at the input hook, in the rule's namespace; table, chain and rule named, or null and said inferred" {
	local n=23
	nft_drop_bed
	ax_tool_start --err TOOL_PID "$OUT" "$WAIT" Tracing "$NFDROP" -j -N "${P}b"
	ax_send_roce "${P}a" 10.231.0.2 "$n"
	ax_until 30 "the rule's counter" test "$(rule_packets)" -eq "$n"
	ax_tool_stop TOOL_PID
	cat "$ERR" "$OUT"
	[ "$AX_RC" -eq 0 ]
	[ "$(jq -s '[.[] | select(.type == "nf_drop_count") | .packets] | add // 0' "$OUT")" -eq "$(rule_packets)" ]
	[ "$(jq -rs '[.[] | select(.type == "nf_drop_count") | .hook] | unique | join(",")' "$OUT")" = input ]
	has_reason || grep -q 'drop reasons unavailable (5.17+)' "$ERR"
	# every row names the table, the chain the hook entered and the rule
	# (certain), or leaves table, chain and verdict null and says so
	# (on 5.10, fexit refused: a drop whose stack shows no nftables
	# traversal); most drops are named
	jq -e -s '[.[] | select(.type == "nf_drop_count")] | all(
		(.table == "axk" and .chain == "in" and .rule_chain == "roce" and .verdict == "DROP" and .inferred == [])
		or (.table == null and .chain == null and .verdict == "?" and .inferred == ["table","chain","verdict"]))' "$OUT"
	[ "$(jq -s '[.[] | select(.type == "nf_drop_count" and .table == "axk") | .packets] | add // 0' "$OUT")" -gt $((n / 2)) ]
}

@test "rocelat: a clean ib_send_lat timed sample for sample (every request a sample or a Karn discard), or the one compare-and-exchange refusal" {
	local n=100 out=$T/rl.out
	local -A c0 c1 r
	if ! kernel_at_least 5 12; then
		local why="rocelat: this kernel lacks the BPF compare-and-exchange instruction (5.12+), which rocelat's BPF program needs: it cannot run here"
		run -1 "$RL" -i veth-a
		[ "$output" = "$why live (-r can)" ]
		run -1 "$RL" -r "$AX_BUILD/tests/decap.pcap" --in-kernel
		[ "$output" = "$why (-r without --in-kernel can)" ]
		# -r runs the program natively: every RoCE frame of the
		# parser's test capture (gen_decap.py's truth) counted here too
		run -0 --separate-stderr "$RL" -r "$AX_BUILD/tests/decap.pcap" -j
		[ "$(jq -r 'select(.type=="counters") | .roce_packets' <<< "$output")" -eq \
		  "$(awk -F'\t' '$4 != "-"' "$AX_BUILD/tests/decap.expect" | wc -l)" ]
		return 0
	fi
	counters c0
	start_rocelat "$out" -j -F
	perf_run send ib_send_lat -n "$n" -F
	stop_rocelat
	counters c1
	grep -v '"type":"hist"' "$out"
	rl_load "$out" r
	[ "$(perf_result "$T/send.cli" 2)" -eq "$n" ]
	[ "${r[c.roce_packets]}" -eq $((${c1[rxe-a.sent_pkts]} - ${c0[rxe-a.sent_pkts]} + ${c1[rxe-a.rcvd_pkts]} - ${c0[rxe-a.rcvd_pkts]})) ]
	[ "${r[c.parse_errors]}" -eq 0 ]
	[ "${r[c.tracked]}" -eq $((2 * n)) ]
	[ "${r[c.samples]}" -eq $((2 * n - ${r[c.karn_discarded]})) ]
	[ "${r[c.pending]}" -eq 0 ]
	measured "kernel $(uname -r): rocelat samples ${r[c.samples]} of $((2 * n)) requests, ${r[c.karn_discarded]} Karn discards"
}

@test "rxeqp: per-QP sums of a clean ib_send_lat equal rxe's port counters, or the one module-BTF refusal" {
	local n=100 out=$T/q.out d k sum
	local -A c0 c1
	if [ ! -e /sys/kernel/btf/rdma_rxe ]; then
		[ -d /sys/module/rdma_rxe ]
		run "$RXEQP" 1 1
		echo "$output"
		[ "$status" -eq 1 ]
		[ "$output" = "rxeqp: rdma_rxe is loaded, but this kernel has no module BTF (/sys/kernel/btf/rdma_rxe, 5.11+), which rxeqp needs to read its queue pairs: it cannot run here" ]
		return 0
	fi
	counters c0
	ax_tool_start TOOL_PID "$out" "$WAIT" Tracing "$RXEQP" -j
	perf_run send ib_send_lat -n "$n" -F
	# perf_run waited for both sides to exit: their QPs are destroyed, and
	# rxeqp's report at exit has them (perf_stop would SIGKILL it)
	ax_tool_stop TOOL_PID
	cat "$out.err"
	grep -v '"type":"qp"' "$out" | head -n 20
	[ "$AX_RC" -eq 0 ]
	counters c1
	[ "$(perf_result "$T/send.cli" 2)" -eq "$n" ]
	for d in rxe-a rxe-b; do
		for k in tx_pkts:sent_pkts rx_pkts:rcvd_pkts; do
			sum=$(jq -s --arg i "veth-${d#rxe-}" "[.[] | select(.type == \"qp\" and .ifname == \$i) |
				{q: .qpn, v: .${k%%:*}}] | group_by(.q) | map(last.v) | add // 0" "$out")
			echo "$d ${k%%:*} $sum, rxe ${k#*:} $((${c1[$d.${k#*:}]} - ${c0[$d.${k#*:}]}))"
			[ "$sum" -eq $((${c1[$d.${k#*:}]} - ${c0[$d.${k#*:}]})) ]
		done
	done
}

@test "roceinject: drop 3 requests of one QP of three: rocegen retransmits exactly those 3, the others none, nothing left after; or the one fetch-add refusal" {
	ax_netns_pair "$P" 10.231.0.1/24 10.231.0.2/24
	if ! kernel_at_least 5 12; then
		run ip netns exec "${P}b" "$INJ" -i "${P}vb" --direction ingress --drop -Q 0x12
		echo "$output"
		[ "$status" -eq 1 ]
		[ "$output" = "roceinject: this kernel lacks the BPF atomic fetch-and-add instruction (5.12+), which roceinject's BPF program needs: it cannot run here" ]
		[ -z "$(tc -n "${P}b" qdisc show dev "${P}vb" | grep clsact)" ]
		return 0
	fi
	ax_tool_start TOOL_PID "$OUT" "$WAIT" '^Injecting|Tracing' \
		ip netns exec "${P}b" "$INJ" -i "${P}vb" --direction ingress --drop -Q 0x12 --count 3 -j
	ax_bg ip netns exec "${P}b" "$GEN" responder -q --timeout 60 >"$T/rsp.out"
	ax_wait_udp "${P}b" 4791
	# one request outstanding per QP: a lost one costs one retransmission
	ip netns exec "${P}a" "$GEN" requester -d 10.231.0.2 -q -f 3 -n 60 --window 1 --flow-stats \
		--ack-timeout-us 500000 --timeout 60 >"$T/req.out"
	ax_tool_stop TOOL_PID
	cat "$ERR" "$OUT" "$T/req.out"
	[ "$AX_RC" -eq 0 ]
	[ "$(jq -r 'select(.type == "qp" and .dqpn == 18) | .drop' "$OUT" | tail -1)" -eq 3 ]
	[ "$(jq -r 'select(.type == "qp") | .dqpn' "$OUT" | sort -u)" = 18 ]
	# rocegen's QPs 0x11..0x13 from UDP source ports 49152..49154
	for q in 49152:0 49153:3 49154:0; do
		[ "$(sed -n "s/^rocegen: role=requester-flow sport=${q%:*} .* completed=\([0-9]*\) retransmits=\([0-9]*\).*/\1 \2/p" "$T/req.out")" = "20 ${q#*:}" ]
	done
	[ -z "$(tc -n "${P}b" filter show dev "${P}vb" ingress)" ]
	[ -z "$(tc -n "${P}b" qdisc show dev "${P}vb" | grep clsact)" ]
}

@test "rocediag: one QP's requests dropped by an nft rule: DROPPED-LOCALLY with as many drops as the rule counted; what this kernel cannot show named" {
	local n=23
	nft_drop_bed
	ax_tool_start TOOL_PID "$OUT" "$WAIT" Tracing ip netns exec "${P}b" "$DIAG" -i "${P}vb" -j
	ax_send_roce "${P}a" 10.231.0.2 "$n"
	ax_until 30 "the rule's counter" test "$(rule_packets)" -eq "$n"
	ax_tool_stop TOOL_PID
	cat "$ERR"
	grep -v '"type":"hist"' "$OUT"
	[ "$AX_RC" -eq 0 ]
	local q='[.[] | select(.type == "qp" and .verdict == "DROPPED-LOCALLY")]'
	[ "$(jq -s "$q | length" "$OUT")" -ge 1 ]
	[ "$(jq -s "$q | map(.drops.packets) | add" "$OUT")" -eq "$(rule_packets)" ]
	local cannot
	cannot=$(jq -rs '[.[] | select(.type == "summary")] | last | .cannot_see | join("\n")' "$OUT")
	echo "cannot see: $cannot"
	if kernel_at_least 5 12; then
		[ -z "$(grep '^latency:' <<<"$cannot")" ]
	else
		grep -qx "latency: this kernel lacks the BPF compare-and-exchange instruction (5.12+), which rocelat's BPF program needs" <<<"$cannot"
	fi
	if has_reason; then
		# the rule named, certain, with the rule's own count
		[ "$(jq -rs "$q | map(.drops.rule | (.where | startswith(\"inet axk roce \")) and .certain) | unique | join(\",\")" "$OUT")" = true ]
		[ "$(jq -s "$q | map(.drops.rule.packets) | add" "$OUT")" -eq "$(rule_packets)" ]
	else
		grep -qx "netfilter rules: this kernel has no NETFILTER_DROP drop reason" <<<"$cannot"
	fi
}
