#!/usr/bin/env bash
# Soft-RoCE test bed: two rdma_rxe devices talking RoCE v2 across a veth pair,
# in the initial network namespace (rxe devices cannot move into another).
#
#   veth-a 10.10.0.1/24  <-- veth pair -->  veth-b 10.10.0.2/24
#   rxe-a on veth-a                         rxe-b on veth-b
#
# Usage: scripts/testbed.sh up|down|traffic|verify|status|reject on|off
#   up          create the bed (a second up is a no-op)
#   down        put routing rules, sysctls, firewall rules and devices back
#               exactly as up found them (without up: nothing to do)
#   traffic     one bounded ib_write_bw run rxe-a -> rxe-b, 0 if it
#               completed at least one iteration
#   verify      PASS only if a capture on veth-b shows RoCE v2 (UDP 4791)
#               AND ib_write_bw completes at least one iteration
#   status      what is set up
#   reject on|off
#               an iptables INPUT REJECT of UDP 4791 on veth-b (the firewall
#               that eats RoCE); down removes it too
#
# Environment: TESTBED_ITERS (200), TESTBED_SIZE (65536), TESTBED_TIMEOUT
# (30 s per ib_write_bw), TESTBED_PORT (18515, perftest's TCP exchange),
# TESTBED_WAIT (30 s for a device, server or capture to get ready),
# TESTBED_STATE (/run/agentxdp-testbed).
#
# Why the routing is unusual: both addresses are local, so by default the
# kernel would deliver 10.10.0.1 -> 10.10.0.2 over lo and nothing would cross
# the veth. Source-based rules limited to locally generated packets (iif lo)
# send each side's traffic out of its own veth, the `local` table lookup moves
# below them, and accept_local lets each end accept packets whose source is
# one of its own addresses. perftest's TCP exchange has no bound source, so it
# still goes over lo; only RoCE crosses the veth.
set -euo pipefail

STATE=${TESTBED_STATE:-/run/agentxdp-testbed}
ITERS=${TESTBED_ITERS:-200}
SIZE=${TESTBED_SIZE:-65536}
TIMEOUT=${TESTBED_TIMEOUT:-30}
PORT=${TESTBED_PORT:-18515}
# ax_tcp_listening
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../tests/lib/common.bash"

VETH_A=veth-a VETH_B=veth-b
IP_A=10.10.0.1 IP_B=10.10.0.2
RXE_A=rxe-a RXE_B=rxe-b
TABLE_A=101 TABLE_B=102
PREF_A=100 PREF_B=101
# Where the `local` lookup goes: below our rules, above the main table (32766).
LOCAL_PREF=1000
# GID index 1 of an rxe port is the IPv4-mapped address (::ffff:10.10.0.x);
# index 0 is the IPv6 link-local one.
GID_INDEX=1
ROCE_PORT=4791

log() { echo "testbed: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

need_root() { [ "$(id -u)" -eq 0 ] || die "needs root (ip, rdma, sysctl)"; }
need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || die "'$c' not found (install: $(pkg_for "$c"))"
	done
}
pkg_for() {
	case $1 in
	ip | rdma) echo iproute2 ;;
	ib_write_bw) echo perftest ;;
	tcpdump) echo tcpdump ;;
	iptables) echo iptables ;;
	stdbuf | timeout) echo coreutils ;;
	*) echo "$1" ;;
	esac
}

# Waiting is measured in seconds, not loop turns: under software emulation
# one turn (a fork of sleep) can take half a second. The checks themselves
# are bash builtins for the same reason.
WAIT_SECONDS=${TESTBED_WAIT:-30}
nap() { sleep 0.1; }
first_line() { # first_line FILE: its first line, or nothing
	local l=
	{ IFS= read -r l || true; } 2>/dev/null <"$1"
	printf '%s' "$l"
}
file_has() { # file_has FILE TEXT
	local l
	while IFS= read -r l; do
		[[ $l == *"$2"* ]] && return 0
	done 2>/dev/null <"$1"
	return 1
}

