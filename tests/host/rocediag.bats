#!/usr/bin/env bats
# rocediag on this machine's kernel (here no rdma_rxe and no fentry; the
# Soft-RoCE guest runs it too, with both): the demo's
# test bed (rocegen flows, a delay, an nft rule) and ConnectX-shaped
# traffic built with scapy, each verdict checked against what the test
# set up: the responder's delays, the rule's own counter, the packets
# sent. Every check selects this test's QPs by address, so other RoCE
# traffic on the host cannot change a result.

load ../lib/common

DIAG=$AX_BUILD/rocediag
GEN=$AX_BUILD/rocegen
P=axdg
A=10.206.0.1
B=10.206.0.2

setup_file() {
	ax_file_needs jq nft "$DIAG" "$GEN" || return 0
}

setup() {
	ax_file_skip
	ax_netns_pair $P $A/24 $B/24
	T=$BATS_TEST_TMPDIR
}

teardown() {
	# a test that stopped rocediag (SIGSTOP): running again, so it can end
	[ -z "${DIAG_PID:-}" ] || kill -CONT "$DIAG_PID" 2>/dev/null || true
	ax_cleanup
}

# rocediag in namespace a (DIAG_NS: another) on its veth, until it
# traces; its program ids kept to check nothing stays behind
start_diag() {
	ax_tool_start DIAG_PID "$T/diag.out" 90 Tracing ip netns exec ${P}${DIAG_NS:-a} "$DIAG" "$@"
	DIAG_PROGS=$(grep -h '^prog_id:' /proc/"$DIAG_PID"/fdinfo/* 2>/dev/null |
		awk '{ print $2 }' | sort -u | tr '\n' ' ')
}

# stop_diag [SIGNAL]: judged as ax_tool_stop judges (0 after INT/TERM,
# killed after KILL), its exit status in AX_RC
stop_diag() {
	ax_tool_stop DIAG_PID "${1:-INT}"
}

# rdma_rxe is loaded: rocediag reads its QPs (the Soft-RoCE guest)
rxe_loaded() {
	[ -e /sys/kernel/btf/rdma_rxe ]
}

# rule RULE NS: an inet table in namespace NS whose input chain has RULE
# (counted)
rule() {
	ip netns exec ${P}$2 nft -f - <<-EOF
	table inet axdg_filter {
		chain input {
			type filter hook input priority 0; policy accept;
			$1
		}
	}
	EOF
}

# the packets the rule in namespace NS counted
rule_packets() {
	ip netns exec ${P}$1 nft list table inet axdg_filter |
		sed -n 's/.* counter packets \([0-9]*\) .*/\1/p'
}

# rocediag's text with each wrapped line joined to the one it continues
# (continuations are indented 4 or more)
joined() {
	awk '/^    / { sub(/^ +/, " "); l = l $0; next }
		{ if (NR > 1) print l; l = $0 } END { if (NR) print l }' "$1"
}

# lines of FILE longer than 80 columns (printed), none: true (the
# banner, libbpf-tools' own line, apart)
fits_80() {
	! awk '!/^Tracing / && length > 80 { print "over 80: " $0; bad = 1 } END { exit !bad }' "$1" >&2
}

# the "qp" records of rocediag -j, one a line, each with its interval
# "iv" (1 + the summaries before it)
records() {
	jq -c -s 'reduce .[] as $r ({n: 1, out: []};
		if $r.type == "summary" then .n += 1 elif $r.type == "qp" then
		.out += [$r + {iv: .n}] else . end) | .out[]' "$T/diag.out"
}

# the -j object of the QP whose requests leave from UDP port SPORT
qp_json() {
	jq -c "select(.type == \"qp\" and .req == \"$A\" and .resp == \"$B\" and .sport == $1)" "$T/diag.out"
}

# the responder answers flow 49152 after 0.5 ms and flow 49153 after 20
# ms (40x: SLOW's 4x holds with a millisecond of emulation on top of
# both); flow 49154's requests are dropped by ARGS' rule (or none). The
# retransmit timer is 0.5 s: at rocegen's 50 ms a loaded guest (p99 39 ms
# for the 20 ms flow) retransmitted it 4 times, and it read LOSSY
# instead of SLOW; only the dropped flow may retransmit.
run_three_flows() {
	ax_bg ip netns exec ${P}b "$GEN" responder -q --timeout 60 \
		--delay-us 49152=500 --delay-us 49153=20000
	ax_wait_udp ${P}b 4791
	ip netns exec ${P}a "$GEN" requester -q -d $B -f 3 -n 300 --window 4 \
		--ack-timeout-us 500000 --timeout 20 > "$T/req.out" || true
}

