#!/usr/bin/env bats
# rocelat at scale: thousands of QPs of one pair of hosts starting at once
# (rocegen, one message in flight each), rocelat on the requester's veth
# live and with -r on a tcpdump capture of the same run. Every expected
# number comes from rocegen's own summary (ground truth) or from the
# table's size the test chose, never from a constant of rocelat's.

bats_require_minimum_version 1.5.0
load ../lib/common

RL=$AX_BUILD/rocelat
GEN=$AX_BUILD/rocegen
A=10.79.0.1
B=10.79.0.2
WAIT=${AGENTXDP_VM:+90}
WAIT=${WAIT:-30}

setup() {
	ax_need_root
	[ -x "$RL" ] && [ -x "$GEN" ] || skip "build first: make"
	P=axs$BATS_TEST_NUMBER
	T=$BATS_TEST_TMPDIR
	ax_netns_pair "$P" "$A/24" "$B/24"
}

teardown() {
	ax_cleanup
}

# value of key=value in rocegen's summary line for ROLE
gen_kv() {
	sed -n "s/^rocegen: role=$1 .*[ ]$2=\([^ ]*\).*/\1/p" "$3" | head -1
}

# value of a key in rocelat's (last) JSON counters object
rl_counter() {
	jq -r "select(.type==\"counters\") | .$1" "$2" | tail -1
}

start_responder() {
	ax_bg ip netns exec "${P}b" "$GEN" responder --timeout 120 "$@" > "$T/resp.out" 2>&1
	RESP_PID=$AX_LAST_PID
	ax_wait_udp "${P}b" 4791
}

start_capture() {
	ax_bg ip netns exec "${P}a" tcpdump -s 256 -B 65536 --immediate-mode -U -Z root \
		-i "${P}va" -w "$T/cap.pcap" udp port 4791 2> "$T/tcpdump.err"
	TCPD=$AX_LAST_PID
	ax_capture_ready "$TCPD" "$T/tcpdump.err" "$WAIT"
}

start_rocelat() {
	ax_tool_start RL_PID "$T/rl.out" "$WAIT" Tracing \
		ip netns exec "${P}a" "$RL" -i "${P}va" -j "$@"
}

# N flows, M messages over all of them, one in flight each: every flow
# sends its first request at once
run_requester() {
	ip netns exec "${P}a" "$GEN" requester -d "$B" -q --ack-timeout-us 2000000 \
		--window 1 --timeout 100 "$@" > "$T/req.out"
}

# every request rocegen completed is one sample: no retransmission, no
# timeout, no answer held unpaired, no ambiguous one (file: rocelat's JSON)
all_timed() {
	local f=$1 completed
	completed=$(gen_kv requester completed "$T/req.out")
	echo "$f: samples=$(rl_counter samples "$f") completed=$completed" \
	     "paired=$(rl_counter qps_paired "$f") by_port=$(rl_counter qps_paired_by_port "$f")" \
	     "held=$(rl_counter answers_held "$f") wait_full=$(rl_counter wait_index_full "$f")" >&2
	[ "$(gen_kv requester retransmits "$T/req.out")" -eq 0 ]
	[ "$(rl_counter samples "$f")" -eq "$completed" ]
	[ "$(rl_counter timeouts "$f")" -eq 0 ]
	[ "$(rl_counter unmatched_answers "$f")" -eq 0 ]
	[ "$(rl_counter ambiguous_answers "$f")" -eq 0 ]
	[ "$(rl_counter wait_index_full "$f")" -eq 0 ]
}

@test "2,000 QPs of one pair of hosts start at once: every request timed, live and -r" {
	command -v tcpdump >/dev/null || skip "no tcpdump"
	local flows=2000
	start_responder
	start_capture
	start_rocelat
	run_requester -f $flows -n $((flows * 10))
	ax_tool_stop RL_PID INT
	[ "$AX_RC" -eq 0 ]
	ax_capture_stop "$TCPD" "$T/tcpdump.err" "$WAIT"
	[ "$(gen_kv requester status "$T/req.out")" = ok ]
	[ "$(gen_kv requester completed "$T/req.out")" -eq $((flows * 10)) ]
	all_timed "$T/rl.out"
	# each QP paired once, and its flow found by its port
	[ "$(rl_counter qps_paired "$T/rl.out")" -eq $flows ]
	[ "$(rl_counter flows_started "$T/rl.out")" -eq $flows ]
	! grep -q WARNING "$T/rl.out.err"

	run --separate-stderr "$RL" -r "$T/cap.pcap" -j
	[ "$status" -eq 0 ]
	echo "$output" > "$T/off.out"
	all_timed "$T/off.out"
	local k
	for k in requests tracked acks samples qps_paired qps_paired_by_port flows_started; do
		echo "$k live=$(rl_counter $k "$T/rl.out") offline=$(rl_counter $k "$T/off.out")" >&2
		[ "$(rl_counter $k "$T/off.out")" -eq "$(rl_counter $k "$T/rl.out")" ]
	done
}

