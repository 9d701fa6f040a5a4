#!/usr/bin/env bats
# rocelat -r on captures it did not write: RoCE v2 built by scapy's RoCE
# layer (tests/lib/roce_captures.py) in the shapes hardware RNICs put on
# the wire: each side of a QP pair on its own UDP source port, four QPs
# between two hosts, random starting PSNs, coalesced ACKs, 4 KiB READs at
# MTU 1024, atomics, RNR NAKs, sequence-error NAKs and go-back-N, CE marks
# and CNPs both ways, lost READ responses, requests never answered, IPv6
# in a VLAN. The ground truth (every latency in ns, every count) comes
# from the builder; tshark's InfiniBand dissector is the second opinion on
# the packet counts. Pure user space + BPF_PROG_TEST_RUN: no namespaces.
# The same runs draw --svg, checked against the same truth
# (tests/lib/svg_check.py) and rendered by rsvg-convert and Chromium.

bats_require_minimum_version 1.5.0
load ../lib/common
load ../lib/rocelat_bounded

RL=$AX_BUILD/rocelat
PY=/usr/bin/python3

setup_file() {
	ax_file_needs "$RL" tshark jq || return 0
	ax_file_needs_captures "user space and BPF_PROG_TEST_RUN only" || return 0
	export CAP=$BATS_FILE_TMPDIR/cap
	mkdir -p "$CAP"
	"$PY" "$AX_ROOT/tests/lib/roce_captures.py" "$CAP" 2>/dev/null
	for s in connectx faults faults6 cm cm_reconnect lossy; do
		"$RL" -r "$CAP/$s.pcap" -F -j --nanoseconds --svg "$CAP/$s.svg" > "$CAP/$s.out"
	done
}

setup() {
	ax_file_skip
}

# exact counts: each total of the truth equals rocelat's counter
check_totals() {
	local s=$1 k want got
	for k in $(jq -r '.totals | keys[]' "$CAP/$s.json"); do
		want=$(jq -r ".totals.$k" "$CAP/$s.json")
		got=$(jq -r "select(.type==\"counters\") | .$k" "$CAP/$s.out")
		echo "$s total $k: want $want got $got" >&2
		[ "$got" = "$want" ]
	done
}

