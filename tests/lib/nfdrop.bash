# Helpers of the nfdrop suites (tests/host/nfdrop*.bats): namespaces with
# a veth pair or a router between two, nfdrop started and stopped around
# the packets, and jq checks of its JSON count rows. Needs $NFDROP, $P,
# $OUT and $ERR (set by the suites' setup(), with nfdrop_setup).

NFDROP=$AX_BUILD/nfdrop

# setup() of a suite: names for this test, PREFIX (3 letters) first: the
# interfaces are ${P}va, at most 15 characters
nfdrop_setup() {
	ax_need_root
	[ -x "$NFDROP" ] || skip "build/nfdrop not built (make)"
	P=$1$(($$ % 100000))t$BATS_TEST_NUMBER
	OUT=$BATS_TEST_TMPDIR/out
	ERR=$OUT.err
}

# setup_file() of a suite: the guest loads netfilter modules on use (then
# fexit can attach to them from the first test on); the host has them
# built in
nfdrop_modules() {
	local m
	for m in nf_tables ip_tables iptable_filter ip6_tables nf_reject_ipv4 \
		nf_reject_ipv6 nf_conntrack; do
		modprobe -q "$m" 2>/dev/null || true
	done
}

# two namespaces ${P}a (10.210.0.1, fd00:210::1) and ${P}b (.2, ::2)
pair() {
	ax_netns_pair "$P" 10.210.0.1/24 10.210.0.2/24
	ip -n "${P}a" addr add fd00:210::1/64 dev "${P}va" nodad
	ip -n "${P}b" addr add fd00:210::2/64 dev "${P}vb" nodad
}

# ${P}a -- ${P}r (forwarding) -- ${P}b, 10.211.1.0/24 and 10.211.2.0/24
router() {
	local ns
	for ns in a r b; do
		ip netns add "$P$ns"
		AX_NETNS+=("$P$ns")
		ip -n "$P$ns" link set lo up
	done
	ip link add "${P}a0" netns "${P}a" type veth peer name "${P}r0" netns "${P}r"
	ip link add "${P}b0" netns "${P}b" type veth peer name "${P}r1" netns "${P}r"
	ip -n "${P}a" addr add 10.211.1.1/24 dev "${P}a0"
	ip -n "${P}r" addr add 10.211.1.254/24 dev "${P}r0"
	ip -n "${P}r" addr add 10.211.2.254/24 dev "${P}r1"
	ip -n "${P}b" addr add 10.211.2.1/24 dev "${P}b0"
	ip -n "${P}a" link set "${P}a0" up
	ip -n "${P}b" link set "${P}b0" up
	ip -n "${P}r" link set "${P}r0" up
	ip -n "${P}r" link set "${P}r1" up
	ip -n "${P}a" route add default via 10.211.1.254
	ip -n "${P}b" route add default via 10.211.2.254
	ip netns exec "${P}r" sysctl -qw net.ipv4.ip_forward=1
}

# packets of the rule with handle H in chain SPEC ("inet t1 in")
nft_counter() {
	ip netns exec "$1" nft -a list chain $2 |
		sed -n "s/.*counter packets \([0-9]*\) bytes .* # handle $3\$/\1/p"
}

# table inet NAME with an input chain at priority filter whose one rule
# RULE (nft words) drops; loaded alone, so tables load in call order
tied_table() {
	ip netns exec "${P}b" nft -f - <<-NFT
	table inet $1 {
		chain in {
			type filter hook input priority filter; policy accept;
			$2
		}
	}
	NFT
}

# packets the policy of iptables-nft chain INPUT dropped, by its counter
policy_counter() {
	ip netns exec "$1" iptables-nft -L INPUT -v -x -n |
		sed -n 's/^Chain INPUT (policy DROP \([0-9]*\) packets.*/\1/p'
}

