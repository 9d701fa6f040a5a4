#!/usr/bin/env bats
# rocelat on mirrored RoCE: what a collector behind a switch's remote
# mirror session receives. tests/lib/mirror_captures.py wraps the scapy-
# built scenarios of tests/lib/roce_captures.py (ConnectX-shaped QPs;
# faults: RNR, NAK + go-back-N, CE/CNP, lost READ responses, timeouts) in
# ERSPAN II, ERSPAN III, GRE/TEB, VXLAN and Geneve, and builds the mirror's
# own gray areas: two switches mirroring the same traffic, frames cut to
# 128 bytes, non-RoCE traffic in the tunnel, an ERSPAN version nobody
# knows, a switch clock that wraps or ticks too coarsely. Ground truth from the builder, tshark's ERSPAN/GRE/VXLAN/Geneve/
# InfiniBand dissectors as the second opinion on frames, sessions and
# RoCE packet counts. Last, live: RoCE from rocegen over a real VXLAN
# overlay between two namespaces, rocelat --decap on the underlay and a
# plain rocelat on the vxlan device, both against rocegen's own summary;
# and rocegen's traffic mirrored by tc (mirred) into VXLAN towards
# collector namespaces, rocelat --mirror on a collector's NIC and on a
# vxlan device there, against rocelat on the mirrored veth and rocegen
# (tests/vm/mirror.bats does the same with rxe, ERSPAN II/III and VXLAN).

bats_require_minimum_version 1.5.0
load ../lib/common
load ../lib/mirror
load ../lib/rocelat_bounded

RL=$AX_BUILD/rocelat
GEN=$AX_BUILD/rocegen
PY=/usr/bin/python3
WAIT=15

# the captures whose switch clock (ERSPAN III, 100 ns or IEEE 1588) times them
SWITCH_CLOCKED="connectx_erspan3 faults_erspan3 faults_erspan3_1588_v6 connectx_erspan3_wrap"

