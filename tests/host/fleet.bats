#!/usr/bin/env bats
# The fleet: the Prometheus rules the package ships
# (prometheus/agentxdp.rules.yml), checked by promtool against synthetic
# series with known answers, then end to end: rocediag --prom writes into
# a real node_exporter's textfile directory (Debian's
# prometheus-node-exporter), a real Prometheus scrapes it and evaluates the
# rules, and its HTTP API must show the series and fire the outlier and
# drop alerts for a slow flow and a flow a rule drops, and none on a
# healthy run. Both servers listen on 127.0.0.1 on free ports and are
# started and stopped here by PID. Host only (tests/run): the servers are
# user space and the guest's emulated time is shared by every suite.

bats_require_minimum_version 1.5.0
load ../lib/common

DIAG=$AX_BUILD/rocediag
GEN=$AX_BUILD/rocegen
RULES=$AX_ROOT/prometheus/agentxdp.rules.yml
P=axfl
A=10.219.0.1
B=10.219.0.2

setup_file() {
	ax_file_needs promtool || return 0
}

setup() {
	ax_file_skip
	T=$BATS_TEST_TMPDIR
}

teardown() {
	ax_cleanup
}

@test "promtool: the rules are valid, and fire as their unit tests say on synthetic series" {
	promtool check rules "$RULES"
	run promtool test rules "$AX_ROOT/tests/host/fleet/rules.test.yml"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[[ "$output" == *SUCCESS* ]]
	# every alert the rules define has a unit test
	local a
	for a in $(sed -n 's/^ *- alert: //p' "$RULES"); do
		grep -q "alertname: $a$" "$AX_ROOT/tests/host/fleet/rules.test.yml" ||
			{ echo "no promtool test for $a" >&2; false; }
	done
}

@test "README's fleet section: the rules' path, alerts and series are those shipped" {
	local sec a
	sec=$(sed -n '/^### Fleet rules/,/^## /p' "$AX_ROOT/README.md")
	[ -n "$sec" ]
	grep -q 'install -m 0644 prometheus/agentxdp.rules.yml $(DESTDIR)$(promrulesdir)/' "$AX_ROOT/Makefile"
	grep -q '^promrulesdir ?= $(prefix)/share/agentxdp/prometheus$' "$AX_ROOT/Makefile"
	[[ "$sec" == *"/usr/share/agentxdp/prometheus/agentxdp.rules.yml"* ]]
	# each alert named in the README is in the rules, and each of the rules
	# is in the README
	for a in $(sed -n 's/^ *- alert: //p' "$RULES"); do
		[[ "$sec" == *"\`$a\`"* ]] || { echo "README lacks $a" >&2; false; }
	done
	for a in $(grep -o 'AgentXDP[A-Za-z]*' <<<"$sec" | sort -u); do
		grep -q "alert: $a$" "$RULES" || { echo "README names $a, the rules do not" >&2; false; }
	done
	# the recording rules it names exist
	for a in $(grep -o 'agentxdp:[a-z0-9_:]*' <<<"$sec" | sort -u); do
		grep -q "record: $a$" "$RULES" || { echo "README names $a, the rules do not" >&2; false; }
	done
	# each alert's "for" as the table says ("at once": none)
	local row want got
	while IFS= read -r row; do
		a=$(sed -n 's/^| `\(AgentXDP[A-Za-z]*\)`.*/\1/p' <<<"$row")
		want=$(awk -F'|' '{ gsub(/ /, "", $4); print $4 }' <<<"$row")
		got=$(awk -v a="$a" '/- alert: / { on = ($3 == a) } on && /^ *for: / { print $2 }' "$RULES")
		[ "$want" = "${got:-atonce}" ] || { echo "$a: README says for $want, the rules $got" >&2; false; }
	done < <(grep '^| `AgentXDP' <<<"$sec")
	[ "$(grep -c '^| `AgentXDP' <<<"$sec")" -eq "$(grep -c -- '- alert: ' "$RULES")" ]
	grep -q 'agentxdp:qp_latency_p50:peer_median_seconds) > 50e-6$' "$RULES"
	# k is 3 as it says
	[[ "$sec" == *"k = 3"* ]]
	grep -A1 'record: agentxdp:outlier_k$' "$RULES" | grep -q 'expr: vector(3)$'
}

# a TCP port nothing listens on now, on 127.0.0.1
free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# api PATH [curl args]: Prometheus' HTTP API, JSON on stdout
api() {
	local path=$1
	shift
	curl -sf --max-time 5 "http://127.0.0.1:$PROM_PORT$path" "$@"
}

# query EXPR: the result vector of an instant query
query() {
	api /api/v1/query --data-urlencode "query=$1" | jq -c '.data.result'
}

