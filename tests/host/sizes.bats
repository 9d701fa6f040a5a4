#!/usr/bin/env bats
# The source rules of CONTRIBUTING hold by themselves: no C file over 1,000
# lines, no function over 100 (tests/lib/c_sizes.py, whose parser is
# Universal Ctags), over the repository's own C (the tracked C of tools/,
# bpf/, bench/ and tests/unit; vmlinux/ and btf/ are generated); and every
# BPF header compiles on its own (make bpf-hdr-check), so that no file is
# a piece that compiles only when included mid-file.

bats_require_minimum_version 1.5.0
load ../lib/common

setup() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "host-only: source sizes do not depend on the kernel"
	command -v git >/dev/null && git -C "$AX_ROOT" rev-parse --git-dir >/dev/null 2>&1 ||
		skip "not a git checkout: the tracked C files are the ones checked"
}

need_ctags() {
	command -v ctags >/dev/null ||
		skip "ctags not installed (scripts/setup-deps.sh: universal-ctags)"
}

# the repository's own C: tracked .c and .h files (.bpf.c and .bpf.h
# among them) of tools/, bpf/, bench/ and tests/unit
c_files() {
	git -C "$AX_ROOT" ls-files 'tools/*.[ch]' 'bpf/*.[ch]' 'bench/*.[ch]' 'tests/unit/*.[ch]' |
		grep -vE '^(vmlinux|btf)/' | sed "s|^|$AX_ROOT/|"
}

@test "no C file over 1000 lines, no C function over 100" {
	local files
	need_ctags
	mapfile -t files < <(c_files)
	[ "${#files[@]}" -gt 100 ]
	run "$AX_ROOT/tests/lib/c_sizes.py" "${files[@]}"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "the size check finds long functions however laid out, and long files" {
	local f=$BATS_TEST_TMPDIR/long.c i
	need_ctags
	body() { for i in $(seq 101); do echo "	a++;"; done; echo "	return a;"; }
	{
		echo "static int long_one(int a)"	# line 1
		echo "{"
		body
		echo "}"
		echo "	static int indented(int a)"	# line 106
		echo "	{"
		body
		echo "	}"
		echo "static __always_inline int"	# line 211
		echo "split_over(int a,"
		echo "	   int b)"
		echo "{"
		body
		echo "}"
		echo "SEC(\"xdp\")"			# line 318
		echo "int after_macro(int a) {"
		body
		echo "}"
		echo "static int short_one(int a)"	# line 423
		echo "{"
		for i in $(seq 99); do echo "	a++;"; done
		echo "	return a;"
		echo "}"
	} > "$f"
	run -1 "$AX_ROOT/tests/lib/c_sizes.py" "$f"
	echo "$output" >&2
	[ "$output" = "$f:1 long_one 102
$f:106 indented 102
$f:212 split_over 102
$f:319 after_macro 102" ]
	run -1 "$AX_ROOT/tests/lib/c_sizes.py" --max-file 500 "$f"
	[ "${lines[0]}" = "$f: 525 lines" ]
}

@test "every BPF header compiles on its own" {
	run make -s -C "$AX_ROOT" WERROR=1 bpf-hdr-check
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "the header check finds a header that does not compile on its own" {
	local h=$BATS_TEST_TMPDIR/piece.bpf.h
	printf '#ifndef PIECE_H\n#define PIECE_H\nstatic __u32 piece;\n#endif\n' > "$h"
	run make -s -C "$AX_ROOT" WERROR=1 bpf-hdr-check BPF_HDR_CHECK="$h bpf/lib/maps.bpf.h"
	echo "$output" >&2
	[ "$status" -ne 0 ]
	[[ "$output" == *"$h: does not compile on its own"* ]]
	[[ "$output" != *"maps.bpf.h: does not"* ]]
}
