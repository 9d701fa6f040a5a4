#!/usr/bin/env bats
# make install / make uninstall into a scratch DESTDIR: tools in sbin, man
# pages in share/man/man8, bash completion where bash-completion looks, and
# nothing left behind but (shared) directories after uninstall.

bats_require_minimum_version 1.5.0
load ../lib/common

setup() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "host-only: installing does not depend on the kernel"
	[ -x "$AX_BUILD/rxedrop" ] || skip "build first: make"
	D=$BATS_TEST_TMPDIR/root
}

tools() {
	local f t
	for f in "$AX_ROOT"/bpf/*.bpf.c; do
		t=$(basename "$f" .bpf.c)
		[ -f "$AX_ROOT/tools/$t.c" ] && echo "$t"
	done
}

@test "make install DESTDIR= prefix=/usr, then make uninstall leaves no file" {
	local t
	make -s -C "$AX_ROOT" OUTPUT="$AX_BUILD" install DESTDIR="$D" prefix=/usr
	for t in $(tools); do
		[ -x "$D/usr/sbin/$t" ]
		[ -f "$D/usr/share/man/man8/$t.8" ]
		[ -f "$D/usr/share/bash-completion/completions/$t" ]
		"$D/usr/sbin/$t" --help | grep -q "^Usage: $t"
	done
	make -s -C "$AX_ROOT" OUTPUT="$AX_BUILD" uninstall DESTDIR="$D" prefix=/usr
	run find "$D" ! -type d
	echo "$output" >&2
	[ -z "$output" ]
}

@test "default prefix is /usr/local" {
	make -s -C "$AX_ROOT" OUTPUT="$AX_BUILD" install DESTDIR="$D"
	[ -x "$D/usr/local/sbin/rxedrop" ]
	[ -f "$D/usr/local/share/man/man8/rxedrop.8" ]
	[ -f "$D/usr/local/share/bash-completion/completions/rxedrop" ]
	make -s -C "$AX_ROOT" OUTPUT="$AX_BUILD" uninstall DESTDIR="$D"
	[ -z "$(find "$D" ! -type d)" ]
}

@test "bash completion offers the tool's own options and interfaces" {
	[ -f /usr/share/bash-completion/bash_completion ] || skip "bash-completion not installed"
	run bash -c '
		source /usr/share/bash-completion/bash_completion
		source "$1/completion/agentxdp.bash"
		c() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		      COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
		      _agentxdp "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		      echo "${COMPREPLY[*]}"; }
		c "$2/rxedrop" --ro
		c "$2/rxedrop" -i lo
		c "$2/rxedrop" --pr' _ "$AX_ROOT" "$AX_BUILD"
	echo "$output" >&2
	[ "${lines[0]}" = "--roce-port" ]
	[ "${lines[1]}" = "lo" ]
	[ "${lines[2]}" = "--prom" ]
}