@test "the demo's bed: the firewalled QP DROPPED-LOCALLY by its rule, as many drops as the rule counted; the slowed QP SLOW; the clean one OK; --prom says so too" {
	rule "udp sport 49154 udp dport 4791 counter drop" b
	start_diag -i ${P}va -j --prom "$T/diag.prom"
	run_three_flows
	stop_diag
	[ "$AX_RC" -eq 0 ]
	cat "$T/diag.out" >&2

	local dropped slow ok n
	dropped=$(qp_json 49154)
	slow=$(qp_json 49153)
	ok=$(qp_json 49152)
	n=$(rule_packets b)
	[ "$n" -gt 0 ]
	[ "$(jq -r .verdict <<<"$dropped")" = DROPPED-LOCALLY ]
	[ "$(jq .drops.packets <<<"$dropped")" -eq "$n" ]
	[ "$(jq -r '.drops.sites[0].reason' <<<"$dropped")" = NETFILTER_DROP ]
	[ "$(jq -r '.drops.sites[0].ifname' <<<"$dropped")" = ${P}vb ]
	[ "$(jq -r .drops.rule.where <<<"$dropped")" = "inet axdg_filter input handle 2" ]
	[ "$(jq -r .drops.rule.text <<<"$dropped")" = "udp sport 49154 udp dport 4791 counter drop" ]
	[ "$(jq .drops.rule.certain <<<"$dropped")" = true ]
	[ "$(jq .drops.rule.packets <<<"$dropped")" -eq "$n" ]
	[ "$(jq .latency.samples <<<"$dropped")" -eq 0 ]
	# never answered: its requester QPN is unknown, null (not -1)
	[ "$(jq -c .req_qpn <<<"$dropped")" = null ]
	# one JSON time form for every record (EPOCH_S.US), latencies to the ns
	[ "$(grep -c '"time":' "$T/diag.out")" -eq "$(grep -cE '"time":[0-9]{10}\.[0-9]{6}[,}]' "$T/diag.out")" ]
	! grep -qE '"p(50|99)_us":[0-9]+\.[0-9]{4,}' "$T/diag.out"

	# 20 ms against 0.5 ms: the rule's 4x and 200 us passed
	[ "$(jq -r .verdict <<<"$slow")" = SLOW ]
	[ "$(jq -r .latency.kind <<<"$slow")" = rtt ]
	[ "$(jq '.latency.p50_us >= 20000 and .latency.p50_us < 40000' <<<"$slow")" = true ]
	[ "$(jq .drops.packets <<<"$slow")" -eq 0 ]
	[ "$(jq -r .verdict <<<"$ok")" = OK ]
	[ "$(jq '.latency.p50_us >= 500 and .latency.p50_us < 20000' <<<"$ok")" = true ]
	[ "$(jq .latency.samples <<<"$ok")" -eq 100 ]
	# the summary says what this host cannot show: rdma_rxe's QP state
	# where it is not loaded, nothing in the Soft-RoCE guest
	if rxe_loaded; then
		jq -e 'select(.type == "summary") | .cannot_see == []' "$T/diag.out"
	else
		jq -e 'select(.type == "summary") | .cannot_see | any(startswith("rdma_rxe QP state"))' "$T/diag.out"
	fi

	# --prom at exit: the run's one table
	cat "$T/diag.prom" >&2
	grep -q '^# TYPE agentxdp_rocediag_qps gauge$' "$T/diag.prom"
	grep -q '^agentxdp_rocediag_qps{verdict="STUCK"} 0$' "$T/diag.prom"
	grep -q "^agentxdp_rocediag_qp_verdict{req=\"$A\",req_qpn=\"[?0-9a-fx]*\",resp=\"$B\",resp_qpn=\"0x[0-9a-f]*\",sport=\"49154\",verdict=\"DROPPED-LOCALLY\"} 4$" "$T/diag.prom"
	grep -q "^agentxdp_rocediag_qp_verdict{req=\"$A\",.*sport=\"49153\",verdict=\"SLOW\"} 1$" "$T/diag.prom"
	grep -q "^agentxdp_rocediag_qp_verdict{req=\"$A\",.*sport=\"49152\",verdict=\"OK\"} 0$" "$T/diag.prom"
	# the QPs' latencies: at least the responder's delay (0.5 and 20 ms,
	# the ground truth), less than the next QP's; and (a consistency
	# check) as -j has them (us there, s here); none for the one with no
	# samples; its drops as the rule counted, with the rule and the
	# interface
	local port q v lo hi
	for port in 49152 49153; do
		lo=0.0005 hi=0.020
		[ "$port" = 49152 ] || lo=0.020 hi=0.040
		for q in 50 99; do
			v=$(sed -n "s/^agentxdp_rocediag_qp_latency_seconds{req=\"$A\",.*sport=\"$port\",kind=\"rtt\",q=\"0\.${q%0}\"} //p" "$T/diag.prom")
			[ -n "$v" ]
			[ "$q" = 99 ] || jq -n -e "$v >= $lo and $v < $hi"
			# the same quantile, each rounded to a whole ns on its own
			qp_json $port | jq -e "(.latency.p${q}_us * 1000 - $v * 1e9) | fabs <= 1"
		done
	done
	! grep -q "^agentxdp_rocediag_qp_latency_seconds{.*sport=\"49154\"" "$T/diag.prom"
	grep -q "^agentxdp_rocediag_qp_dropped_packets{req=\"$A\",.*sport=\"49154\",ifname=\"${P}vb\",rule=\"inet axdg_filter input handle 2\"} $n$" "$T/diag.prom"
	[ "$(grep -c "^agentxdp_rocediag_qp_dropped_packets{req=\"$A\"," "$T/diag.prom")" -eq 1 ] ||
		{ grep dropped_packets "$T/diag.prom" >&2; false; }
}

@test "the demo's bed as text: one screen names both causes, worst first" {
	rule "udp sport 49154 udp dport 4791 counter drop" b
	start_diag -i ${P}va
	run_three_flows
	stop_diag
	[ "$AX_RC" -eq 0 ]
	cat "$T/diag.out" >&2

	local lines n
	n=$(rule_packets b)
	# 80 columns: a QP's line wraps (before: 120 to 166 characters)
	fits_80 "$T/diag.out"
	joined "$T/diag.out" > "$T/diag.joined"
	lines=$(grep "^QP $A/.* -> $B/" "$T/diag.joined")
	[ "$(wc -l <<<"$lines")" -eq 3 ]
	sed -n 1p <<<"$lines" | grep -q "(sport 49154): DROPPED-LOCALLY $n packets dropped on this host"
	sed -n 2p <<<"$lines" | grep -q "(sport 49153): SLOW .*x the other QPs' median"
	sed -n 3p <<<"$lines" | grep -q "(sport 49152): OK "
	grep -q "^  dropped: $n packets at nft_do_chain (NETFILTER_DROP) on ${P}vb$" "$T/diag.joined"
	grep -q "^  by: inet axdg_filter input handle 2: udp sport 49154 udp dport 4791 counter drop$" "$T/diag.joined"
	# the requester's round trips name their path
	sed -n 2p <<<"$lines" | grep -q "(path: sport 49153)"
	if rxe_loaded; then
		[ "$(grep -c "^cannot see " "$T/diag.out")" -eq 0 ]
	else
		grep -q "^cannot see rdma_rxe QP state: " "$T/diag.out"
	fi
}

@test "answers dropped on the requester's side: the drops join their QP by the requester QPN the ACKs carry" {
	# the requester's own firewall eats flow 49153's ACKs; XDP sees them
	# arrive first, so rocelat pairs the QP from them
	rule "ip saddr $B udp sport 49153 counter drop" a
	start_diag -i ${P}va -j
	run_three_flows
	stop_diag
	[ "$AX_RC" -eq 0 ]
	cat "$T/diag.out" >&2

	local q n
	q=$(qp_json 49153)
	n=$(rule_packets a)
	[ "$n" -gt 0 ]
	[ "$(jq -r .verdict <<<"$q")" = DROPPED-LOCALLY ]
	[ "$(jq .drops.packets <<<"$q")" -eq "$n" ]
	[ "$(jq -r .drops.sites[0].ifname <<<"$q")" = ${P}va ]
	[ "$(jq -r .drops.rule.where <<<"$q")" = "inet axdg_filter input handle 2" ]
	# one entry for the QP: the answers' drops merged into the paired flow
	[ "$(jq -s "[.[] | select(.type == \"qp\" and .req == \"$A\" and .resp == \"$B\")] | length" "$T/diag.out")" -eq 3 ]
	# rocegen's requester QP of flow 49153 is 0x112: the ACKs' destination
	[ "$(jq .req_qpn <<<"$q")" -eq $((0x112)) ]
	[ "$(jq -r .verdict <<<"$(qp_json 49152)")" != DROPPED-LOCALLY ]
}

@test "clean traffic with sources missing (no -i, --no-rules, no rdma_rxe): every QP OK, nothing STUCK, the missing evidence named" {
	start_diag -i ${P}va --no-rules -j
	ax_bg ip netns exec ${P}b "$GEN" responder -q --timeout 60
	ax_wait_udp ${P}b 4791
	ip netns exec ${P}a "$GEN" requester -q -d $B -f 3 -n 150 --window 4 \
		--ack-timeout-us 500000 > "$T/req.out"
	stop_diag
	[ "$AX_RC" -eq 0 ]
	[ "$(jq -s "[.[] | select(.type == \"qp\" and .req == \"$A\")] | length" "$T/diag.out")" -eq 3 ]
	[ "$(jq -s "[.[] | select(.type == \"qp\" and .req == \"$A\" and .verdict != \"OK\")] | length" "$T/diag.out")" -eq 0 ]
	jq -e 'select(.type == "summary") | .cannot_see | any(. == "netfilter rules: --no-rules")' "$T/diag.out"

	# without -i: drops only; a QP with nothing dropped is not there
	start_diag -j
	rule "udp sport 49154 udp dport 4791 counter drop" b
	ip netns exec ${P}a "$GEN" requester -q -d $B -f 3 -n 30 --window 2 \
		--ack-timeout-us 500000 --timeout 20 > "$T/req.out" || true
	stop_diag
	cat "$T/diag.out" >&2
	jq -e 'select(.type == "summary") | .cannot_see | any(. == "latency: no -i given")' "$T/diag.out"
	[ "$(jq -r .verdict <<<"$(qp_json 49154)")" = DROPPED-LOCALLY ]
	[ "$(jq .drops.packets <<<"$(qp_json 49154)")" -eq "$(rule_packets b)" ]
	# nothing here sees retransmits: unknown, not 0 (rocegen made some)
	[ "$(sed -n 's/^rocegen: role=requester .* retransmits=\([0-9]*\) .*/\1/p' "$T/req.out")" -gt 0 ]
	jq -e '.why | contains("retransmits unknown")' <<<"$(qp_json 49154)"
	! jq -e '.why | test("[0-9]+ retransmits")' <<<"$(qp_json 49154)"
	[ "$(jq .latency <<<"$(qp_json 49154)")" = null ]
	[ "$(jq -s "[.[] | select(.type == \"qp\" and .req == \"$A\" and .verdict == \"STUCK\")] | length" "$T/diag.out")" -eq 0 ]
}

@test "intervals: every interval its own drops, adding up to the rule's count" {
	rule "udp sport 49154 udp dport 4791 counter drop" b
	start_diag -i ${P}va -j 1
	run_three_flows
	# the interval that holds the drops has been reported
	local end=$((SECONDS + 30))
	until [ "$(jq -s "[.[] | select(.type == \"qp\" and .req == \"$A\" and .sport == 49154) | .drops.packets] | add // 0" "$T/diag.out")" -eq "$(rule_packets b)" ]; do
		[ "$SECONDS" -le "$end" ] || { cat "$T/diag.out" >&2; false; }
		sleep 0.2
	done
	stop_diag
	[ "$AX_RC" -eq 0 ]
	# each interval's drops are its own: they add up to the rule's count
	[ "$(jq -s "[.[] | select(.type == \"qp\" and .req == \"$A\" and .sport == 49154) | .drops.packets] | add" "$T/diag.out")" -eq "$(rule_packets b)" ]
	[ "$(jq -s '[.[] | select(.type == "summary")] | length' "$T/diag.out")" -ge 2 ]
	# the dropped QP is DROPPED-LOCALLY in every interval it had drops in
	[ "$(jq -s "[.[] | select(.type == \"qp\" and .req == \"$A\" and .sport == 49154 and .drops.packets > 0 and .verdict != \"DROPPED-LOCALLY\")] | length" "$T/diag.out")" -eq 0 ]
}

# records of the QP from port 49154, and their intervals
q54() { records | jq -c "select(.req == \"$A\" and .resp == \"$B\" and .sport == 49154)"; }
summaries() { jq -s '[.[] | select(.type == "summary")] | length' "$T/diag.out"; }

# the rule's N drops all reported, and K reports after the last one with drops
quiet_after_drops() {
	local last
	[ "$(q54 | jq -s 'map(.drops.packets) | add // 0')" -eq "$1" ] || return 1
	last=$(q54 | jq -s 'map(select(.drops.packets > 0) | .iv) | max')
	[ $(($(summaries) - last)) -ge "$2" ]
}

@test "a QP a rule dropped stays DROPPED-LOCALLY with the rule in every later interval until it answers or is gone: never 'no drop on this host', --prom keeps it" {
	rule "udp sport 49154 udp dport 4791 counter drop" b
	start_diag -i ${P}va -j --prom "$T/diag.prom" 1
	ax_bg ip netns exec ${P}b "$GEN" responder -q --timeout 60
	ax_wait_udp ${P}b 4791
	# flow 49153 answered; 49154's requests dropped, given up after 3
	# timeouts of 0.2 s: its drops end, rocelat keeps its flow
	ip netns exec ${P}a "$GEN" requester -q -d $B -f 2 --sport 49153 -n 20 --window 1 \
		--ack-timeout-us 200000 --retry 3 --timeout 10 > "$T/req.out" || true
	local n
	n=$(rule_packets b)
	[ "$n" -gt 0 ]
	ax_until 30 "3 reports after the last drop" quiet_after_drops "$n" 3 ||
		{ cat "$T/diag.out" >&2; false; }
	local prom_then
	prom_then=$(cat "$T/diag.prom")
	stop_diag
	[ "$AX_RC" -eq 0 ]
	q54 >&2

	local d l s
	d=$(q54 | jq -s 'map(select(.drops.packets > 0) | .iv) | min')
	l=$(q54 | jq -s 'map(select(.drops.packets > 0) | .iv) | max')
	s=$(summaries)
	echo "drops from interval $d to $l of $s; the rule counted $n" >&2
	# in every interval from its first drop on, the QP is there ...
	[ "$(q54 | jq -s "map(select(.iv >= $d)) | length")" -eq $((s - d + 1)) ]
	# ... DROPPED-LOCALLY, and nothing says there was no drop here
	[ "$(q54 | jq -s "map(select(.iv >= $d and .verdict != \"DROPPED-LOCALLY\")) | length")" -eq 0 ]
	[ "$(q54 | jq -s 'map(select(.why | contains("no drop on this host"))) | length')" -eq 0 ]
	# after the drops: none of its own, the rule's all held, with the rule
	# and the time of the last interval with drops
	[ "$(q54 | jq -s "map(select(.iv > $l and .drops.packets == 0 and .held.drops == $n and
		.drops.rule.where == \"inet axdg_filter input handle 2\" and .held.rule_held)) | length")" -eq $((s - l)) ]
	local last_drop
	last_drop=$(q54 | jq -s "map(select(.iv == $l)) | first.time")
	[ "$(q54 | jq -s "map(select(.iv > $l) | .held.last_drop) | unique | length")" -eq 1 ]
	[ "$(q54 | jq -s "map(select(.iv > $l) | .held.last_drop - $last_drop | fabs <= 1) | all")" = true ]
	[ "$(q54 | jq -s "last | .why" | grep -c "no answer since $n packets were dropped on this host")" -eq 1 ]
	# the flow that answered is never held
	[ "$(records | jq -s "map(select(.sport == 49153 and .held)) | length")" -eq 0 ]
	# --prom, written after the drops had ended, still says so
	grep -q "^agentxdp_rocediag_qp_verdict{req=\"$A\",.*sport=\"49154\",verdict=\"DROPPED-LOCALLY\"} 4$" <<<"$prom_then"
	grep -q '^agentxdp_rocediag_qps{verdict="DROPPED-LOCALLY"} [1-9]' <<<"$prom_then"
}

@test "on the responder: this host's turnaround is its own kind, compared only with turnarounds and never called a path" {
	DIAG_NS=b start_diag -i ${P}vb -j
	run_three_flows
	stop_diag
	[ "$AX_RC" -eq 0 ]
	cat "$T/diag.out" >&2

	local slow
	slow=$(qp_json 49153)
	# rocegen delayed flow 49153's answers 20 ms, 49152's 0.5 ms, 49154's not
	[ "$(jq '.latency.p50_us >= 20000 and .latency.p50_us < 40000' <<<"$slow")" = true ]
	[ "$(jq -r .verdict <<<"$slow")" = SLOW ]
	jq -e '.why | startswith("this host'"'"'s turnaround p50 ")' <<<"$slow"
	! jq -e '.why | contains("path")' <<<"$slow"
	[ "$(jq -s "[.[] | select(.type == \"qp\" and .req == \"$A\" and .latency.kind == \"turnaround\")] | length" "$T/diag.out")" -eq 3 ]
	[ "$(jq -r .verdict <<<"$(qp_json 49152)")" = OK ]
	[ "$(jq -r .verdict <<<"$(qp_json 49154)")" = OK ]
}

@test "--problems: of 16 QPs only the one not OK, a line per pair of peers with the counts, 80 columns; 'cannot see' once per run" {
	rule "udp sport 49160 udp dport 4791 counter drop" b
	start_diag -i ${P}va --problems
	ax_bg ip netns exec ${P}b "$GEN" responder -q --timeout 60
	ax_wait_udp ${P}b 4791
	# 16 flows, random first PSNs, as RNICs pick them
	ip netns exec ${P}a "$GEN" requester -q --flow-stats --psn random -d $B -f 16 -n 320 --window 1 \
		--ack-timeout-us 500000 --retry 3 --timeout 10 > "$T/req.out" || true
	stop_diag
	[ "$AX_RC" -eq 0 ]
	cat "$T/diag.out" >&2
	fits_80 "$T/diag.out"
	joined "$T/diag.out" > "$T/diag.joined"
	# rocegen: 15 flows completed all their messages, 49160 none
	[ "$(sed -n 's/^rocegen: role=requester-flow .*completed=\([0-9]*\) .*/\1/p' "$T/req.out" | grep -c '^20$')" -eq 15 ]
	grep -q '^rocegen: role=requester-flow sport=49160 .* completed=0 ' "$T/req.out"
	grep -qx "peers $A <-> $B: 16 QPs: 1 DROPPED-LOCALLY, 15 OK" "$T/diag.joined"
	[ "$(grep -c "^QP $A/" "$T/diag.joined")" -eq 1 ]
	grep -q "^QP $A/.* (sport 49160): DROPPED-LOCALLY $(rule_packets b) packets dropped on this host" "$T/diag.joined"

	# the same as JSON: a "peers" object, and the QP objects not OK alone
	local n0
	n0=$(rule_packets b)
	start_diag -i ${P}va -j --problems
	ip netns exec ${P}a "$GEN" requester -q --flow-stats --psn random -d $B -f 16 -n 320 --window 1 \
		--ack-timeout-us 500000 --retry 3 --timeout 10 > "$T/req.out" || true
	stop_diag
	[ "$AX_RC" -eq 0 ]
	[ "$(sed -n 's/^rocegen: role=requester-flow .*completed=\([0-9]*\) .*/\1/p' "$T/req.out" | grep -c '^20$')" -eq 15 ]
	[ "$(jq -c "select(.type == \"peers\" and .a == \"$A\" and .b == \"$B\") | [.qps, .OK, .[\"DROPPED-LOCALLY\"]]" "$T/diag.out")" = "[16,15,1]" ]
	[ "$(jq -s "[.[] | select(.type == \"qp\" and .req == \"$A\")] | length" "$T/diag.out")" -eq 1 ]
	[ "$(jq .drops.packets <<<"$(qp_json 49160)")" -eq $(($(rule_packets b) - n0)) ]

	# intervals: the sources are named once, not in every report
	start_diag -i ${P}va --no-rules 1
	ax_until 20 "3 reports" reports_at_least 3 || { cat "$T/diag.out" >&2; false; }
	stop_diag
	[ "$(grep -c '^cannot see netfilter rules: --no-rules$' "$T/diag.out")" -eq 1 ]
}

reports_at_least() { [ "$(grep -cE '^[0-9]+ QPs?(:.*)?$' "$T/diag.out")" -ge "$1" ]; }

# drops of the QP from A (its requests' BTH: destination QP 0x12) that
# rocediag -j reported, and the drop events it said it lost, so far
seen_drops() {
	jq -s "[.[] | select(.type == \"qp\" and .req == \"$A\" and .resp == \"$B\") | .drops.packets] | add // 0" "$T/diag.out"
}
lost_drops() {
	jq -s '[.[] | select(.type == "summary") | .drop_events_lost] | add // 0' "$T/diag.out"
}
accounted() { [ $(($(seen_drops) + $(lost_drops))) -ge "$1" ]; }
stopped() { [ "$(awk '{ print $3 }' /proc/"$1"/stat)" = T ]; }

@test "drop events lost to a full ring buffer (rocediag stopped under a flood of 20000): the summary counts them; drops seen plus lost are the packets sent" {
	local n=20000
	rule "udp dport 4791 counter drop" b
	start_diag -j 1
	kill -STOP "$DIAG_PID"
	ax_until 10 "rocediag stopped" stopped "$DIAG_PID"
	# 20000 events of 184 bytes, a ring buffer of 1 MiB: some 14000 lost.
	# Each datagram dies once on this host: at the rule, or (a flood
	# outrunning the veth's backlog) before it; none is delivered
	ax_send_roce ${P}a $B $n
	kill -CONT "$DIAG_PID"
	ax_until 60 "rocediag's account of $n drops" accounted $n || { cat "$T/diag.out" >&2; false; }
	stop_diag
	[ "$AX_RC" -eq 0 ]
	echo "seen $(seen_drops), lost $(lost_drops), the rule's $(rule_packets b)"
	[ "$(lost_drops)" -gt 0 ]
	[ "$(seen_drops)" -gt 0 ]
	[ $(($(seen_drops) + $(lost_drops))) -eq $n ]
	[ "$(rule_packets b)" -gt 0 ] && [ "$(rule_packets b)" -le $n ]
}

@test "ConnectX-shaped traffic from scapy (each side its own UDP source port, random QPNs and PSNs): ACK drops join their QP" {
	[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null ||
		skip "no python3-scapy"
	# sinks on the RoCE port on both sides: no NO_SOCKET drops
	ax_bg ip netns exec ${P}a /usr/bin/python3 "$AX_ROOT/tests/lib/udp_sink.py" 4791
	ax_bg ip netns exec ${P}b /usr/bin/python3 "$AX_ROOT/tests/lib/udp_sink.py" 4791
	ax_wait_udp ${P}a 4791 && ax_wait_udp ${P}b 4791
	/usr/bin/python3 "$AX_ROOT/tests/lib/diag_traffic.py" plan $A $B > "$T/plan.json"
	# Wireshark's dissector reads the same QPs, ports and opcodes: the
	# packets are RoCE v2 by a decoder that is not ours
	if command -v tshark >/dev/null; then
		/usr/bin/python3 "$AX_ROOT/tests/lib/diag_traffic.py" pcap $A $B "$T/plan.pcap"
		tshark -r "$T/plan.pcap" -T fields -e udp.srcport -e infiniband.bth.destqp \
			-e infiniband.bth.opcode | sort | uniq -c > "$T/tshark.txt"
		cat "$T/tshark.txt" >&2
		for i in 0 1 2; do
			grep -Eq "^ *30 $(jq .qps[$i].req_sport "$T/plan.json")\s+0x0*$(printf %x "$(jq .qps[$i].resp_qpn "$T/plan.json")")\s+4$" "$T/tshark.txt"
			grep -Eq "^ *10 $(jq .qps[$i].resp_sport "$T/plan.json")\s+0x0*$(printf %x "$(jq .qps[$i].req_qpn "$T/plan.json")")\s+17$" "$T/tshark.txt"
		done
	fi
	rule "ip saddr $B udp sport $(jq .qps[1].resp_sport "$T/plan.json") counter drop" a
	start_diag -i ${P}va -j --timeout 600000
	ip netns exec ${P}a /usr/bin/python3 "$AX_ROOT/tests/lib/diag_traffic.py" requests $A $B ${P}va
	ip netns exec ${P}b /usr/bin/python3 "$AX_ROOT/tests/lib/diag_traffic.py" answers $A $B ${P}vb
	stop_diag
	[ "$AX_RC" -eq 0 ]
	cat "$T/diag.out" >&2
	local i q n
	n=$(rule_packets a)
	[ "$n" -eq "$(jq .qps[1].acks "$T/plan.json")" ]
	for i in 0 1 2; do
		q=$(jq -c "select(.type == \"qp\" and .req == \"$A\" and .resp_qpn == $(jq .qps[$i].resp_qpn "$T/plan.json"))" "$T/diag.out")
		[ -n "$q" ]
		[ "$(jq .sport <<<"$q")" -eq "$(jq .qps[$i].req_sport "$T/plan.json")" ]
		[ "$(jq .req_qpn <<<"$q")" -eq "$(jq .qps[$i].req_qpn "$T/plan.json")" ]
		if [ $i -eq 1 ]; then
			[ "$(jq -r .verdict <<<"$q")" = DROPPED-LOCALLY ]
			[ "$(jq .drops.packets <<<"$q")" -eq "$n" ]
		else
			# a coalesced ACK answers its three SENDs: three samples
			[ "$(jq -r .verdict <<<"$q")" = OK ]
			[ "$(jq .latency.samples <<<"$q")" -eq "$(jq .qps[$i].requests "$T/plan.json")" ]
		fi
	done
}

# rocelat's tc egress filters on the veth (clsact: kernels before tcx, 6.6)
tc_filters() {
	tc -n ${P}a filter show dev ${P}va egress | grep -c rocelat_tc || true
}

# until none of the programs of the last start_diag is alive and nothing
# is on the veth (30 s of wall time at most)
diag_gone() {
	local id alive end=$((SECONDS + 30))
	while :; do
		alive=
		for id in $DIAG_PROGS; do
			bpftool prog show id "$id" >/dev/null 2>&1 && alive+=" $id"
		done
		if [ -z "$alive" ] && [ "$(ip -n ${P}a link show ${P}va | grep -c xdp)" -eq 0 ] &&
		   [ "$(tc_filters)" -eq 0 ]; then
			return 0
		fi
		[ "$SECONDS" -le "$end" ] || break
		sleep 0.1
	done
	echo "still there: programs$alive; $(tc_filters) tc filters" >&2
	ip -n ${P}a link show ${P}va >&2
	return 1
}

@test "nothing stays attached: after Ctrl-C, and after SIGKILL (with tcx; before tcx the next run removes the leftover filter)" {
	start_diag -i ${P}va
	[ -n "$DIAG_PROGS" ]
	stop_diag INT
	diag_gone

	start_diag -i ${P}va
	local clsact
	clsact=$(tc_filters)
	stop_diag KILL
	if [ "$clsact" -gt 0 ]; then
		# documented: before tcx a killed run leaves its tc filter
		[ "$(tc_filters)" -eq 1 ]
		start_diag -i ${P}va
		grep -q "removed a leftover tc egress filter" "$T/diag.out.err"
		[ "$(tc_filters)" -eq 1 ]
		stop_diag INT
	fi
	diag_gone
}

# every drop rocediag reported: joined to a QP, or unmatched
diag_drops() {
	jq -s '[.[] | select(.type == "qp") | .drops.packets // 0] + [.[] | select(.type == "summary") | .unmatched_drops] | add // 0' "$T/diag.out"
}

# every namespace numbers its devices from 1: the pair's twin (${P}t: same
# addresses, the same rule, the same interface indexes) drops too, and
# rocediag -N ${P}b -i ${P}vb counts only ${P}b's drops, as its rule counted
@test "-i is scoped by namespace: drops at the same interface index elsewhere never count" {
	ax_netns_pair ${P}t $A/24 $B/24
	[ "$(ip -n ${P}b -o link show ${P}vb | cut -d: -f1)" = \
	  "$(ip -n ${P}tb -o link show ${P}tvb | cut -d: -f1)" ]
	rule "udp dport 4791 counter drop" b
	rule "udp dport 4791 counter drop" tb
	ax_tool_start DIAG_PID "$T/diag.out" 90 Tracing "$DIAG" -N ${P}b -i ${P}vb -j 1
	ax_send_roce ${P}a $B 4
	ax_send_roce ${P}ta $B 7
	# the twin's rule dropped its 7 (the precondition)
	[ "$(rule_packets tb)" -eq 7 ]
	[ "$(rule_packets b)" -eq 4 ]
	ax_until 20 "rocediag's report of the 4" bash -c "[ \$(jq -s '[.[] | select(.type == \"qp\") | .drops.packets // 0] + [.[] | select(.type == \"summary\") | .unmatched_drops] | add // 0' '$T/diag.out') -ge 4 ]"
	# one more report: none of the twin's may come late
	local n
	n=$(summaries)
	ax_until 20 "the next report" bash -c "[ \$(jq -s '[.[] | select(.type == \"summary\")] | length' '$T/diag.out') -gt $n ]"
	stop_diag
	[ "$AX_RC" -eq 0 ]
	[ "$(diag_drops)" -eq "$(rule_packets b)" ]
}

@test "bad input: one-line error, non-zero exit" {
	run "$DIAG" -i nosuch0
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"nosuch0"* ]]
	run "$DIAG" --timeout 0
	[ "$status" -ne 0 ]
	run "$DIAG" -i lo -i lo -i lo -i lo -i lo -i lo -i lo -i lo -i lo
	[ "$status" -ne 0 ]
	run "$DIAG" 1 2 3
	[ "$status" -ne 0 ]
	run "$DIAG" abc
	[ "$status" -ne 0 ]
}

load ../lib/pcapng

@test "-w: every RoCE drop in the file, as many as the rule counted, its location and reason in the comment" {
	pcap_need_tshark
	rule "udp dport 4791 counter drop" b
	PCAP=$T/drops.pcapng
	start_diag -N ${P}b --no-rules -j -w "$PCAP"
	ax_send_roce ${P}a $B 20
	ax_until 20 "20 packets in $PCAP" bash -c "[ \$(tshark -r $PCAP 2>/dev/null | wc -l) -ge 20 ]"
	stop_diag
	[ "$AX_RC" -eq 0 ]
	[ "$(rule_packets b)" -eq 20 ]
	[ "$(pcap_count "$PCAP")" -eq 20 ]
	[ "$(pcap_fields "$PCAP" frame.comment | sed 's/+0x[0-9a-f]*//' | sort -u)" = \
	  "location=nft_do_chain reason=NETFILTER_DROP" ]
	[ "$(pcap_fields "$PCAP" frame.interface_name frame.encap_type frame.len | sort -u)" = \
	  "$(printf '%s\t1\t74' "${P}vb")" ]
	diff <(for i in $(seq 1 20); do echo "$A $B 4791 18 $i"; done) <(pcap_headers "$PCAP")
}

@test "-w to an unwritable file, or a bad --snaplen: one line, exit 1" {
	run "$DIAG" -w /nonexistent/dir/x.pcapng
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "${lines[0]}" = "rocediag: cannot write /nonexistent/dir/x.pcapng: No such file or directory" ]
	# the same words in every tool: pcapng.c's argp child parses it
	for bad in 0 2049 x; do
		run "$DIAG" -w "$BATS_TEST_TMPDIR/x.pcapng" --snaplen "$bad"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[ "${lines[0]}" = "rocediag: invalid snap length: $bad (1-2048)" ]
	done
}
