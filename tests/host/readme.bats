#!/usr/bin/env bats
# The README's first screens are checked against the tools themselves: the
# quick start names only options the tools accept, and no command needs
# sudo (a fresh Debian has none; the README's commands run as root).

bats_require_minimum_version 1.5.0
load ../lib/common

setup() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "host-only: the README does not depend on the kernel"
	[ -x "$AX_BUILD/rocelat" ] || skip "build first: make"
}

# the lines of the README's fenced block that follows heading $1
readme_block() {
	awk -v h="$1" '$0 == h { on = 1; next } on && /^```/ { n++; if (n == 2) exit; next } on && n == 1' "$AX_ROOT/README.md"
}

@test "README quick start: one command per tool, each option one the tool's --help lists" {
	local block tool word help n=0 seen=()
	block=$(readme_block "## Quick start, one command per tool (as root)")
	[ -n "$block" ]
	while read -r line; do
		line=${line%%#*}
		read -ra words <<< "$line"
		tool=${words[0]}
		[ -x "$AX_BUILD/$tool" ] || { echo "quick start names '$tool', which is not built" >&2; false; }
		help=$("$AX_BUILD/$tool" --help)
		for word in "${words[@]:1}"; do
			case $word in
			-*) grep -qE -- "(^|[ ,])${word%%=*}([ ,=]|$)" <<< "$help" ||
				{ echo "$tool: '$word' is not in its --help" >&2; false; } ;;
			esac
		done
		seen+=("$tool")
		n=$((n + 1))
	done <<< "$block"
	# every tool of the suite has its line
	for tool in $(ax_tools); do
		[[ " ${seen[*]} " == *" $tool "* ]] || { echo "no quick start for $tool" >&2; false; }
	done
}

@test "README: no command needs sudo" {
	run grep -nE '^(\$ |# )?sudo |[;&|] *sudo |`sudo [a-z]' "$AX_ROOT/README.md"
	echo "$output" >&2
	[ "$status" -eq 1 ]
}

@test "README's rocelat sample is rocelat -r's output on the shipped recording, line for line" {
	local block
	block=$(awk '/^# rocelat -r \/usr\/share\/doc\/agentxdp\/samples\/rocegen-3flows.pcap -F$/ { on = 1; next }
		on && /^```$/ { exit } on' "$AX_ROOT/README.md")
	[ -n "$block" ]
	diff -u <(echo "$block") \
		<("$AX_BUILD/rocelat" -r "$AX_ROOT/samples/rocegen-3flows.pcap" -F 2>/dev/null | head -n "$(wc -l <<< "$block")") >&2
	# the counters README names after it
	[[ "$("$AX_BUILD/rocelat" -r "$AX_ROOT/samples/rocegen-3flows.pcap" -F 2>/dev/null)" == *"roce_packets=$(grep -o 'roce_packets=[0-9]*' <<< "$(sed -n '/^Then the counters of the run/p' "$AX_ROOT/README.md")" | cut -d= -f2) "* ]]
	# and the quick start names the recording where the package puts it
	grep -qF 'rocelat -r /usr/share/doc/agentxdp/samples/rocegen-3flows.pcap -F' "$AX_ROOT/README.md"
}