# per flow: the counts exact, the QPs and the path as built, p50/p90/p99
# within 3% of the exact nearest-rank quantiles, max exact
check_flows() {
	local s=$1 n i f r
	n=$(jq '.flows | length' "$CAP/$s.json")
	[ "$n" -gt 0 ]
	for ((i = 0; i < n; i++)); do
		f=$(jq -c ".flows[$i]" "$CAP/$s.json")
		r=$(jq -c --argjson f "$f" 'select(.type=="flow" and .saddr==$f.requester and .daddr==$f.responder and .dqpn==$f.dqpn)' "$CAP/$s.out")
		echo "$s flow $i: truth $(jq -c 'del(.latencies_ns)' <<< "$f")" >&2
		echo "$s flow $i: rocelat $(jq -c 'del(.buckets)' <<< "$r")" >&2
		[ -n "$r" ]
		jq -e -n --argjson f "$f" --argjson r "$r" '
			def near(a; b): (a - b | fabs) <= 0.03 * b;
			$r.req_qpn == $f.req_qpn and $r.sport == $f.sport and
			$r.samples == $f.samples and $r.retransmits == $f.retransmits and
			$r.naks == $f.naks and $r.rnr_naks == $f.rnr_naks and
			$r.cnps == $f.cnps and $r.ecn_ce == $f.ecn_ce and
			$r.responses_missing == $f.responses_missing and
			$r.timeouts == ($f.timeouts // 0) and
			($f.samples == 0 or (near($r.p50; $f.p50) and near($r.p90; $f.p90) and
			  near($r.p99; $f.p99) and ($r.max == $f.max)))' > /dev/null
	done
}

# tshark's count of packets whose BTH opcode matches FILTER
ts_count() {
	tshark -r "$CAP/$1.pcap" -Y "$2" -T fields -e frame.number 2>/dev/null | wc -l
}

check_tshark() {
	local s=$1
	[ "$(ts_count "$s" 'infiniband.bth.opcode <= 12 || infiniband.bth.opcode == 19 || infiniband.bth.opcode == 20')" -eq \
	  "$(jq -r 'select(.type=="counters") | .requests' "$CAP/$s.out")" ]
	[ "$(ts_count "$s" 'infiniband.bth.opcode == 17 || infiniband.bth.opcode == 18')" -eq \
	  "$(jq -r 'select(.type=="counters") | .acks' "$CAP/$s.out")" ]
	[ "$(ts_count "$s" 'infiniband.bth.opcode >= 13 && infiniband.bth.opcode <= 16')" -eq \
	  "$(jq -r 'select(.type=="counters") | .read_responses' "$CAP/$s.out")" ]
	[ "$(ts_count "$s" 'infiniband.bth.opcode == 129')" -eq \
	  "$(jq -r 'select(.type=="counters") | .cnps' "$CAP/$s.out")" ]
}

@test "ConnectX-shaped: 4 QPs, per-side source ports, random PSNs: every request paired by QP, exact counts" {
	check_totals connectx
	[ "$(jq -r 'select(.type=="counters") | .qps_paired' "$CAP/connectx.out")" -eq 4 ]
	[ "$(jq -r 'select(.type=="counters") | .ambiguous_answers' "$CAP/connectx.out")" -eq 0 ]
	check_tshark connectx
}

@test "ConnectX-shaped: per-QP p50/p90/p99 within 3% of the exact quantiles (coalesced ACKs, 4 KiB READs, atomics)" {
	check_flows connectx
}

@test "faults: RNR, NAK + go-back-N, CE/CNP both ways, lost READ response, timeouts: exact per QP" {
	check_totals faults
	check_flows faults
	check_tshark faults
	# the requests left unanswered were swept as timeouts, none pending
	[ "$(jq -r 'select(.type=="counters") | .pending' "$CAP/faults.out")" -eq 0 ]
}

@test "faults over IPv6 in a VLAN: the same counts and quantiles" {
	check_totals faults6
	check_flows faults6
	check_tshark faults6
	[ "$(tshark -r "$CAP/faults6.pcap" -Y 'vlan.id == 301 && ipv6' -T fields -e frame.number 2>/dev/null | wc -l)" -eq \
	  "$(jq -r 'select(.type=="counters") | .roce_packets' "$CAP/faults6.out")" ]
}

@test "-r: the report's time is the capture's, no interface name for packets from a file" {
	local last
	last=$(tshark -r "$CAP/faults.pcap" -T fields -e frame.time_epoch 2>/dev/null | tail -1)
	jq -e -n --argjson t "$(jq -r 'select(.type=="counters") | .time' "$CAP/faults.out")" \
		--argjson l "$last" '($t - $l | fabs) < 0.001' > /dev/null
	[ "$(jq -r 'select(.type=="flow") | .ifname // "none"' "$CAP/faults.out" | sort -u)" = none ]
	run -0 "$RL" -r "$CAP/faults.pcap" -F
	[[ "$output" != *" via "* ]]
	[[ "$output" != *" lo "* ]]
}

@test "--svg: per flow as many dots as samples, exact p50/p99, worst first; the heatmap holds every sample" {
	local s
	for s in connectx faults faults6 cm lossy; do
		"$PY" "$AX_ROOT/tests/lib/svg_check.py" "$CAP/$s.svg" "$CAP/$s.json" >&2
	done
	[ ! -e "$CAP/connectx.svg.tmp" ]
}

@test "--svg changes nothing in the report; a file it cannot write is one line and exit 1" {
	run -0 "$RL" -r "$CAP/connectx.pcap" -F -j --nanoseconds
	diff <(jq -c "del(.time) | $RL_READ_TIME" <<< "$output") <(jq -c "del(.time) | $RL_READ_TIME" "$CAP/connectx.out")
	# said before the capture is read: no report
	run -1 --separate-stderr "$RL" -r "$CAP/connectx.pcap" --svg "$CAP/no/such/dir/x.svg"
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ "$stderr" = "rocelat: --svg $CAP/no/such/dir/x.svg: No such file or directory" ]
	run -1 --separate-stderr "$RL" -r "$CAP/connectx.pcap" --svg ""
	[[ $stderr == "rocelat: empty --svg file name" ]]
}

# the PNG's size from its IHDR chunk
png_size() {
	"$PY" -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); assert d[:8]==b"\x89PNG\r\n\x1a\n"; print("%dx%d" % struct.unpack(">II", d[16:24]))' "$1"
}

