# Live mirror sessions for the bats suites: a collector namespace behind
# a veth, a tunnel device (ERSPAN II/III, VXLAN) towards it, tc mirred
# copying an interface's ingress and egress into that tunnel, and rocelat
# --mirror in the collector. Load after ../lib/common.
#
# What this builds is what a switch's remote mirror session looks like
# to a collector: the mirrored frames, encapsulated, arrive on the
# collector's NIC. rocelat there reads the tunnel itself (XDP on the
# underlay, no tunnel device), or runs on a tunnel device that the
# collector's kernel decapsulates into.
#
# Everything created here is undone by mirror_cleanup (call it from
# teardown before ax_cleanup, which deletes the namespaces): tc filters
# and a clsact qdisc we added, tunnel devices outside the collectors'
# namespaces, rocelat runs.

# undo commands, run newest first
MIRROR_UNDO=()
# collector rocelat runs: name -> PID
declare -gA MIRROR_PID=()

# mx NETNS CMD...: CMD in NETNS; "-" is the namespace we are in
mx() {
	local ns=$1
	shift
	if [ "$ns" = - ]; then
		"$@"
	else
		ip netns exec "$ns" "$@"
	fi
}

# mirror_collector SRCNS NS ADDR_SRC ADDR_COLL: namespace NS with a veth
# pair, ${NS}s in SRCNS (the mirror's source side) and ${NS}c in NS (the
# collector's NIC), IPv4 addresses ADDR/24. No IPv6 and static neighbours
# on the pair: nothing but the mirror arrives on the collector's NIC, so
# its receive counter says when all of the mirror has (mirror_drained).
# The pair goes with the namespace.
mirror_collector() {
	local src=$1 ns=$2 a=$3 b=$4
	ip netns add "$ns"
	AX_NETNS+=("$ns")
	mx "$src" ip link add "${ns}s" type veth peer name "${ns}c" netns "$ns"
	mx "$src" sysctl -qw "net.ipv6.conf.${ns}s.disable_ipv6=1"
	mx "$ns" sysctl -qw "net.ipv6.conf.${ns}c.disable_ipv6=1"
	ip -n "$ns" link set lo up
	mx "$src" ip addr add "$a/24" dev "${ns}s"
	ip -n "$ns" addr add "$b/24" dev "${ns}c"
	mx "$src" ip neigh replace "$b" dev "${ns}s" nud permanent \
		lladdr "$(ip -n "$ns" -j link show dev "${ns}c" | jq -r '.[0].address')"
	ip -n "$ns" neigh replace "$a" dev "${ns}c" nud permanent \
		lladdr "$(mx "$src" ip -j link show dev "${ns}s" | jq -r '.[0].address')"
	# one CPU takes the mirror in, as a NIC queue's interrupt would: a
	# veth hands frames to the CPU that sent them (or that its NAPI last
	# ran on), and a tunnel device's frames, decapsulated into per-CPU
	# GRO cells, reached rocelat out of order (READ REQUESTs after their
	# responses on a vxlan device: 9 of 200 in the guest). RPS steers
	# every frame to CPU 0's backlog, after XDP on the NIC.
	ip netns exec "$ns" sh -c "echo 1 > /sys/class/net/${ns}c/queues/rx-0/rps_cpus"
	mx "$src" ip link set "${ns}s" up
	ip -n "$ns" link set "${ns}c" up
	mirror_link_ready "$src" "${ns}s"
	mirror_link_ready "$ns" "${ns}c"
}

# mirror_link_ready NETNS DEV: ax_link_ready, "-" for the namespace we
# are in (bash builtins in the loop: a process start costs 0.1-0.4 s
# under emulation)
mirror_link_ready() {
	local end=$((SECONDS + 5)) l
	while [ "$SECONDS" -le "$end" ]; do
		l=$(mx "$1" ip link show dev "$2") || return 1
		[[ $l == *"qdisc noop"* ]] || return 0
		sleep 0.1
	done
	echo "link $2 in $1 did not come up" >&2
	return 1
}

