#!/usr/bin/env bats
# rxedrop on this machine's kernel: drops provoked between two namespaces,
# counted exactly against the number of packets sent.

load ../lib/common

RXEDROP=$AX_BUILD/rxedrop

setup() {
	ax_need_root
	ax_netns_pair axd 10.201.0.1/24 10.201.0.2/24
	ip -n axda addr add fd00:201::1/64 dev axdva nodad
	ip -n axdb addr add fd00:201::2/64 dev axdvb nodad
	OUT=$BATS_TEST_TMPDIR/out
	ERR=$OUT.err
}

teardown() {
	ax_cleanup
}

# start rxedrop with ARGS, wait until it traces (the banner is on stderr
# with -j, on stdout otherwise); its PID in RX_PID
start_rxedrop() {
	local banner=--out
	[[ " $* " == *" -j "* ]] && banner=--err
	ax_tool_start "$banner" RX_PID "$OUT" 90 Tracing "$RXEDROP" "$@"
}

# stop_rxedrop [NS COUNTER N]: stop rxedrop; with arguments, once the
# kernel's own COUNTER of namespace NS reached N (ax_wait_snmp): the drops
# are done when the sender returns only if the receiver's softirq kept up,
# and a drop still to come would miss the last report. The namespaces are
# new in each test: N counts from 0 at its start.
stop_rxedrop() {
	[ $# -eq 0 ] || ax_wait_snmp "$@"
	ax_tool_stop RX_PID
}

# every record's time in the one form of every tool: EPOCH_S.US
times_epoch_us() {
	local n
	n=$(grep -c '"time":' "$OUT")
	[ "$n" -gt 0 ] && [ "$(grep -cE '"time":[0-9]{10}\.[0-9]{6}[,}]' "$OUT")" -eq "$n" ]
}

# count of JSON drop_count rows matching a jq filter
json_count() {
	jq -s "[.[] | select(.type == \"drop_count\") | select($1) | .count] | add // 0" "$OUT"
}

# count of JSON drop events on this test's receiving veth matching a filter
# (events carry the interface name, so other traffic on the host never counts)
event_count() {
	jq -s "[.[] | select(.type == \"drop\" and .ifname == \"axdvb\") | select($1)] | length" "$OUT"
}

# wait_events N [FILTER]: until rxedrop -e -j printed N events (matching
# FILTER): drops no kernel counter of the namespace counts
wait_events() {
	ax_until 30 "$1 drop events" events_ge "$1" "${2:-true}"
}

events_ge() {
	[ "$(event_count "$2")" -ge "$1" ]
}

# counts mode counts every namespace on the host: exact while no other RoCE
# traffic dies on this machine (true in CI, where suites run one at a time)
@test "NO_SOCKET: 100 RoCE packets to a closed port, 100 counted at __udp4_lib_rcv" {
	start_rxedrop -j
	ax_send_roce axda 10.201.0.2 100
	stop_rxedrop axdb Udp:NoPorts 100
	[ "$(json_count '.reason == "NO_SOCKET" and (.location | startswith("__udp4_lib_rcv"))')" -eq 100 ]
	times_epoch_us
}

@test "NO_SOCKET over IPv6: 50 counted at __udp6_lib_rcv" {
	start_rxedrop -e -j
	ax_send_roce axda fd00:201::2 50
	stop_rxedrop axdb Udp6NoPorts 50
	[ "$(event_count '.reason == "NO_SOCKET" and .family == 6 and (.location | startswith("__udp6_lib_rcv"))')" -eq 50 ]
	times_epoch_us
}

# Udp InCsumErrors of the receiving namespace (/proc/net/snmp: a header
# line, then the values)
udp_csum_errors() {
	ip netns exec axdb awk '/^Udp:/ && n++ { print $8; exit }' /proc/net/snmp
}

@test "bad UDP checksum: 40 RoCE packets dropped as UDP_CSUM, as the kernel's own counter says" {
	local before after
	before=$(udp_csum_errors)
	start_rxedrop -e -j
	# a raw socket writes the UDP header with a wrong sum; veth leaves it
	# to the receiver to verify
	ip netns exec axda "$AX_BUILD/udpflood" -C 10.201.0.2 4791 40
	stop_rxedrop axdb Udp:InCsumErrors $((before + 40))
	after=$(udp_csum_errors)
	[ $((after - before)) -eq 40 ]
	[ "$(event_count '.reason == "UDP_CSUM" and (.location | startswith("__udp4_lib_rcv"))')" -eq 40 ]
	[ "$(event_count 'true')" -eq 40 ]
	# the packets as sent: source port 49152, PSNs 1..40, the BTH intact
	[ "$(jq -s '[.[] | select(.ifname == "axdvb") | .psn] | sort == [range(1; 41)]' "$OUT")" = true ]
	jq -e -s 'map(select(.type == "drop" and .ifname == "axdvb")) | all(.sport == 49152 and
		.opcode == "RC_SEND_ONLY" and .dqpn == 18)' "$OUT"
}