@test "--svg renders: rsvg-convert and headless Chromium draw it to a PNG of its size, without a parse error" {
	command -v rsvg-convert >/dev/null || skip "rsvg-convert not installed (scripts/setup-deps.sh: librsvg2-bin)"
	local w h
	w=$(grep -o 'width="[0-9]*"' "$CAP/connectx.svg" | head -1 | tr -dc 0-9)
	h=$(grep -o 'height="[0-9]*"' "$CAP/connectx.svg" | head -1 | tr -dc 0-9)
	rsvg-convert -o "$CAP/connectx.png" "$CAP/connectx.svg"
	[ "$(png_size "$CAP/connectx.png")" = "${w}x${h}" ]
	command -v chromium >/dev/null || skip "chromium not installed (scripts/setup-deps.sh)"
	# a browser shows a malformed file as a page of errors: its DOM says so
	timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$CAP/chromium" \
		--dump-dom "file://$CAP/faults6.svg" > "$CAP/dom.txt" 2>/dev/null
	! grep -q parsererror "$CAP/dom.txt"
	[ "$(grep -o '<circle' "$CAP/dom.txt" | wc -l)" -eq "$(jq '[.flows[].samples] | add' "$CAP/faults6.json")" ]
	timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$CAP/chromium" --window-size="$w,$h" \
		--screenshot="$CAP/connectx-chromium.png" "file://$CAP/connectx.svg" 2>/dev/null
	[ "$(png_size "$CAP/connectx-chromium.png")" = "${w}x${h}" ]
}

@test "-r needs no privilege: an unprivileged user gets the same report; --in-kernel names the capabilities it lacks" {
	command -v setpriv >/dev/null || skip "no setpriv"
	local nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	# the capture on stdin: the test's files are root's
	run -0 --separate-stderr "${nobody[@]}" "$RL" -r - -F -j --nanoseconds < "$CAP/lossy.pcap"
	diff <(jq -c "del(.file) | $RL_READ_TIME" <<< "$output") \
		<(jq -c "del(.file) | $RL_READ_TIME" "$CAP/lossy.out")
	[ "$(jq -r 'select(.type=="counters") | .samples' <<< "$output")" -gt 0 ]
	run -1 --separate-stderr "${nobody[@]}" "$RL" -r - --in-kernel < "$CAP/lossy.pcap"
	[ -z "$output" ]
	[ "$stderr" = "rocelat: needs CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN, which this process lacks: run it as root, or grant them" ]
	run -1 --separate-stderr "$RL" -i lo --in-kernel
	[ "$stderr" = "rocelat: --in-kernel applies to -r, not to live tracing" ]
}

@test "RDMA CM seen: the REQ/REP pair the QPs whose PSN windows overlap; without it, ambiguous, never wrong" {
	check_totals cm
	check_flows cm
	# tshark reads the same QPNs from the CM messages
	[ "$(tshark -r "$CAP/cm.pcap" -Y 'infiniband.bth.opcode == 100' -T fields \
		-e infiniband.cm.req.localqpn -e infiniband.cm.rep.localqpn 2>/dev/null | tr -s '\t\n' '  ')" = \
	  "0x0001a2 0x0003b4 0x0001a9 0x0003c1 " ]
	# the same traffic without the CM exchange: nothing is credited to
	# the wrong QP, the answers are counted as ambiguous
	tshark -r "$CAP/cm.pcap" -Y 'infiniband.bth.opcode != 100' -w "$BATS_TEST_TMPDIR/nocm.pcap" 2>/dev/null
	run -0 "$RL" -r "$BATS_TEST_TMPDIR/nocm.pcap" -j
	[ "$(jq -r 'select(.type=="counters") | .samples' <<< "$output")" -eq 0 ]
	[ "$(jq -r 'select(.type=="counters") | .ambiguous_answers' <<< "$output")" -eq 100 ]
}

@test "RDMA CM re-pairs a requester QP with a new responder QP: every later answer goes to the new one" {
	check_totals cm_reconnect
	check_flows cm_reconnect
	[ "$(tshark -r "$CAP/cm_reconnect.pcap" -Y 'infiniband.cm.rep.localqpn' -T fields \
		-e infiniband.cm.rep.localqpn 2>/dev/null | tr '\n' ' ')" = "0x0004b1 0x0004c9 " ]
}

