#!/usr/bin/env bats
# Jumbo frames: a veth pair at MTU 9000 and rocegen at RoCE MTU 4096, so
# that each full packet is a 4,170-byte frame, more than a page holds with
# XDP's headroom (veth refuses an XDP program without frags above about
# 3.5 KB: "Numerical result out of range" before). rocelat, rocediag and
# roceinject attach there; every count is checked against rocegen's own
# summary (ground truth). AGENTXDP_NO_XDP_FRAGS loads rocelat's program
# as on a kernel before 5.18 (no BPF_F_XDP_HAS_FRAGS): the default then
# falls back to tc ingress and says why, --native-mode refuses in one line.

bats_require_minimum_version 1.5.0
load ../lib/common

RL=$AX_BUILD/rocelat
DIAG=$AX_BUILD/rocediag
INJ=$AX_BUILD/roceinject
GEN=$AX_BUILD/rocegen
P=axjb
A=10.209.0.1
B=10.209.0.2
WAIT=${AGENTXDP_VM:+120}
WAIT=${WAIT:-30}

setup_file() {
	ax_file_needs jq "$RL" "$DIAG" "$INJ" "$GEN" || return 0
}

setup() {
	ax_file_skip
	ax_netns_pair $P $A/24 $B/24
	ip -n ${P}a link set dev ${P}va mtu 9000
	ip -n ${P}b link set dev ${P}vb mtu 9000
	T=$BATS_TEST_TMPDIR
}

teardown() {
	ax_cleanup
}

start_responder() {
	ax_bg ip netns exec ${P}b "$GEN" responder -q --mtu 4096 --timeout 60 "$@" > "$T/resp.out"
	ax_wait_udp ${P}b 4791
}

# rocegen's requester at RoCE MTU 4096: ARGS on top
run_requester() {
	ip netns exec ${P}a "$GEN" requester -d $B -q --mtu 4096 --ack-timeout-us 500000 \
		--timeout 60 "$@" > "$T/req.out"
}

# value of key=value in rocegen's summary line for ROLE
gen_kv() {
	sed -n "s/^rocegen: role=$1 .*[ ]$2=\([^ ]*\).*/\1/p" "$3" | head -1
}

gen_flow() {
	sed -n "s/^rocegen: role=requester-flow sport=$1 .* $2=\([0-9]*\).*/\1/p" "$T/req.out"
}

rl_counter() {
	jq -r "select(.type==\"counters\") | .$1" "$2" | tail -1
}

# rocelat's counters against rocegen's summaries: every request and
# answer packet seen, each completed message timed once (no retransmission
# on this bed: a 0.5 s timer)
rl_exact() {
	local f=$1
	cat "$T/req.out" "$T/resp.out" >&2
	jq -c 'select(.type=="counters")' "$f" >&2
	[ "$(gen_kv requester retransmits "$T/req.out")" -eq 0 ]
	[ "$(gen_kv requester completed "$T/req.out")" -eq "$(gen_kv requester requests "$T/req.out")" ]
	[ "$(rl_counter requests "$f")" -eq "$(gen_kv requester sent "$T/req.out")" ]
	[ "$(rl_counter read_responses "$f")" -eq "$(gen_kv requester read_resp "$T/req.out")" ]
	[ "$(rl_counter acks "$f")" -eq "$(gen_kv requester acks "$T/req.out")" ]
	[ "$(rl_counter samples "$f")" -eq "$(gen_kv requester completed "$T/req.out")" ]
	[ "$(rl_counter parse_errors "$f")" -eq 0 ]
	[ "$(rl_counter retransmits "$f")" -eq 0 ]
}

# no XDP program, tc filter or clsact qdisc left on the requester's veth
nothing_attached() {
	! ip -n ${P}a link show ${P}va | grep -q xdp &&
	[ -z "$(tc -n ${P}a filter show dev ${P}va ingress)" ] &&
	[ -z "$(tc -n ${P}a filter show dev ${P}va egress)" ]
}