# mirror_tunnel NS KIND DEV LOCAL REMOTE ID [rx]: a tunnel device DEV in
# NS ("-": here), KIND erspan2 (ip's erspan_ver 1, ERSPAN type II),
# erspan3 (erspan_ver 2, type III), gretap (GRE/TEB) or vxlan; ID is the
# ERSPAN session ID, the GRE key or the VNI. Linux sends the GRE key's
# low 10 bits as the session ID (include/net/erspan.h, set_session_id();
# the key itself is not sent: ERSPAN's GRE header carries a sequence
# number only) and finds the receiving device by it. "rx": the
# collector's end, which does not check the GRE sequence numbers (no
# iseq): with iseq, ip_tunnel_rcv() drops a frame numbered below the last
# one, and frames taken in on two CPUs reach the device out of order (in
# the guest, before the collectors had RPS, 10 of 805 and 14 of 1033 did
# not reach a device with iseq; with the mirror on one CPU a check run
# lost none with iseq either). A device outside a namespace we delete is
# deleted by mirror_cleanup.
mirror_tunnel() {
	local ns=$1 kind=$2 dev=$3 l=$4 r=$5 id=$6 seq=seq
	[ "${7:-}" != rx ] || seq=oseq
	case $kind in
	erspan2) mx "$ns" ip link add "$dev" type erspan $seq key "$id" local "$l" remote "$r" \
		erspan_ver 1 erspan 4242 ;;
	erspan3) mx "$ns" ip link add "$dev" type erspan $seq key "$id" local "$l" remote "$r" \
		erspan_ver 2 erspan_dir ingress erspan_hwid 7 ;;
	gretap) mx "$ns" ip link add "$dev" type gretap key "$id" local "$l" remote "$r" ;;
	vxlan) mx "$ns" ip link add "$dev" type vxlan id "$id" local "$l" remote "$r" \
		dstport 4789 nolearning ;;
	*) echo "mirror_tunnel: unknown kind $kind" >&2; return 2 ;;
	esac
	[ "$ns" != - ] || MIRROR_UNDO+=("ip link del $dev")
	# nothing of its own (IPv6 neighbour discovery) into the session
	mx "$ns" sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1" 2>/dev/null || true
	mx "$ns" ip link set "$dev" up
	mirror_link_ready "$ns" "$dev"
}

# mirror_classifier NS DEV: a classifier that matches every packet on
# DEV's clsact: matchall, or where cls_matchall is missing (the host's
# 6.18 build has u32 and act_mirred but not it) u32's catch-all
mirror_classifier() {
	if mx "$1" tc filter add dev "$2" ingress prio 65000 matchall action pass 2>/dev/null; then
		mx "$1" tc filter del dev "$2" ingress prio 65000
		echo matchall
	else
		echo "u32 match u32 0 0"
	fi
}

