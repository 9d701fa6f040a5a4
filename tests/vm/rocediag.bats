#!/usr/bin/env bats
# rocediag against real rdma_rxe traffic on the Soft-RoCE test bed
# (scripts/testbed.sh): the seed's firewall as a per-QP STUCK with its rule,
# netem loss as LOSSY, and no false STUCK on clean traffic or with a source
# left out. Runs inside the Soft-RoCE VM (tests/vm/run-suites) or as root on
# a host whose kernel has rdma_rxe; elsewhere every test skips.
#
# rocediag runs with -i veth-a (rocelat's XDP/tc there: rxe-a's requests and
# their answers) and -j 1; each interval ends with a "summary" line, so a
# record's interval is the number of summaries before it, plus one.
#
# Ground truth: the iptables rule's own packet counter and nft's listing of
# it, rxe's port counters (rdma statistic), netem's drop count, perftest's
# and rc_client's QP numbers and exit status; rxeqp -e as the kernel's
# witness of a timer firing. QP numbers are made asymmetric first (bed_up),
# so a requester/responder mix-up shows.
#
# Why the healthy QPs look the way they do. rxe on 6.1 does not push its
# retransmit timer back on every ACK: it is armed when not pending and
# re-armed by the completer only when it runs out of ACKs with requests
# still outstanding (rxe_req.c update_state, rxe_comp.c COMPST_EXIT), so at
# perftest's default timeout (-u 14, 67 ms) it fires in the middle of a
# steady stream and rxe resends what is in flight (measured: 2 to 176
# packets per 300 clean ib_write_bw messages, with the responder's
# duplicate_request counting them). Several packets in flight on two vCPUs
# can also arrive reordered (a PSN sequence NAK, a go-back-N retry). A QP
# that resent packets is LOSSY by rocediag's rules, and rightly so. A QP
# the tests call clean therefore runs with rxe's timer out of reach
# (-u 31: 4.096 us * 2^31, 2.4 h) and one single-packet message in flight
# (ib_write_bw -t 1 -s 1024 at MTU 1024: nothing to reorder, nothing to
# time out), and each test checks with rxe's counters that it sent nothing
# twice. rocediag's --timeout (a request unanswered this long) is 10 s: the
# emulated guest can stall for a second when other guests share the cores,
# and no assertion here rests on rocelat's timeouts.

load ../lib/common
load ../lib/vm_rocelat

DIAG=$AX_BUILD/rocediag
RXEQP=$AX_BUILD/rxeqp
WAIT=180	# s: rocediag loads four tools' programs (30-60 s under TCG)
HPORT=18521	# the healthy ib_write_bw's TCP exchange (over lo)
HRATE=(--rate_limit_type=SW --rate_limit=200 --rate_units=p --burst_size=1)

setup_file() {
	ax_file_needs --rxe rdma ib_write_bw iptables nft tc jq timeout stdbuf \
		"$DIAG" "$RXEQP" "$RC" || return 0
	# nfdrop's fexit program attaches to nft_do_chain, which exists only
	# once nf_tables is loaded: before rocediag starts
	local m
	for m in nf_tables nft_compat nf_reject_ipv4 nft_reject_ipv4 sch_netem; do
		modprobe -q "$m" 2>/dev/null || true
	done
	bed_up
}

teardown_file() {
	bed_down
}

setup() {
	rl_setup
	DIAG_VARS=()
	RULES=()
}

teardown() {
	local v rule
	ax_file_ran || return 0
	# rocediag first and gently: on 6.1 (no tcx) a SIGKILL leaves its tc filter
	for v in "${DIAG_VARS[@]}"; do
		ax_tool_stop "$v" || true
	done
	perf_stop
	for rule in "${RULES[@]}"; do
		# shellcheck disable=SC2086 # a rule is a word list
		iptables -D $rule 2>/dev/null || true
	done
	tc qdisc del dev veth-a root 2>/dev/null || true
}

