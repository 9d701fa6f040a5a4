#!/usr/bin/env bats
#
# rocegen, the synthetic RoCE v2 requester/responder the tracer tests use as
# ground truth: its own counters must agree with what a packet capture of
# the veth shows (decoded by tshark's InfiniBand dissector on UDP 4791).
#
# Each test builds two fresh network namespaces joined by a veth pair
# (names start with "axg"), runs the responder in one and the requester in
# the other, and removes everything in teardown, also after a failure.
# Needs root, iproute2, tcpdump and tshark, and build/rocegen (make);
# ROCEGEN=path runs another binary.

load ../lib/common

Q4=192.0.2.1
R4=192.0.2.2
Q6=2001:db8:4791::1
R6=2001:db8:4791::2

setup_file() {
	export ROCEGEN=${ROCEGEN:-$AX_BUILD/rocegen}
	ax_file_needs ip "$ROCEGEN" || return 0
}

setup() {
	ax_file_skip
	T="$BATS_TEST_TMPDIR"
	local p="axg$(($$ % 1000))$BATS_TEST_NUMBER"	# veths: at most 15 characters
	NSQ=${p}a
	NSR=${p}b
	VQ=${p}va
	VR=${p}vb
	ax_netns_pair "$p" "$Q4/24" "$R4/24"
	ip -n "$NSQ" addr add "$Q6/64" dev "$VQ" nodad
	ip -n "$NSR" addr add "$R6/64" dev "$VR" nodad
}

teardown() {
	ax_cleanup
}

# start_responder ARGS...: rocegen's responder in $NSR until it listens
# (its stderr says so); output in $T/rsp.out and $T/rsp.out.err
start_responder() {
	ax_tool_start --err RSP_PID "$T/rsp.out" 20 listening \
		ip netns exec "$NSR" "$ROCEGEN" responder "$@" 3>&-
}

# stop_responder: SIGTERM, exit 0, then its summary line is in $RSP
stop_responder() {
	ax_tool_stop RSP_PID TERM
	RSP="$(grep 'role=responder ' "$T/rsp.out")"
	echo "responder: $RSP"
}

# requester ARGS...: run it; its summary line is in $REQ. Unless a test
# sets its own, a 1 s retransmit timer keeps a loaded machine from adding
# spurious timeouts to counts that must be exact.
requester() {
	if [[ " $* " != *" --ack-timeout-us "* ]]; then
		set -- "$@" --ack-timeout-us 1000000
	fi
	run ip netns exec "$NSQ" "$ROCEGEN" requester "$@"
	echo "requester (status $status): $output"
	REQ="$(printf '%s\n' "$output" | grep 'role=requester ' || true)"
}