# ${P}b's RoCE to 10.210.0.4 is DNATed to port 5555 and dropped there by
# its own counted rule (H5), the real RoCE to .2 by the 4791 rule (H7)
dnat_rules() {
	ip -n "${P}b" addr add 10.210.0.4/24 dev "${P}vb"
	ip netns exec "${P}b" nft -f - <<-NFT
	table ip tn {
		chain pre {
			type nat hook prerouting priority dstnat; policy accept;
			ip daddr 10.210.0.4 udp dport 4791 dnat to 10.210.0.4:5555
		}
	}
	table inet tr {
		chain in {
			type filter hook input priority filter; policy accept;
			udp dport 5555 counter drop
			udp dport 4791 counter drop
		}
	}
	NFT
	H5=$(nft_handle "${P}b" "inet tr in" "udp dport 5555 .*drop")
	H7=$(nft_handle "${P}b" "inet tr in" "udp dport 4791 .*drop")
	[ -n "$H5" ] && [ -n "$H7" ]
}

# br_netfilter loaded for a test (the guest's kernel has it as a module,
# and loaded it turns on bridge-nf-call-iptables in every new namespace):
# unloaded again by nfdrop_br_netfilter_unload in teardown
nfdrop_br_netfilter() {
	[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] && return 0
	modprobe -q br_netfilter 2>/dev/null || return 1
	NFD_BRNF_LOADED=1
	[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]
}

nfdrop_br_netfilter_unload() {
	[ -n "${NFD_BRNF_LOADED:-}" ] || return 0
	modprobe -q -r br_netfilter 2>/dev/null || true
	NFD_BRNF_LOADED=
}

# ${P}a (10.212.0.1) -- bridge ${P}br in ${P}s -- ${P}c (10.212.0.3), with
# bridge-nf-call-iptables on in ${P}s: bridged IPv4 runs its IP hooks
bridged() {
	local ns
	nfdrop_br_netfilter || skip "no br_netfilter"
	for ns in a s c; do
		ip netns add "$P$ns"
		AX_NETNS+=("$P$ns")
		ip -n "$P$ns" link set lo up
	done
	ip -n "${P}s" link add "${P}br" type bridge
	ip link add "${P}a0" netns "${P}a" type veth peer name "${P}s0" netns "${P}s"
	ip link add "${P}c0" netns "${P}c" type veth peer name "${P}s1" netns "${P}s"
	ip -n "${P}s" link set "${P}s0" master "${P}br"
	ip -n "${P}s" link set "${P}s1" master "${P}br"
	ip -n "${P}a" addr add 10.212.0.1/24 dev "${P}a0"
	ip -n "${P}c" addr add 10.212.0.3/24 dev "${P}c0"
	for l in "a ${P}a0" "c ${P}c0" "s ${P}s0" "s ${P}s1" "s ${P}br"; do
		set -- $l
		ip -n "$P$1" link set "$2" up
	done
	ip netns exec "${P}s" sysctl -qw net.bridge.bridge-nf-call-iptables=1
	ax_link_ready "${P}a" "${P}a0" && ax_link_ready "${P}c" "${P}c0"
	# the neighbour is static: ARP is not what this is about
	mac=$(ip -n "${P}c" -br link show "${P}c0" | awk '{print $3}')
	ip -n "${P}a" neigh replace 10.212.0.3 lladdr "$mac" dev "${P}a0"
}

# packets of named counter NAME of table inet TABLE
named_counter() {
	ip netns exec "$1" nft list counter inet "$2" "$3" |
		sed -n 's/.*packets \([0-9]*\) bytes.*/\1/p'
}

# start nfdrop with ARGS (JSON lines), wait until it traces; its PID in
# NF_PID, its banner (which says fexit or kfree_skb) kept in $BANNER
start_nfdrop() {
	ax_tool_start --err NF_PID "$OUT" 90 Tracing "$NFDROP" -j "$@"
	BANNER=$(grep Tracing "$ERR")
}