@test "MTU 9000: rocelat attaches XDP with frags; 16 KiB WRITEs, READs and SENDs at RoCE MTU 4096: every packet counted, every message timed" {
	start_responder
	ax_tool_start RL_PID "$T/rl.out" "$WAIT" Tracing ip netns exec ${P}a "$RL" -i ${P}va -j
	cat "$T/rl.out.err" >&2
	[ "$(grep -c . "$T/rl.out.err")" -eq 1 ]	# the banner alone
	grep -q "^Tracing RoCE v2 latency on ${P}va (XDP native with frags, MTU 9000, tcx\? egress)" "$T/rl.out.err"
	ip -n ${P}a link show ${P}va | grep -q "xdp"
	run_requester -o mix --size 16384 -f 3 -n 90 --window 2
	ax_tool_stop RL_PID
	[ "$AX_RC" -eq 0 ]
	# 4 packets of 4 KiB per WRITE and SEND, 4 READ RESPONSES per READ
	[ "$(gen_kv requester sent "$T/req.out")" -eq $((60 * 4 + 30)) ]
	[ "$(gen_kv requester read_resp "$T/req.out")" -eq $((30 * 4)) ]
	rl_exact "$T/rl.out"
	ax_until 10 "detach" nothing_attached
}

@test "MTU 9000 without frags (a kernel before 5.18): rocelat falls back to tc ingress, the kernel's reason in a note and the banner; counts exact; --native-mode refuses in one line" {
	start_responder
	# an explicit native mode asks for XDP: one line with the reason, exit 1
	run --separate-stderr env AGENTXDP_NO_XDP_FRAGS=1 ip netns exec ${P}a "$RL" -i ${P}va --native-mode
	echo "$stderr" >&2
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "rocelat: native XDP refused on ${P}va at MTU 9000: the XDP program has no frags (BPF_F_XDP_HAS_FRAGS, kernel 5.18+), which the driver needs at this MTU (kernel: \"veth: Peer MTU is too large to set XDP\"); try --skb-mode, or no mode option (tc ingress)" ]]
	nothing_attached
	# the default: tc ingress, and why
	ax_tool_start RL_PID "$T/rl.out" "$WAIT" Tracing env AGENTXDP_NO_XDP_FRAGS=1 \
		ip netns exec ${P}a "$RL" -i ${P}va -j
	cat "$T/rl.out.err" >&2
	[ "$(grep -c . "$T/rl.out.err")" -eq 2 ]	# the note and the banner
	grep -q "^rocelat: note: XDP refused on ${P}va at MTU 9000: .*(kernel: \"veth: Peer MTU is too large to set XDP\"); timing from tc ingress instead$" "$T/rl.out.err"
	grep -q "^Tracing RoCE v2 latency on ${P}va (tcx\? ingress (XDP refused at MTU 9000), tcx\? egress)" "$T/rl.out.err"
	! ip -n ${P}a link show ${P}va | grep -q "xdp" || false
	run_requester -o mix --size 16384 -f 3 -n 90 --window 2
	ax_tool_stop RL_PID
	[ "$AX_RC" -eq 0 ]
	rl_exact "$T/rl.out"
	ax_until 10 "detach" nothing_attached
}

