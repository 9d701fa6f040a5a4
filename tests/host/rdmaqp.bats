#!/usr/bin/env bats
# rdmaqp where there is nothing to watch: this machine's kernel has no RDMA
# subsystem (no RDMA netlink, no ib_core, neither fentry nor kprobes), and
# in the Soft-RoCE guest this suite may run before any rxe device exists.
# rdmaqp must say why in one line, exit 1, print no table and leave no BPF
# program behind. Its tests on real rxe devices are tests/vm/rdmaqp.bats;
# its hooks and reads against Debian's real RDMA modules are
# tests/unit/rdma_btf.c.

load ../lib/common
bats_require_minimum_version 1.5.0

RDMAQP=$AX_BUILD/rdmaqp

setup() {
	ax_need_root
	[ -x "$RDMAQP" ] || skip "build/rdmaqp not built (make)"
}

teardown() {
	ax_cleanup
}

need_no_rdma() {
	[ -z "$(ls /sys/class/infiniband 2>/dev/null)" ] ||
		skip "this machine has RDMA devices (tests/vm/rdmaqp.bats covers them)"
}

# BPF programs of rdmaqp loaded now (their names start with rdmaqp_)
rdmaqp_progs() {
	bpftool prog show 2>/dev/null | grep -c ' name rdmaqp_' || true
}

@test "no RDMA device: one line, exit 1, nothing on stdout, nothing attached" {
	need_no_rdma
	local args before
	before=$(rdmaqp_progs)
	for args in "" "1 1" "-e" "-j 1 1" "--kprobe" "-d mlx5_0" "--no-bpf"; do
		# shellcheck disable=SC2086 # word lists
		run --separate-stderr "$RDMAQP" $args
		echo "args '$args': status $status, stdout '$output', stderr '$stderr'"
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ $stderr == "rdmaqp: no RDMA "* ]]
		[ "$(rdmaqp_progs)" = "$before" ]
	done
}

@test "bad arguments: one line each, exit 1" {
	local args
	for args in "-d" "0" "1 0x" "-e 1" "--prom /tmp/x" "--nosuch" "--budget 0" "--budget 5x"; do
		# shellcheck disable=SC2086 # word lists
		run --separate-stderr "$RDMAQP" $args
		echo "args '$args': status $status, stderr '$stderr'"
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[[ ${stderr_lines[0]} == *rdmaqp:* ]]
	done
}

@test "--help names its options and the common ones" {
	run "$RDMAQP" --help
	[ "$status" -eq 0 ]
	local o
	for o in --device --events --kprobe --no-bpf --budget --json --timestamp --verbose; do
		[[ $output == *"$o"* ]] || { echo "missing $o"; return 1; }
	done
}