setup_file() {
	ax_file_needs "$RL" tshark jq || return 0
	ax_file_needs_captures "user space, BPF_PROG_TEST_RUN and a VXLAN on a veth" || return 0
	export CAP=$BATS_FILE_TMPDIR/cap
	mkdir -p "$CAP"
	"$PY" "$AX_ROOT/tests/lib/mirror_captures.py" "$CAP" 2> "$CAP/mirror_captures.err"
	local f s
	for f in "$CAP"/*.json; do
		s=$(basename "$f" .json)
		# a failing run leaves its error for the test to show, not a
		# failed setup_file for every test
		"$RL" -r "$CAP/$s.pcap" -F -j --nanoseconds > "$CAP/$s.out" 2> "$CAP/$s.err" ||
			echo "rocelat exit $?" >> "$CAP/$s.err"
		jq -e .kind "$f" > /dev/null || continue
		# tshark once per capture: protocols, BTH opcode and PSN, session
		# IDs (span ID, VNIs, GRE key), source addresses (outer first)
		tshark -r "$CAP/$s.pcap" -T fields -E separator='|' -E occurrence=a -E aggregator=, \
			-e frame.protocols -e infiniband.bth.opcode -e infiniband.bth.psn \
			-e erspan.spanid -e vxlan.vni -e geneve.vni -e gre.key \
			-e ip.src -e ipv6.src > "$CAP/$s.ts" 2>/dev/null
	done
	for s in $SWITCH_CLOCKED; do
		"$RL" -r "$CAP/$s.pcap" -F -j --nanoseconds --mirror-time=arrival > "$CAP/$s.arrival.out" \
			2> "$CAP/$s.arrival.err" || echo "rocelat exit $?" >> "$CAP/$s.arrival.err"
	done
}

setup() {
	ax_file_skip
}

teardown() {
	mirror_cleanup
	ax_cleanup
}

# rocelat's output for capture S (OUT: another run's suffix)
out_of() {
	echo "$CAP/$1${2:+.$2}.out"
}

# counter FILE NAME: rocelat's (last) counters object's NAME
counter() {
	jq -r "select(.type==\"counters\") | .$2" "$1" | tail -1
}

# every total of the truth (the inner scenario's, times the number of
# mirrors, and the decap counters) equals rocelat's counter, exactly
check_totals() {
	local s=$1 out k want got bad=0
	out=$(out_of "$s" "${2:-}")
	cat "${out%.out}.err" >&2
	[ -s "$out" ] || { echo "$s: no output" >&2; return 1; }
	for k in $(jq -r '.totals | keys[]' "$CAP/$s.json"); do
		want=$(jq -r ".totals.$k" "$CAP/$s.json")
		got=$(counter "$out" "$k")
		echo "$s total $k: want $want got $got" >&2
		[ "$got" = "$want" ] || bad=1
	done
	return $bad
}

# per flow of the truth: exactly one flow of rocelat's under the same
# requester, responder, responder QPN and mirror session, with the same
# counts and clock. MODE says how its latencies must match:
#   exact   - p50/p90/p99 within 3% (the histogram), max exact: frames
#             arrived at their true time plus a constant path delay
#   switch  - p50/p99 within 3% of the truth (the histogram, as exact's)
#             plus one 100 ns tick (the switch clock's granularity), max
#             within the tick
#   counts  - not compared (the arrival clock with queueing jitter)
check_flows() {
	local s=$1 mode=$2 out=${3:-$(out_of "$1")} clock=${4:-} n i f r
	n=$(jq '.flows | length' "$CAP/$s.json")
	[ "$n" -gt 0 ]
	for ((i = 0; i < n; i++)); do
		f=$(jq -c ".flows[$i]" "$CAP/$s.json")
		[ -z "$clock" ] || f=$(jq -c --arg c "$clock" '.clock = $c' <<< "$f")
		r=$(jq -c --argjson f "$f" 'select(.type=="flow" and .saddr==$f.requester and
			.daddr==$f.responder and .dqpn==$f.dqpn and .session==$f.session)' "$out")
		echo "$s flow $i: truth $f" >&2
		echo "$s flow $i: rocelat $(jq -c 'del(.buckets)' <<< "$r")" >&2
		[ -n "$r" ] && [ "$(wc -l <<< "$r")" -eq 1 ]
		jq -e -n --argjson f "$f" --argjson r "$r" --arg mode "$mode" '
			def near(a; b): (a - b | fabs) <= 0.03 * b;
			def tick(a; b): (a - b | fabs) <= 0.03 * b + 100;
			$r.req_qpn == $f.req_qpn and $r.sport == $f.sport and
			$r.clock == $f.clock and
			$r.samples == $f.samples and $r.retransmits == $f.retransmits and
			$r.naks == $f.naks and $r.rnr_naks == $f.rnr_naks and
			$r.cnps == $f.cnps and $r.ecn_ce == $f.ecn_ce and
			$r.responses_missing == $f.responses_missing and
			$r.timeouts == ($f.timeouts // 0) and
			($f.samples == 0 or $mode == "counts" or
			 ($mode == "exact" and near($r.p50; $f.p50) and near($r.p90; $f.p90) and
			  near($r.p99; $f.p99) and $r.max == $f.max) or
			 ($mode == "switch" and tick($r.p50; $f.p50) and tick($r.p99; $f.p99) and
			  ($r.max - $f.max | fabs) <= 100))' > /dev/null
	done
}

# count of tshark's lines (frames) of capture S matching an awk condition
# on $1 protocols, $2 BTH opcode, $3 PSN, $4..$7 span ID, VXLAN VNI,
# Geneve VNI, GRE key, $8/$9 IPv4/IPv6 sources
ts_count() {
	awk -F'|' "$2 { n++ } END { print n + 0 }" "$CAP/$1.ts"
}

# second opinion: tshark finds every frame in its tunnel, the sessions of
# the truth and no other, and as many RoCE requests, answers and CNPs
# (whole BTH: a PSN) as rocelat counted
check_tshark() {
	local s=$1 out kind tok ids want
	out=$(out_of "$s")
	kind=$(jq -r .kind "$CAP/$s.json")
	case $kind in erspan*|gre) tok=gre ;; *) tok=$kind ;; esac
	[ "$(ts_count "$s" "\$1 ~ /:$tok:/")" -eq "$(jq .frames "$CAP/$s.json")" ]
	case $kind in
	erspan*) ids='$4' ;; vxlan) ids='$5' ;; geneve) ids='$6' ;; gre) ids='$7' ;;
	esac
	# span IDs and VXLAN VNIs print in decimal, Geneve VNIs and GRE keys in hex
	[ "$(awk -F'|' "$ids != \"\" { print $ids }" "$CAP/$s.ts" | sort -u |
		xargs -r printf '%d\n' | sort -n | tr '\n' ' ')" = \
	  "$(jq -r '[.flows[].session.id] | unique | .[]' "$CAP/$s.json" | sort -n | tr '\n' ' ')" ]
	# the outer source: the first address of the frame
	[ "$(awk -F'|' '{ split($1 ~ /^eth:ethertype:ipv6:/ ? $9 : $8, a, ","); print a[1] }' "$CAP/$s.ts" |
		sort -u | tr '\n' ' ')" = \
	  "$(jq -r '[.flows[].session.src] | unique | .[]' "$CAP/$s.json" | sort | tr '\n' ' ')" ]
	[ "$(ts_count "$s" '$3 != "" && ($2 <= 12 || $2 == 19 || $2 == 20)')" -eq "$(counter "$out" requests)" ]
	[ "$(ts_count "$s" '$3 != "" && ($2 == 17 || $2 == 18)')" -eq "$(counter "$out" acks)" ]
	[ "$(ts_count "$s" '$3 != "" && $2 >= 13 && $2 <= 16')" -eq "$(counter "$out" read_responses)" ]
	[ "$(ts_count "$s" '$3 != "" && $2 == 129')" -eq "$(counter "$out" cnps)" ]
}

# capture S: totals, flows, tshark
check_capture() {
	check_totals "$1"
	check_flows "$1" "$2"
	check_tshark "$1"
}

@test "ERSPAN II: the inner truth's totals and flows, flows under their session, arrival clock" {
	check_capture connectx_erspan2 exact
	check_capture faults_erspan2 exact
	[ "$(counter "$(out_of connectx_erspan2)" qps_paired)" -eq 4 ]
}

@test "ERSPAN III (100 ns timestamps, 0-200 us queueing on the way): switch clock, p50/p99 within 3%" {
	check_capture connectx_erspan3 switch
	check_capture faults_erspan3 switch
}

@test "ERSPAN III (100 ns and IEEE 1588) --mirror-time=arrival: the same counts on the arrival clock, and the queueing shows" {
	local s within total
	for s in $SWITCH_CLOCKED; do
		check_totals "$s" arrival
		check_flows "$s" counts "$(out_of "$s" arrival)" arrival
		# the switch clock gave every flow's p99 back within 3%; the
		# collector's clock must not: 0-200 us of queueing per frame puts
		# the tail of every flow off (by 20% to 8x here)
		within=$(jq -s --slurpfile t "$CAP/$s.json" '
			[.[] | select(.type=="flow" and .samples > 0) as $r |
			 $t[0].flows[] | select(.requester==$r.saddr and .dqpn==$r.dqpn) |
			 select((($r.p99 - .p99) | fabs) <= 0.03 * .p99 + 100)] | length' "$(out_of "$s" arrival)")
		total=$(jq '[.flows[] | select(.samples > 0)] | length' "$CAP/$s.json")
		echo "$s arrival clock: $within of $total flows' p99 within 3% of the truth" >&2
		[ "$within" -eq 0 ]
		# and it is the arrival clock that says so, not a missing flow
		[ "$(jq -s '[.[] | select(.type=="flow" and .samples > 0)] | length' "$(out_of "$s" arrival)")" -eq "$total" ]
	done
}

@test "ERSPAN III over IPv6 with IEEE 1588 timestamps (32 bits of ns): switch clock" {
	check_capture faults_erspan3_1588_v6 switch
	[ "$(ts_count faults_erspan3_1588_v6 '$1 ~ /^eth:ethertype:ipv6:gre:erspan:/')" -eq \
	  "$(jq .frames "$CAP/faults_erspan3_1588_v6.json")" ]
}

@test "ERSPAN III: the switch's 32-bit clock wraps mid-capture, the latencies do not" {
	check_capture connectx_erspan3_wrap switch
	# the wrap is in the capture (tshark's reading of the timestamps)
	[ "$(tshark -r "$CAP/connectx_erspan3_wrap.pcap" -T fields -e erspan.timestamp 2>/dev/null |
		awk 'NR > 1 && $1 < prev { w++ } { prev = $1 } END { print w + 0 }')" -eq 1 ]
}

@test "ERSPAN III with 100 us timestamps: too coarse, the arrival clock times it (auto)" {
	check_capture faults_erspan3_100us counts
	[ "$(jq -r 'select(.type=="flow") | .clock' "$(out_of faults_erspan3_100us)" | sort -u)" = arrival ]
}

@test "GRE/TEB with a key: the inner truth, session id = the key" {
	check_capture connectx_gre exact
	check_capture faults_gre exact
}

@test "VXLAN: the inner truth, session id = the VNI" {
	check_capture connectx_vxlan exact
	check_capture faults_vxlan exact
}

@test "Geneve: the inner truth, session id = the VNI" {
	check_capture connectx_geneve exact
	check_capture faults_geneve exact
}

@test "ERSPAN II over IPv6, IPv6 in VLAN 301 inside: the inner truth" {
	check_capture faults6_erspan2_v6 exact
	[ "$(ts_count faults6_erspan2_v6 '$1 ~ /^eth:ethertype:ipv6:gre:erspan:eth:ethertype:vlan:ethertype:ipv6:udp:infiniband/')" -eq \
	  "$(jq .frames "$CAP/faults6_erspan2_v6.json")" ]
}

@test "two switches mirror the same traffic: twice the flows, one per session, no retransmits or duplicates" {
	local s=connectx_two_mirrors out
	out=$(out_of $s)
	check_capture $s exact
	[ "$(jq -s '[.[] | select(.type=="flow")] | length' "$out")" -eq 8 ]
	[ "$(jq -c 'select(.type=="flow") | .session' "$out" | sort | uniq -c | awk '{ print $1 }' | tr '\n' ' ')" = "4 4 " ]
	[ "$(counter "$out" retransmits)" -eq 0 ]
	[ "$(counter "$out" duplicates)" -eq 0 ]
	[ "$(counter "$out" karn_discarded)" -eq 0 ]
}

@test "frames cut to 128 bytes by the switch: the same counts, truncated counts them, cut inside the BTH are parse errors" {
	check_capture connectx_trunc exact
	check_capture faults_trunc exact
	# what truncated must equal: tshark's frames whose inner frame was cut
	# (the ERSPAN T bit), the truth's count
	[ "$(counter "$(out_of connectx_trunc)" truncated)" -eq \
	  "$(tshark -r "$CAP/connectx_trunc.pcap" -Y 'erspan.truncated == 1' -T fields -e frame.number 2>/dev/null | wc -l)" ]
	[ "$(counter "$(out_of connectx_trunc)" truncated)" -gt 0 ]
	[ "$(counter "$(out_of faults_trunc)" truncated)" -gt 0 ]
}

@test "non-RoCE traffic in the tunnel (TCP, ARP, DNS): tunnel_not_roce exact, RoCE counts untouched" {
	check_capture faults_not_roce exact
	[ "$(counter "$(out_of faults_not_roce)" tunnel_not_roce)" -eq 60 ]
}

@test "an unknown ERSPAN version: tunnel_unknown exact, nothing read behind it" {
	check_capture connectx_unknown exact
	[ "$(counter "$(out_of connectx_unknown)" tunnel_unknown)" -eq \
	  "$(( $(jq .frames "$CAP/connectx_unknown.json") - $(jq .frames "$CAP/connectx_erspan2.json") ))" ]
	[ "$(counter "$(out_of connectx_unknown)" retransmits)" -eq 0 ]
}

@test "no tunnel: no session, arrival clock, decap counters zero" {
	local s out k
	for s in connectx faults; do
		out=$(out_of $s)
		[ "$(jq -r 'select(.type=="flow") | .session // "none"' "$out" | sort -u)" = none ]
		[ "$(jq -r 'select(.type=="flow") | .clock' "$out" | sort -u)" = arrival ]
		for k in tunnel_not_roce tunnel_unknown truncated parse_errors; do
			[ "$(counter "$out" $k)" = 0 ]
		done
	done
}

# value of key=value in rocegen's summary line for ROLE
gen_kv() {
	sed -n "s/^rocegen: role=$1 .*[ ]$2=\([^ ]*\).*/\1/p" "$3" | head -1
}