@test "nftables drop rule on 4791: NETFILTER_DROP at nft_do_chain, exact count" {
	ip netns exec axdb nft -f - <<-'NFT'
	table inet axd_filter {
		chain input { type filter hook input priority 0; udp dport 4791 drop; }
	}
	NFT
	start_rxedrop -e -j
	ax_send_roce axda 10.201.0.2 100
	wait_events 100
	stop_rxedrop
	[ "$(event_count '.reason == "NETFILTER_DROP" and (.location | startswith("nft_do_chain"))')" -eq 100 ]
	# the reason code is this kernel's, looked up by name, not hard-coded
	code=$(jq -s '[.[] | select(.reason == "NETFILTER_DROP") | .reason_code][0]' "$OUT")
	grep -qx "	SKB_DROP_REASON_NETFILTER_DROP = $code," "$AX_ROOT/vmlinux/x86/vmlinux.h" ||
		bpftool btf dump file /sys/kernel/btf/vmlinux | grep -q "'SKB_DROP_REASON_NETFILTER_DROP' val=$code"
}

@test "iptables-legacy DROP on 4791: NETFILTER_DROP, exact count" {
	command -v iptables-legacy >/dev/null || skip "iptables-legacy not installed"
	ip netns exec axdb iptables-legacy -A INPUT -p udp --dport 4791 -j DROP ||
		skip "kernel has no legacy ip_tables"
	start_rxedrop -e -j
	ax_send_roce axda 10.201.0.2 64
	wait_events 64
	stop_rxedrop
	[ "$(event_count '.reason == "NETFILTER_DROP" and (.location | startswith("nf_hook_slow"))')" -eq 64 ]
}

@test "non-RoCE UDP drops are hidden by default and shown with -U" {
	start_rxedrop -e -j
	ax_send_roce axda 10.201.0.2 30 04 5555
	ax_send_roce axda 10.201.0.2 7
	stop_rxedrop axdb Udp:NoPorts 37
	[ "$(event_count 'true')" -eq 7 ]
	[ "$(event_count '.dport == 5555')" -eq 0 ]

	start_rxedrop -e -j -U -P 5555
	ax_send_roce axda 10.201.0.2 30 04 5555
	ax_send_roce axda 10.201.0.2 7
	stop_rxedrop axdb Udp:NoPorts 74
	[ "$(event_count '.reason == "NO_SOCKET" and .dport == 5555')" -eq 30 ]
	[ "$(event_count '.dport == 4791')" -eq 0 ]
}

@test "-A widens to TCP: refused connections counted" {
	start_rxedrop -e -j -A
	for i in 1 2 3 4 5; do
		ip netns exec axda bash -c 'exec 3<>/dev/tcp/10.201.0.2/5556' 2>/dev/null || true
	done
	# the reset answering each SYN goes out before the SYN is dropped
	wait_events 5 '.reason == "NO_SOCKET" and .ip_proto == 6'
	stop_rxedrop
	[ "$(event_count '.reason == "NO_SOCKET" and .ip_proto == 6')" -eq 5 ]
}

@test "-e -j: one JSON event per drop with the correlation key" {
	start_rxedrop -e -j
	ax_send_roce axda 10.201.0.2 20
	stop_rxedrop axdb Udp:NoPorts 20
	[ "$(event_count 'true')" -eq 20 ]
	# every field of the schema, with the values the sender put on the wire
	jq -e -s 'map(select(.type == "drop" and .ifname == "axdvb")) | all(
		.saddr == "10.201.0.1" and .daddr == "10.201.0.2" and .dport == 4791 and
		.opcode == "RC_SEND_ONLY" and .dqpn == 18 and .ackreq == true and
		.ifname == "axdvb" and .reason == "NO_SOCKET" and (.time | type) == "number" and
		(.location | startswith("__udp4_lib_rcv")))' "$OUT"
	# PSNs are the sequence numbers 1..20, each once
	[ "$(jq -s '[.[] | select(.ifname == "axdvb") | .psn] | sort == [range(1; 21)]' "$OUT")" = true ]
}