link_exists() { ip link show dev "$1" >/dev/null 2>&1; }
rdma_exists() { [ -e "/sys/class/infiniband/$1" ]; }

# The undo journal: one line per change, written right after it is made, so
# down (and a failed up) can revert exactly what was done, newest first.
journal() { echo "$*" >>"$STATE/journal"; }

set_sysctl() {
	local key=$1 value=$2 path old
	path=/proc/sys/${key//./\/}
	old=$(cat "$path") || die "sysctl $key does not exist"
	journal sysctl "$key" "$old"
	echo "$value" >"$path"
}

# Rules and links as `ip` prints them, for the before/after comparison.
snapshot_rules() { ip -4 rule show; }
snapshot_links() { ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort; }

wait_for_gid() {
	local dev=$1 ip=$2 want gid
	# ::ffff:a.b.c.d as the kernel prints it in sysfs
	local IFS=.
	# shellcheck disable=SC2086 # split the dotted quad into four numbers
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $ip)
	unset IFS
	local deadline=$((SECONDS + WAIT_SECONDS))
	while ((SECONDS < deadline)); do
		gid=$(first_line "/sys/class/infiniband/$dev/ports/1/gids/$GID_INDEX")
		[ "$gid" = "$want" ] && return 0
		nap
	done
	die "$dev: GID $GID_INDEX is '$gid', not the IPv4-mapped $ip"
}

wait_for_active() {
	local dev=$1 state
	local deadline=$((SECONDS + WAIT_SECONDS))
	while ((SECONDS < deadline)); do
		state=$(first_line "/sys/class/infiniband/$dev/ports/1/state")
		case $state in *ACTIVE*) return 0 ;; esac
		nap
	done
	die "$dev: port 1 is '$state', not ACTIVE"
}

cmd_up() {
	need_root
	need ip rdma
	if [ -f "$STATE/up" ]; then
		if link_exists "$VETH_A" && rdma_exists "$RXE_A" && rdma_exists "$RXE_B"; then
			log "already up"
			return 0
		fi
		die "$STATE says up but the devices are gone; run down first"
	fi
	if [ -s "$STATE/journal" ]; then
		die "a previous up did not finish ($STATE/journal); run down first"
	fi
	local d
	for d in "$VETH_A" "$VETH_B"; do
		link_exists "$d" && die "$d exists but this test bed did not create it; not touching it"
	done
	for d in "$RXE_A" "$RXE_B"; do
		rdma_exists "$d" && die "$d exists but this test bed did not create it; not touching it"
	done

	mkdir -p "$STATE"
	: >"$STATE/journal"
	snapshot_rules >"$STATE/rules.before"
	snapshot_links >"$STATE/links.before"
	# Anything failing from here on (set -e, die) is rolled back by down.
	trap 'log "up failed; rolling back"; cmd_down >&2 || true' EXIT

	ip link add "$VETH_A" type veth peer name "$VETH_B"
	journal link "$VETH_A"
	set_sysctl "net.ipv4.conf.$VETH_A.accept_local" 1
	set_sysctl "net.ipv4.conf.$VETH_B.accept_local" 1
	ip addr add "$IP_A/24" dev "$VETH_A"
	ip addr add "$IP_B/24" dev "$VETH_B"
	ip link set "$VETH_A" up
	ip link set "$VETH_B" up

	ip route add "$IP_B/32" dev "$VETH_A" src "$IP_A" table "$TABLE_A"
	journal route "$IP_B/32" dev "$VETH_A" table "$TABLE_A"
	ip route add "$IP_A/32" dev "$VETH_B" src "$IP_B" table "$TABLE_B"
	journal route "$IP_A/32" dev "$VETH_B" table "$TABLE_B"
	ip rule add pref "$PREF_A" from "$IP_A" to "$IP_B" iif lo lookup "$TABLE_A"
	journal rule pref "$PREF_A" from "$IP_A" to "$IP_B" iif lo lookup "$TABLE_A"
	ip rule add pref "$PREF_B" from "$IP_B" to "$IP_A" iif lo lookup "$TABLE_B"
	journal rule pref "$PREF_B" from "$IP_B" to "$IP_A" iif lo lookup "$TABLE_B"

	# Add the new `local` rule before deleting the old one: in between, the
	# host would have no route to any of its own addresses.
	if ip -4 rule show pref 0 | grep -q 'lookup local'; then
		ip rule add pref "$LOCAL_PREF" lookup local
		journal rule-local-added "$LOCAL_PREF"
		ip rule del pref 0 lookup local
		journal rule-local-moved-from 0
	elif ! ip -4 rule show | awk -F: '$2 ~ /lookup local/ && $1 + 0 > '"$PREF_B"' { f = 1 } END { exit !f }'; then
		die "cannot find the 'lookup local' rule to move below pref $PREF_B"
	fi

	rdma link add "$RXE_A" type rxe netdev "$VETH_A" ||
		die "rdma link add $RXE_A failed: is rdma_rxe available (modinfo rdma_rxe)?"
	journal rdma "$RXE_A"
	rdma link add "$RXE_B" type rxe netdev "$VETH_B"
	journal rdma "$RXE_B"
	wait_for_active "$RXE_A"
	wait_for_active "$RXE_B"
	wait_for_gid "$RXE_A" "$IP_A"
	wait_for_gid "$RXE_B" "$IP_B"

	local route
	route=$(ip -4 route get "$IP_B" from "$IP_A")
	case $route in
	*"dev $VETH_A"*) ;;
	*) die "policy routing is not in effect: 'ip route get $IP_B from $IP_A' says: $route" ;;
	esac
	trap - EXIT
	touch "$STATE/up"
	log "up: $RXE_A on $VETH_A ($IP_A), $RXE_B on $VETH_B ($IP_B)"
}