# rocelat in namespace a, logged to T/NAME.out/.out.err, until it is
# attached (-j: the banner on stderr); its PID in RL_PID_NAME
start_rocelat() {
	local name=$1
	shift
	ax_tool_start --err "RL_PID_$name" "$T/$name.out" "$WAIT" Tracing ip netns exec "${P}a" "$RL" "$@"
}

# samples equal the generator's completed messages less those whose
# answer is ambiguous (retransmitted: Karn), requests and ACKs its sent
# and answers
check_gen() {
	local f=$1 samples completed retx
	samples=$(counter "$f" samples)
	completed=$(gen_kv requester completed "$T/req.out")
	retx=$(gen_kv requester retransmits "$T/req.out")
	echo "$f: samples=$samples completed=$completed retransmits=$retx requests=$(counter "$f" requests) acks=$(counter "$f" acks)" >&2
	[ "$(counter "$f" requests)" -eq $(( $(gen_kv requester sent "$T/req.out") + retx )) ]
	[ "$(counter "$f" acks)" -eq "$(gen_kv requester acks "$T/req.out")" ]
	[ "$(counter "$f" retransmits)" -eq "$retx" ]
	if [ "$retx" -eq 0 ]; then
		[ "$samples" -eq "$completed" ]
	else
		[ "$samples" -ge $(( completed - retx )) ] && [ "$samples" -le "$completed" ]
	fi
}

