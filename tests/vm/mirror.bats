#!/usr/bin/env bats
# rocelat --mirror on live mirror sessions of real rdma_rxe traffic. Runs
# inside the Soft-RoCE VM (tests/vm/run-suites; rdma_rxe, ip_gre/erspan,
# vxlan, act_mirred, cls_matchall) or as root on a host that has them.
#
# perftest runs over the Soft-RoCE test bed (scripts/testbed.sh: rxe-a on
# veth-a, rxe-b on veth-b; rxe works in the initial namespace only). tc
# mirrors veth-a's ingress and egress (matchall, mirred egress mirror)
# into tunnel devices: ERSPAN type II (ip's erspan_ver 1), type III
# (erspan_ver 2) and VXLAN, each towards a collector namespace behind a
# veth of its own:
#   - rocelat --mirror on the collector's veth reads the session as it
#     arrives (XDP, before any decapsulation), as on a collector NIC
#     behind a switch's remote mirror; one collector per test has no
#     tunnel device at all;
#   - another collector has an erspan/vxlan device the kernel
#     decapsulates into, and a second rocelat --mirror runs on that
#     device (reader NAME-dev).
# Ground truth: a plain rocelat on veth-a itself (XDP ingress + tc egress)
# in the same run, and perftest's iterations. Every RoCE packet crosses
# veth-a once and is mirrored once, so the collectors' counts must equal
# veth-a's exactly: requests, answers, samples, retransmits (rxe's timer
# fires now and then even on a clean link), NAKs, per flow and in total.
# One difference is by design: on veth-a a request of rxe-b arrives on
# XDP and rxe-a's ACK leaves on tc, a "turnaround" flow; on a mirror port
# both arrive as ingress, so the collector times it as a round trip
# ("rtt"): veth-a's turnaround_samples are round-trip samples there.
#
# Latency: the collector times a request from its mirrored copy's arrival
# to its answer's copy's arrival; veth-a's rocelat from tc egress (where
# the mirror copies too, a filter later) or from XDP, which runs before tc
# ingress makes the mirror's copy: a frame goes up the stack after the
# veth's whole receive batch went through XDP, and behind the frames
# ahead of it in that batch. So the mirror's clock is late by that wait d
# on frames arriving at veth-a, and the two flows move opposite ways:
#   - rxe-a's requests (leaving veth-a; their answers arrive): the mirror
#     times d longer. Measured d: 8-50 us under write_bw and read_lat
#     (medians of 170-400 us); under send_lat 158-186 us (207 -> 365,
#     252 -> 438 us): rxe-b's application posts its SEND as soon as it
#     sees the completion, before rxe-b's ACK leaves, so the ACK arrives
#     behind the SEND and waits while rxe-a handles it, one turnaround
#     of rxe-a. The tests allow -50% - 200 us .. +50% + 200 us + 2d, d the
#     larger of 100 us and veth-a's median turnaround where rxe-a answers
#     (the 100 us for the copies' own way to the collector: mirred,
#     encapsulation, a veth, XDP);
#   - rxe-b's requests (arriving; veth-a's rocelat times rxe-a's
#     turnaround from XDP): the mirror times d shorter, and d is long here
#     (the SEND comes in one batch behind the ACK before it, and waits for
#     that to go up the stack first): 120-180 us of 140-200 us. The tests
#     allow the mirror's median from 0 up to veth-a's + 100 us.
# A tcpdump capture of veth-a is no better reference: its taps sit before
# tc ingress but after the egress qdisc, which held frames 80-160 us
# after tc egress under emulation (capture medians 160-220 us where
# rocelat's were 220-260). On a tunnel device the collector times frames
# after its own receive path (here an RPS hop to one CPU, see
# mirror_collector; one emulated vCPU's wait held rxe-a's copies until
# just before their ACKs, a 9 us median against 360 us): counts only
# there, the medians are in the "# measured:" lines.
#
# ERSPAN III's timestamp: Linux's erspan v2 (include/net/erspan.h,
# erspan_build_header_v2() and erspan_get_timestamp(), read in 6.1 and
# current trees) writes ktime_get_real() in units of 100 us, truncated to
# 32 bits, with granularity bits Gra = 00 (100 us; "Here we only support
# 100 microseconds"); P = 1, FT = 0, the HW ID and direction given to ip.
# A 100 us tick is half a request -> ACK round here (medians of 170-280
# us), so a switch-clock latency would be 100, 200 or 300 us, nothing
# finer: rocelat does not use it (auto
# and even --mirror-time=switch time such flows by arrival, "clock":
# "arrival"; only 100 ns and IEEE 1588 timestamps give "switch"). The
# test asserts that, and checks the timestamps in the frames against the
# guest's clock: Gra 00 and a value between the real time before and
# after the traffic, in 100 us.
#
# Waits are for events: rocelat's banner, perftest's exit, and the
# collector NICs' and tunnel devices' receive counters reaching what the
# mirror's tunnel devices sent (no ARP or IPv6 on the collector links, so
# nothing else arrives there), before the collectors are stopped.

