#!/usr/bin/env bats
# nfdrop never certain from a cache, a fallback or a rewritten packet:
# tables of two families at one hook (the BPF path cache cannot tell them
# apart), iptables-nft's mangle route chain beside filter, rulesets
# reloaded while nfdrop runs, stateless NAT before the dropping chain, and
# NFQUEUE without a listener. Ground truth is the dropping rules' own
# counters: a row or event without '?' must name the rule whose counter
# moved, and no more packets than that counter.

load ../lib/common
load ../lib/nfdrop

setup() {
	nfdrop_setup nft
}

setup_file() {
	nfdrop_modules
}

teardown() {
	ax_cleanup
}

# two_family_run MODE...: the two flows of the ip/inet tables with nfdrop
# started with MODE; checks rows (or events) against the counters
two_family_run() {
	pair
	two_family_tables
	start_nfdrop --roce -N "${P}b" "$@"
	send_from "${P}a" 10.210.0.2 1111 5
	send_from "${P}a" 10.210.0.2 2222 40
	send_from "${P}a" 10.210.0.2 1111 5
	if [[ " $* " == *" -e "* ]]; then
		wait_nf_events 50
		stop_nfdrop
	else
		stop_nfdrop "${P}b" Ip:InReceives 50
	fi
	cy=$(nft_counter "${P}b" "inet y in" "$HY")
	[ "$cy" -eq 40 ]
	# none reached UDP: x dropped the other 10
	[ "$(ax_snmp "${P}b" Udp:NoPorts)" -eq 0 ]
	cx=10
	if [[ " $* " == *" -e "* ]]; then
		events_within 1111 x "$HX"
		events_within 2222 y "$HY"
		[ "$(jq -s '[.[] | select(.type == "nf_drop")] | length' "$OUT")" -eq 50 ]
	else
		certain_within "ip/x/$HX=$cx" "inet/y/$HY=$cy"
		[ "$(packets true)" -eq 50 ]
	fi
}

@test "ip and inet tables at one hook, two flows: no certain row beyond the dropping rule's drops" {
	two_family_run
}

@test "ip and inet tables at one hook, -e: no certain event names the other flow's rule" {
	two_family_run -e
}

@test "ip and inet tables at one hook, --trace-rules: certain rows within the counters" {
	two_family_run --trace-rules
}

@test "ip and inet tables at one hook, --trace-rules -e: no certain event names the other flow's rule" {
	two_family_run --trace-rules -e
}

@test "iptables-nft mangle OUTPUT (a route chain) then filter OUTPUT drops: no certain row beyond the counters" {
	command -v iptables-nft >/dev/null || skip "iptables-nft not installed"
	pair
	ipt="ip netns exec ${P}a iptables-nft"
	$ipt -t mangle -A OUTPUT -p udp --sport 1111 -j DROP
	$ipt -A OUTPUT -p udp --sport 2222 -j DROP
	hm=$(nft_handle "${P}a" "ip mangle OUTPUT" "udp sport 1111 counter.*drop")
	hf=$(nft_handle "${P}a" "ip filter OUTPUT" "udp sport 2222 counter.*drop")
	[ -n "$hm" ]
	[ -n "$hf" ]
	for mode in "" -e; do
		: >"$OUT"
		start_nfdrop --roce -N "${P}a" $mode
		send_from --any "${P}a" 10.210.0.2 1111 5
		send_from --any "${P}a" 10.210.0.2 2222 30
		[ -z "$mode" ] || wait_nf_events 35
		stop_nfdrop
		cm=$(nft_counter "${P}a" "ip mangle OUTPUT" "$hm")
		cf=$(nft_counter "${P}a" "ip filter OUTPUT" "$hf")
		if [ -z "$mode" ]; then
			[ "$cm" -eq 5 ]
			[ "$cf" -eq 30 ]
			certain_within "ip/mangle/$hm=$cm" "ip/filter/$hf=$cf"
			[ "$(packets true)" -eq 35 ]
		else
			events_within 1111 mangle "$hm"
			events_within 2222 filter "$hf"
		fi
	done
}