# stop_nfdrop [NS COUNTER N]: stop nfdrop; with arguments, once COUNTER of
# namespace NS reached N (ax_wait_snmp): a packet may still wait in a
# backlog for the receiving softirq when its sender returns, and nfdrop's
# last report would miss its drop. Ip:InReceives counts each IPv4 packet
# in the softirq that goes on to run NS's prerouting, input and forward
# hooks on it (the test namespaces get no other IPv4 traffic); a drop at
# the sender's output hook is done when the send returns. Tests whose
# drops no such counter counts (IPv6: neighbour discovery and MLD count
# too; TCP from scapy) wait for their rules' counters or nfdrop's events.
stop_nfdrop() {
	[ $# -eq 0 ] || ax_wait_snmp "$@"
	ax_tool_stop NF_PID
}

# ip_in NS: IPv4 packets NS has received so far (Ip:InReceives)
ip_in() {
	ax_snmp "$1" Ip:InReceives
}

# wait_nft_counter NS CHAIN_SPEC H N: until the counter of the rule with
# handle H reached N (nft_counter)
wait_nft_counter() {
	ax_until 30 "$4 packets on the counter of rule $3 ($2 in $1)" nft_counter_ge "$@"
}

nft_counter_ge() {
	[ "$(nft_counter "$1" "$2" "$3")" -ge "$4" ]
}

# wait_nf_events N: until nfdrop -e -j printed N drop events in $OUT
wait_nf_events() {
	ax_until 30 "$1 nfdrop events" nf_events_ge "$1"
}

# grep, not jq: polled, and jq takes a second to start in the guest
nf_events_ge() {
	[ "$(grep -c '^{"type":"nf_drop",' "$OUT")" -ge "$1" ]
}

fexit_path() {
	[[ $BANNER == *"fexit nft_do_chain"* ]]
}

# packets summed over the count rows matching a jq filter
packets() {
	jq -s "[.[] | select(.type == \"nf_drop_count\") | select($1) | .packets] | add // 0" "$OUT"
}

# expect FILTER EXPR VALUE [EXPR VALUE]...: exactly one count row matches
# FILTER and each jq EXPR of it prints VALUE. One jq run for all (jq takes
# a second to start in the emulated guest).
expect() {
	local f=$1 prog sep="" i=0 line
	local -a want=() exprs=()
	shift
	while (($#)); do exprs+=("$1"); want+=("$2"); shift 2; done
	prog="[.[] | select(.type == \"nf_drop_count\") | select($f)] | if length != 1 then \"rows: \\(length)\" else .[0] | ("
	for e in "${exprs[@]}"; do
		prog+="$sep($e | tostring)"
		sep=", "
	done
	prog+=") end"
	while IFS= read -r line; do
		if [[ $line == "rows: "* ]]; then
			echo "expected one row for $f, got ${line#rows: }:" >&2
			cat "$OUT" >&2
			return 1
		fi
		if [ "$line" != "${want[i]}" ]; then
			echo "row $f: ${exprs[i]} is '$line', expected '${want[i]}'" >&2
			cat "$OUT" >&2
			return 1
		fi
		i=$((i + 1))
	done < <(jq -r -s "$prog" "$OUT")
	[ "$i" -eq "${#want[@]}" ]
}

# handle of the rule whose nft listing matches a regexp, as nft prints it
nft_handle() {
	local ns=$1 chain_spec=$2 re=$3
	ip netns exec "$ns" nft -a list chain $chain_spec |
		sed -n "s/^[[:space:]]*$re.* # handle \([0-9]*\)$/\1/p"
}

# the rule's text as `nft -s` prints it, for a handle
nft_text() {
	local ns=$1 chain_spec=$2 handle=$3
	ip netns exec "$ns" nft -a -s list chain $chain_spec |
		sed -n "s/^[[:space:]]*\(.*\) # handle $handle$/\1/p"
}

send_fails_ok() {
	ax_send_roce "$@" 2>/dev/null || true
}

# the guest emulates its CPU: tests that only exercise user-space logic
# already covered on the host skip there
host_only() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "user-space logic, tested on the host"
}


# send_from [--any] NS DST SPORT N: N RoCE v2 packets (a SEND_ONLY BTH)
# from UDP source port SPORT, for tests where the port picks a conntrack
# entry or a rule. --any: each send's own EPERM (a drop at the sender's
# output hook fails it) is ignored
send_from() {
	local any=0
	[ "$1" != --any ] || { any=1; shift; }
	ip netns exec "$1" python3 - "$2" "$3" "$4" "$any" <<-'PY'
	import socket, struct, sys
	dst, sport, n, any_ = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
	s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	s.bind(("", sport))
	bth = struct.pack("!BBHII", 0x04, 0x40, 0xffff, 0x12, 7) + bytes(20)
	for _ in range(n):
	    try:
	        s.sendto(bth, (dst, 4791))
	    except PermissionError:
	        if not any_:
	            raise
	PY
}

# table ip x (input, priority 0) drops source port 1111, table inet y
# (input, priority 10) source port 2222: one hook, two families; handles
# in HX and HY. x's rule has no counter: a counter would contradict a
# certain row naming it for y's drops and so hide that wrong answer
two_family_tables() {
	ip netns exec "${P}b" nft -f - <<-NFT
	table ip x {
		chain in {
			type filter hook input priority 0; policy accept;
			udp sport 1111 drop
		}
	}
	table inet y {
		chain in {
			type filter hook input priority 10; policy accept;
			udp sport 2222 counter drop
		}
	}
	NFT
	HX=$(nft_handle "${P}b" "ip x in" "udp sport 1111.*drop")
	HY=$(nft_handle "${P}b" "inet y in" "udp sport 2222.*drop")
	[ -n "$HX" ] && [ -n "$HY" ]
}

# certain_within: every count row without '?' names a rule (table TABLE,
# handle H, given as "family/table/handle=counter" words) and counts at
# most that rule's counter; prints the offending rows
certain_within() {
	local w fam tab h n bad=0 got
	for w in "$@"; do
		fam=${w%%/*}; w=${w#*/}; tab=${w%%/*}; w=${w#*/}
		h=${w%%=*}; n=${w#*=}
		got=$(packets '(.inferred | length) == 0 and .table == "'"$tab"'" and .rule_handle == '"$h")
		if [ "$got" -gt "$n" ]; then
			echo "certain rows name $fam $tab handle $h for $got packets, its counter $n" >&2
			bad=1
		fi
	done
	# no certain row names another rule
	local sel='(.inferred | length) == 0'
	for w in "$@"; do
		fam=${w%%/*}; w=${w#*/}; tab=${w%%/*}; w=${w#*/}; h=${w%%=*}
		sel+=' and ((.table == "'"$tab"'" and .rule_handle == '"$h"') | not)'
	done
	got=$(packets "$sel")
	if [ "$got" -ne 0 ]; then
		echo "certain rows name other rules for $got packets" >&2
		bad=1
	fi
	[ "$bad" -eq 0 ] || { cat "$OUT" >&2; return 1; }
}

# events_within SPORT TABLE H: no certain event of source port SPORT
# names another rule than TABLE's handle H
events_within() {
	local bad
	bad=$(jq -s '[.[] | select(.type == "nf_drop") | select((.inferred | length) == 0) |
		select(.sport == '"$1"') | select(.table != "'"$2"'" or .rule_handle != '"$3"')] |
		length' "$OUT")
	[ "$bad" -eq 0 ] || { echo "$bad certain events of sport $1 name another rule" >&2; cat "$OUT" >&2; return 1; }
}

# reload_rules: ${P}b's ruleset, reloaded as `flush ruleset` + a file
# every 0.2 s until killed, one of two: R1 drops source port 9999, R2
# port 1111 (both rules get handle 2)
reload_rules() {
	printf 'table inet t {\n chain in {\n  type filter hook input priority 0; policy accept;\n  udp sport %s counter drop\n }\n}\n' \
		9999 >"$BATS_TEST_TMPDIR/r1.nft"
	sed 's/9999/1111/' "$BATS_TEST_TMPDIR/r1.nft" >"$BATS_TEST_TMPDIR/r2.nft"
	ip netns exec "${P}b" nft -f "$BATS_TEST_TMPDIR/r1.nft"
}

# reload_to R: ${P}b's ruleset replaced by R (r1, r2) as a reload does it
reload_to() {
	printf 'flush ruleset\ninclude "%s"\n' "$BATS_TEST_TMPDIR/$1.nft" |
		ip netns exec "${P}b" nft -f -
}

reload_loop() {
	local r
	while :; do
		for r in r2 r1; do
			reload_to "$r" || exit 1
			sleep 0.2
		done
	done
}

# stateless NAT in ${P}b: chain early (prerouting -300) drops 10.210.0.5
# without a counter (handle HA: only a rewritten packet could match it, so
# no counter can rule it out) and rewrites .4 to .5; chain filt
# (prerouting 0) drops .5 (HB)
stateless_nat() {
	ip -n "${P}b" addr add 10.210.0.4/24 dev "${P}vb"
	ip netns exec "${P}b" nft -f - <<-NFT
	table ip sn {
		chain early {
			type filter hook prerouting priority -300; policy accept;
			ip daddr 10.210.0.5 drop
			ip daddr 10.210.0.4 ip daddr set 10.210.0.5
		}
		chain filt {
			type filter hook prerouting priority 0; policy accept;
			ip daddr 10.210.0.5 counter drop
		}
	}
	NFT
	HA=$(nft_handle "${P}b" "ip sn early" "ip daddr 10.210.0.5 drop")
	HB=$(nft_handle "${P}b" "ip sn filt" "ip daddr 10.210.0.5 counter.*drop")
	[ -n "$HA" ]
	[ -n "$HB" ]
}

# trio_start ARGS...: three nfdrops on the same packets, started together
# (the guest's emulated CPU makes each start cost seconds): rows in
# $OUT.d, events (-e) in $OUT.e, --trace-rules rows in $OUT.t; PIDs in
# NF_D, NF_E, NF_T. trio_stop stops them; in_out FILE CMD... runs a check
# of $OUT (packets, expect, certain_within) on FILE
trio_start() {
	ax_tool_start --err NF_D "$OUT.d" 0 "" "$NFDROP" -j "$@"
	ax_tool_start --err NF_E "$OUT.e" 0 "" "$NFDROP" -j -e "$@"
	ax_tool_start --err NF_T "$OUT.t" 0 "" "$NFDROP" -j --trace-rules "$@"
	ax_tool_wait --err NF_D 120 Tracing
	ax_tool_wait --err NF_E 120 Tracing
	ax_tool_wait --err NF_T 120 Tracing
}

trio_stop() {
	local rc=0
	ax_tool_stop NF_D || rc=1
	ax_tool_stop NF_E || rc=1
	ax_tool_stop NF_T || rc=1
	return "$rc"
}

in_out() {
	local OUT=$1
	shift
	"$@"
}

# sums TYPE FILTER...: for the lines of TYPE (nf_drop_count: their
# packets; nf_drop: one each) matching each jq FILTER, the sums on one
# line, in one jq run (a second each in the guest)
sums() {
	local type=$1 f prog sep=""
	shift
	prog="[.[] | select(.type == \"$type\")] as \$r | ["
	for f in "$@"; do
		prog+="$sep(\$r | map(select($f) | (.packets // 1)) | add // 0)"
		sep=", "
	done
	jq -r -s "$prog] | map(tostring) | join(\" \")" "$OUT"
}