load ../lib/common
load ../lib/vm_rocelat
load ../lib/mirror

WAIT=90 # s: a rocelat, a perftest server, a drained mirror (TCG)

setup_file() {
	ax_file_needs --rxe rdma ib_send_lat ib_read_lat ib_write_bw tc tcpdump jq \
		timeout stdbuf bpftool "$RL" || return 0
	local m
	for m in ip_gre vxlan act_mirred cls_matchall; do
		modinfo "$m" >/dev/null 2>&1 || [ -d "/sys/module/$m" ] || {
			AX_FILE_SKIP="no $m for $(uname -r)"
			export AX_FILE_SKIP
			return 0
		}
	done
	# loaded before the test bed goes up: ip_gre makes its fallback
	# devices (gre0, gretap0, erspan0) in every namespace as it loads, and
	# made later they would be links the bed's down finds it did not have
	# before up (it then keeps its state, and every later suite's up fails)
	modprobe -a ip_gre vxlan act_mirred cls_matchall 2>/dev/null || true
	bed_up
}

teardown_file() {
	bed_down
}

setup() {
	rl_setup
	READERS=()
	TUN=()
	DRAIN=()
	declare -gA SUBNET=() R_NS=() R_IF=() R_ARGS=()
}

teardown() {
	ax_file_ran || return 0
	ax_tool_stop RL_PID || true
	mirror_cleanup
	ax_perf_stop
	ax_cleanup
}

# collector NAME N KIND ID [dev]: namespace axmNAME behind the veth pair
# axmNAMEs (here) / axmNAMEc (there), 10.77.N.1/.2, and the tunnel device
# axtNAME here (KIND, session ID or VNI ID) towards it. Its reader NAME:
# rocelat --mirror on axmNAMEc. With "dev" the collector also has a
# tunnel device tun0 that the kernel decapsulates into, and a second
# reader NAME-dev on it (generic XDP). On every collector one CPU takes
# the mirror in (RPS, see mirror_collector), as from a NIC queue.
collector() {
	local name=$1 n=$2 kind=$3 id=$4 ns=axm$1
	mirror_collector - "$ns" "10.77.$n.1" "10.77.$n.2"
	mirror_tunnel - "$kind" "axt$name" "10.77.$n.1" "10.77.$n.2" "$id"
	READERS+=("$name")
	R_NS[$name]=$ns
	R_IF[$name]=${ns}c
	R_ARGS[$name]=--mirror
	DRAIN+=("axt$name $ns ${ns}c")
	if [ "${5:-}" = dev ]; then
		mirror_tunnel "$ns" "$kind" tun0 "10.77.$n.2" "10.77.$n.1" "$id" rx
		READERS+=("$name-dev")
		R_NS[$name-dev]=$ns
		R_IF[$name-dev]=tun0
		R_ARGS[$name-dev]="--mirror --skb-mode"
		DRAIN[-1]+=" tun0"
	fi
	TUN+=("axt$name")
	SUBNET[$name]=$n
}

# mirrored TOOL ARGS...: every reader (rocelat R_ARGS -j -F), rocelat on
# veth-a, perftest TOOL ARGS over the bed, mirrored by veth-a's tc into
# every tunnel; each reader's report in $T/NAME.out, veth-a's in
# $T/veth.out
mirrored() {
	local name d t0=$SECONDS
	mirror_session - veth-a "${TUN[@]}"
	for name in "${READERS[@]}"; do
		# shellcheck disable=SC2086 # options are words
		mirror_start "$name" "${R_NS[$name]}" "${R_IF[$name]}" ${R_ARGS[$name]} \
			--max-flows 64 -j -F
	done
	start_rocelat "$T/veth.out" --max-flows 64 -j -F
	mirror_wait "${READERS[@]}"
	echo "readers up after $((SECONDS - t0)) s"
	perf_run perf "$@"
	echo "perftest done after $((SECONDS - t0)) s"
	for d in "${DRAIN[@]}"; do
		# shellcheck disable=SC2086 # TUN NS NIC [DEV]
		mirror_drained - $d
	done
	# the mirror's filters go before rocelat leaves veth-a (stop_rocelat
	# checks that no filter is left on its egress)
	mirror_session_end - veth-a
	stop_rocelat
	mirror_stop "${READERS[@]}"
	grep -v '"type":"hist"' "$T/veth.out"
	for name in "${READERS[@]}"; do
		echo "reader $name:"
		grep -v '"type":"hist"' "$T/$name.out"
	done
}