@test "-e -s: the kernel stack names the netfilter path" {
	ip netns exec axdb nft -f - <<-'NFT'
	table ip axd_filter {
		chain input { type filter hook input priority 0; udp dport 4791 drop; }
	}
	NFT
	start_rxedrop -e -s
	ax_send_roce axda 10.201.0.2 1
	ax_wait_for "$OUT" "NETFILTER_DROP.*psn=1$" 30
	stop_rxedrop
	grep -Eq "^axdvb +10\.201\.0\.1:[0-9]+ +10\.201\.0\.2:4791 +NETFILTER_DROP +nft_do_chain\+0x[0-9a-f]+ +RC_SEND_ONLY qp=0x12 psn=1$" "$OUT"
	grep -q "^    nf_hook_slow+" "$OUT"
	grep -q "^    ip_local_deliver+" "$OUT"
}

# more than N tables in $OUT
tables_gt() {
	[ "$(grep -c '^LOCATION' "$OUT")" -gt "$1" ]
}

@test "counts mode prints a table every interval, sorted by count" {
	# no count: a slow guest may need more than a few intervals for the
	# sends and the nft commands; the run ends on SIGINT, which prints the
	# last interval's table too (interval+count is tested with nfdrop/rocelat)
	start_rxedrop 1
	ax_send_roce axda 10.201.0.2 12
	ip netns exec axdb nft add table ip t
	ip netns exec axdb nft add chain ip t c '{ type filter hook input priority 0; }'
	ip netns exec axdb nft add rule ip t c udp dport 4791 drop
	ax_send_roce axda 10.201.0.2 3
	ax_wait_for "$OUT" "NETFILTER_DROP"
	# one more table after the one that showed the drops
	local n
	n=$(grep -c '^LOCATION' "$OUT")
	ax_until 10 "a table after the one with the drops" tables_gt "$n"
	ax_tool_stop RX_PID
	[ "$AX_RC" -eq 0 ]
	[ "$(grep -c '^LOCATION' "$OUT")" -ge 2 ]
	# the per-interval tables add up to what was sent, each drop once
	[ "$(awk '/NO_SOCKET/ {s += $3} END {print s+0}' "$OUT")" -eq 12 ]
	[ "$(awk '/NETFILTER_DROP/ {s += $3} END {print s+0}' "$OUT")" -eq 3 ]
	# within each table, rows by count, largest first
	awk '/^LOCATION/ {prev = -1; next} NF == 3 && $3 ~ /^[0-9]+$/ {
		if (prev >= 0 && $3 > prev) bad = 1; prev = $3 } END {exit bad}' "$OUT"
}

# every namespace numbers its devices from 1: a twin of the test's pair
# (same addresses, same interface names but for the prefix, same indexes)
twin_pair() {
	ax_netns_pair axdn 10.201.0.1/24 10.201.0.2/24
	# the precondition that made -i count other namespaces' drops
	[ "$(ip -n axdb -o link show axdvb | cut -d: -f1)" = \
	  "$(ip -n axdnb -o link show axdnvb | cut -d: -f1)" ]
}

# 30 drops into axdb and 50 into axdnb, each of both receivers' NoPorts
# reached (counted on from what it was before)
twin_drops() {
	local b=$(ax_snmp axdb Udp:NoPorts) n=$(ax_snmp axdnb Udp:NoPorts)
	ax_send_roce axda 10.201.0.2 30
	ax_send_roce axdna 10.201.0.2 50
	ax_wait_snmp axdb Udp:NoPorts $((b + 30))
	ax_wait_snmp axdnb Udp:NoPorts $((n + 50))
}

# twin_drops, then rxedrop's counts; $1: how rxedrop runs
ns_scoped_count() {
	ax_tool_start --err RX_PID "$OUT" 90 Tracing "$@" -j
	twin_drops
	stop_rxedrop
	json_count '.reason == "NO_SOCKET"'
}