# start_diag VAR OUT ARGS...: rocediag in the background until its banner
# (stderr with -j, stdout without); its PID in the (global) variable VAR,
# which teardown stops
start_diag() {
	DIAG_VARS+=("$1")
	ax_tool_start "$1" "$2" "$WAIT" Tracing "$DIAG" "${@:3}"
}

stop_diag() { # stop_diag VAR: SIGINT, it must exit 0
	ax_tool_stop "$1"
}

# summaries FILE: intervals rocediag -j reported so far (complete lines only)
summaries() {
	local l n=0
	while IFS= read -r l; do
		[[ $l == *'"type":"summary"'* ]] && n=$((n + 1))
	done 2>/dev/null <"$1"
	echo "$n"
}

# joined FILE: rocediag's text, each line wrapped at 80 columns joined to
# the one it continues (continuations are indented 4 or more)
joined() {
	awk '/^    / { sub(/^ +/, " "); l = l $0; next }
		{ if (NR > 1) print l; l = $0 } END { if (NR) print l }' "$1"
}

# text_reports FILE: reports of rocediag's text output so far (its header
# lines, "2 QPs: 1 STUCK, 1 OK")
text_reports() {
	local l n=0
	while IFS= read -r l; do
		[[ $l =~ ^[0-9]+\ QPs?(:.*)?$ ]] && n=$((n + 1))
	done 2>/dev/null <"$1"
	echo "$n"
}

# wait_summaries FILE N [COUNTER]: until FILE has N reports (COUNTER:
# summaries for -j, text_reports for text)
wait_summaries() {
	ax_until 60 "rocediag's report $2 in $1" reports_at_least "$1" "$2" "${3:-summaries}"
}

reports_at_least() { [ "$("$3" "$1")" -ge "$2" ]; }

# records FILE: the "qp" records of rocediag -j, one a line, each with its
# interval "iv" (1 + the summaries before it)
records() {
	jq -c -s 'reduce .[] as $r ({n: 1, out: []};
		if $r.type == "summary" then .n += 1 else .out += [$r + {iv: .n}] end) | .out[]' "$1"
}

# wait_record FILE JQ_CONDITION: until a record of FILE meets it
wait_record() {
	ax_until 90 "a record with $2 in $1" has_record "$1" "$2" || {
		cat "$1" >&2
		return 1
	}
}

has_record() { records "$1" 2>/dev/null | jq -e -s "any(.[]; $2)" >/dev/null 2>&1; }

# jqn FILE FILTER: FILTER over the records of FILE as one array
jqn() { records "$1" | jq -r -s "$2"; }

# the QPs a test names: req/resp addresses, the responder's QPN (decimal)
is_qp() { echo "(.req == \"$A\" and .resp == \"$B\" and .resp_qpn == $1)"; }

# healthy_start NAME ARGS...: ib_write_bw in the background, server on rxe-b,
# client on rxe-a, one single-packet WRITE in flight and rxe's timer out of
# reach (see the top), 200 a second (perftest's software rate limiter: on
# 6.1 rxe frees every packet it consumed with kfree_skb, so each one runs
# rxedrop's program, which leaves it out by its caller; at full speed the
# emulated guest's two vCPUs would be busy with the healthy QP alone);
# until the client has printed both QP numbers, in H_LOCAL and H_REMOTE
# (decimal)
healthy_start() {
	local name=$1
	shift
	AX_PERF_WAIT_S=$WAIT ax_perf_start "$T/$name" 400 "$HPORT" ib_write_bw -s 1024 -t 1 -u 31 -F \
		"${HRATE[@]}" "$@" || return 1
	H_CLI=$AX_PERF_CLI
	AX_TOOL_OUT[H_CLI]=$T/$name.cli
	ax_tool_wait --out H_CLI "$WAIT" "remote address:"
	H_LOCAL=$(perf_qpn "$T/$name.cli" local)
	H_REMOTE=$(perf_qpn "$T/$name.cli" remote)
	echo "healthy ib_write_bw: QPN $H_LOCAL -> $H_REMOTE"
}

# rule_packets SPORT: the packets our REJECT of SPORT matched, by its counter
rule_packets() {
	iptables -L INPUT -v -x -n | awk -v p="spt:$1" '/REJECT/ && /veth-b/ && $0 ~ p && /dpt:4791/ { print $1 }'
}

