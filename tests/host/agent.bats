#!/usr/bin/env bats
# The node agent (debian/agentxdp.service, settings in debian/agentxdp.default):
# the unit verifies, and its own command line, run as systemd would run it
# (the settings file's variables, the unit's capability bounding set and
# nothing more), writes rocediag's metrics into the textfile directory: a
# flow whose requests an nft rule drops appears there as DROPPED-LOCALLY,
# the clean one as OK. The .deb's part (unit installed, disabled) is in
# package.bats.

bats_require_minimum_version 1.5.0
load ../lib/common

UNIT=$AX_ROOT/debian/agentxdp.service
DEFAULTS=$AX_ROOT/debian/agentxdp.default
P=axag
A=10.207.0.1
B=10.207.0.2

setup_file() {
	[ -z "${AGENTXDP_VM:-}" ] || { export AX_FILE_SKIP="host-only: the agent's unit does not depend on the kernel"; return 0; }
	ax_file_needs capsh systemd-analyze nft "$AX_BUILD/rocediag" "$AX_BUILD/rocegen" || return 0
}

setup() {
	ax_file_skip
	T=$BATS_TEST_TMPDIR
}

teardown() {
	ax_cleanup
}

# the value of KEY= in the unit (the last one)
unit_value() {
	sed -n "s/^$1=//p" "$UNIT" | tail -1
}

# one metrics file (the agent rewrites it every interval) with the
# dropped flow DROPPED-LOCALLY and the clean one OK
agent_verdicts() {
	local f
	f=$(cat "$1")
	grep -q "^agentxdp_rocediag_qp_verdict{req=\"$A\",.*sport=\"49153\",verdict=\"DROPPED-LOCALLY\"} [0-9]" <<<"$f" &&
	grep -q "^agentxdp_rocediag_qp_verdict{req=\"$A\",.*sport=\"49152\",verdict=\"OK\"} 0$" <<<"$f"
}