# has EXPR: the instant query returns at least one series
has() {
	[ "$(query "$1" | jq length)" -gt 0 ]
}

# node_exporter with only its textfile collector, on $T/textfile; then
# Prometheus scraping it every second, evaluating the shipped rules every
# second with each "for" shortened to 2 s (the expressions are the shipped
# ones; promtool's unit tests above hold the shipped durations)
start_servers() {
	mkdir -p "$T/textfile" "$T/data"
	NE_PORT=$(free_port)
	ax_bg prometheus-node-exporter --web.listen-address="127.0.0.1:$NE_PORT" \
		--collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$T/textfile" > "$T/ne.log" 2>&1
	NE_PID=$AX_LAST_PID
	sed 's/^\( *for:\) .*/\1 2s/' "$RULES" > "$T/rules.yml"
	PROM_PORT=$(free_port)
	cat > "$T/prometheus.yml" <<-EOF
	global:
	  scrape_interval: 1s
	  evaluation_interval: 1s
	rule_files: ["$T/rules.yml"]
	scrape_configs:
	  - job_name: node
	    static_configs: [{ targets: ["127.0.0.1:$NE_PORT"] }]
	EOF
	ax_bg prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/data" \
		--web.listen-address="127.0.0.1:$PROM_PORT" > "$T/prom.log" 2>&1
	PROM_PID=$AX_LAST_PID
	ax_until 20 "Prometheus ready" api /-/ready -o /dev/null ||
		{ cat "$T/ne.log" "$T/prom.log" >&2; false; }
	ax_until 10 "node_exporter scraped" has "up{job=\"node\"} == 1" ||
		{ cat "$T/ne.log" >&2; false; }
}

# start_traffic QPN ARGS...: a responder (ARGS: its options) in namespace
# b and a requester in a, three flows (UDP source ports 49152-49154) of
# responder QPNs QPN.., a message every 2 ms over all flows until stopped
start_traffic() {
	local qpn=$1
	shift
	ax_bg ip netns exec ${P}b "$GEN" responder -q --timeout 60 "$@"
	RESP_PID=$AX_LAST_PID
	ax_wait_udp ${P}b 4791
	ax_bg ip netns exec ${P}a "$GEN" requester -q -d $B -f 3 --qpn "$qpn" -n 1000000 \
		--interval-us 2000 --ack-timeout-us 500000 --timeout 60 > /dev/null
	REQ_PID=$AX_LAST_PID
}

stop_traffic() {
	ax_stop "$REQ_PID" INT
	ax_stop "$RESP_PID" INT
}

