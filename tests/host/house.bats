#!/usr/bin/env bats
# The house's rules that the objects themselves can tell: no mutable state
# shared across files. Settings are passed in (a tool's struct cli_env to
# loop_run(), cli_setup(), its parts' configs), never read from a global;
# what a signal handler touches stays static in its file.

bats_require_minimum_version 1.5.0
load ../lib/common

setup() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "host-only: the objects do not depend on the kernel"
	command -v nm >/dev/null || skip "nm not installed (binutils)"
}

# every object the tools link: the shared library's and each tool's own
objects() {
	compgen -G "$AX_BUILD/lib/*.o"
	compgen -G "$AX_BUILD/obj/*/*.o"
}

# "OBJECT: SYMBOL (SECTION)" for each global symbol an object defines in a
# writable data section: .data and .bss (and their .data.rel.local kind:
# an initialised pointer), COMMON, thread-local data. .data.rel.ro (a
# const object holding pointers: nm's D) and .rodata are read-only. argp's
# own two, which it reads by name, aside.
exported_mutable() {
	local o
	for o in "$@"; do
		nm -f sysv -g --defined-only "$o" | awk -F'|' -v obj="${o#"$AX_ROOT"/}" '
			NF >= 7 {
				name = $1; sec = $7
				gsub(/[[:space:]]/, "", name); gsub(/[[:space:]]/, "", sec)
				if (name == "argp_program_version" || name == "argp_program_bug_address")
					next
				if (sec ~ /^\.data\.rel\.ro/)
					next
				if (sec ~ /^\.(data|bss|tdata|tbss)($|\.)/ || sec == "*COM*")
					print obj ": " name " (" sec ")"
			}'
	done
}

@test "no mutable global is exported by any object" {
	local objs out
	mapfile -t objs < <(objects)
	[ "${#objs[@]}" -gt 20 ] || skip "not built (make tools): ${#objs[@]} objects"
	out=$(exported_mutable "${objs[@]}")
	[ -z "$out" ] || {
		echo "mutable globals exported (pass settings in; keep what a signal handler touches static):" >&2
		echo "$out" >&2
		false
	}
}

@test "the detector flags a planted mutable global, and not what is read-only" {
	local d=$BATS_TEST_TMPDIR out
	cat > "$d/planted.c" <<-'EOF'
		int planted_data = 1;
		int planted_bss = 0;
		int planted_common;
		const char *planted_ptr = "a";
		static int kept_static = 2;
		const int kept_rodata = 3;
		const char *const kept_relro[] = { "a", "b" };
		const char *argp_program_version = "planted 1";
		int kept_fn(void) { return kept_static++ + planted_data; }
	EOF
	"${CC:-cc}" -O2 -fPIE -fcommon -c "$d/planted.c" -o "$d/planted.o"
	out=$(exported_mutable "$d/planted.o")
	echo "$out" >&2
	[[ "$out" == *"planted_data (.data)"* ]]
	[[ "$out" == *"planted_bss (.bss)"* ]]
	[[ "$out" == *"planted_common (*COM*)"* ]]
	[[ "$out" == *"planted_ptr (.data"* ]]
	[[ "$out" != *kept_* ]]
	[[ "$out" != *argp_program_version* ]]
	[ "$(wc -l <<< "$out")" -eq 4 ]
}

# Every skeleton is bpftool's own, unedited: made again from its object,
# under the name it carries, it is the same bytes (rocelat's bounded build
# is a skeleton of its own, rocelat_noloop_bpf, never a renamed copy)
@test "every skeleton is bpftool's output for its object, byte for byte" {
	local s o name n=0
	command -v bpftool >/dev/null || skip "bpftool not installed"
	for s in "$AX_BUILD"/*.skel.h; do
		o=${s%.skel.h}.bpf.o
		[ -f "$o" ] || continue
		name=$(sed -n 's/^struct \([a-z0-9_]*\) {$/\1/p' "$s" | head -1)
		[ -n "$name" ]
		cmp "$s" <(bpftool gen skeleton "$o" name "$name")
		n=$((n + 1))
	done
	[ "$n" -ge 6 ]
	grep -q '^struct rocelat_noloop_bpf {' "$AX_BUILD/rocelat_noloop.skel.h"
}

# rocelat's two builds (the kernel's object, the native one of -r) are
# chosen once, in rocelat.c: the report and the SVG call neither build's
# own functions, only the backend they are handed
@test "rocelat's report and SVG reach the program only through its backend" {
	local o calls
	for o in rocelat_report rocelat_svg; do
		[ -f "$AX_BUILD/obj/rocelat/$o.o" ] || skip "not built (make tools)"
		calls=$(nm -u "$AX_BUILD/obj/rocelat/$o.o")
		# it calls something (the read worked), and no build directly
		[ -n "$calls" ]
		! grep -E 'rocelat_native_|rocelat_bpf__|rocelat_noloop_bpf__|bpf_map_|bpf_prog_|bpf_object__' <<< "$calls" ||
			{ echo "$o calls a build directly" >&2; false; }
	done
	# the one choice: rocelat.c opens one build or the other
	nm -u "$AX_BUILD/obj/rocelat/rocelat.o" | grep -q ' rocelat_native_open$'
	nm -u "$AX_BUILD/obj/rocelat/rocelat.o" | grep -q ' rocelat_load$'
}