# reload_run MODE...: 200 packets from source port 9999 while the ruleset
# is reloaded; no certain row (event) names R2's rule, every drop counted
reload_run() {
	pair
	reload_rules
	start_nfdrop --roce -N "${P}b" "$@"
	ax_bg reload_loop
	loop=$AX_LAST_PID
	for i in $(seq 40); do
		send_from "${P}a" 10.210.0.2 9999 5
	done
	ax_wait_snmp "${P}b" Ip:InReceives 200
	ax_stop "$loop" TERM
	n=200
	if [[ " $* " == *" -e "* ]]; then
		# 5 drops under R1 whose events are read only once R2 is in:
		# nfdrop stopped meanwhile, and for longer than its ruleset
		# cache lives (1 s), so it reads R2 for them
		reload_to r1
		kill -STOP "$NF_PID"
		send_from "${P}a" 10.210.0.2 9999 5
		ax_wait_snmp "${P}b" Ip:InReceives 205
		reload_to r2
		sleep 1.2
		kill -CONT "$NF_PID"
		n=205
	fi
	# R2 last: a fallback to the ruleset at the report names its rule
	reload_to r2
	dropped=$((n - $(ax_snmp "${P}b" Udp:NoPorts)))
	[ "$dropped" -gt 0 ]
	if [[ " $* " == *" -e "* ]]; then
		wait_nf_events "$dropped"
		stop_nfdrop
		bad=$(jq -s '[.[] | select(.type == "nf_drop") | select((.inferred | length) == 0) |
			select(.rule != null and (.rule | test("1111")))] | length' "$OUT")
		total=$(jq -s '[.[] | select(.type == "nf_drop")] | length' "$OUT")
	else
		stop_nfdrop
		bad=$(packets '(.inferred | length) == 0 and .rule != null and (.rule | test("1111"))')
		total=$(packets true)
	fi
	[ "$bad" -eq 0 ] || { echo "certain rows name the 1111 rule for $bad packets" >&2; cat "$OUT" >&2; false; }
	[ "$total" -eq "$dropped" ]
	# one report, at exit, over the reloads: every row says the ruleset changed
	if [[ " $* " != *" -e "* ]]; then
		silent=$(jq -s '[.[] | select(.type == "nf_drop_count") |
			select(.note == null or (.note | test("chang") | not))] | length' "$OUT")
		[ "$silent" -eq 0 ] || { echo "$silent rows do not say the ruleset changed" >&2; cat "$OUT" >&2; false; }
	fi
}

@test "ruleset flushed and reloaded every 0.2 s: no certain row names the other ruleset's rule" {
	reload_run
}

@test "ruleset flushed and reloaded every 0.2 s, -e: no certain event names the other ruleset's rule" {
	reload_run -e
}

trace_table_there() {
	ip netns exec "${P}b" nft list tables | grep -q "agentxdp_nfdrop_trace_$NF_PID"
}