@test "-i is scoped by namespace: a device with the same index elsewhere never counts" {
	twin_pair
	# run inside the namespace, as "ip netns exec" users do
	[ "$(ns_scoped_count ip netns exec axdb "$RXEDROP" -i axdvb)" -eq 30 ]
	# from outside with -N; and -N alone scopes to the namespace
	[ "$(ns_scoped_count "$RXEDROP" -N axdb -i axdvb)" -eq 30 ]
	[ "$(ns_scoped_count "$RXEDROP" -N axdnb)" -eq 50 ]
	# events name only the device asked for
	start_rxedrop -e -j -N axdnb -i axdnvb
	twin_drops
	stop_rxedrop
	[ "$(jq -s '[.[] | select(.type == "drop")] | length' "$OUT")" -eq 50 ]
	[ "$(jq -s '[.[] | select(.type == "drop" and .ifname != "axdnvb")] | length' "$OUT")" -eq 0 ]
}

@test "CLI: -N names a namespace; an interface is looked up there" {
	twin_pair
	run "$RXEDROP" -N axd-no-such-ns
	[ "$status" -eq 1 ]
	[ "$output" = "rxedrop: no such network namespace: axd-no-such-ns" ]
	# axdvb exists in axdb, not in axdnb
	run "$RXEDROP" -N axdnb -i axdvb
	[ "$status" -eq 1 ]
	[ "$output" = "rxedrop: no such interface in network namespace axdnb: axdvb" ]
}

@test "-e prints a header; -T adds a TIME column, aligned, in events and counts" {
	ax_host_only
	start_rxedrop -e -T
	ax_send_roce axda 10.201.0.2 3
	ax_send_roce axda 10.201.0.2 2 04 5555
	stop_rxedrop axdb Udp:NoPorts 5
	cat "$OUT" >&2
	grep -Eq '^TIME +IFACE +SOURCE +DESTINATION +REASON +LOCATION +ROCE$' "$OUT"
	[ "$(grep -Ec '^[0-9]{2}:[0-9]{2}:[0-9]{2} axdvb .* NO_SOCKET .* RC_SEND_ONLY qp=0x12 psn=[123]$' "$OUT")" -eq 3 ]
	ax_columns_aligned "$OUT" TIME TIME IFACE SOURCE DESTINATION REASON LOCATION ROCE
	# IPv4 rows (an IPv6 address is wider than its column)
	start_rxedrop -e -U -P 5555
	ax_send_roce axda 10.201.0.2 2 04 5555
	stop_rxedrop axdb Udp:NoPorts 7
	grep -Eq '^IFACE +SOURCE +DESTINATION +REASON +LOCATION +ROCE$' "$OUT"
	[ "$(grep -Ec '^axdvb +10\.201\.0\.1:[0-9]+ +10\.201\.0\.2:5555 +NO_SOCKET +__udp4_lib_rcv\+0x[0-9a-f]+$' "$OUT")" -eq 2 ]
	ax_columns_aligned "$OUT" IFACE IFACE SOURCE DESTINATION REASON LOCATION

	# counts: the time on a line of its own above each table
	start_rxedrop -T
	ax_send_roce axda 10.201.0.2 4
	stop_rxedrop axdb Udp:NoPorts 11
	cat "$OUT" >&2
	grep -B1 '^LOCATION' "$OUT" | grep -Eq '^[0-9]{2}:[0-9]{2}:[0-9]{2}$'
	grep -Eq '^__udp4_lib_rcv\+0x[0-9a-f]+ +NO_SOCKET +[0-9]+$' "$OUT"
	ax_columns_aligned "$OUT" LOCATION LOCATION REASON
}

@test "CLI: --help describes rxedrop and exits 0" {
	run "$RXEDROP" --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"USAGE: rxedrop"* ]]
	[[ "$output" == *"--events"* ]]
	[[ "$output" == *"--json"* ]]
}

@test "CLI: bad input is a one-line error and a non-zero exit" {
	run "$RXEDROP" --no-such-option
	[ "$status" -ne 0 ]
	[[ "${lines[0]}" == *"unrecognized option"* ]]
	run "$RXEDROP" 0
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = "rxedrop: invalid interval: 0 (1 or more)" ]
	run "$RXEDROP" 1x
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = "rxedrop: invalid interval: 1x (1 or more)" ]
	run "$RXEDROP" -i axd-no-such-if
	[ "$status" -ne 0 ]
	[ "$output" = "rxedrop: no such interface: axd-no-such-if" ]
	run "$RXEDROP" -P 70000
	[ "$status" -ne 0 ]
	[ "$output" = "rxedrop: invalid port: 70000 (1-65535)" ]
	run "$RXEDROP" -s
	[ "$status" -ne 0 ]
	[ "$output" = "rxedrop: -s/--stack needs -e/--events" ]
}