# mirror_session NS IFACE DEV...: mirror IFACE's ingress and egress into
# each DEV (tc mirred egress mirror). The filters run after rocelat's own
# tc egress filter (prio 0xC7) and end in "continue", so a filter behind
# them still sees the packet. A clsact qdisc we had to add is removed by
# mirror_cleanup, else only our filters.
mirror_session() {
	local ns=$1 ifc=$2 dev cls dir acts=() n=0
	shift 2
	for dev in "$@"; do
		n=$((n + 1))
		acts+=(action mirred egress mirror dev "$dev")
		[ "$n" -eq $# ] && acts+=(continue) || acts+=(pipe)
	done
	if mx "$ns" tc qdisc add dev "$ifc" clsact 2>/dev/null; then
		MIRROR_UNDO+=("mx $ns tc qdisc del dev $ifc clsact")
	fi
	cls=$(mirror_classifier "$ns" "$ifc")
	for dir in ingress egress; do
		# shellcheck disable=SC2086 # $cls is words
		mx "$ns" tc filter add dev "$ifc" "$dir" prio 1000 $cls "${acts[@]}"
		MIRROR_UNDO+=("mx $ns tc filter del dev $ifc $dir prio 1000")
	done
}

# mirror_session_end NS IFACE: mirror_session's filters removed (the
# qdisc stays until mirror_cleanup)
mirror_session_end() {
	mx "$1" tc filter del dev "$2" ingress prio 1000
	mx "$1" tc filter del dev "$2" egress prio 1000
}

# mirror_stat NETNS DEV rx|tx: DEV's packet counter
mirror_stat() {
	mx "$1" ip -s -j link show dev "$2" | jq -r ".[0].stats64.$3.packets"
}

# mirror_drained SRCNS TUN NS NIC [DEV]: until the collector's NIC (and
# its tunnel device DEV) has received every frame tunnel device TUN sent
# (at most $WAIT s). Then rocelat there has seen them all: on a veth with
# native XDP the receive counter moves after the program ran, and the
# kernel decapsulates after XDP, its device's generic XDP running in the
# same receive softirq.
mirror_drained() {
	local src=$1 tun=$2 ns=$3 nic=$4 dev=${5:-} tx rx drx end=$((SECONDS + ${WAIT:-60}))
	while :; do
		tx=$(mirror_stat "$src" "$tun" tx)
		rx=$(mirror_stat "$ns" "$nic" rx)
		drx=$rx
		[ -z "$dev" ] || drx=$(mirror_stat "$ns" "$dev" rx)
		[ "$rx" -eq "$tx" ] && [ "$drx" -eq "$tx" ] && break
		if [ "$SECONDS" -gt "$end" ]; then
			echo "mirror $tun: sent $tx, $nic received $rx${dev:+, $dev $drx}" >&2
			mx "$ns" ip -s -s link show dev "${dev:-$nic}" >&2
			return 1
		fi
		sleep 0.2
	done
	echo "mirror $tun: $tx frames, all received"
}

# mirror_start NAME NS IFACE ARGS...: rocelat IFACE ARGS... in NS, output
# in $T/NAME.out and .out.err, its PID in MIRROR_PID[NAME]; mirror_wait
# waits until it traces (they load side by side)
mirror_start() {
	local name=$1 ns=$2 ifc=$3
	shift 3
	ax_tool_start "MIRROR_PID[$name]" "$T/$name.out" 0 "" ip netns exec "$ns" "$RL" -i "$ifc" "$@"
}

# mirror_wait NAME...: until each of them prints its banner (on stderr),
# all within WAIT (60) seconds
mirror_wait() {
	local name end=$((SECONDS + ${WAIT:-60}))
	for name in "$@"; do
		ax_tool_wait --err "MIRROR_PID[$name]" $((end > SECONDS ? end - SECONDS : 0)) '^Tracing' || return 1
	done
}

# mirror_stop NAME...: SIGINT, each must exit 0 (its report is written)
mirror_stop() {
	local name bad=0
	for name in "$@"; do
		[ -n "${MIRROR_PID[$name]:-}" ] || continue
		ax_tool_stop "MIRROR_PID[$name]" || bad=1
		unset "MIRROR_PID[$name]"
	done
	return $bad
}

# mirror_cleanup: collectors' rocelat first (gently: on 6.1 a SIGKILL
# leaves a clsact filter behind), then filters, qdiscs and devices, newest
# first
mirror_cleanup() {
	local name i
	for name in "${!MIRROR_PID[@]}"; do
		ax_tool_stop "MIRROR_PID[$name]" || true
	done
	MIRROR_PID=()
	for ((i = ${#MIRROR_UNDO[@]} - 1; i >= 0; i--)); do
		eval "${MIRROR_UNDO[i]}" 2>/dev/null || true
	done
	MIRROR_UNDO=()
}

# mirror_flows FILE: rocelat's flows, one compact JSON line each, without
# their histograms, sorted (for the log)
mirror_flows() {
	jq -c 'select(.type=="flow") | del(.buckets)' "$1" | sort
}