rule_matched() { [ "$(rule_packets "$1")" -gt 0 ]; }

@test "REJECT of one QP's UDP source port on the responder's INPUT: STUCK within 2 intervals, the rule named and counted as it counts, RTS -> ERR; ib_write_bw's QP OK throughout" {
	local j=$T/diag.j x=$T/diag.txt qa qb sport n0 n1 c h text F H end
	# shellcheck disable=SC2034 # read through delta's namerefs
	local -A c0 c1
	counters c0
	# one with rocelat on veth-a (JSON), one without any -i (text): no
	# latency source there, the verdict rests on drops, rules and rxe
	start_diag DIAG_J "$j" -i veth-a -j --timeout 10000 1
	start_diag DIAG_X "$x" 1

	# H: the healthy ib_write_bw, seen OK by rocediag before the fault
	healthy_start h -n 5000000
	H=$(is_qp "$H_REMOTE")
	wait_record "$j" "$H and .verdict == \"OK\" and .latency.samples > 0"

	# F: rc_client's QP, 16 WRITEs of 4 packets in flight, 3 retries of
	# ~17 ms, waiting for the rule before it sends
	ax_bg "$RC" -p 1 -r 3 -t 12 -n 16 -d 16 -s 4096 -T 90 -w "$T/go" >"$T/f.out"
	local fpid=$AX_LAST_PID
	ax_wait_for "$T/f.out" ready 60
	read -r qa qb sport < <(sed -n 's/^ready qpn_a=\(0x[0-9a-f]*\) qpn_b=\(0x[0-9a-f]*\) sport=\([0-9]*\)$/\1 \2 \3/p' "$T/f.out")
	qa=$((qa)) qb=$((qb))
	F=$(is_qp "$qb")
	# F's way to RTS reported before the fault, so that the interval of
	# its ERR shows that transition alone. Until F sends, neither of its
	# QPs has played a side: rocediag may show the pair either way round
	wait_record "$j" "($F or (.req == \"$B\" and .resp == \"$A\" and .resp_qpn == $qa)) and (.rxe.state_change // \"\" | endswith(\"-> RTS\"))"
	local qid qrev
	qid=$(printf 'QP %s/0x%x -> %s/0x%x (sport %s): ' "$A" "$qa" "$B" "$qb" "$sport")
	qrev=$(printf 'QP %s/0x%x -> %s/0x%x (sport %s): ' "$B" "$qb" "$A" "$qa" "$sport")
	# shellcheck disable=SC2317 # called by ax_until
	f_rts_shown() { joined "$x" | grep -F -e "$qid" -e "$qrev" | grep -q -- '-> RTS'; }
	ax_until 90 "F's RTS in $x" f_rts_shown || { cat "$x" >&2; return 1; }
	RULES+=("INPUT -i veth-b -p udp --dport 4791 --sport $sport -j REJECT")
	# shellcheck disable=SC2086 # a rule is a word list
	iptables -I ${RULES[0]}
	# the fault starts with F's first packet: after n0 intervals, and in
	# interval n1 + 1 at the latest (n1 counted once the rule has matched)
	n0=$(summaries "$j")
	touch "$T/go"
	ax_until 60 "the rule's first match" rule_matched "$sport"
	n1=$(summaries "$j")
	local frc=0
	wait "$fpid" || frc=$? # rc_client bounds itself (-T)
	cat "$T/f.out"
	[ "$frc" -eq 3 ]
	grep -q 'status=12 ' "$T/f.out" # IBV_WC_RETRY_EXC_ERR
	# F is gone: the rule's count is final; rocediag reports the interval
	# in progress and one more, and H still runs
	c=$(rule_packets "$sport")
	wait_summaries "$j" $(($(summaries "$j") + 2))
	wait_record "$j" "$F and .rxe.to_err"
	local last
	last=$(jqn "$j" "map(select($F and .rxe.to_err)) | first.iv")
	wait_record "$j" "$H and .iv > $last"
	wait_summaries "$x" $(($(text_reports "$x") + 2)) text_reports
	kill -0 "$H_CLI" # the healthy run outlived the fault
	# stopping H mid-flight can drop its last packet (its QP is gone when
	# the answer arrives): H is judged up to the interval before
	local hs xs
	hs=$(summaries "$j")
	xs=$(text_reports "$x")
	ax_perf_stop
	counters c1
	stop_diag DIAG_J
	stop_diag DIAG_X

	# ground truth: the rule as nft lists it (its handle; its text without
	# the counter's values), its counter
	nft -a list chain ip filter INPUT
	h=$(nft -a list chain ip filter INPUT | sed -n "s/.* udp sport $sport .* # handle \([0-9]*\)\$/\1/p")
	text=$(nft -a list chain ip filter INPUT | sed -n "s/^[[:space:]]*\(.* udp sport $sport .*\) # handle [0-9]*\$/\1/p" |
		sed 's/ packets [0-9]* bytes [0-9]*//')
	echo "rule: handle $h, '$text', counted $c; F $qa -> $qb sport $sport; intervals n0=$n0 n1=$n1"
	[ -n "$h" ]
	[ "$c" -gt 0 ]
	records "$j" | jq -c "select($F or $H) | {iv, req_qpn, resp_qpn, verdict, why, drops, rxe: (.rxe // {} | del(.dev))}"

	# F: its records carry the port the rule matched and its requester QPN
	[ "$(jqn "$j" "map(select($F) | .sport) | unique | join(\",\")")" = "$sport" ]
	[ "$(jqn "$j" "map(select($F and .req_qpn != null) | .req_qpn) | unique | join(\",\")")" = "$qa" ]
	# every packet the rule matched is a drop of F, at nft_do_chain on veth-b
	[ "$(jqn "$j" "map(select($F) | .drops.packets) | add")" -eq "$c" ]
	[ "$(jqn "$j" "map(select($F) | .drops.sites[] | select(.location == \"nft_do_chain\" and .reason == \"NETFILTER_DROP\" and .ifname == \"veth-b\") | .packets) | add")" -eq "$c" ]
	# ... and nfdrop names the rule, certain, with the same count
	[ "$(jqn "$j" "map(select($F and .drops.rule) | .drops.rule | [.where, .text, .certain] | @json) | unique | .[]")" = \
		"$(jq -c -n --arg w "ip filter INPUT handle $h" --arg t "$text" '[$w, $t, true]')" ]
	[ "$(jqn "$j" "map(select($F) | .drops.rule.packets // 0) | add")" -eq "$c" ]
	# rxe: RTS -> ERR, three go-back-N retries (-r 3), then RETRY_EXC_ERR
	[ "$(jqn "$j" "map(select($F and .rxe.to_err) | .rxe.state_change) | join(\",\")")" = "RTS -> ERR" ]
	[ "$(jqn "$j" "map(select($F) | .rxe.retries // 0) | add")" -eq 3 ]
	[ "$(delta c0 c1 rxe-a.retry_exceeded_err)" -eq 1 ]
	# all F sent went into the rule: up to its 64 packets once (16 WRITEs
	# of 4; fewer when the first timeout came before the last was sent),
	# the rest again, each counted alike where rxe sent it (rxeqp) and on
	# veth-a (rocelat)
	local fr
	fr=$(jqn "$j" "map(select($F) | .rxe.resent_packets // 0) | add")
	[ "$(jqn "$j" "map(select($F) | .latency.retransmits // 0) | add")" -eq "$fr" ]
	[ $((c - fr)) -ge 1 ]
	[ $((c - fr)) -le 64 ]

	# named within 2 intervals: D, the first interval with F's drops, lies
	# where the ground truth says the fault started (after interval n0; by
	# n1 + 1, or n1 + 2 when the rule matched between a report's reading of
	# the drops and its summary line, which n1 then missed); STUCK with the
	# rule by D + 1 (an interval that ends before the retry timer first
	# fires can say only DROPPED-LOCALLY)
	local d k
	d=$(jqn "$j" "map(select($F and .drops.packets > 0) | .iv) | min")
	k=$(jqn "$j" "map(select($F and .verdict == \"STUCK\" and .drops.rule.where == \"ip filter INPUT handle $h\") | .iv) | min")
	echo "first drops in interval $d, STUCK with the rule in $k"
	measured "REJECT: $c packets ($fr resent), fault between intervals $((n0 + 1)) and $((n1 + 1)), drops seen in $d, STUCK + rule in $k; H OK in $(jqn "$j" "map(select($H and .iv <= $hs)) | length") intervals, $(jqn "$j" "map(select($H and .iv <= $hs) | .latency.samples // 0) | min")-$(jqn "$j" "map(select($H and .iv <= $hs) | .latency.samples // 0) | max") samples each"
	[ "$d" -gt "$n0" ]
	[ "$d" -le $((n1 + 2)) ]
	[ "$k" -le $((d + 1)) ]
	# from the fault on, F is never anything milder
	[ "$(jqn "$j" "map(select($F and .iv >= $d and .verdict != \"STUCK\" and .verdict != \"DROPPED-LOCALLY\")) | length")" -eq 0 ]
	# and what it saw dropped is never forgotten: no 'no drop on this host'
	[ "$(jqn "$j" "map(select($F and (.why | contains(\"no drop on this host\")))) | length")" -eq 0 ]

	# H: OK in every interval until it was stopped, the fault's ones and
	# one after F's ERR included; nothing dropped. rxe's counters: it sent
	# nothing twice (no duplicate, no out-of-sequence request at rxe-b;
	# the only retries of rxe-a are F's three)
	[ "$(jqn "$j" "map(select($H and .iv <= $hs)) | length")" -ge 3 ]
	[ "$(jqn "$j" "map(select($H and .iv <= $hs and .verdict != \"OK\")) | length")" -eq 0 ]
	[ "$(jqn "$j" "map(select($H and .iv == $k)) | length")" -eq 1 ]
	[ "$(jqn "$j" "map(select($H and .iv <= $hs) | .drops.packets) | add")" -eq 0 ]
	[ "$(delta c0 c1 rxe-b.duplicate_request)" -eq 0 ]
	[ "$(delta c0 c1 rxe-b.out_of_seq_request)" -eq 0 ]
	[ "$(delta c0 c1 rxe-a.completer_retry_err)" -eq 3 ]
	# and no QP but F was ever worse than OK
	[ "$(jqn "$j" "map(select(($F | not) and .iv <= $hs and .verdict != \"OK\")) | length")" -eq 0 ]

	# the same story as text, from drops, rules and rxe alone: F STUCK
	# with the rule, its drops and rxe's evidence adding up as in -j;
	# lines fit 80 columns (the banner apart), the sources missing said once
	joined "$x" >"$x.joined"
	grep -E '^QP |^  ' "$x.joined" | grep -v ': OK ' || true
	[ -z "$(grep -v '^Tracing ' "$x" | awk 'length > 80')" ]
	[ "$(grep -c '^cannot see latency: no -i given$' "$x")" -eq 1 ]
	grep -qF "${qid}STUCK " "$x.joined"
	grep -qxF "  by: ip filter INPUT handle $h: $text" "$x.joined"
	# F's blocks of lines, summed over the intervals: "dropped: N packets
	# at ..." and "rxe: rxe-a[ QP RTS -> ERR], R go-back-N retries, P
	# packets resent", one of them with the transition
	run awk -v q="$qid" '
		index($0, "QP ") == 1 { f = index($0, q) == 1 }
		f && /^  dropped: [0-9]+ packets at nft_do_chain \(NETFILTER_DROP\) on veth-b$/ { d += $2 }
		f && /^  rxe: rxe-a( QP RTS -> ERR)?, [0-9]+ go-back-N retries, [0-9]+ packets resent$/ {
			e += / QP RTS -> ERR,/
			n = split($0, w, " ")
			r += w[n - 5]
			p += w[n - 2]
		}
		END { print d + 0, e + 0, r + 0, p + 0 }' "$x.joined"
	echo "text: dropped, ERR lines, retries, packets resent: $output"
	[ "$output" = "$c 1 3 $fr" ]
	# H, seen by rxe there: OK until it was stopped; nothing else worse
	awk -v n="$xs" '/^[0-9]+ QPs?(:.*)?$/ { r++ } r <= n' "$x.joined" >"$T/diag.txt.before"
	grep -qE "^QP $A/0x$(printf %x "$H_LOCAL") -> $B/0x$(printf %x "$H_REMOTE") \(sport [0-9]+\): OK " "$T/diag.txt.before"
	[ -z "$(grep -E '^QP ' "$T/diag.txt.before" | grep -vF "$qid" | grep -v '): OK ')" ]

}

@test "netem loss 2% on veth-a under ib_write_bw: LOSSY; retransmits = rxe-a's packets beyond the messages' (rocelat and rxe alike), NAKs = rxe-b's, drops = the requests lost" {
	local n=1000 size=4096 j=$T/diag.j dropped sent rcvd orig qr Q
	# shellcheck disable=SC2034 # read through delta's namerefs
	local -A c0 c1
	start_diag DIAG_PID "$j" -i veth-a -j --timeout 10000 1
	counters c0
	tc qdisc add dev veth-a root netem loss 2%
	# a small window (-t 8): go-back-N resends less after each loss
	perf_run write ib_write_bw -n "$n" -s "$size" -t 8 -F
	tc -s qdisc show dev veth-a
	dropped=$(tc -s qdisc show dev veth-a | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -n 1)
	tc qdisc del dev veth-a root
	counters c1
	# the run is over: the interval in progress and one more hold all of it
	wait_summaries "$j" $(($(summaries "$j") + 2))
	stop_diag DIAG_PID
	qr=$(perf_qpn "$T/write.cli" remote)
	Q=$(is_qp "$qr")
	records "$j" | jq -c "select($Q)" | cut -c1-500

	# ground truth: rxe-a only requests here, rxe-b only answers; MTU 1024
	sent=$(delta c0 c1 rxe-a.sent_pkts)
	rcvd=$(delta c0 c1 rxe-b.rcvd_pkts)
	orig=$((n * size / 1024))
	local rl rx sq rt dr
	rl=$(jqn "$j" "map(select($Q) | .latency.retransmits) | add")
	rx=$(jqn "$j" "map(select($Q) | .rxe.resent_packets) | add")
	sq=$(jqn "$j" "map(select($Q) | .latency.seq_naks) | add")
	rt=$(jqn "$j" "map(select($Q) | .rxe.retries) | add")
	dr=$(jqn "$j" "map(select($Q) | .drops.packets) | add")
	echo "netem dropped $dropped; rxe-a sent $sent (originals $orig), rxe-b received $rcvd; completer retries $(delta c0 c1 rxe-a.completer_retry_err), out-of-sequence $(delta c0 c1 rxe-b.out_of_seq_request)"
	echo "rocediag: retransmits $rl (rocelat) $rx (rxe), retries $rt, PSN sequence NAKs $sq, drops $dr"
	measured "loss 2%: netem dropped $dropped, lost $((sent - rcvd)), resent $((sent - orig)), rxe retries $(delta c0 c1 rxe-a.completer_retry_err), out-of-sequence $(delta c0 c1 rxe-b.out_of_seq_request); rocediag retransmits $rl/$rx, NAKs $sq, retries $rt, drops $dr; verdicts $(jqn "$j" "map(select($Q) | .verdict) | join(\",\")")"
	[ "$(perf_result "$T/write.cli" 2)" -eq "$n" ]
	[ $((sent - rcvd)) -ge 1 ]
	# Retransmitted packets, exactly: every packet rxe-a sent past the
	# messages' own was sent again, and both rocelat (a PSN seen again at
	# tc egress of veth-a, before netem) and rxeqp (a PSN behind the highest
	# sent, at rxe_xmit_packet, where rxe counts sent_pkts) see each once.
	# That holds for resends after a reorder or a spurious timer as well.
	[ "$rl" -eq $((sent - orig)) ]
	[ "$rx" -eq $((sent - orig)) ]
	# rxe-b counts the sequence-error NAKs it sends; they cross veth-a
	# inwards, where netem does not drop, and each is on its QP's row,
	# also one that came before rocelat paired the QP (held, then counted
	# for its flow: a NAK first was 67 of 68 once)
	local oos
	oos=$(delta c0 c1 rxe-b.out_of_seq_request)
	echo "NAKs: rxe-b sent $oos, rocelat saw $sq"
	[ "$sq" -eq "$oos" ]
	# go-back-N restarts: rxeqp counts a run of resent packets, rxe each
	# decision to retry (completer_retry_err); a decision whose requests
	# were all ACKed before the requester ran resends nothing, so rxe's
	# count bounds rxeqp's from above (equal in every run measured)
	[ "$rt" -ge 1 ]
	[ "$rt" -le "$(delta c0 c1 rxe-a.completer_retry_err)" ]
	# the requests lost (sent here, never received there) are this host's
	# drops, at veth-a's qdisc, never netfilter's; netem's own count may
	# also hold ARP or ND
	[ "$dr" -eq $((sent - rcvd)) ]
	[ "$dr" -le "$dropped" ]
	[ "$(jqn "$j" "map(select($Q) | .drops.sites[] | select(.ifname != \"veth-a\" or .reason == \"NETFILTER_DROP\")) | length")" -eq 0 ]
	# the verdict: LOSSY wherever loss or resends show while answers
	# come (the timer recovers a loss in 67 ms, so that is every interval
	# of a run that is not starved), nothing worse, OK where none did. An
	# interval of a guest starved of CPU for a second may hold a loss and
	# no answer: then the rules make it DROPPED-LOCALLY (a drop here, no
	# answer), and only then
	[ "$(jqn "$j" "map(select($Q and .verdict == \"LOSSY\")) | length")" -ge 1 ]
	[ "$(jqn "$j" "map(select($Q and (.drops.packets > 0 or .latency.retransmits > 0) and .latency.answers and .verdict != \"LOSSY\")) | length")" -eq 0 ]
	[ "$(jqn "$j" "map(select(.verdict == \"STUCK\")) | length")" -eq 0 ]
	# (or in the intervals after it, its drops held, until it answers)
	[ "$(jqn "$j" "map(select(.verdict == \"DROPPED-LOCALLY\" and (.latency.answers or (.drops.packets == 0 and (.held | not))))) | length")" -eq 0 ]
}

@test "--no-rxe, clean ib_write_bw: OK in every interval, no STUCK, and every report says it cannot see rdma_rxe" {
	local j=$T/diag.j n=500 H
	# shellcheck disable=SC2034 # read through delta's namerefs
	local -A c0 c1
	start_diag DIAG_PID "$j" -i veth-a -j --no-rxe --timeout 10000 1
	counters c0
	healthy_start clean -n "$n"
	H=$(is_qp "$H_REMOTE")
	local rc=0
	wait "$H_CLI" || rc=$?
	[ "$rc" -eq 0 ]
	counters c1
	wait_summaries "$j" $(($(summaries "$j") + 2))
	stop_diag DIAG_PID
	records "$j" | jq -c "select($H)" | cut -c1-400
	tail -n 3 "$T/clean.cli"

	# rxe: every message went once, nothing was repeated or out of sequence
	[ "$(perf_result "$T/clean.cli" 2)" -eq "$n" ]
	[ "$(delta c0 c1 rxe-a.sent_pkts)" -eq "$n" ]
	[ "$(delta c0 c1 rxe-b.duplicate_request)" -eq 0 ]
	[ "$(delta c0 c1 rxe-b.out_of_seq_request)" -eq 0 ]
	# rocediag: OK throughout, answers timed, nothing resent or dropped
	[ "$(jqn "$j" "map(select($H)) | length")" -ge 1 ]
	[ "$(jqn "$j" "map(select($H and .verdict != \"OK\")) | length")" -eq 0 ]
	[ "$(jqn "$j" "map(select($H) | .latency.samples) | add")" -ge 1 ]
	[ "$(jqn "$j" "map(select($H) | .latency.retransmits + .drops.packets) | add")" -eq 0 ]
	[ "$(jqn "$j" "map(select(.verdict != \"OK\")) | length")" -eq 0 ]
	# no rxe evidence anywhere, and each line says why
	[ "$(jqn "$j" "map(select(.rxe)) | length")" -eq 0 ]
	[ "$(jq -r -s 'map(.cannot_see | join(";")) | unique | join("|")' "$j")" = "rdma_rxe QP state: --no-rxe" ]
}

@test "clean ib_write_bw whose QP outlives its traffic: rxe's retransmit timer fires with nothing outstanding, and the QP is never STUCK" {
	local j=$T/diag.j ev=$T/ev.j n=200 H
	# shellcheck disable=SC2034 # read through delta's namerefs
	local -A c0 c1
	# rxe arms the timer at the first request; -u 22 (17 s) is longer
	# than the run, so it first fires after the traffic, with everything
	# ACKed, in an interval without answers; --wait_destroy keeps the QP
	# (and its timer) alive past that
	start_diag DIAG_PID "$j" -i veth-a -j --timeout 10000 1
	ax_tool_start --err EV_PID "$ev" "$WAIT" Tracing "$RXEQP" -e -j
	counters c0
	AX_PERF_WAIT_S=$WAIT ax_perf_start "$T/idle" 120 "$HPORT" ib_write_bw -s 1024 -t 1 -u 22 -F -n "$n" \
		--wait_destroy 30
	H_CLI=$AX_PERF_CLI
	ax_wait_for "$T/idle.cli" "BW average" 120
	local ql qr t0
	t0=$EPOCHREALTIME
	ql=$(perf_qpn "$T/idle.cli" local)
	qr=$(perf_qpn "$T/idle.cli" remote)
	H=$(is_qp "$qr")
	# the witness: rxeqp's event of H's requester timer with req.psn ==
	# comp.psn (nothing outstanding)
	local firing="select(.event == \"retx_timer\" and .qpn == $ql and .dev == \"rxe-a\")"
	# shellcheck disable=SC2317 # called by ax_until
	fired() { jq -e -s "any(.[]; $firing)" "$ev" >/dev/null 2>&1; }
	# shellcheck disable=SC2317
	fired_or_gone() { fired || ! kill -0 "$H_CLI" 2>/dev/null; }
	# the client keeps its QP 30 s after the traffic (--wait_destroy), the
	# timer fires after 17 s: a client gone first failed
	ax_until 60 "rxe-a's timer of QP $ql" fired_or_gone && fired || {
		echo "rxeqp's events, the client's output, rxeqp's table:" >&2
		cat "$ev" "$ev.err" "$T/idle.cli" >&2
		"$RXEQP" -j 1 1 >&2 || true
		return 1
	}
	wait_summaries "$j" $(($(summaries "$j") + 2))
	counters c1
	stop_diag DIAG_PID
	ax_tool_stop EV_PID
	jq -c "$firing" "$ev"
	measured "idle QP: rxe-a's timer first fired $(jq -s "map($firing | .time) | min - $t0 | . * 10 | round / 10" "$ev") s after the traffic started (-u 22: 17.2 s)"
	records "$j" | jq -c "select($H)" | cut -c1-400

	# every firing of H's timer found nothing outstanding; H sent nothing twice
	[ "$(jq -s "map($firing | select(.psn != .acked_psn)) | length" "$ev")" -eq 0 ]
	[ "$(perf_result "$T/idle.cli" 2)" -eq "$n" ]
	[ "$(delta c0 c1 rxe-a.sent_pkts)" -eq "$n" ]
	[ "$(delta c0 c1 rxe-b.duplicate_request)" -eq 0 ]
	# rocediag: H OK while it ran, and no QP STUCK (nor worse than OK) at
	# any time, the firing's interval included
	[ "$(jqn "$j" "map(select($H and .latency.samples > 0)) | length")" -ge 1 ]
	[ "$(jqn "$j" "map(select(.verdict != \"OK\")) | length")" -eq 0 ]
}