# live: two namespaces, a veth underlay, a vxlan device in each over it
@test "live VXLAN overlay: --decap on the underlay veth and plain rocelat on the vxlan device count what rocegen did" {
	[ -x "$GEN" ] || skip "build first: make"
	P=axm$BATS_TEST_NUMBER
	T=$BATS_TEST_TMPDIR
	local ua=10.78.0.1 ub=10.78.0.2 oa=10.79.0.1 ob=10.79.0.2 x
	# underlay: the veth pair; the namespaces (and with them the vxlan
	# devices) go in teardown, also when this fails
	ax_netns_pair "$P" "$ua/24" "$ub/24"
	for x in "a $ua $ub $oa" "b $ub $ua $ob"; do
		set -- $x
		ip -n "$P$1" link add vx42 type vxlan id 42 local "$2" remote "$3" dstport 4789 dev "$P"v"$1"
		ip -n "$P$1" addr add "$4/24" dev vx42
		ip -n "$P$1" link set vx42 up
	done
	ax_link_ready "${P}a" vx42 && ax_link_ready "${P}b" vx42

	ax_bg ip netns exec "${P}b" "$GEN" responder --timeout 60 --delay-us 200 > "$T/resp.out" 2>&1
	local resp=$AX_LAST_PID
	ax_wait_udp "${P}b" 4791
	# the underlay: XDP sees the answers in VXLAN, tc egress the requests
	start_rocelat under -i "${P}va" --decap -j -F
	# the overlay: the same traffic without its tunnel (generic XDP: a
	# vxlan device has no driver mode)
	start_rocelat over -i vx42 --skb-mode -j -F
	ip netns exec "${P}a" "$GEN" requester -d "$ob" -q -n 200 -f 2 --ack-timeout-us 500000 > "$T/req.out"
	cat "$T/req.out" >&2
	ax_tool_stop RL_PID_under
	ax_tool_stop RL_PID_over
	ax_stop "$resp" INT
	[ "$(gen_kv requester status "$T/req.out")" = ok ]

	# the vxlan device first: if it miscounts, the overlay itself is off
	check_gen "$T/over.out"
	check_gen "$T/under.out"
	# both observers counted the same
	[ "$(counter "$T/under.out" samples)" -eq "$(counter "$T/over.out" samples)" ]
	# the overlay's flows, each under the VXLAN session (VNI 42) on the
	# underlay, with no session on the vxlan device itself
	[ "$(jq -r 'select(.type=="flow") | "\(.saddr) \(.daddr)"' "$T/under.out" | sort -u)" = "$oa $ob" ]
	[ "$(jq -r 'select(.type=="flow") | "\(.session.kind) \(.session.id)"' "$T/under.out" | sort -u)" = "vxlan 42" ]
	jq -e -s --arg a "$ua" --arg b "$ub" '[.[] | select(.type=="flow") | .session.src] |
		length == 2 and all(. == $a or . == $b)' "$T/under.out" > /dev/null
	[ "$(jq -r 'select(.type=="flow") | .session // "none"' "$T/over.out" | sort -u)" = none ]
	[ "$(counter "$T/over.out" tunnel_not_roce)" = 0 ]
}