@test "--trace-rules across flush ruleset: the helper table added again, said in one JSON line, the reloaded handle not certain" {
	pair
	reload_rules
	start_nfdrop --roce -N "${P}b" --trace-rules
	trace_table_there
	send_from "${P}a" 10.210.0.2 9999 5
	# r2: its 1111 rule gets handle 2 again, in a new table t
	reload_to r2
	ax_until 30 "the restored line" grep -q '"type":"nf_trace_table","time":[0-9.]*,"state":"restored"' "$OUT"
	grep -q "trace-rules table was deleted (flush ruleset?): added again" "$ERR"
	trace_table_there
	send_from "${P}a" 10.210.0.2 1111 7
	stop_nfdrop "${P}b" Ip:InReceives 12
	h=$(nft_handle "${P}b" "inet t in" "udp sport 1111.*drop")
	[ "$(nft_counter "${P}b" "inet t in" "$h")" -eq 7 ]
	# every drop traced, before and after the restore; the one handle
	# named two rules, so no certain row names either beyond its drops
	[ "$(packets '.source == "trace" and .rule_handle == '"$h")" -eq 12 ]
	[ "$(packets '(.inferred | length) == 0 and (.rule // "" | test("1111"))')" -le 7 ]
	[ "$(packets '(.inferred | length) == 0 and (.rule // "" | test("9999"))')" -le 5 ]
	[ "$(packets true)" -eq 12 ]
	[ "$(jq -s '[.[] | select(.type == "nf_trace_stats")] | last | .tracing' "$OUT")" = '"on"' ]
	# gone after exit
	! ip netns exec "${P}b" nft list tables | grep -q agentxdp_nfdrop_trace_
}

rewrite_run() {
	pair
	stateless_nat
	start_nfdrop --roce -N "${P}b" "$@"
	send_from "${P}a" 10.210.0.4 3333 40
	if [[ " $* " == *" -e "* ]]; then
		wait_nf_events 40
		stop_nfdrop
	else
		stop_nfdrop "${P}b" Ip:InReceives 40
	fi
	[ "$(nft_counter "${P}b" "ip sn filt" "$HB")" -eq 40 ]
	if [[ " $* " == *" -e "* ]]; then
		events_within 3333 sn "$HB"
		[ "$(jq -s '[.[] | select(.type == "nf_drop")] | length' "$OUT")" -eq 40 ]
	else
		certain_within "ip/sn/$HB=40"
		[ "$(packets true)" -eq 40 ]
	fi
}

@test "stateless NAT (ip daddr set) in an earlier chain: its rule never certain, the dropping rule by its counter" {
	rewrite_run
}

@test "stateless NAT in an earlier chain, -e: no certain event names the earlier chain's rule" {
	rewrite_run -e
}

@test "stateless NAT in an earlier chain, --trace-rules: certain rows within the dropping rule's counter" {
	rewrite_run --trace-rules
}

@test "meta mark set between chains: the chain before it never certain, the mark read at the drop rules out a later decoy" {
	pair
	# early: only a marked packet could match it (no counter to rule it
	# out); setm marks RoCE; late drops on the mark, its 0x7 rule a decoy
	ip netns exec "${P}b" nft -f - <<-'NFT'
	table inet m {
		chain early {
			type filter hook input priority -10; policy accept;
			meta mark 0x5 drop
		}
		chain setm {
			type filter hook input priority 0; policy accept;
			udp dport 4791 meta mark set 0x5
		}
		chain late {
			type filter hook input priority 10; policy accept;
			meta mark 0x7 drop
			meta mark 0x5 counter drop
		}
	}
	NFT
	hl=$(nft_handle "${P}b" "inet m late" "meta mark 0x00000005 counter.*drop")
	[ -n "$hl" ]
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 20
	stop_nfdrop "${P}b" Ip:InReceives 20
	[ "$(nft_counter "${P}b" "inet m late" "$hl")" -eq 20 ]
	certain_within "inet/m/$hl=20"
	[ "$(packets true)" -eq 20 ]
	# the late chain saw mark 0x5: its 0x7 rule is no candidate
	[ "$(jq -s '[.[] | select(.type == "nf_drop_count") | .candidates[]?.drop_rules[] |
		select(.rule | test("0x00000007"))] | length' "$OUT")" -eq 0 ]
}

