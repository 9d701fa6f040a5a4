#!/usr/bin/env bats
# The size rules of CONTRIBUTING hold by themselves: no C file over 1,000
# lines, no function over 100 (generated and vendored files aside:
# vmlinux/, btf/ and the build's output are not in the repository's C).

bats_require_minimum_version 1.5.0
load ../lib/common

setup() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "host-only: source sizes do not depend on the kernel"
	command -v git >/dev/null && git -C "$AX_ROOT" rev-parse --git-dir >/dev/null 2>&1 ||
		skip "not a git checkout: the tracked C files are the ones checked"
}

# the repository's own C: tracked .c and .h files outside vmlinux/ and btf/
c_files() {
	git -C "$AX_ROOT" ls-files '*.c' '*.h' | grep -vE '^(vmlinux|btf)/' | sed "s|^|$AX_ROOT/|"
}

@test "no C file over 1000 lines" {
	run bash -c "wc -l $(c_files | tr '\n' ' ') | awk '\$2 != \"total\" && \$1 > 1000'"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "no C function over 100 lines" {
	local files
	mapfile -t files < <(c_files)
	[ "${#files[@]}" -gt 50 ]
	run awk -v MAX=100 -f "$AX_ROOT/tests/lib/fnlen.awk" "${files[@]}"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "the function-length check finds a long function (it checks something)" {
	local f=$BATS_TEST_TMPDIR/long.c i
	{
		echo "static int long_one(int a)"
		echo "{"
		for i in $(seq 101); do echo "	a++;"; done
		echo "	return a;"
		echo "}"
	} > "$f"
	run awk -v MAX=100 -f "$AX_ROOT/tests/lib/fnlen.awk" "$f"
	[[ "$output" == "$f:2 long_one 102" ]]
}