@test "end to end: node_exporter and Prometheus get rocediag's series; a healthy run fires nothing; a slow flow fires the outlier alert, a rule's drops the drop alert, each naming its QP" {
	ax_file_needs jq curl nft /usr/bin/python3 prometheus prometheus-node-exporter \
		"$DIAG" "$GEN" || skip "$AX_FILE_SKIP"
	local start=$SECONDS
	ax_netns_pair $P $A/24 $B/24
	start_servers
	ax_tool_start DIAG_PID "$T/diag.out" 90 Tracing \
		ip netns exec ${P}a "$DIAG" -i ${P}va --prom "$T/textfile/agentxdp-rocediag.prom" 1

	# healthy: every flow answered after 0.5 ms. Silent while the rules
	# have compared the three QPs at least 5 times
	start_traffic 0x11 --delay-us 500
	ax_until 20 "three round-trip QPs in Prometheus" \
		has 'count(agentxdp:qp_latency_p50:seconds{kind="rtt",sport=~"4915[234]"}) == 3'
	ax_until 15 "5 evaluations of the peer median" \
		has 'count_over_time(agentxdp:qp_latency_p50:peer_median_seconds[1m]) >= 5'
	query 'agentxdp:qp_latency_p50:seconds' >&2
	# (drops are traced host-wide: other suites' QPs are left out by address)
	[ "$(query "count_over_time(ALERTS{req=\"$A\"}[1m])")" = "[]" ] || { query ALERTS >&2; false; }
	stop_traffic

	# the demo's scenario on new QPs: flow 49153 answered after 20 ms
	# (40x), flow 49154's requests dropped by a rule in namespace b
	ip netns exec ${P}b nft -f - <<-EOF
	table inet axfl_filter {
		chain input {
			type filter hook input priority 0; policy accept;
			udp sport 49154 udp dport 4791 counter drop
		}
	}
	EOF
	start_traffic 0x21 --delay-us 500 --delay-us 49153=20000
	ax_until 25 "the outlier alert firing" \
		has "ALERTS{alertname=\"AgentXDPOutlierLink\",alertstate=\"firing\",req=\"$A\"}"
	ax_until 15 "the drop alert firing" \
		has "ALERTS{alertname=\"AgentXDPDroppedByRule\",alertstate=\"firing\",req=\"$A\"}"
	query ALERTS >&2

	# the series arrived, from this node_exporter, for these QPs
	local inst="127.0.0.1:$NE_PORT" out drop rule_n
	has "agentxdp_rocediag_qp_verdict{instance=\"$inst\",req=\"$A\",resp=\"$B\",sport=\"49154\",resp_qpn=\"0x23\"} == 4"
	has "agentxdp_rocediag_qp_latency_seconds{instance=\"$inst\",sport=\"49153\",resp_qpn=\"0x22\",q=\"0.5\"} >= 0.02"
	has "agentxdp_rocediag_qp_latency_seconds{instance=\"$inst\",sport=\"49152\",resp_qpn=\"0x21\",q=\"0.99\"} < 0.02"

	# one outlier: the slowed flow, named by node, ends, QPN and path
	out=$(query "ALERTS{alertname=\"AgentXDPOutlierLink\",req=\"$A\"}")
	[ "$(jq length <<<"$out")" -eq 1 ]
	[ "$(jq -r '.[0].metric | [.instance, .req, .resp, .resp_qpn, .sport, .kind] | join(" ")' <<<"$out")" = \
		"$inst $A $B 0x22 49153 rtt" ]
	# one drop alert: the dropped flow, with the rule and the interface;
	# its packets no more than the rule counted
	drop=$(query "ALERTS{alertname=\"AgentXDPDroppedByRule\",req=\"$A\"}")
	[ "$(jq length <<<"$drop")" -eq 1 ]
	[ "$(jq -r '.[0].metric | [.instance, .req, .resp, .resp_qpn, .sport, .ifname, .rule] | join(" ")' <<<"$drop")" = \
		"$inst $A $B 0x23 49154 ${P}vb inet axfl_filter input handle 2" ]
	rule_n=$(ip netns exec ${P}b nft list table inet axfl_filter | sed -n 's/.* counter packets \([0-9]*\) .*/\1/p')
	[ "$(query "agentxdp_rocediag_qp_dropped_packets{req=\"$A\",sport=\"49154\",resp_qpn=\"0x23\"}" | jq -r '.[0].value[1]')" -le "$rule_n" ]

	# everything started here ends here, by PID, and nothing listens after
	stop_traffic
	ax_tool_stop DIAG_PID
	ax_stop "$PROM_PID" TERM
	[ "$AX_RC" -eq 0 ]
	ax_stop "$NE_PID" TERM
	! ax_tcp_listening "$PROM_PORT"
	! ax_tcp_listening "$NE_PORT"
	echo "end to end took $((SECONDS - start)) s" >&2
}

@test "end to end, a collector: rocelat -r over a recording of two mirror sessions feeds Prometheus; the outlier alert fires for the recording's slow flow alone, the sessions folded" {
	ax_file_needs jq curl /usr/bin/python3 prometheus prometheus-node-exporter "$AX_BUILD/rocelat" ||
		skip "$AX_FILE_SKIP"
	/usr/bin/python3 -c 'import scapy.contrib.roce, scapy.contrib.erspan' 2>/dev/null ||
		skip "python3-scapy not installed"
	local cap=$T/cap s=connectx_two_mirrors inst out slow want
	mkdir -p "$cap"
	/usr/bin/python3 "$AX_ROOT/tests/lib/mirror_captures.py" "$cap" 2> "$cap/err" || { cat "$cap/err" >&2; false; }
	start_servers
	inst="127.0.0.1:$NE_PORT"
	# the collector: the recording once through rocelat, its file left
	# for node_exporter as a live collector's would be between writes
	"$AX_BUILD/rocelat" -r "$cap/$s.pcap" --prom "$T/textfile/agentxdp-collector.prom" > /dev/null
	# the truth: the flow whose median is far above the others'
	slow=$(jq -c '[.flows[]] | max_by(.p50)' "$cap/$s.json")
	# shellcheck disable=SC2046 # three numbers
	want="$inst 10.1.0.1 10.1.0.2 $(printf '0x%x 0x%x %s' $(jq -r '"\(.req_qpn) \(.dqpn) \(.sport)"' <<<"$slow")) rtt"
	ax_until 25 "the outlier alert firing from the collector" \
		has "ALERTS{alertname=\"AgentXDPOutlierLink\",alertstate=\"firing\",instance=\"$inst\"}"
	query ALERTS >&2
	# four flows, each seen by two sessions: four QPs for the rules
	[ "$(jq '[.flows[] | .dqpn] | unique | length' "$cap/$s.json")" -eq 4 ]
	has "count(agentxdp:qp_latency_p50:seconds{instance=\"$inst\"}) == 4"
	has "count(agentxdp_rocelat_flow_latency_seconds{instance=\"$inst\",q=\"0.5\"}) == 8"
	out=$(query "ALERTS{alertname=\"AgentXDPOutlierLink\",instance=\"$inst\"}")
	[ "$(jq length <<<"$out")" -eq 1 ]
	[ "$(jq -r '.[0].metric | [.instance, .req, .resp, .req_qpn, .resp_qpn, .sport, .kind] | join(" ")' <<<"$out")" = "$want" ]
	[ "$(jq -r '.[0].metric.session // "none"' <<<"$out")" = none ]
	ax_stop "$PROM_PID" TERM
	[ "$AX_RC" -eq 0 ]
	ax_stop "$NE_PID" TERM
	! ax_tcp_listening "$PROM_PORT"
	! ax_tcp_listening "$NE_PORT"
}

@test "end to end, a blind and a stale agent: rocediag on an interface with no RoCE fires AgentXDPFleetSeesNoRoCE, an rdma_rxe not on the host no AgentXDPSourceDown, an old textfile AgentXDPTextfileStale" {
	ax_file_needs jq curl /usr/bin/python3 prometheus prometheus-node-exporter "$DIAG" ||
		skip "$AX_FILE_SKIP"
	local inst out
	ax_netns_pair $P $A/24 $B/24
	start_servers
	inst="127.0.0.1:$NE_PORT"
	# an agent's file last written ten minutes ago (a dead agent's)
	printf '# TYPE agentxdp_rocediag_qps gauge\nagentxdp_rocediag_qps{verdict="OK"} 0\n' \
		> "$T/textfile/agentxdp-old.prom"
	touch -d "@$(($(date +%s) - 600))" "$T/textfile/agentxdp-old.prom"
	# a live agent that watches an interface no RoCE crosses
	ax_tool_start DIAG_PID "$T/diag.out" 90 Tracing \
		ip netns exec ${P}a "$DIAG" -i ${P}va --no-rules --prom "$T/textfile/agentxdp-rocediag.prom" 1
	ax_until 25 "the stale file's alert firing" \
		has "ALERTS{alertname=\"AgentXDPTextfileStale\",alertstate=\"firing\",instance=\"$inst\"}"
	ax_until 25 "the blind fleet's alert firing" \
		has 'ALERTS{alertname="AgentXDPFleetSeesNoRoCE",alertstate="firing"}'
	query ALERTS >&2
	# the stale one alone: the live agent's file is fresh
	out=$(query "ALERTS{alertname=\"AgentXDPTextfileStale\",instance=\"$inst\"}")
	[ "$(jq length <<<"$out")" -eq 1 ]
	[[ "$(jq -r '.[0].metric.file' <<<"$out")" == *agentxdp-old.prom ]]
	has "agentxdp_rocediag_roce_packets_total{instance=\"$inst\"} == 0"
	# rules turned off by an option: no alert (the same rule evaluations
	# that fired the two alerts above); rdma_rxe not loaded at all (absent,
	# as on a hardware RNIC's host): none either; loaded and unreadable:
	# one with the tool's own reason
	[ "$(query "ALERTS{alertname=\"AgentXDPSourceDown\",source=\"rules\"}")" = "[]" ]
	if [ ! -e /sys/module/rdma_rxe ] && [ ! -e /sys/kernel/btf/rdma_rxe ]; then
		grep -q '^agentxdp_rocediag_source_info{source="rdma_rxe",.*,absent="true"} 1$' \
			"$T/textfile/agentxdp-rocediag.prom"
		has "agentxdp_rocediag_source_info{instance=\"$inst\",source=\"rdma_rxe\",absent=\"true\"} == 1"
		[ "$(query "ALERTS{alertname=\"AgentXDPSourceDown\"}")" = "[]" ]
	elif [ ! -e /sys/kernel/btf/rdma_rxe ]; then
		ax_until 15 "rdma_rxe's source-down alert firing" \
			has "ALERTS{alertname=\"AgentXDPSourceDown\",alertstate=\"firing\",instance=\"$inst\",source=\"rdma_rxe\"}"
		out=$(query "ALERTS{alertname=\"AgentXDPSourceDown\",instance=\"$inst\"}")
		[ "$(jq length <<<"$out")" -eq 1 ]
		grep -qxF "$(jq -r '.[0].metric.reason' <<<"$out")" \
			<(sed -n 's/^agentxdp_rocediag_source_info{source="rdma_rxe",reason="\([^"]*\)".*/\1/p' "$T/textfile/agentxdp-rocediag.prom")
	fi
	ax_tool_stop DIAG_PID
	ax_stop "$PROM_PID" TERM
	[ "$AX_RC" -eq 0 ]
	ax_stop "$NE_PID" TERM
	! ax_tcp_listening "$PROM_PORT"
	! ax_tcp_listening "$NE_PORT"
}