@test "--trace-rules, one flow of 100 (cached and walked keys): one exact row, certain, equal to the counter" {
	pair
	ip netns exec "${P}b" nft -f - <<-'NFT'
	table inet t {
		chain in {
			type filter hook input priority 0; policy accept;
			udp sport 1111 counter drop
			udp sport 2222 counter drop
		}
	}
	NFT
	h=$(nft_handle "${P}b" "inet t in" "udp sport 2222 counter.*drop")
	start_nfdrop --roce -N "${P}b" --trace-rules
	send_from "${P}a" 10.210.0.2 2222 100
	stop_nfdrop "${P}b" Ip:InReceives 100
	[ "$(nft_counter "${P}b" "inet t in" "$h")" -eq 100 ]
	[ "$(packets '.rule_handle == '"$h"' and (.inferred | length) == 0')" -eq 100 ]
	[ "$(packets true)" -eq 100 ]
	[ "$(jq -s '[.[] | select(.note != null)] | length' "$OUT")" -eq 0 ]
}

@test "a nat chain at input: the filter chain at priority 0 still matched by address, certain without counters" {
	pair
	ip netns exec "${P}b" nft -f - <<-'NFT'
	table ip nat {
		chain in { type nat hook input priority 100; policy accept; }
	}
	table inet t {
		chain a {
			type filter hook input priority 0; policy accept;
			ip saddr 10.210.0.1 drop
		}
		chain b {
			type filter hook input priority 10; policy accept;
			udp dport 4791 drop
		}
	}
	NFT
	h=$(nft_handle "${P}b" "inet t a" "ip saddr 10.210.0.1 drop")
	start_nfdrop --roce -N "${P}b"
	ax_send_roce "${P}a" 10.210.0.2 10
	stop_nfdrop "${P}b" Ip:InReceives 10
	expect 'true' .packets 10 .table t .chain a .rule_handle "$h" '.inferred | length' 0
}

# queue_run TOOL MODE...: TOOL (iptables-nft, iptables-legacy) queues
# ${P}b's RoCE to queue 3, where nothing listens: nf_queue() drops each
queue_run() {
	local tool=$1
	shift
	command -v "$tool" >/dev/null || skip "$tool not installed"
	pair
	ip netns exec "${P}b" "$tool" -A INPUT -p udp --dport 4791 -j NFQUEUE --queue-num 3
	start_nfdrop --roce -N "${P}b" "$@"
	ax_send_roce "${P}a" 10.210.0.2 30
	if [[ " $* " == *" -e "* ]]; then
		wait_nf_events 30
		stop_nfdrop
	else
		stop_nfdrop "${P}b" Ip:InReceives 30
	fi
	if [ "$tool" = iptables-nft ]; then
		h=$(nft_handle "${P}b" "ip filter INPUT" "udp dport 4791 counter.*queue")
		[ "$(nft_counter "${P}b" "ip filter INPUT" "$h")" -eq 30 ]
	else
		h=1
		[ "$(ip netns exec "${P}b" iptables-legacy -L INPUT -v -x -n | awk '$3 == "NFQUEUE" { print $1 }')" -eq 30 ]
	fi
	if [[ " $* " == *" -e "* ]]; then
		[ "$(jq -s '[.[] | select(.type == "nf_drop") | select(.verdict == "QUEUE" and
			.reason == "NOT_SPECIFIED" and .rule_handle == '"$h"' and
			(.inferred | length) == 0)] | length' "$OUT")" -eq 30 ]
	else
		expect 'true' .packets 30 .hook input .table filter .chain INPUT .rule_handle "$h" \
			.verdict QUEUE .reason NOT_SPECIFIED '.inferred | length' 0
	fi
}

@test "iptables-nft NFQUEUE without a listener: every drop counted, the rule, verdict QUEUE, equal to its counter" {
	queue_run iptables-nft
}

@test "iptables-nft NFQUEUE without a listener, -e: each event names the rule, QUEUE" {
	queue_run iptables-nft -e
}

@test "iptables-legacy NFQUEUE without a listener: the rule by position, QUEUE, equal to its counter" {
	queue_run iptables-legacy
}

@test "iptables-legacy NFQUEUE without a listener, -A -e: each event names the rule, QUEUE" {
	queue_run iptables-legacy -A -e
}