@test "lossy recording: answers before their QP is paired are held, pairings serve both directions, every latency exact" {
	local n i f r
	check_totals lossy
	check_flows lossy
	check_tshark lossy
	# each flow's every latency as the independent pairing has it: min,
	# max and the sum exact (a late pairing closing old requests at its
	# own time would show in all three); what it could not time counted
	n=$(jq '.flows | length' "$CAP/lossy.json")
	[ "$n" -eq 7 ]
	for ((i = 0; i < n; i++)); do
		f=$(jq -c ".flows[$i]" "$CAP/lossy.json")
		r=$(jq -c --argjson f "$f" 'select(.type=="flow" and .saddr==$f.requester and .dqpn==$f.dqpn)' "$CAP/lossy.out")
		echo "flow $i: rocelat $(jq -c '{saddr,dqpn,samples,min,max,mean,untimed,timeouts}' <<< "$r")" >&2
		jq -e -n --argjson f "$f" --argjson r "$r" '
			($f.latencies_ns | add) as $sum |
			$r.untimed == $f.untimed and
			$r.min == ($f.latencies_ns | min) and $r.max == ($f.latencies_ns | max) and
			(($r.mean * $r.samples) - $sum | fabs) < 1' > /dev/null
	done
	# the B->A directions were paired only through A->B: no more
	# pairings learned than QP pairs
	[ "$(jq -r 'select(.type=="counters") | .qps_paired' "$CAP/lossy.out")" -eq 4 ]
	# the request of the connection torn down is a timeout by the
	# capture's clock, not pending at the end
	[ "$(jq -r 'select(.type=="counters") | .pending' "$CAP/lossy.out")" -eq 0 ]
	# untimed in the text report and the Prometheus file too
	run -0 "$RL" -r "$CAP/lossy.pcap" --prom "$BATS_TEST_TMPDIR/rl.prom"
	grep -Eq '(^| )untimed=2( |$)' <<< "$output"
	grep -qx 'agentxdp_rocelat_untimed_total 2' "$BATS_TEST_TMPDIR/rl.prom"
}

@test "100000 QPs, each with one request outstanding: bounded by --max-flows (default and 1000), the table kept, every QP left out counted" {
	local c max table wait cover
	for max in default 1000; do
		if [ $max = default ]; then
			run -0 --separate-stderr "$RL" -r "$CAP/many_qps.pcap" -j
			max=11264
		else
			run -0 --separate-stderr "$RL" -r "$CAP/many_qps.pcap" -j --max-flows $max
		fi
		c=$(jq -c 'select(.type=="counters")' <<< "$output")
		echo "max $max: $c" >&2
		# the table: whole sets of 16 (1000: 992 entries)
		table=$((max / 16 * 16))
		[ "$(jq -r .requests <<< "$c")" -eq 100000 ]
		# the capture spans 1 s, --timeout: no flow goes idle, none is
		# pushed out; the first ones fill the table, the rest are left
		# out, each request of them counted, the QPs as far as their
		# count holds (twice the table, at least 16,384), the rest of
		# them one request each; the --max-flows named covers the
		# table's and the counted QPs with a quarter to spare, a power
		# of two
		wait=$((2 * max > 16384 ? 2 * max : 16384))
		cover=16
		while [ $cover -lt $((table + wait + (table + wait) / 4)) ] || [ $cover -le $max ]; do
			cover=$((cover * 2))
		done
		[ "$(jq -r .flows_started <<< "$c")" -eq $table ]
		[ "$(jq -r .flows <<< "$c")" -eq $table ]
		[ "$(jq -r .tracked <<< "$c")" -eq $table ]
		[ "$(jq -r .pending <<< "$c")" -eq $table ]
		[ "$(jq -r .untracked_requests <<< "$c")" -eq $((100000 - table)) ]
		[ "$(jq -r .untracked_qps <<< "$c")" -eq $wait ]
		[ "$(jq -r .untracked_uncounted <<< "$c")" -eq $((100000 - table - wait)) ]
		[ "$stderr" = "WARNING: at least $wait QPs untracked, $((100000 - table)) of their requests not timed: the flow table (--max-flows $max) was full of active flows; --max-flows $cover would cover them" ]
		# one address pair keeps 64 pairing candidates (PAIR_QPS),
		# none of them ever paired here: the others are counted as
		# they go
		[ "$(jq -r .pair_candidates_dropped <<< "$c")" -eq $((table - 64)) ]
	done
	run -1 "$RL" -r "$CAP/many_qps.pcap" --max-flows 5
	[[ "$output" == *"invalid --max-flows: 5"* ]]
}