# live: rocegen's traffic on a veth, mirrored by tc into VXLAN (what a
# switch's remote mirror session delivers) to two collectors: one reads
# the tunnel on its NIC, one has a vxlan device that decapsulates
@test "live mirror: tc mirred copies a veth into VXLAN; rocelat --mirror on a collector's NIC and on its vxlan device count what rocelat on the veth and rocegen did" {
	[ -x "$GEN" ] || skip "build first: make"
	P=axn$BATS_TEST_NUMBER
	T=$BATS_TEST_TMPDIR
	local ua=10.81.0.1 ub=10.81.0.2 k name
	ax_netns_pair "$P" "$ua/24" "$ub/24"
	# act_mirred: present in the host's 6.18; cls_matchall is not, and
	# mirror_session falls back to u32's catch-all
	ip netns exec "${P}a" tc actions add action mirred egress mirror dev lo index 77 2>"$T/mirred.err" ||
		skip "tc mirred (act_mirred) not available on $(uname -r): $(cat "$T/mirred.err"); tests/vm/mirror.bats covers live mirrors"
	ip netns exec "${P}a" tc actions del action mirred index 77
	# collector c: the tunnel read on its NIC; d: a vxlan device in it
	mirror_collector "${P}a" "${P}c" 10.82.0.1 10.82.0.2
	mirror_tunnel "${P}a" vxlan vxc 10.82.0.1 10.82.0.2 4242
	mirror_collector "${P}a" "${P}d" 10.83.0.1 10.83.0.2
	mirror_tunnel "${P}a" vxlan vxd 10.83.0.1 10.83.0.2 4243
	mirror_tunnel "${P}d" vxlan tun0 10.83.0.2 10.83.0.1 4243 rx
	mirror_session "${P}a" "${P}va" vxc vxd

	ax_bg ip netns exec "${P}b" "$GEN" responder --timeout 60 --delay-us 200 > "$T/resp.out" 2>&1
	local resp=$AX_LAST_PID
	ax_wait_udp "${P}b" 4791
	mirror_start nic "${P}c" "${P}cc" --mirror -j -F
	mirror_start dev "${P}d" tun0 --mirror --skb-mode -j -F
	# and on d's NIC: the session read raw beside the device
	mirror_start dnic "${P}d" "${P}dc" --mirror -j -F
	mirror_start veth "${P}a" "${P}va" -j -F
	mirror_wait nic dev dnic veth
	# every 5th message resent once: retransmits and Karn discards to
	# count. 50 us after the original, well before its ACK (the responder
	# waits 200 us): which of the resend and the ACK comes first must not
	# depend on where the observer sits
	ip netns exec "${P}a" "$GEN" requester -d "$ub" -q -n 200 -f 2 --retransmit-every 5 \
		--retransmit-pause-us 50 --ack-timeout-us 500000 > "$T/req.out"
	cat "$T/req.out" >&2
	mirror_drained "${P}a" vxc "${P}c" "${P}cc"
	mirror_drained "${P}a" vxd "${P}d" "${P}dc" tun0
	mirror_session_end "${P}a" "${P}va"
	mirror_stop nic dev dnic veth
	ax_stop "$resp" INT
	[ "$(gen_kv requester status "$T/req.out")" = ok ]
	for name in veth nic dnic dev; do
		mirror_flows "$T/$name.out" >&2
	done

	# rocegen's truth first, then the collectors equal the veth exactly
	check_gen "$T/veth.out"
	[ "$(counter "$T/veth.out" retransmits)" -gt 0 ]
	for name in nic dnic dev; do
		check_gen "$T/$name.out"
		for k in roce_packets requests tracked acks retransmits \
			timeouts unmatched_answers qps_paired flows duplicates; do
			[ "$(counter "$T/$name.out" $k)" = "$(counter "$T/veth.out" $k)" ] || {
				echo "$name: $k $(counter "$T/$name.out" $k), veth $(counter "$T/veth.out" $k)" >&2
				return 1
			}
		done
		# should a stalled requester resend right as the ACK comes
		# (the 150 us margin above is no promise under load), which
		# of the two each observer handles first decides between a
		# sample and a Karn discard: exact as a sum, each bounded by
		# the resends
		local vs vk ms mk rx
		vs=$(counter "$T/veth.out" samples) vk=$(counter "$T/veth.out" karn_discarded)
		ms=$(counter "$T/$name.out" samples) mk=$(counter "$T/$name.out" karn_discarded)
		rx=$(counter "$T/veth.out" retransmits)
		[ $((ms + mk)) -eq $((vs + vk)) ]
		[ $((ms - vs)) -le "$rx" ] && [ $((vs - ms)) -le "$rx" ]
		[ "$(counter "$T/$name.out" pending)" -le "$rx" ]
		[ "$(counter "$T/$name.out" parse_errors)" -eq 0 ]
		[ "$(counter "$T/$name.out" tunnel_unknown)" -eq 0 ]
		# per flow: the same flows with the same counts, latency within
		# 50% + 300 us of the veth's (both copies of a request and its
		# answer take the same mirror path)
		jq -e -n --slurpfile v "$T/veth.out" --slurpfile m "$T/$name.out" '
			def flows(x): [x[] | select(.type=="flow")] | sort_by(.dqpn);
			flows($v) as $fv | flows($m) as $fm |
			($fv | length) == 2 and ($fm | length) == 2 and
			([range(2) as $i | $fv[$i] as $a | $fm[$i] as $b |
				$a.saddr == $b.saddr and $a.daddr == $b.daddr and $a.dqpn == $b.dqpn and
				$a.req_qpn == $b.req_qpn and $a.sport == $b.sport and
				(($a.samples - $b.samples) | fabs) <= $a.retransmits and
				$a.retransmits == $b.retransmits and
				$a.naks == $b.naks and $a.timeouts == $b.timeouts and
				$b.kind == "rtt" and $b.clock == "arrival" and
				(($a.median - $b.median) | fabs) <= $a.median / 2 + 300] | all)' > /dev/null
	done
	# the session as built: VXLAN, the VNI, the mirror's outer source;
	# none where the kernel decapsulated
	[ "$(jq -c 'select(.type=="flow") | .session' "$T/nic.out" | sort -u)" = \
	  '{"kind":"vxlan","src":"10.82.0.1","id":4242}' ]
	[ "$(jq -c 'select(.type=="flow") | .session' "$T/dnic.out" | sort -u)" = \
	  '{"kind":"vxlan","src":"10.83.0.1","id":4243}' ]
	[ "$(jq -r 'select(.type=="flow") | .session // "none"' "$T/dev.out" | sort -u)" = none ]
	echo "# measured: medians veth $(jq -r 'select(.type=="flow") | .median' "$T/veth.out" | tr '\n' ' ')us, collector NIC $(jq -r 'select(.type=="flow") | .median' "$T/nic.out" | tr '\n' ' ')us, vxlan device $(jq -r 'select(.type=="flow") | .median' "$T/dev.out" | tr '\n' ' ')us" >&3
}

@test "-r natively, --in-kernel and its bounded-loop build (kernels before 5.17): every mirrored capture reported byte for byte alike" {
	local f s n total=0 files=0
	for f in "$CAP"/*.pcap; do
		s=$(basename "$f" .pcap)
		n=$(rl_bounded_same "$f" "$CAP/$s.out")
		echo "$s: $n samples, the same report" >&2
		total=$((total + n)) files=$((files + 1))
	done
	[ "$files" -gt 0 ]
	[ "$total" -gt 0 ]
}