# same_counts NAME: collector NAME's totals and flows equal veth-a's
# (V, loaded once), exactly; its flows carry SESSION (a jq value:
# {"kind","src","id"} or null for a decapsulated device)
same_counts() {
	local name=$1 session=$2 k p d=100
	local -A m
	# a round trip's answer may wait behind one turnaround of rxe-a
	[ -z "${V[b.flows]:-}" ] || [ "${V[b.kind]}" != turnaround ] ||
		d=$(awk -v t="${V[b.median]}" 'BEGIN { print (t > 100 ? t : 100) }')
	rl_load "$T/$name.out" m
	for k in roce_packets requests tracked acks read_responses retransmits \
		nak_psn_seq_err nak_invalid_req nak_remote_access nak_remote_op nak_invalid_rd \
		nak_other rnr_naks cnps ecn_ce timeouts unmatched_answers responses_missing \
		qps_paired ambiguous_answers duplicates flows flows_started other_transport; do
		[ "${m[c.$k]}" = "${V[c.$k]}" ] || {
			echo "collector $name: $k ${m[c.$k]}, veth-a ${V[c.$k]}" >&2
			return 1
		}
	done
	# requests left unanswered at the end: a resend of rxe's timer and
	# the ACK of its original cross veth-a within microseconds (tc egress
	# and XDP, on two CPUs), and which of the two rocelat on veth-a
	# handles first decides whether the resend stays pending: once 1
	# there, 0 on every collector. Not exact, bounded by the resends.
	[ "${m[c.pending]}" -le "${V[c.retransmits]}" ]
	# the same crossing decides whether the original's answer is a
	# sample (ACK first) or a Karn discard (resend first), on veth-a and
	# again on the mirror's copies (mirrored from tc egress and tc
	# ingress, on two CPUs): their sum is exact, each bounded by the
	# resends. Every answer timed once (samples counts turnaround samples
	# too), veth-a's turnaround ones as round trips
	[ "$((m[c.samples] + m[c.karn_discarded]))" -eq "$((V[c.samples] + V[c.karn_discarded]))" ]
	holds "${m[c.samples]} - ${V[c.samples]} <= ${V[c.retransmits]} &&" \
		"${V[c.samples]} - ${m[c.samples]} <= ${V[c.retransmits]}"
	[ "${m[c.turnaround_samples]}" -eq 0 ]
	[ "${m[c.parse_errors]}" -eq 0 ]
	[ "${m[c.tunnel_unknown]}" -eq 0 ]
	[ "${m[c.truncated]}" -eq 0 ]
	[ "${m[c.no_switch_time]}" -eq 0 ]
	for p in a b; do
		[ "${m[$p.flows]:-0}" -eq "${V[$p.flows]:-0}" ]
		[ -n "${V[$p.flows]:-}" ] || continue
		for k in daddr dqpn req_qpn sport retransmits naks nak_psn_seq_err rnr_naks cnps \
			ecn_ce timeouts responses_missing; do
			[ "${m[$p.$k]:-}" = "${V[$p.$k]:-}" ] || {
				echo "collector $name flow $p: $k ${m[$p.$k]:-}, veth-a ${V[$p.$k]:-}" >&2
				return 1
			}
		done
		holds "${m[$p.samples]} - ${V[$p.samples]} <= ${V[$p.retransmits]} &&" \
			"${V[$p.samples]} - ${m[$p.samples]} <= ${V[$p.retransmits]}"
		[ "${m[$p.kind]}" = rtt ]
		[ "${m[$p.clock]}" = arrival ]
		MED[$name.$p]=${m[$p.median]}
		# on the collector's NIC, against veth-a's (see the top); a
		# device's timing is the collector's own
		if [[ $name == *-dev ]]; then
			:
		elif [ "${V[$p.kind]}" = rtt ]; then
			holds "${m[$p.median]} - ${V[$p.median]} <= ${V[$p.median]} / 2 + 200 + 2 * $d &&" \
				"${V[$p.median]} - ${m[$p.median]} <= ${V[$p.median]} / 2 + 200"
		else
			holds "${m[$p.median]} > 0 && ${m[$p.median]} <= ${V[$p.median]} + 200"
		fi
	done
	# the session as built: kind, ID (ERSPAN session ID or VNI), the
	# mirror's outer source; none on a device that decapsulated
	jq -e -s --argjson s "$session" '[.[] | select(.type=="flow")] |
		length > 0 and all(.session == $s)' "$T/$name.out" >/dev/null || {
		echo "collector $name: sessions $(jq -c 'select(.type=="flow") | .session' "$T/$name.out" | sort -u | tr '\n' ' '), want $session" >&2
		return 1
	}
	return 0
}