@test "CLI: without privileges, a clear error and non-zero exit" {
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$RXEDROP"
	[ "$status" -eq 1 ]
	[ "$output" = "rxedrop: needs CAP_BPF and CAP_PERFMON, which this process lacks: run it as root, or grant them" ]
}

@test "CLI: root without CAP_BPF is told so; CAP_SYS_ADMIN stands in for it, as in the kernel" {
	run capsh --drop=cap_bpf,cap_sys_admin -- -c "exec '$RXEDROP'"
	[ "$status" -eq 1 ]
	[ "$output" = "rxedrop: needs CAP_BPF, which this process lacks: run it as root, or grant it" ]
	# past the check: -N's namespace is the next thing cli_setup looks at
	run capsh --drop=cap_bpf -- -c "exec '$RXEDROP' -N axd-no-such-ns"
	[ "$status" -eq 1 ]
	[ "$output" = "rxedrop: no such network namespace: axd-no-such-ns" ]
}

@test "root without CAP_SYSLOG, where /proc/kallsyms then hides addresses: one line naming CAP_SYSLOG (rxedrop, nfdrop, rocediag)" {
	local t
	# kallsyms shows addresses to everyone with kptr_restrict 0 and
	# perf_event_paranoid 1 or less; to none with kptr_restrict 2
	[ "$(cat /proc/sys/kernel/kptr_restrict)" = 1 ] ||
		[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ] ||
		skip "this kernel shows kernel addresses without CAP_SYSLOG"
	[ "$(cat /proc/sys/kernel/kptr_restrict)" != 2 ] || skip "kptr_restrict 2 hides them from root too"
	for t in rxedrop nfdrop rocediag; do
		run capsh --drop=cap_syslog -- -c "exec '$AX_BUILD/$t' -i lo 1 1"
		echo "$t: $output" >&2
		[ "$status" -eq 1 ]
		[ "$output" = "$t: cannot read kernel symbols: /proc/kallsyms hides their addresses from this process, which lacks CAP_SYSLOG" ]
	done
}

@test "not root, with CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN where libbpf reads module BTF): 100 RoCE drops counted" {
	# ambient, so that they survive setpriv's exec; CAP_SYSLOG for the
	# addresses in /proc/kallsyms (kernel.perf_event_paranoid > 1)
	local caps=+bpf,+perfmon,+syslog
	if ! bpftool btf dump file /sys/kernel/btf/vmlinux | grep -q "FUNC 'bpf_rdonly_cast'"; then
		# before 6.2 the kfunc is in no BTF: libbpf (1.1) then lists
		# the modules' BTF, which needs CAP_SYS_ADMIN; one line says so
		run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=$caps \
			--ambient-caps=$caps "$RXEDROP" -j 1 1
		echo "$output"
		[ "$status" -eq 1 ]
		[ "${lines[-1]}" = "rxedrop: load BPF programs: libbpf must read the kernel modules' BTF here (this kernel's own lacks a kfunc the program can use), which needs CAP_SYS_ADMIN: run as root, or grant CAP_SYS_ADMIN" ]
		caps=$caps,+sys_admin
	fi
	ax_tool_start --err RX_PID "$OUT" 90 Tracing setpriv --reuid=65534 --regid=65534 \
		--clear-groups --inh-caps=$caps --ambient-caps=$caps "$RXEDROP" -j
	[ "$(ps -o uid= -p "$RX_PID" | tr -d ' ')" = 65534 ]
	ax_send_roce axda 10.201.0.2 100
	stop_rxedrop axdb Udp:NoPorts 100
	[ "$(json_count '.reason == "NO_SOCKET" and (.location | startswith("__udp4_lib_rcv"))')" -eq 100 ]
}

@test "nothing stays attached after rxedrop is killed with SIGKILL" {
	before=$(bpftool link show | grep -c kfree_skb || true)
	start_rxedrop
	ax_tool_stop RX_PID KILL
	# the kernel frees a dead process's links and programs after its
	# exit (deferred work), not before waitpid returns: wait until both
	# are gone, which they never are if anything stays attached
	ax_until 30 "rxedrop's BPF links and programs to go" rxedrop_detached "$before"
}

# rxedrop_detached N: N kfree_skb links left (as before it ran), and no
# rxedrop program loaded
rxedrop_detached() {
	[ "$(bpftool link show | grep -c kfree_skb || true)" -eq "$1" ] &&
		! bpftool prog show | grep -q rxedrop
}

