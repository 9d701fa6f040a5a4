#!/usr/bin/env bats
# The layout of CONTRIBUTING.md holds by itself: a folder per tool, the
# shared libraries below every tool, and a tool's build pulling only the
# libraries it uses. A build and source check, on the host only.

bats_require_minimum_version 1.5.0
load ../lib/common

setup() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "host-only: the layout does not depend on the kernel"
	command -v git >/dev/null && git -C "$AX_ROOT" rev-parse --git-dir >/dev/null 2>&1 ||
		skip "not a git checkout: the tracked files are the ones checked"
}

GRAPH=$AX_ROOT/tests/lib/include_graph.py

# hide_headers CMD...: CMD in a mount namespace of its own where libpcap's
# and the netfilter libraries' headers are empty (the host's stay as they
# are: the mounts end with the namespace)
hide_headers() {
	unshare -m bash -c '
		set -e
		e=$(mktemp -d)
		for d in /usr/include/pcap /usr/include/nftables /usr/include/libnftnl /usr/include/libmnl; do
			[ ! -d "$d" ] || mount --bind "$e" "$d"
		done
		for f in /usr/include/pcap.h /usr/include/pcap-bpf.h /usr/include/pcap-namedb.h; do
			[ ! -f "$f" ] || mount --bind /dev/null "$f"
		done
		"$@"' _ "$@"
}

@test "rxedrop builds alone without libpcap's and the netfilter libraries' headers" {
	unshare -m true 2>/dev/null || skip "no mount namespaces here"
	# the hiding works: a file that includes them does not compile
	run hide_headers bash -c 'printf "#include <pcap/pcap.h>\nint main(void) { return PCAP_ERRBUF_SIZE; }\n" |
		gcc -x c -c -o /dev/null -'
	[ "$status" -ne 0 ]
	run hide_headers bash -c 'printf "#include <nftables/libnftables.h>\nint main(void) { return NFT_CTX_DEFAULT; }\n" |
		gcc -x c -c -o /dev/null -'
	[ "$status" -ne 0 ]
	# and rxedrop, with the shared library, builds without them
	run hide_headers make -s -C "$AX_ROOT" OUTPUT="$BATS_TEST_TMPDIR/out" WERROR=1 "$BATS_TEST_TMPDIR/out/rxedrop"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	"$BATS_TEST_TMPDIR/out/rxedrop" --help | grep -q '^Usage: rxedrop'
	# it compiled only its own folder and the shared library
	[ "$(ls "$BATS_TEST_TMPDIR/out/obj")" = rxedrop ]
}

@test "imports go down: no circle between folders, the shared libraries include no tool" {
	run python3 "$GRAPH" "$AX_ROOT"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	# it read the tree: the tools include the shared library
	[[ "$output" == *"tools/rxedrop -> tools/lib: "* ]]
	[[ "$output" == *"tools/rocelat -> bpf/lib: "* ]]
}

@test "a tool includes another tool's headers only when its .uses names that tool" {
	local line from to t
	while IFS= read -r line; do
		from=${line%% -> *}
		to=${line#* -> }
		to=${to%%:*}
		[[ $from == tools/* && $to == tools/* && $to != tools/lib ]] || continue
		t=${from#tools/}
		grep -qx "${to#tools/}" "$AX_ROOT/$from/$t.uses" 2>/dev/null || {
			echo "not in $from/$t.uses: $line" >&2
			return 1
		}
	done < <(python3 "$GRAPH" "$AX_ROOT")
}

@test "the include check finds a circle and an include up (it checks something)" {
	local T=$BATS_TEST_TMPDIR/tree
	mkdir -p "$T/tools/lib" "$T/tools/one" "$T/tools/two" "$T/bpf/lib"
	git -C "$T" init -q
	echo '#include "lib/base.h"' > "$T/tools/one/one.c"
	echo '#include "two.h"' >> "$T/tools/one/one.c"
	echo '#include "one.h"' > "$T/tools/two/two.h"
	: > "$T/tools/one/one.h"
	echo '#include "one.h"' > "$T/tools/lib/base.h"
	git -C "$T" add -A
	run python3 "$GRAPH" "$T"
	echo "$output" >&2
	[ "$status" -eq 1 ]
	[[ "$output" == *"circle: tools/one -> tools/two -> tools/one"* ]]
	[[ "$output" == *"up: tools/lib/base.h includes tools/one/one.h"* ]]
}

@test "every tool is a folder of its own: no tool's file in tools/ or bpf/ themselves" {
	local t
	run git -C "$AX_ROOT" ls-files 'tools/*.[ch]' 'bpf/*.[ch]' 'tools/*.uses'
	# only what lies in a folder below them
	[ -z "$(printf '%s\n' "$output" | grep -vE '^(tools|bpf)/[^/]+/')" ]
	# and each tool's files are in tools/<tool>/
	for t in $(ax_tools); do
		[ -f "$AX_ROOT/tools/$t/$t.c" ]
		[ -z "$(git -C "$AX_ROOT" ls-files "tools/lib/$t*" "bpf/lib/$t*")" ]
	done
}

# the files a reader opens: each begins (after its licence line) with a
# comment saying what it is
@test "every C and BPF file opens with a comment that says what it is" {
	local f bad=()
	while IFS= read -r f; do
		awk 'NR == 1 && /SPDX/ { next } /^[[:space:]]*$/ { next }
			{ ok = ($0 ~ /^(\/\*|\/\/)/); exit } END { exit !ok }' "$AX_ROOT/$f" || bad+=("$f")
	done < <(git -C "$AX_ROOT" ls-files 'tools/*.[ch]' 'bpf/*.[ch]' 'tests/unit/*.[ch]' 'bench/*.c')
	printf 'no opening comment: %s\n' "${bad[@]}" >&2
	[ "${#bad[@]}" -eq 0 ]
}