# field NAME LINE: value of NAME= in a summary line
field() {
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

start_capture() {
	command -v tcpdump >/dev/null || skip "needs tcpdump"
	command -v tshark >/dev/null || skip "needs tshark"
	PCAP="$T/rsp.pcap"
	ax_bg ip netns exec "$NSR" tcpdump -i "$VR" -n --immediate-mode -U -s 256 -B 32768 \
		-w "$PCAP" udp port 4791 2>"$T/tcpdump.err" 3>&-
	TCPDUMP_PID=$AX_LAST_PID
	ax_capture_ready "$TCPDUMP_PID" "$T/tcpdump.err"
}

stop_capture() {
	# a capture that lost packets would make every count below wrong
	ax_capture_stop "$TCPDUMP_PID" "$T/tcpdump.err"
	decode_capture
}

# The capture, decoded once by tshark (InfiniBand on UDP 4791), one packet
# a line: dir is q (sent by the requester) or r (by the responder), qp the
# BTH destination QP in decimal, a the AckReq bit, syn/msn the AETH,
# dmalen the RETH; a header the packet lacks leaves its columns empty.
CAP_COLS="dir sport dport ulen ecn op qp a psn pkey syn msn dmalen"

decode_capture() {
	tshark -r "$PCAP" -T fields -E separator=/t -E occurrence=f \
		-e ip.src -e ipv6.src -e udp.srcport -e udp.dstport \
		-e udp.length -e ip.dsfield.ecn -e infiniband.bth.opcode \
		-e infiniband.bth.destqp -e infiniband.bth.a \
		-e infiniband.bth.psn -e infiniband.bth.p_key \
		-e infiniband.aeth.syndrome -e infiniband.aeth.msn \
		-e infiniband.reth.dmalen 2>/dev/null |
	awk -F'\t' -v OFS='\t' -v q4="$Q4" -v q6="$Q6" '
		function hex(s,    i, v) {
			v = 0
			s = tolower(s)
			sub(/^0x/, "", s)
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		{
			src = $1 != "" ? $1 : $2
			print (src == q4 || src == q6) ? "q" : "r", $3, $4, $5,
			      $6, $7, $8 == "" ? "" : hex($8), $9, $10, $11, $12,
			      $13, $14
		}' >"$T/cap.tsv"
}

# cap_awk PROGRAM: run PROGRAM over the decoded capture, columns by name
cap_awk() {
	local set="" i=1 c
	for c in $CAP_COLS; do
		set+="$c = \$$i; "
		i=$((i + 1))
	done
	awk -F'\t' -v OFS='\t' "{ $set } $1" "$T/cap.tsv"
}

# pkts COND: how many packets satisfy the awk condition COND
pkts() {
	cap_awk "($1) { n++ } END { print n + 0 }"
}

# fields COND COL...: those columns of the packets satisfying COND
fields() {
	local cond="$1" cols
	shift
	cols="$(printf '%s, ' "$@")"
	cap_awk "($cond) { print ${cols%, } }"
}

expect_eq() {
	if [ "$1" != "$2" ]; then
		echo "expected '$2', got '$1' ($3)" >&2
		return 1
	fi
}

@test "rocegen: --help, and bad input gives one line and exit 1" {
	run "$ROCEGEN" --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"rocegen requester -d ADDR"* ]]
	[[ "$output" == *"--retransmit-every"* ]]
	run "$ROCEGEN" requester --help
	[ "$status" -eq 0 ]

	local bad
	for bad in "requester -d 1.2.3" "requester -d 10.0.0.1 -n 12x" \
		"requester -d 10.0.0.1 --op atomic" "requester --bogus" \
		"requester" "requester -d" "responder --nak-every x" \
		"responder --dst 10.0.0.1" "responder -b 300.1.1.1" \
		"requester -d 10.0.0.1 --psn 16777216" "sideways"; do
		run "$ROCEGEN" $bad
		echo "rocegen $bad -> $status: $output"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "${lines[0]}" == "rocegen: "* ]]
	done
}

@test "rocegen: IPv4 SEND, N requests -> N ACKs, paired by (sport, PSN) on the wire" {
	start_capture
	start_responder
	requester -d "$R4" -n 200 --psn 1000 --qpn 0x22
	[ "$status" -eq 0 ]
	stop_responder
	stop_capture

	expect_eq "$(field status "$REQ")" ok "status"
	expect_eq "$(field requests "$REQ")" 200 "requester requests"
	expect_eq "$(field acks "$REQ")" 200 "requester acks"
	expect_eq "$(field completed "$REQ")" 200 "completed"
	expect_eq "$(field retransmits "$REQ")" 0 "retransmits"
	expect_eq "$(field requests "$RSP")" 200 "responder requests"
	expect_eq "$(field acks "$RSP")" 200 "responder acks"

	# the wire agrees: SEND_ONLY with AckReq to QP 0x22, ACKs (syndrome
	# 0x1f) to the requester's QP 0x22 + 0x100, from the request's sport
	expect_eq "$(pkts 'dir=="q" && op==4 && a==1 && qp==34 && pkey==65535')" 200 "SEND_ONLY"
	expect_eq "$(pkts 'dir=="r" && op==17 && syn==31 && qp==290')" 200 "ACK"
	expect_eq "$(pkts 'dir=="r" && sport==49152 && dport==4791')" 200 "ACK ports"
	fields 'dir=="q"' sport psn | sort >"$T/req"
	fields 'dir=="r"' sport psn | sort >"$T/ack"
	diff "$T/req" "$T/ack"
	expect_eq "$(sort -n -k2 "$T/req" | head -1 | cut -f2)" 1000 "first PSN"
	expect_eq "$(sort -n -k2 "$T/req" | tail -1 | cut -f2)" 1199 "last PSN"
	# MSN counts completed messages
	expect_eq "$(fields 'dir=="r"' msn | sort -n | tail -1)" 200 "last MSN"
}

