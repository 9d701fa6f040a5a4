#!/usr/bin/env bats
# STATIC=1: rxedrop linked fully static (libbpf, libelf, zlib, zstd, libc)
# runs --help and traces on this kernel; rocelat (libpcap stays shared:
# Debian's libpcap.a needs libsystemd, which has no static archive) and
# rocediag (the libraries of the tools it uses: nfdrop's libnftables,
# libnftnl and libmnl, which ship no .a, stay shared) have libbpf, libelf
# and zlib linked in. Built once, on the host, into
# build/static; in the Soft-RoCE guest the same files run on Debian's 6.1
# kernel (tests/run runs the host tier first).

bats_require_minimum_version 1.5.0
load ../lib/common

setup_file() {
	export S_OUT=$AX_BUILD/static S_SKIP="" S_RC=0
	local a
	if [ -n "${AGENTXDP_VM:-}" ]; then
		[ -x "$S_OUT/rxedrop" ] && [ -x "$S_OUT/rocelat" ] && [ -x "$S_OUT/rocediag" ] ||
			export S_SKIP="no $S_OUT/rxedrop: the host tier builds it"
		return 0
	fi
	for a in libbpf libelf libz libzstd; do
		[ -e "/usr/lib/$(gcc -print-multiarch)/$a.a" ] ||
			{ export S_SKIP="no $a.a (scripts/setup-deps.sh installs it)"; return 0; }
	done
	make -s -C "$AX_ROOT" OUTPUT="$S_OUT" STATIC=1 "$S_OUT/rxedrop" "$S_OUT/rocelat" "$S_OUT/rocediag" \
		> "$BATS_FILE_TMPDIR/make.log" 2>&1
	export S_RC=$?
}

setup() {
	[ -z "$S_SKIP" ] || skip "$S_SKIP"
	[ "$S_RC" -eq 0 ] || { cat "$BATS_FILE_TMPDIR/make.log" >&2; false; }
}

teardown() {
	ax_cleanup
}

@test "STATIC=1 rxedrop is a static executable and runs --help" {
	run ldd "$S_OUT/rxedrop"
	echo "$output" >&2
	[[ $output == *"not a dynamic executable"* ]]
	run "$S_OUT/rxedrop" --help
	[ "$status" -eq 0 ]
	[[ $output == *"Usage: rxedrop"* ]]
}

@test "STATIC=1 rocelat: libbpf, libelf, zlib linked in, libpcap shared" {
	run ldd "$S_OUT/rocelat"
	echo "$output" >&2
	[[ $output == *libpcap* ]]
	[[ $output != *libbpf* && $output != *libelf* && $output != *libz.so* ]]
	"$S_OUT/rocelat" --help | grep -q "^Usage: rocelat"
}

@test "STATIC=1 rocediag: libbpf, libelf, zlib linked in, nfdrop's libraries shared" {
	run ldd "$S_OUT/rocediag"
	echo "$output" >&2
	[[ $output == *libnftables* && $output == *libnftnl* && $output == *libmnl* ]]
	[[ $output != *libbpf* && $output != *libelf* && $output != *libz.so* ]]
	"$S_OUT/rocediag" --help | grep -q "^Usage: rocediag"
}

@test "STATIC=1 rxedrop traces: drops to a closed port counted exactly" {
	ax_need_root
	# sending is slow under emulation: fewer packets in the guest
	local N=20
	[ -z "${AGENTXDP_VM:-}" ] || N=5
	ax_netns_pair axps 10.214.0.1/24 10.214.0.2/24
	local wait=${AGENTXDP_VM:+90}
	ax_tool_start --err RX_PID "$BATS_TEST_TMPDIR/out" "${wait:-20}" Tracing "$S_OUT/rxedrop" -j
	ax_send_roce axpsa 10.214.0.2 $N
	# the receiver's own count of the drops reached N: none still to come
	ax_wait_snmp axpsb Udp:NoPorts $N
	ax_tool_stop RX_PID
	[ "$(jq -s '[.[] | select(.reason == "NO_SOCKET" and (.location | startswith("__udp4_lib_rcv"))) | .count] | add // 0' "$BATS_TEST_TMPDIR/out")" -eq $N ]
}