undo() {
	local what=$1
	shift
	case $what in
	link) ! link_exists "$1" || ip link del "$1" ;;
	rdma) ! rdma_exists "$1" || rdma link del "$1" ;;
	route) ip route del "$@" 2>/dev/null || true ;;
	rule) ! ip rule show "$@" | grep -q . || ip rule del "$@" ;;
	rule-local-moved-from)
		ip -4 rule show pref "$1" | grep -q 'lookup local' || ip rule add pref "$1" lookup local
		;;
	rule-local-added) ! ip -4 rule show pref "$1" | grep -q 'lookup local' || ip rule del pref "$1" lookup local ;;
	sysctl)
		local path=/proc/sys/${1//./\/}
		[ ! -e "$path" ] || echo "$2" >"$path"
		;;
	iptables) iptables -D "$@" 2>/dev/null || true ;;
	*) log "warning: unknown journal entry '$what $*'" ;;
	esac
}

cmd_down() {
	need_root
	if [ ! -d "$STATE" ]; then
		log "not up; nothing to do"
		return 0
	fi
	local line failed=0
	if [ -f "$STATE/journal" ]; then
		while read -r line; do
			# shellcheck disable=SC2086 # journal entries are word lists
			undo $line || {
				log "warning: could not undo '$line'"
				failed=1
			}
		done < <(tac "$STATE/journal")
	fi
	if [ -f "$STATE/rules.before" ] && ! diff -u "$STATE/rules.before" <(snapshot_rules) >&2; then
		log "warning: ip rules differ from before up (diff above)"
		failed=1
	fi
	if [ -f "$STATE/links.before" ] && ! diff -u "$STATE/links.before" <(snapshot_links) >&2; then
		log "warning: links differ from before up (diff above)"
		failed=1
	fi
	if [ "$failed" -ne 0 ]; then
		log "down incomplete; state kept in $STATE"
		return 1
	fi
	rm -rf "$STATE"
	log "down: restored"
}

require_up() {
	[ -f "$STATE/up" ] || die "the test bed is not up (scripts/testbed.sh up)"
	if ! rdma_exists "$RXE_A" || ! rdma_exists "$RXE_B"; then
		die "$RXE_A/$RXE_B are gone; run down, then up"
	fi
}

