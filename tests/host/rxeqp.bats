#!/usr/bin/env bats
# rxeqp where it cannot trace: this machine's kernel has no rdma_rxe (and
# neither fentry nor kprobes), and in the Soft-RoCE guest this suite runs
# before anything loads rdma_rxe. rxeqp must say why in one line and exit
# non-zero, never print an empty table. Its traffic tests are
# tests/vm/rxeqp.bats.

load ../lib/common
bats_require_minimum_version 1.5.0

RXEQP=$AX_BUILD/rxeqp

setup() {
	ax_need_root
	[ -x "$RXEQP" ] || skip "build/rxeqp not built (make)"
}

teardown() {
	ax_cleanup
}

# rdma_rxe's BTF is what the module exposes once loaded
need_no_rxe() {
	[ ! -e /sys/kernel/btf/rdma_rxe ] || skip "rdma_rxe is loaded here (tests/vm/rxeqp.bats covers it)"
}

@test "without rdma_rxe: one line naming the module, exit 1, nothing on stdout" {
	need_no_rxe
	run --separate-stderr "$RXEQP"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "rxeqp: rdma_rxe is not loaded"* ]]
}

@test "without rdma_rxe: the same in every mode (-e, -j, --kprobe, interval)" {
	need_no_rxe
	local args
	for args in "-e" "-j 1 1" "--kprobe" "-e -j -i lo"; do
		# shellcheck disable=SC2086 # word lists
		run --separate-stderr "$RXEQP" $args
		echo "rxeqp $args: $status: $stderr"
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ $stderr == "rxeqp: rdma_rxe is not loaded"* ]]
	done
}

@test "bad arguments: one line each, exit 1, before any probing" {
	local args
	for args in "-Q nope" "-Q 0x1000000" "-S fastest" "-n 0" "-e 1" "-e -H" \
		"-i no-such-if0" "0" "1 2 3"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$RXEQP" $args
		echo "rxeqp $args: $status: $stderr"
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[[ $stderr == rxeqp:* ]]
		# argp adds a "Try --help" line; the reason is the first
		[ "${#stderr_lines[@]}" -le 2 ]
	done
}

@test "--help lists rxeqp's options and the suite-wide ones" {
	run "$RXEQP" --help
	[ "$status" -eq 0 ]
	[[ $output == *"per queue pair"* ]]
	local o
	for o in --events --interface --qpn --hist --sort --kprobe --json --timestamp \
		--verbose --prom --roce-port; do
		[[ $output == *"$o"* ]] || { echo "missing $o"; return 1; }
	done
}

@test "btf/rdma_rxe.h is what btfmin makes of rdma_rxe's BTF and btf/rdma_rxe.spec" {
	[ -x "$AX_BUILD/btfmin" ] || skip "build/btfmin not built (make)"
	# the header records the kernel it was made from; only that one's
	# BTF can match: the loaded module's, or that kernel's guest in the
	# cache (other lines' guests, e.g. 5.10's without module BTF, may be
	# built there first, even while this runs)
	local kver g
	kver=$(sed -n 's/^ \* \([^ ]*\) and btf\/rdma_rxe.spec.*/\1/p' "$AX_ROOT/btf/rdma_rxe.h")
	g=/var/cache/agentxdp/vm/$kver
	if [ -r /sys/kernel/btf/rdma_rxe ]; then
		[ "$(uname -r)" = "$kver" ] || skip "rdma_rxe here is $(uname -r), the header is from $kver"
	elif [ ! -f "$g/vmlinux" ] || [ -z "$(find "$g" -name rdma_rxe.ko 2>/dev/null)" ]; then
		skip "no rdma_rxe BTF of $kver, the header's kernel, here (load rdma_rxe or build its guest)"
	fi
	run "$AX_ROOT/btf/gen-rdma-rxe.sh" --check "$AX_BUILD/btfmin"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"matches rdma_rxe $kver"* ]]
}

@test "with rdma_rxe loaded (the Soft-RoCE guest): traces via fentry, tables until Ctrl-C, exit 0" {
	# in the guest the module is there to load (the suites before may have)
	[ -e /sys/kernel/btf/rdma_rxe ] || [ -z "${AGENTXDP_VM:-}" ] || modprobe -q rdma_rxe || true
	[ -e /sys/kernel/btf/rdma_rxe ] || skip "rdma_rxe not loaded here (this machine's kernel has none)"
	ax_tool_start --out QP_PID "$BATS_TEST_TMPDIR/out" 90 "^QP +STATE" "$RXEQP" --noclear 1
	ax_tool_stop QP_PID
	cat "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/out.err"
	[ "$AX_RC" -eq 0 ]
	grep -q "^Tracing rdma_rxe queue pairs (9 hooks via fentry)" "$BATS_TEST_TMPDIR/out"
	[ ! -s "$BATS_TEST_TMPDIR/out.err" ]
}

@test "without rdma_rxe: the advice fits the host (its RDMA devices, whether the kernel has rdma_rxe)" {
	need_no_rxe
	local devs=0 hw= d want
	run --separate-stderr "$RXEQP"
	[ "$status" -eq 1 ]
	echo "$stderr" >&2
	# the truth, read here from sysfs and the module lists
	for d in /sys/class/infiniband/*; do
		[ -e "$d" ] || continue
		devs=$((devs + 1))
		[ -z "$hw" ] && [ -L "$d/device/driver" ] && hw="$(basename "$d") (driver $(basename "$(readlink "$d/device/driver")")"
	done
	if [ -n "$hw" ]; then
		[[ $stderr == "rxeqp: rdma_rxe is not loaded, and this host's RDMA device $hw"*") is a hardware RNIC: its QPs live in the NIC, where rxeqp cannot see"* ]]
	elif [ "$devs" -gt 0 ]; then
		[[ $stderr == *"is not Soft-RoCE: rxeqp traces rdma_rxe's QPs only" ]]
	elif [ -d /sys/module/rdma_rxe ] || grep -qs '/rdma_rxe\.ko' "/lib/modules/$(uname -r)/modules.dep" "/lib/modules/$(uname -r)/modules.builtin"; then
		[ "$stderr" = "rxeqp: rdma_rxe is not loaded (no /sys/kernel/btf/rdma_rxe) and this host has no RDMA device: for Soft-RoCE, modprobe rdma_rxe and add a device (rdma link add rxe0 type rxe netdev IFACE)" ]
	else
		[ "$stderr" = "rxeqp: rdma_rxe is not loaded, this kernel has no rdma_rxe module, and this host no RDMA device: nothing for rxeqp to trace here" ]
	fi
}