@test "rocegen: IPv6, several flows each with its own source port and QPN" {
	start_capture
	start_responder --flow-stats
	requester -d "$R6" -n 100 --flows 4 --sport 50000 --qpn 0x40 --window 4 --flow-stats
	[ "$status" -eq 0 ]
	stop_responder
	stop_capture

	expect_eq "$(field acks "$REQ")" 100 "acks"
	expect_eq "$(field flows "$RSP")" 4 "responder flows"
	expect_eq "$(grep -c 'role=responder-flow .*requests=25 .*acks=25 ' "$T/rsp.out")" 4 "per-flow lines"
	local i
	for i in 0 1 2 3; do
		local qpn=$((0x40 + i)) sport=$((50000 + i))
		expect_eq "$(pkts "dir==\"q\" && sport==$sport && qp==$qpn")" 25 "requests of flow $i"
		expect_eq "$(pkts "dir==\"r\" && sport==$sport && dport==4791 && op==17 && qp==$((qpn + 0x100))")" 25 "ACKs of flow $i"
	done
	fields 'dir=="q"' sport psn | sort >"$T/req"
	fields 'dir=="r"' sport psn | sort >"$T/ack"
	diff "$T/req" "$T/ack"
}

@test "rocegen: --retransmit-every 10 with 100 requests gives exactly 10 retransmissions" {
	start_capture
	start_responder
	requester -d "$R4" -n 100 --retransmit-every 10
	[ "$status" -eq 0 ]
	stop_responder
	stop_capture

	expect_eq "$(field retransmits "$REQ")" 10 "retransmits"
	expect_eq "$(field retx_injected "$REQ")" 10 "retx_injected"
	expect_eq "$(field completed "$REQ")" 100 "completed"
	# rxe-like: a duplicate is ACKed again
	expect_eq "$(field dups "$RSP")" 10 "responder dups"
	expect_eq "$(field acks "$RSP")" 110 "responder acks"
	expect_eq "$(field acks "$REQ")" 110 "requester acks"

	expect_eq "$(pkts 'dir=="q" && op==4')" 110 "request packets"
	# exactly 10 PSNs appear twice in the request direction
	expect_eq "$(fields 'dir=="q"' psn | sort -n | uniq -d | wc -l)" 10 "PSNs seen twice"
	expect_eq "$(fields 'dir=="q"' psn | sort -n | uniq | wc -l)" 100 "distinct PSNs"
	expect_eq "$(pkts 'dir=="r" && op==17')" 110 "ACK packets"
}

@test "rocegen: --nak-every 10 gives exactly 10 PSN sequence error NAKs, go-back-N recovers" {
	start_capture
	start_responder --nak-every 10
	requester -d "$R4" -n 100 --window 8 --psn 500
	[ "$status" -eq 0 ]
	stop_responder
	stop_capture

	expect_eq "$(field naks "$REQ")" 10 "requester naks"
	expect_eq "$(field naks "$RSP")" 10 "responder naks"
	expect_eq "$(field completed "$REQ")" 100 "completed"
	expect_eq "$(field acks "$REQ")" 100 "acks"
	[ "$(field retx_nak "$REQ")" -ge 10 ]
	expect_eq "$(field retransmits "$REQ")" "$(field retx_nak "$REQ")" "all retransmissions from NAKs"

	# NAK: syndrome 011 00000, carrying the NAKed request's PSN: every 10th
	expect_eq "$(pkts 'dir=="r" && syn==96')" 10 "NAK packets"
	fields 'dir=="r" && syn==96' psn >"$T/nakpsn"
	expect_eq "$(tr '\n' ' ' <"$T/nakpsn")" "509 519 529 539 549 559 569 579 589 599 " "NAK PSNs"
	expect_eq "$(pkts 'dir=="r" && syn==31')" 100 "ACK packets"
	expect_eq "$(pkts 'dir=="q"')" "$((100 + $(field retransmits "$REQ")))" "request packets"
}

@test "rocegen: --rnr-every 10 gives exactly 10 RNR NAKs with the configured timer" {
	start_capture
	start_responder --rnr-every 10 --rnr-timer 6
	requester -d "$R4" -n 100 --window 4
	[ "$status" -eq 0 ]
	stop_responder
	stop_capture

	expect_eq "$(field rnr "$REQ")" 10 "requester rnr"
	expect_eq "$(field rnr "$RSP")" 10 "responder rnr"
	expect_eq "$(field naks "$REQ")" 0 "naks"
	expect_eq "$(field completed "$REQ")" 100 "completed"
	[ "$(field retx_rnr "$REQ")" -ge 10 ]
	# RNR NAK: syndrome 001 + timer 6
	expect_eq "$(pkts 'dir=="r" && syn==38')" 10 "RNR packets"
	expect_eq "$(pkts 'dir=="r" && syn==31')" 100 "ACK packets"
}