# session KIND ID NAME: the session rocelat must report for collector NAME
session() {
	echo "{\"kind\":\"$1\",\"src\":\"10.77.${SUBNET[$3]}.1\",\"id\":$2}"
}

# veth_truth N: veth-a's report into V, checked against perftest's N
# iterations; rxe-a's flow (and rxe-b's, both requesting in send_lat)
veth_truth() {
	rl_load "$T/veth.out" V
	[ "$(perf_result "$T/perf.cli" 2)" -eq "$1" ]
	[ "${V[c.parse_errors]}" -eq 0 ]
	[ "${V[c.pending]}" -le "${V[c.retransmits]}" ]
	[ "${V[a.flows]}" -eq 1 ]
	[ "${V[a.daddr]}" = "$B" ]
	[ "${V[a.dqpn]}" -eq "$(perf_qpn "$T/perf.cli" remote)" ]
	[ "${V[a.kind]}" = rtt ]
}

@test "ERSPAN II (erspan_ver 1) under ib_send_lat: a raw collector and an erspan device's count veth-a's exactly, NIC medians within the tap points' bias of veth-a's" {
	local n=200
	local -A V MED
	collector e2r 1 erspan2 100
	collector e2d 2 erspan2 101 dev
	mirrored ib_send_lat -n "$n" -F -C
	veth_truth "$n"
	# SEND_ONLY with AckReq from both sides: each a sample or a Karn discard
	[ "${V[c.tracked]}" -eq $((2 * n)) ]
	[ "${V[b.flows]}" -eq 1 ]
	[ "${V[b.kind]}" = turnaround ]
	[ "${V[c.samples]}" -eq $((2 * n - ${V[c.karn_discarded]})) ]
	[ "${V[c.turnaround_samples]}" -eq "${V[b.samples]}" ]
	same_counts e2r "$(session erspan2 100 e2r)"
	same_counts e2d "$(session erspan2 101 e2d)"
	same_counts e2d-dev null
	[ "$(jq -r 'select(.type=="flow") | .ifname' "$T/e2d-dev.out" | sort -u)" = tun0 ]
	measured "ERSPAN II send_lat: medians rxe-a veth-a ${V[a.median]} us, raw ${MED[e2r.a]}, device ${MED[e2d-dev.a]}; rxe-b veth-a ${V[b.median]} us (turnaround), raw ${MED[e2r.b]}, device ${MED[e2d-dev.b]}; retransmits ${V[c.retransmits]}"
}