@test "60 QPs of two hosts all waiting for their first answer at once: each paired, every latency exact" {
	local out c
	out=$BATS_TEST_TMPDIR/out
	"$RL" -r "$CAP/burst_qps.pcap" -F -j --nanoseconds > "$out"
	# every flow of the truth is a row with its two samples, exact
	jq -e -n --slurpfile t "$CAP/burst_qps.json" --slurpfile o "$out" '
		[$o[] | select(.type == "flow")] as $rows |
		($t[0].flows | length) == 60 and ($rows | length) == 60 and
		all($t[0].flows[]; . as $f | [$rows[] | select(.dqpn == $f.dqpn and
			.req_qpn == $f.req_qpn and .samples == 2 and
			.min == ($f.latencies_ns | min) and .max == ($f.latencies_ns | max))] |
			length == 1)' > /dev/null
	c=$(jq -c 'select(.type=="counters")' "$out")
	echo "$c" >&2
	jq -e '.samples == 120 and .qps_paired == 60 and .timeouts == 0 and
		.pending == 0 and .answers_held == 0 and .ambiguous_answers == 0 and
		.pair_candidates_dropped == 0' <<< "$c" > /dev/null
}

@test "answers and no request (a capture of one direction): nothing timed, said in a WARNING" {
	local n
	tshark -r "$CAP/connectx.pcap" -Y "infiniband.bth.opcode == 17 || infiniband.bth.opcode == 18" \
		-w "$BATS_TEST_TMPDIR/acks.pcap" 2>/dev/null
	n=$(ts_count connectx 'infiniband.bth.opcode == 17 || infiniband.bth.opcode == 18')
	[ "$n" -gt 100 ]
	run -0 "$RL" -r "$BATS_TEST_TMPDIR/acks.pcap"
	echo "$output" | tail -3 >&2
	[[ $output == *"no latency samples"* ]]
	[ "$(grep -c "^WARNING: $n answers and no request seen: nothing to time (the requests go where rocelat does not look: --no-egress, the other port of a mirror)$" <<< "$output")" -eq 1 ]
}

@test "80 such QPs: the 16 past 64 candidates paired by their port, every latency exact" {
	local c
	run -0 --separate-stderr "$RL" -r "$CAP/burst_qps_over.pcap" -F -j --nanoseconds
	c=$(jq -c 'select(.type=="counters")' <<< "$output")
	echo "$c" >&2
	# the oldest 16 lost their place in the candidate list (counted),
	# but answers come from the port their requests left (as rxe's do):
	# all 80 paired through the port index and timed, 2 samples each
	jq -e '.pair_candidates_dropped == 16 and .qps_paired == 80 and
		.qps_paired_by_port == 80 and .samples == 160 and
		.answers_held == 0 and .pending == 0 and .timeouts == 0' <<< "$c" > /dev/null
	# no sample is off the truth: 50 us, or 400 + i us
	jq -e -s '[.[] | select(.type == "flow")] | length == 80 and
		all(.samples == 2 and .min == 50000 and .max >= 400000 and .max < 700000)' <<< "$output" > /dev/null
	[ -z "$stderr" ]
}

@test "2048 QPs between random hosts: none left out of a table twice as large (three sets a flow), at most 10% of one as large, all counted" {
	local c max
	for max in 4096 2048; do
		run -0 --separate-stderr "$RL" -r "$CAP/spread_qps.pcap" -j --max-flows $max
		c=$(jq -c 'select(.type=="counters")' <<< "$output")
		echo "max $max: $c" >&2
		# all active (one request each, within --timeout): a QP whose
		# two sets are full is left out, none pushed out
		[ "$(jq -r '.flows_started + .untracked_qps' <<< "$c")" -eq 2048 ]
		[ "$(jq -r .flows <<< "$c")" -eq "$(jq -r .flows_started <<< "$c")" ]
		[ "$(jq -r .untracked_requests <<< "$c")" -eq "$(jq -r .untracked_qps <<< "$c")" ]
		[ "$(jq -r .pending <<< "$c")" -eq "$(jq -r .flows <<< "$c")" ]
		if [ $max = 4096 ]; then
			[ "$(jq -r .untracked_qps <<< "$c")" -eq 0 ]
		else
			[ "$(jq -r .untracked_qps <<< "$c")" -le 204 ]
		fi
	done
}

@test "-r natively, --in-kernel and its bounded-loop build (kernels before 5.17): every capture reported byte for byte alike" {
	local f s n total=0 files=0
	for f in "$CAP"/*.pcap "$AX_BUILD/tests/decap.pcap"; do
		[ -e "$f" ] || continue
		s=$(basename "$f" .pcap)
		n=$(rl_bounded_same "$f" "$([ -e "$CAP/$s.out" ] && echo "$CAP/$s.out")")
		echo "$s: $n samples, the same report" >&2
		total=$((total + n)) files=$((files + 1))
	done
	# all of roce_captures.py's captures, and something timed in them
	[ "$files" -ge "$(ls "$CAP"/*.pcap | wc -l)" ]
	[ "$total" -gt 0 ]
}