@test "rocegen: --drop-every makes the requester time out or get NAKed, and recover" {
	start_responder --drop-every 20
	requester -d "$R4" -n 100 --window 4 --ack-timeout-us 5000
	[ "$status" -eq 0 ]
	stop_responder

	expect_eq "$(field dropped "$RSP")" 5 "dropped"
	expect_eq "$(field completed "$REQ")" 100 "completed"
	expect_eq "$(field naks "$REQ")" "$(field naks "$RSP")" "naks agree"
	[ "$(field retransmits "$REQ")" -ge 5 ]
	[ $(( $(field timeouts "$REQ") + $(field naks "$REQ") )) -ge 5 ]
}

@test "rocegen: RDMA READ, responses FIRST/MIDDLE/LAST consume ceil(len/MTU) PSNs" {
	start_capture
	start_responder
	requester -d "$R4" -n 20 --op read --size 5000 --psn 100 --window 2
	[ "$status" -eq 0 ]
	stop_responder
	stop_capture

	expect_eq "$(field read_resp "$REQ")" 100 "requester read_resp"
	expect_eq "$(field read_resp "$RSP")" 100 "responder read_resp"
	expect_eq "$(field completed "$REQ")" 20 "completed"
	expect_eq "$(field acks "$REQ")" 0 "acks"

	expect_eq "$(pkts 'dir=="q" && op==12 && dmalen==5000 && a==1')" 20 "READ REQUEST"
	expect_eq "$(pkts 'dir=="r" && op==13 && syn==31')" 20 "READ RESPONSE FIRST with AETH"
	expect_eq "$(pkts 'dir=="r" && op==14 && syn==""')" 60 "READ RESPONSE MIDDLE"
	expect_eq "$(pkts 'dir=="r" && op==15 && syn==31')" 20 "READ RESPONSE LAST with AETH"
	# request PSNs step by 5, responses fill the gaps
	expect_eq "$(fields 'dir=="q"' psn | head -3 | tr '\n' ' ')" "100 105 110 " "read request PSNs"
	expect_eq "$(fields 'dir=="r"' psn | sort -n | uniq | wc -l)" 100 "response PSNs"
	expect_eq "$(fields 'dir=="r"' psn | sort -n | tail -1)" 199 "last response PSN"

	start_capture
	start_responder
	requester -d "$R4" -n 5 --op read --size 512
	[ "$status" -eq 0 ]
	stop_responder
	stop_capture
	expect_eq "$(pkts 'dir=="r" && op==16 && syn==31')" 5 "READ RESPONSE ONLY"
}

@test "rocegen: multi-packet RDMA WRITE: FIRST with RETH, MIDDLE, LAST with AckReq" {
	start_capture
	start_responder
	requester -d "$R4" -n 10 --op write --size 2500
	[ "$status" -eq 0 ]
	stop_responder
	stop_capture

	expect_eq "$(field sent "$REQ")" 30 "request packets"
	expect_eq "$(field acks "$REQ")" 10 "acks"
	expect_eq "$(field msgs "$RSP")" 10 "responder messages"
	expect_eq "$(pkts 'dir=="q" && op==6 && dmalen==2500 && a==0')" 10 "WRITE FIRST"
	expect_eq "$(pkts 'dir=="q" && op==7 && dmalen=="" && a==0')" 10 "WRITE MIDDLE"
	expect_eq "$(pkts 'dir=="q" && op==8 && a==1')" 10 "WRITE LAST"
	# 2500 = 1024 + 1024 + 452: the LAST payload needs no pad
	expect_eq "$(pkts "dir==\"q\" && op==8 && ulen==$((8 + 12 + 452 + 4))")" 10 "WRITE LAST length"
	# the ACK carries the PSN of the LAST packet
	fields 'dir=="q" && a==1' psn >"$T/req"
	fields 'dir=="r"' psn >"$T/ack"
	diff "$T/req" "$T/ack"
}

@test "rocegen: PSN wrap at 2^24" {
	start_capture
	start_responder
	requester -d "$R4" -n 40 --psn 16777200 --window 4
	[ "$status" -eq 0 ]
	stop_responder
	stop_capture

	expect_eq "$(field completed "$REQ")" 40 "completed"
	expect_eq "$(field acks "$REQ")" 40 "acks"
	expect_eq "$(field retransmits "$REQ")" 0 "retransmits"
	expect_eq "$(field ooo "$RSP")" 0 "responder saw no gap"
	fields 'dir=="q"' psn >"$T/req"
	{ seq 16777200 16777215; seq 0 23; } >"$T/want"
	diff "$T/want" "$T/req"
	fields 'dir=="r"' psn >"$T/ack"
	expect_eq "$(sort -n "$T/ack" | tr '\n' ' ')" "$(sort -n "$T/want" | tr '\n' ' ')" "ACK PSNs"
}