@test "ERSPAN III (erspan_ver 2) under ib_write_bw: exact counts on raw readers (auto and --mirror-time=switch) and an erspan device; Linux's 100 us timestamps time nothing: arrival clock" {
	local n=200 size=4096 t0 t1 ts bad
	local -A V MED
	collector e3r 3 erspan3 200
	collector e3d 4 erspan3 201 dev
	# the switch clock asked for on one of them
	R_ARGS[e3d]+=" --mirror-time=switch"
	# the first frames of the session as the collector receives them
	ax_bg ip netns exec axme3r tcpdump -i axme3rc -nn -U -c 16 -s 80 -w "$T/e3.pcap" proto gre 2>"$T/e3.pcap.err"
	local cap=$AX_LAST_PID
	ax_wait_for "$T/e3.pcap.err" "listening on" "$WAIT"
	t0=$(date +%s%N)
	mirrored ib_write_bw -n "$n" -s "$size" -t 8 -F
	ax_stop "$cap" INT
	t1=$(date +%s%N)
	veth_truth "$n"
	# one timed request per WRITE (AckReq on its last packet)
	[ "${V[c.tracked]}" -eq "$n" ]
	[ -z "${V[b.flows]:-}" ]
	same_counts e3r "$(session erspan3 200 e3r)"
	same_counts e3d "$(session erspan3 201 e3d)"
	same_counts e3d-dev null

	# what Linux put in the ERSPAN III header (tcpdump -x prints from the
	# IP header: IPv4 20 + GRE with a sequence number 8, the ERSPAN header
	# at byte 28):
	# version 2, session ID 200, timestamp in 100 us of the real time,
	# Gra 00, P 1, FT 0, HW ID 7, direction 0
	tcpdump -r "$T/e3.pcap" -nn -x 2>/dev/null | awk -v lo=$((t0 / 100000 % 4294967296)) \
		-v hi=$((t1 / 100000 % 4294967296)) '
	function hx(s,   i, v) {
		v = 0
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	function frame() {
		if (nb < 40)
			return
		n++
		ver = int(hx(b[28]) / 16); sid = hx(b[30] b[31]) % 1024
		ts = hx(b[32] b[33] b[34] b[35]); bits = hx(b[38] b[39])
		gra = int(bits / 2) % 4; p = int(bits / 32768); ft = int(bits / 1024) % 32
		hw = int(bits / 16) % 64; d = int(bits / 8) % 2
		printf "frame %d: ver %d session %d ts %d gra %d P %d FT %d hwid %d dir %d (real time %d..%d)\n",
			n, ver, sid, ts, gra, p, ft, hw, d, lo, hi
		if (ver != 2 || sid != 200 || gra != 0 || p != 1 || ft != 0 || hw != 7 ||
		    (lo <= hi && (ts < lo || ts > hi)) || (lo > hi && ts < lo && ts > hi))
			bad++
	}
	/^[0-9]/ { frame(); nb = 0; next }
	$1 ~ /^0x[0-9a-f]+:$/ {
		for (i = 2; i <= NF; i++) {
			b[nb++] = substr($i, 1, 2)
			if (length($i) == 4)
				b[nb++] = substr($i, 3, 2)
		}
	}
	END { frame(); print n + 0, bad + 0 > "/dev/stderr" }' 2>"$T/e3.check"
	read -r ts bad < "$T/e3.check"
	[ "$ts" -eq 16 ]
	[ "$bad" -eq 0 ]
	measured "ERSPAN III write_bw: median veth-a ${V[a.median]} us, raw auto ${MED[e3r.a]}, raw switch ${MED[e3d.a]} (clock arrival), device ${MED[e3d-dev.a]}; retransmits ${V[c.retransmits]}; timestamps: 100 us ticks, Gra 00"
}

@test "VXLAN under ib_read_lat: a raw collector and a vxlan device count veth-a's exactly, READ RESPONSEs timed within the tap points' bias of veth-a's" {
	local n=200
	local -A V MED
	collector vxr 6 vxlan 7700
	collector vxd 7 vxlan 7701 dev
	mirrored ib_read_lat -n "$n" -F -C
	veth_truth "$n"
	[ "${V[c.tracked]}" -eq "$n" ]
	[ "${V[c.read_responses]}" -ge "$n" ]
	[ "${V[c.acks]}" -eq 0 ]
	same_counts vxr "$(session vxlan 7700 vxr)"
	same_counts vxd "$(session vxlan 7701 vxd)"
	same_counts vxd-dev null
	measured "VXLAN read_lat: median veth-a ${V[a.median]} us, raw ${MED[vxr.a]}, device ${MED[vxd-dev.a]}; retransmits ${V[c.retransmits]}"
}

@test "GRE/TEB (gretap, key 77) under netem loss 2% on veth-a with ib_write_bw: retransmits and NAKs counted exactly as on veth-a" {
	local n=200 size=4096 dropped
	local -A V MED
	collector grr 8 gretap 77
	collector grd 9 gretap 78 dev
	# netem drops after tc egress: veth-a's rocelat and the mirror both
	# see every request, lost or not, and the NAKs and resends it causes
	tc qdisc add dev veth-a root netem loss 2%
	MIRROR_UNDO+=("tc qdisc del dev veth-a root")
	mirrored ib_write_bw -n "$n" -s "$size" -t 8 -F
	dropped=$(tc -s qdisc show dev veth-a | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -1)
	tc qdisc del dev veth-a root
	veth_truth "$n"
	[ "$dropped" -ge 1 ]
	[ "${V[c.retransmits]}" -ge 1 ]
	[ "${V[c.tracked]}" -eq "$n" ]
	same_counts grr "$(session gre 77 grr)"
	same_counts grd "$(session gre 78 grd)"
	same_counts grd-dev null
	measured "GRE/TEB write_bw, netem dropped $dropped: retransmits ${V[c.retransmits]}, NAKs ${V[c.nak_psn_seq_err]}, each collector the same; median veth-a ${V[a.median]} us, raw ${MED[grr.a]}, device ${MED[grd-dev.a]}"
}