# rocegen's completed messages of the flows whose UDP source ports are
# listed in file $1 (one a line)
completed_of_ports() {
	awk 'NR == FNR { want[$1] = 1; next }
	     /^rocegen: role=requester-flow / {
		sp = ""; c = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^sport=/) sp = substr($i, 7)
			if ($i ~ /^completed=/) c = substr($i, 11)
		}
		if (sp in want) s += c
	     } END { print s + 0 }' "$1" "$T/req.out"
}

# the table's flows are timed exactly, the QPs left out counted exactly
# (file: rocelat's JSON with -F; flows: QPs rocegen ran)
check_left_out() {
	local f=$1 flows=$2 max=$3 tracked samples completed
	tracked=$(rl_counter flows_started "$f")
	samples=$(rl_counter samples "$f")
	completed=$(gen_kv requester completed "$T/req.out")
	echo "$f: tracked=$tracked untracked=$(rl_counter untracked_qps "$f") samples=$samples completed=$completed" >&2
	# nothing pushed out (all active): the table holds a stable set
	[ "$(rl_counter flows "$f")" -eq "$tracked" ]
	[ "$tracked" -le "$max" ]
	[ "$(rl_counter untracked_qps "$f")" -eq $((flows - tracked)) ]
	[ "$(rl_counter untracked_uncounted "$f")" -eq 0 ]
	# every request of a QP left out is counted as such, the others timed
	[ "$(rl_counter untracked_requests "$f")" -eq $((completed - samples)) ]
	jq -r 'select(.type=="flow") | .sport' "$f" | sort -u > "$T/ports"
	[ "$(wc -l < "$T/ports")" -eq "$tracked" ]
	[ "$samples" -eq "$(completed_of_ports "$T/ports")" ]
	[ "$(rl_counter timeouts "$f")" -eq 0 ]
	[ "$(rl_counter ambiguous_answers "$f")" -eq 0 ]
	[ "$(rl_counter answers_held "$f")" -eq 0 ]
	# coverage at least the table's share
	[ $((samples * flows)) -ge $((completed * max)) ]
}

@test "4,000 active QPs, --max-flows 2000: the table's share timed, no thrash, the untracked counted exactly, live and -r" {
	command -v tcpdump >/dev/null || skip "no tcpdump"
	local flows=4000 max=2000
	start_responder
	start_capture
	start_rocelat -F --max-flows $max
	run_requester -f $flows -n $((flows * 10)) --flow-stats
	ax_tool_stop RL_PID INT
	[ "$AX_RC" -eq 0 ]
	ax_capture_stop "$TCPD" "$T/tcpdump.err" "$WAIT"
	[ "$(gen_kv requester status "$T/req.out")" = ok ]
	[ "$(gen_kv requester retransmits "$T/req.out")" -eq 0 ]
	check_left_out "$T/rl.out" $flows $max
	# said in one line, with a table that would hold them all
	[ "$(grep -c WARNING "$T/rl.out.err")" -eq 1 ]
	grep -qx "WARNING: $(rl_counter untracked_qps "$T/rl.out") QPs untracked, $(rl_counter untracked_requests "$T/rl.out") of their requests not timed: the flow table (--max-flows $max) was full of active flows; --max-flows 8192 would cover them" "$T/rl.out.err"

	run --separate-stderr "$RL" -r "$T/cap.pcap" -j -F --max-flows $max
	[ "$status" -eq 0 ]
	echo "$output" > "$T/off.out"
	check_left_out "$T/off.out" $flows $max
	[[ "$stderr" == "WARNING: "*" QPs untracked, "* ]]
}

@test "2,000 RNIC-shaped QPs (each side its own port, random PSNs) start at once: every request timed, paired by PSN, live and -r" {
	command -v tcpdump >/dev/null || skip "no tcpdump"
	local flows=2000
	start_responder --reply-sport 30000
	start_capture
	start_rocelat
	run_requester -f $flows -n $((flows * 10)) --psn random
	ax_tool_stop RL_PID INT
	[ "$AX_RC" -eq 0 ]
	ax_capture_stop "$TCPD" "$T/tcpdump.err" "$WAIT"
	[ "$(gen_kv requester status "$T/req.out")" = ok ]
	[ "$(gen_kv requester completed "$T/req.out")" -eq $((flows * 10)) ]
	all_timed "$T/rl.out"
	# no answer came from a port a request left: each QP found by the
	# PSN its first answer names
	[ "$(rl_counter qps_paired "$T/rl.out")" -eq $flows ]
	[ "$(rl_counter qps_paired_by_psn "$T/rl.out")" -eq $flows ]
	[ "$(rl_counter qps_paired_by_port "$T/rl.out")" -eq 0 ]

	run --separate-stderr "$RL" -r "$T/cap.pcap" -j
	[ "$status" -eq 0 ]
	echo "$output" > "$T/off.out"
	all_timed "$T/off.out"
	local k
	for k in requests tracked acks samples qps_paired qps_paired_by_psn flows_started; do
		[ "$(rl_counter $k "$T/off.out")" -eq "$(rl_counter $k "$T/rl.out")" ]
	done
}