kill_quietly() {
	local pid
	for pid in "$@"; do
		[ -n "$pid" ] || continue
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}

# One bounded ib_write_bw run: rxe-b serves, rxe-a writes to it. Without -R:
# rdma_cm would resolve both ends onto one rxe device and use its loopback,
# so nothing would cross the veth. perftest sets retry_cnt 7, which rxe
# treats as "retry forever": under a drop only the timeout ends the run.
# Prints the client's output; sets ITERATIONS_DONE.
ITERATIONS_DONE=0
run_write_bw() {
	local dir=$1 spid cpid rc=0 deadline
	local args=(-F -x "$GID_INDEX" -p "$PORT" -n "$ITERS" -s "$SIZE")
	if ax_tcp_listening "$PORT"; then
		log "TCP port $PORT is taken; set TESTBED_PORT"
		return 1
	fi
	# The server's bound covers its wait for the client as well.
	timeout -k 3 $((TIMEOUT + WAIT_SECONDS)) stdbuf -oL ib_write_bw -d "$RXE_B" "${args[@]}" \
		</dev/null >"$dir/server.out" 2>&1 &
	spid=$!
	deadline=$((SECONDS + WAIT_SECONDS))
	until ax_tcp_listening "$PORT"; do
		if ! kill -0 "$spid" 2>/dev/null || ((SECONDS >= deadline)); then
			log "the ib_write_bw server on $RXE_B did not start listening on TCP port $PORT:"
			kill_quietly "$spid"
			sed 's/^/  /' "$dir/server.out" >&2
			return 1
		fi
		nap
	done
	timeout -k 3 "$TIMEOUT" stdbuf -oL ib_write_bw -d "$RXE_A" "${args[@]}" "$IP_B" \
		</dev/null >"$dir/client.out" 2>&1 &
	cpid=$!
	wait "$cpid" || rc=$?
	# The server normally ends with the client; do not let it linger.
	deadline=$((SECONDS + 3))
	while kill -0 "$spid" 2>/dev/null && ((SECONDS < deadline)); do nap; done
	kill_quietly "$spid"
	cat "$dir/client.out"
	[ "$rc" -ne 124 ] || log "ib_write_bw timed out after $TIMEOUT s"
	ITERATIONS_DONE=$(awk '/#iterations/ { h = 1; next }
		h && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { print $2; exit }' "$dir/client.out")
	ITERATIONS_DONE=${ITERATIONS_DONE:-0}
	if [ "$rc" -ne 0 ]; then
		log "ib_write_bw client exited with status $rc; client and server said:"
		sed 's/^/  client: /' "$dir/client.out" >&2
		sed 's/^/  server: /' "$dir/server.out" >&2
	fi
	return "$rc"
}

cmd_traffic() {
	need_root
	need ib_write_bw timeout stdbuf
	require_up
	local dir rc=0
	dir=$(mktemp -d)
	run_write_bw "$dir" || rc=$?
	rm -rf "$dir"
	log "ib_write_bw completed $ITERATIONS_DONE iterations"
	[ "$rc" -eq 0 ] && [ "$ITERATIONS_DONE" -ge 1 ]
}

cmd_verify() {
	need_root
	need ib_write_bw tcpdump timeout stdbuf
	require_up
	local dir tpid rc=0 packets
	dir=$(mktemp -d)
	# Requests rxe-a -> rxe-b that carry at least a BTH and the ICRC (UDP
	# length >= 8 + 12 + 4). An ICMP error quoting a RoCE packet is not UDP
	# and does not match. -Z root: the capture file is in a root-only dir.
	tcpdump -i "$VETH_B" -nn -U -Z root -c 100 -w "$dir/roce.pcap" \
		"src host $IP_A and dst host $IP_B and udp dst port $ROCE_PORT and udp[4:2] >= 24" \
		</dev/null 2>"$dir/tcpdump.err" &
	tpid=$!
	local deadline=$((SECONDS + WAIT_SECONDS))
	until file_has "$dir/tcpdump.err" 'listening on'; do
		if ! kill -0 "$tpid" 2>/dev/null || ((SECONDS >= deadline)); then break; fi
		nap
	done
	file_has "$dir/tcpdump.err" 'listening on' || {
		cat "$dir/tcpdump.err" >&2
		kill_quietly "$tpid"
		rm -rf "$dir"
		die "tcpdump did not start on $VETH_B"
	}
	run_write_bw "$dir" >/dev/null || rc=$?
	sleep 0.2
	kill -INT "$tpid" 2>/dev/null || true
	wait "$tpid" 2>/dev/null || true
	packets=$(tcpdump -nn -r "$dir/roce.pcap" 2>/dev/null | wc -l)
	rm -rf "$dir"

	local ok=1
	if [ "$packets" -ge 1 ]; then
		log "capture on $VETH_B: $packets RoCE v2 packets $IP_A -> $IP_B:$ROCE_PORT (capped at 100)"
	else
		log "capture on $VETH_B: no RoCE v2 packets from $IP_A"
		ok=0
	fi
	if [ "$rc" -eq 0 ] && [ "$ITERATIONS_DONE" -ge 1 ]; then
		log "ib_write_bw: $ITERATIONS_DONE iterations completed"
	else
		log "ib_write_bw: $ITERATIONS_DONE iterations completed (exit status $rc)"
		ok=0
	fi
	if [ "$ok" -eq 1 ]; then
		echo "verify: PASS"
		return 0
	fi
	echo "verify: FAIL"
	return 1
}

reject_rule() { echo INPUT -i "$VETH_B" -p udp --dport "$ROCE_PORT" -j REJECT; }

cmd_reject() {
	need_root
	need iptables
	require_up
	# shellcheck disable=SC2046 # the rule is a word list
	case ${1:-} in
	on)
		if iptables -C $(reject_rule) 2>/dev/null; then
			log "REJECT of UDP $ROCE_PORT on $VETH_B already in place"
			return 0
		fi
		iptables -I $(reject_rule)
		journal iptables $(reject_rule)
		log "REJECT of UDP $ROCE_PORT on $VETH_B in place"
		;;
	off)
		while iptables -C $(reject_rule) 2>/dev/null; do
			iptables -D $(reject_rule)
		done
		grep -v '^iptables ' "$STATE/journal" >"$STATE/journal.new" || true
		mv "$STATE/journal.new" "$STATE/journal"
		log "REJECT of UDP $ROCE_PORT on $VETH_B removed"
		;;
	*) die "usage: testbed.sh reject on|off" ;;
	esac
}