@test "rocegen: per-flow --delay-us delays only that flow's answers" {
	start_responder --delay-us 50001=5000
	requester -d "$R4" -n 20 --flows 2 --sport 50000 --flow-stats
	[ "$status" -eq 0 ]
	stop_responder

	local slow fast
	slow="$(printf '%s\n' "$output" | grep 'role=requester-flow sport=50001 ')"
	fast="$(printf '%s\n' "$output" | grep 'role=requester-flow sport=50000 ')"
	[ "$(field rtt_min_us "$slow")" -ge 5000 ]
	[ "$(field rtt_min_us "$fast")" -lt 5000 ]
	expect_eq "$(field completed "$REQ")" 20 "completed"
}

@test "rocegen: --coalesce acknowledges cumulatively with fewer ACKs" {
	start_capture
	start_responder --coalesce 4
	requester -d "$R4" -n 100 --window 8
	[ "$status" -eq 0 ]
	stop_responder
	stop_capture

	local acks
	acks="$(field acks "$RSP")"
	expect_eq "$(field completed "$REQ")" 100 "completed"
	expect_eq "$(field acks "$REQ")" "$acks" "ACKs sent = received"
	expect_eq "$(field retransmits "$REQ")" 0 "retransmits"
	[ "$acks" -ge 25 ]
	[ "$acks" -le 50 ]
	expect_eq "$(pkts 'dir=="r" && op==17')" "$acks" "ACK packets"
	# the last ACK covers the last request
	expect_eq "$(fields 'dir=="r"' psn | tail -1)" 99 "last ACK PSN"
}

@test "rocegen: ECN CE-marked requests are answered with CNPs" {
	start_capture
	start_responder --cnp
	requester -d "$R4" -n 10 --tos 3
	[ "$status" -eq 0 ]
	stop_responder
	stop_capture

	expect_eq "$(field cnp "$RSP")" 10 "responder cnp"
	expect_eq "$(field cnp "$REQ")" 10 "requester cnp"
	expect_eq "$(pkts 'dir=="q" && ecn==3')" 10 "CE-marked requests"
	expect_eq "$(pkts 'dir=="r" && op==129 && qp==273')" 10 "CNP packets"
}

@test "rocegen: --count-only responder never answers; the requester reports the loss" {
	start_capture
	start_responder --count-only
	requester -d "$R4" -n 30 --window 0 --no-recovery --ack-timeout-us 2000 --timeout 3
	[ "$status" -eq 2 ]
	stop_responder
	stop_capture

	expect_eq "$(field status "$REQ")" incomplete "status"
	expect_eq "$(field failed "$REQ")" 30 "failed"
	expect_eq "$(field retransmits "$REQ")" 0 "retransmits"
	expect_eq "$(field requests "$RSP")" 30 "responder requests"
	expect_eq "$(pkts 'dir=="q"')" 30 "requests on the wire"
	expect_eq "$(pkts 'dir=="r"')" 0 "answers on the wire"
}

@test "rocegen: successive runs against one responder reuse ports, QPNs and PSNs" {
	start_responder
	local i
	for i in 1 2 3; do
		requester -d "$R4" -n 50 --op mix --size 1500
		[ "$status" -eq 0 ]
		expect_eq "$(field completed "$REQ")" 50 "run $i completed"
		expect_eq "$(field retransmits "$REQ")" 0 "run $i retransmits"
	done
	stop_responder
	expect_eq "$(field msgs "$RSP")" 150 "responder messages"
	expect_eq "$(field dups "$RSP")" 0 "responder dups"
}

@test "rocegen: --json summary parses" {
	command -v jq >/dev/null || skip "needs jq"
	start_responder --json
	run ip netns exec "$NSQ" "$ROCEGEN" requester -d "$R4" -n 7 --json
	[ "$status" -eq 0 ]
	expect_eq "$(printf '%s\n' "$output" | jq -r 'select(.role=="requester") | .acks')" 7 "json acks"
	# (its summary is JSON here: stop_responder's text line is not there)
	ax_tool_stop RSP_PID TERM
	expect_eq "$(jq -r 'select(.role=="responder") | .requests' "$T/rsp.out")" 7 "responder json"
}
