#!/usr/bin/env bats
# The tree builds clean, warnings as errors, with either compiler and
# without optimisation: code that works only while gcc -O2 merges
# identical string literals (pointers compared for equality), or that one
# compiler warns about, fails here. The gcc -O2 build is the test
# command's own (scripts/test.sh).

bats_require_minimum_version 1.5.0
load ../lib/common

setup() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "host-only: building does not depend on the kernel"
	command -v clang >/dev/null || skip "clang not installed (scripts/setup-deps.sh)"
}

@test "CC=clang WERROR=1: the tools build clean" {
	run make -s -C "$AX_ROOT" -j"$(nproc)" OUTPUT="$BATS_TEST_TMPDIR/clang" CC=clang WERROR=1 tools
	echo "$output" >&2
	[ "$status" -eq 0 ]
	"$BATS_TEST_TMPDIR/clang/nfdrop" --help | grep -q '^Usage: nfdrop'
}

@test "CFLAGS=-O0 WERROR=1: the tools build clean" {
	run make -s -C "$AX_ROOT" -j"$(nproc)" OUTPUT="$BATS_TEST_TMPDIR/O0" CFLAGS="-O0 -g" WERROR=1 tools
	echo "$output" >&2
	[ "$status" -eq 0 ]
	"$BATS_TEST_TMPDIR/O0/rocediag" --help | grep -q '^Usage: rocediag'
}