@test "agentxdp.service passes systemd-analyze verify" {
	# verify runs 'man rocediag' for Documentation=: the repository's page
	mkdir -p "$T/man/man8"
	cp "$AX_ROOT/man/rocediag.8" "$T/man/man8/"
	run env MANPATH="$T/man" systemd-analyze verify "$UNIT"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "the agent's command, with the unit's capabilities only, writes rocediag's verdicts for node_exporter: the dropped QP DROPPED-LOCALLY, the clean one OK" {
	local cmd keep drop pid caps bound
	ax_netns_pair $P $A/24 $B/24
	ip netns exec ${P}b nft -f - <<-'NFT'
	table inet axag_filter {
		chain input {
			type filter hook input priority 0; policy accept;
			udp sport 49153 udp dport 4791 counter drop
		}
	}
	NFT
	# ExecStart as systemd runs it: "$$" is a literal "$", the program is
	# this build's
	cmd=$(unit_value ExecStart | sed -e 's/\$\$/$/g' -e "s|/usr/sbin/rocediag|$AX_BUILD/rocediag|")
	[[ $cmd == "/bin/sh -c '"*"'" ]]
	cmd=${cmd#"/bin/sh -c '"}
	cmd=${cmd%"'"}
	# systemd's CapabilityBoundingSet= as capsh's bounding set: every
	# other capability dropped, so root keeps only these
	keep=$(unit_value CapabilityBoundingSet | tr 'A-Z ' 'a-z\n')
	drop=$(capsh --print | sed -n 's/^Bounding set =//p' | tr ',' '\n' | grep -vxF "$keep" | paste -sd,)
	mkdir -p "$T/textfile"
	ax_bg ip netns exec ${P}a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		bash -c "set -a; . '$DEFAULTS'; AGENTXDP_IFACE=${P}va AGENTXDP_INTERVAL=1 AGENTXDP_TEXTFILE_DIR='$T/textfile'; set +a; exec capsh --drop='$drop' -- -c \"\$1\"" agent "$cmd"
	pid=$AX_LAST_PID
	prom=$T/textfile/agentxdp-rocediag.prom
	ax_until 90 "the agent's first metrics file" test -s "$prom"
	# it runs with the unit's capabilities and no others
	bound=$(awk '/^CapBnd:/ { print $2 }' /proc/$pid/status)
	caps=$(capsh --decode="$bound" | sed 's/.*=//' | tr ',' '\n' | sort | paste -sd,)
	echo "bounding set: $caps" >&2
	# (those of the unit's that this shell has: a container may lack some)
	[ "$caps" = "$(capsh --print | sed -n 's/^Bounding set =//p' | tr ',' '\n' | grep -xF "$keep" | sort | paste -sd,)" ]
	ax_bg ip netns exec ${P}b "$AX_BUILD/rocegen" responder -q --timeout 60
	ax_wait_udp ${P}b 4791
	# the dropped flow never completes: rocegen ends incomplete, non-zero
	local rc=0
	ip netns exec ${P}a "$AX_BUILD/rocegen" requester -q -d $B -f 2 -n 40 --window 2 --flow-stats \
		--ack-timeout-us 100000 --timeout 10 > "$T/req.out" || rc=$?
	cat "$T/req.out" >&2
	[ "$rc" -ne 0 ]
	grep -q '^rocegen: role=requester .* status=incomplete' "$T/req.out"
	# the clean flow (QP 0x11, UDP port 49152): every request answered
	grep -qE '^rocegen: role=requester-flow sport=49152 .* completed=20( |$)' "$T/req.out"
	grep -qE '^rocegen: role=requester-flow sport=49153 .* completed=0( |$)' "$T/req.out"
	ax_until 30 "the dropped flow's verdict and the clean one's in one metrics file" \
		agent_verdicts "$prom"
	grep "^agentxdp_rocediag_qp_verdict{req=\"$A\"" "$prom" >&2
	ax_stop "$pid" TERM
	[ "$AX_RC" -eq 0 ]
	# the rule did drop them (the ground truth the verdict rests on)
	[ "$(ip netns exec ${P}b nft list table inet axag_filter | sed -n 's/.* counter packets \([0-9]*\) .*/\1/p')" -gt 0 ]
}

@test "the agent's command takes several interfaces in AGENTXDP_IFACE: both watched, their RoCE counted exactly, every source said" {
	local cmd prom pid
	ax_netns_pair $P $A/24 $B/24
	# a second link between the same two namespaces
	ip link add ${P}va2 netns ${P}a type veth peer name ${P}vb2 netns ${P}b
	ip -n ${P}a addr add 10.207.1.1/24 dev ${P}va2
	ip -n ${P}b addr add 10.207.1.2/24 dev ${P}vb2
	ip -n ${P}a link set ${P}va2 up
	ip -n ${P}b link set ${P}vb2 up
	ax_link_ready ${P}a ${P}va2 && ax_link_ready ${P}b ${P}vb2
	cmd=$(unit_value ExecStart | sed -e 's/\$\$/$/g' -e "s|/usr/sbin/rocediag|$AX_BUILD/rocediag|")
	cmd=${cmd#"/bin/sh -c '"}
	cmd=${cmd%"'"}
	mkdir -p "$T/textfile"
	prom=$T/textfile/agentxdp-rocediag.prom
	ax_bg ip netns exec ${P}a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		bash -c "set -a; . '$DEFAULTS'; AGENTXDP_IFACE='${P}va ${P}va2' AGENTXDP_INTERVAL=1 AGENTXDP_TEXTFILE_DIR='$T/textfile'; set +a; exec /bin/sh -c \"\$1\"" agent "$cmd"
	pid=$AX_LAST_PID
	ax_until 90 "the agent's first metrics file" test -s "$prom"
	grep -qx 'agentxdp_rocediag_source_up{source="latency"} 1' "$prom"
	grep -qx 'agentxdp_rocediag_source_info{source="latency",reason="",off_by_option="false",absent="false"} 1' "$prom"
	# both interfaces carry the agent's XDP program
	ip -n ${P}a link show ${P}va | grep -q 'prog/xdp'
	ip -n ${P}a link show ${P}va2 | grep -q 'prog/xdp'
	# 40 RoCE packets arrive on one, 60 on the other: 100 seen, exactly
	ax_send_roce ${P}b $A 40
	ax_send_roce ${P}b 10.207.1.1 60
	ax_until 20 "100 RoCE packets in the agent's metrics" \
		grep -qx 'agentxdp_rocediag_roce_packets_total 100' "$prom"
	ax_stop "$pid" TERM
	[ "$AX_RC" -eq 0 ]
	! ip -n ${P}a link show ${P}va2 | grep -q 'prog/xdp'
}