@test "MTU 9000: rocediag's three 16 KiB QPs OK, each timed once per completed message; without frags the banner names tc ingress" {
	start_responder
	ax_tool_start DIAG_PID "$T/diag.out" "$WAIT" Tracing ip netns exec ${P}a "$DIAG" -i ${P}va --no-rules -j
	cat "$T/diag.out.err" >&2
	! grep -q "note:" "$T/diag.out.err" || false
	grep -q "^Tracing RoCE v2 queue pairs (latency, " "$T/diag.out.err"
	run_requester -o write --size 16384 -f 3 -n 90 --window 2 --flow-stats
	ax_tool_stop DIAG_PID
	[ "$AX_RC" -eq 0 ]
	cat "$T/req.out" >&2
	[ "$(jq -s "[.[] | select(.type == \"qp\" and .req == \"$A\")] | length" "$T/diag.out")" -eq 3 ]
	[ "$(jq -s "[.[] | select(.type == \"qp\" and .req == \"$A\" and .verdict != \"OK\")] | length" "$T/diag.out")" -eq 0 ]
	local sp
	for sp in 49152 49153 49154; do
		[ "$(jq -r "select(.type == \"qp\" and .req == \"$A\" and .sport == $sp) | .latency.samples" "$T/diag.out" | tail -1)" \
			-eq "$(gen_flow $sp completed)" ]
		[ "$(gen_flow $sp completed)" -eq 30 ]
	done
	ax_until 10 "detach" nothing_attached

	# before 5.18: latency from tc ingress, said in the banner
	ax_tool_start DIAG_PID "$T/diag2.out" "$WAIT" Tracing env AGENTXDP_NO_XDP_FRAGS=1 \
		ip netns exec ${P}a "$DIAG" -i ${P}va --no-rules -j
	cat "$T/diag2.out.err" >&2
	grep -q "^rocediag: note: XDP refused on ${P}va at MTU 9000: " "$T/diag2.out.err"
	grep -q "^Tracing RoCE v2 queue pairs (latency (tc ingress on ${P}va: XDP refused at MTU 9000), " "$T/diag2.out.err"
	run_requester -o write --size 16384 -f 3 -n 90 --window 2 --flow-stats
	ax_tool_stop DIAG_PID
	[ "$AX_RC" -eq 0 ]
	for sp in 49152 49153 49154; do
		[ "$(jq -r "select(.type == \"qp\" and .req == \"$A\" and .sport == $sp) | .latency.samples" "$T/diag2.out" | tail -1)" \
			-eq "$(gen_flow $sp completed)" ]
	done
	ax_until 10 "detach" nothing_attached
}

@test "MTU 9000: roceinject drops every 10th 4 KiB request of one QP: its drops = rocegen's retransmits for it = rocelat's (XDP with frags); the other QPs untouched" {
	start_responder
	ax_tool_start INJ_PID "$T/inj.out" "$WAIT" '^Injecting' ip netns exec ${P}b "$INJ" -i ${P}vb \
		--direction ingress --drop -Q 0x12 --class requests --every 10 -j
	ax_tool_start RL_PID "$T/rl.out" "$WAIT" Tracing ip netns exec ${P}a "$RL" -i ${P}va -F -j
	grep -q "XDP native with frags, MTU 9000" "$T/rl.out.err"
	# one 4 KiB packet per message (a 4,170-byte frame), one outstanding
	run_requester -o write --size 4096 -f 3 -n 300 --window 1 --flow-stats
	ax_tool_stop INJ_PID
	[ "$AX_RC" -eq 0 ]
	ax_tool_stop RL_PID
	[ "$AX_RC" -eq 0 ]
	cat "$T/inj.out" "$T/req.out" >&2
	local n q
	n=$(jq -r 'select(.type=="qp" and .dqpn==18) | .drop' "$T/inj.out" | tail -1)
	[ "$n" -gt 0 ]
	[ "$n" -eq $(( $(jq -r 'select(.type=="qp" and .dqpn==18) | .matched' "$T/inj.out" | tail -1) / 10 )) ]
	[ "$(gen_flow 49153 retransmits)" -eq "$n" ]
	[ "$(jq -r 'select(.type=="flow" and .dqpn==18) | .retransmits' "$T/rl.out" | tail -1)" -eq "$n" ]
	for q in 17 19; do
		[ -z "$(jq -r "select(.type==\"qp\" and .dqpn==$q) | .drop" "$T/inj.out")" ]
		[ "$(jq -r "select(.type==\"flow\" and .dqpn==$q) | .retransmits" "$T/rl.out" | tail -1)" -eq 0 ]
		[ "$(jq -r "select(.type==\"flow\" and .dqpn==$q) | .samples" "$T/rl.out" | tail -1)" \
			-eq "$(gen_flow $((49152 + q - 17)) completed)" ]
	done
	[ -z "$(tc -n ${P}b filter show dev ${P}vb ingress)" ]
}