cmd_status() {
	if [ -f "$STATE/up" ]; then
		echo "state: up ($STATE)"
	elif [ -d "$STATE" ]; then
		echo "state: partly up ($STATE/journal); run down"
	else
		echo "state: down"
	fi
	local d
	for d in "$VETH_A" "$VETH_B"; do
		link_exists "$d" && ip -br addr show dev "$d"
	done
	echo "rules:"
	ip -4 rule show | sed 's/^/  /'
	echo "rdma links:"
	rdma link show 2>/dev/null | sed 's/^/  /' || true
	for d in "$RXE_A" "$RXE_B"; do
		rdma_exists "$d" && echo "  $d gid[$GID_INDEX] $(cat "/sys/class/infiniband/$d/ports/1/gids/$GID_INDEX")"
	done
	# shellcheck disable=SC2046 # the rule is a word list
	if command -v iptables >/dev/null && iptables -C $(reject_rule) 2>/dev/null; then
		echo "firewall: REJECT of UDP $ROCE_PORT on $VETH_B in place"
	fi
	return 0
}

case ${1:-} in
up) cmd_up ;;
down) cmd_down ;;
traffic) cmd_traffic ;;
verify) cmd_verify ;;
status) cmd_status ;;
reject) cmd_reject "${2:-}" ;;
-h | --help | help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
*)
	echo "usage: scripts/testbed.sh up|down|traffic|verify|status|reject on|off" >&2
	exit 2
	;;
esac