# -w: the dropped packets read back with tshark
load ../lib/pcapng

# packets of the nft rule with a counter in table inet axd_filter
axd_counter() {
	ip netns exec axdb nft list table inet axd_filter |
		sed -n 's/.*counter packets \([0-9]*\) .*/\1/p'
}

@test "-w: one pcapng packet per drop, comment and headers equal the JSON events" {
	pcap_need_tshark
	ip netns exec axdb nft -f - <<-'NFT'
	table inet axd_filter {
		chain input { type filter hook input priority 0; udp dport 4791 counter drop; }
	}
	NFT
	PCAP=$BATS_TEST_TMPDIR/drops.pcapng
	start_rxedrop -e -j -N axdb -i axdvb -w "$PCAP"
	ax_send_roce axda 10.201.0.2 30
	ax_until 20 "30 drop events" bash -c "[ \$(grep -c '\"type\":\"drop\"' $OUT) -ge 30 ]"
	ax_tool_stop RX_PID
	# the rule's own counter is the ground truth
	[ "$(axd_counter)" -eq 30 ]
	[ "$(pcap_count "$PCAP")" -eq 30 ]
	[ "$(event_count 'true')" -eq 30 ]
	# comment: location and reason as the JSON event names them, in order
	diff <(jq -r 'select(.type == "drop") | "location=\(.location) reason=\(.reason)" +
		(if .rxe_check then " rxe_check=\(.rxe_check)" else "" end)' "$OUT") \
		<(pcap_fields "$PCAP" frame.comment)
	# headers as sent, and as the events carry them
	diff <(jq -r 'select(.type == "drop") | "\(.saddr) \(.daddr) \(.dport) \(.dqpn) \(.psn)"' "$OUT") \
		<(pcap_headers "$PCAP")
	diff <(for i in $(seq 1 30); do echo "10.201.0.1 10.201.0.2 4791 18 $i"; done) \
		<(pcap_headers "$PCAP")
	# Ethernet from the mac header: the veth's interface, whole 74-byte frames,
	# wall-clock times equal to the events' to the microsecond
	[ "$(pcap_fields "$PCAP" frame.interface_name frame.encap_type frame.len frame.cap_len |
		sort -u)" = "$(printf 'axdvb\t1\t74\t74')" ]
	diff <(jq -r 'select(.type == "drop") | .time | tostring' "$OUT" |
		awk '{ printf "%.6f\n", $1 }') \
		<(pcap_fields "$PCAP" frame.time_epoch | awk '{ printf "%.6f\n", $1 }')
}

@test "-w without -e keeps the table; --snaplen cuts; SIGTERM leaves a complete file" {
	pcap_need_tshark
	PCAP=$BATS_TEST_TMPDIR/drops.pcapng
	start_rxedrop -N axdb -i axdvb -w "$PCAP" --snaplen 60
	ax_send_roce axda 10.201.0.2 12
	ax_until 20 "12 packets in $PCAP" bash -c "[ \$(tshark -r $PCAP 2>/dev/null | wc -l) -ge 12 ]"
	ax_tool_stop RX_PID TERM
	grep -Eq '^__udp4_lib_rcv\+0x[0-9a-f]+ +NO_SOCKET +12$' "$OUT"
	[ "$(pcap_count "$PCAP")" -eq 12 ]
	[ "$(pcap_fields "$PCAP" frame.len frame.cap_len frame.comment | sort -u |
		sed 's/+0x[0-9a-f]*//')" = "$(printf '74\t60\tlocation=__udp4_lib_rcv reason=NO_SOCKET')" ]
	# the first 60 bytes hold the BTH (Ethernet, IPv4, UDP: 42, BTH 12): QP and PSNs still decode
	diff <(for i in $(seq 1 12); do echo "10.201.0.1 10.201.0.2 4791 18 $i"; done) \
		<(pcap_headers "$PCAP")
}

@test "CLI: -w to an unwritable file, or a bad --snaplen: one line, exit 1" {
	run "$RXEDROP" -w /nonexistent/dir/x.pcapng
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == "rxedrop: cannot write /nonexistent/dir/x.pcapng: No such file or directory" ]]
	for bad in 0 2049 x; do
		run "$RXEDROP" -w "$BATS_TEST_TMPDIR/x.pcapng" --snaplen "$bad"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
	done
}
