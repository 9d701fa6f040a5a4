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


@test "make install DESTDIR= prefix=/usr, then make uninstall leaves no file" {
	local t
	make -s -C "$AX_ROOT" OUTPUT="$AX_BUILD" install DESTDIR="$D" prefix=/usr
	for t in $(ax_tools); do
		[ -x "$D/usr/sbin/$t" ]
		[ -f "$D/usr/share/man/man8/$t.8" ]
		[ -f "$D/usr/share/bash-completion/completions/$t" ]
		"$D/usr/sbin/$t" --help | grep -q "^Usage: $t"
	done
	# the test traffic generator, so that a package user can make RoCE
	# traffic between two namespaces without an RDMA device
	[ -x "$D/usr/bin/rocegen" ]
	[ -f "$D/usr/share/man/man1/rocegen.1" ]
	"$D/usr/bin/rocegen" --version | grep -q "^rocegen (AgentXDP) "
	# the place --help's "Report bugs to" names
	"$D/usr/sbin/rxedrop" --help | tr '\n' ' ' | grep -qF /usr/share/doc/agentxdp/README.md
	grep -q '^## Reporting bugs$' "$D/usr/share/doc/agentxdp/README.md"
	# the recordings to try rocelat -r on, as the repository has them
	cmp "$AX_ROOT/samples/rocegen-3flows.pcap" "$D/usr/share/doc/agentxdp/samples/rocegen-3flows.pcap"
	"$D/usr/sbin/rocelat" -r "$D/usr/share/doc/agentxdp/samples/rocegen-3flows.pcap" -F 2>/dev/null | grep -q '^OUTLIER: .* sport 49153'
	# the fleet's Prometheus rules, as the repository has them
	cmp "$AX_ROOT/prometheus/agentxdp.rules.yml" "$D/usr/share/agentxdp/prometheus/agentxdp.rules.yml"
	make -s -C "$AX_ROOT" OUTPUT="$AX_BUILD" uninstall DESTDIR="$D" prefix=/usr
	run find "$D" ! -type d
	echo "$output" >&2
	[ -z "$output" ]
}

# a distribution's renamed tools (bcc libbpf-tools' APP_PREFIX, Fedora's
# bpf-<tool>): programs, man pages and completions under one name each,
# and each names itself so in --help, --version and its man page
@test "make install APP_PREFIX=bpf- names programs, man pages and completions alike" {
	local t p
	make -s -C "$AX_ROOT" OUTPUT="$AX_BUILD" install DESTDIR="$D" prefix=/usr APP_PREFIX=bpf-
	for t in $(ax_tools) rocegen; do
		p=bpf-$t
		if [ "$t" = rocegen ]; then
			[ -x "$D/usr/bin/$p" ] && [ ! -e "$D/usr/bin/$t" ]
			grep -q '^\.TH BPF-ROCEGEN ' "$D/usr/share/man/man1/$p.1"
			MANWIDTH=80 man -l "$D/usr/share/man/man1/$p.1" > "$BATS_TEST_TMPDIR/man" 2>/dev/null
			"$D/usr/bin/$p" --help > "$BATS_TEST_TMPDIR/help"
			"$D/usr/bin/$p" --version | grep -q "^$p (AgentXDP) "
		else
			[ -x "$D/usr/sbin/$p" ] && [ ! -e "$D/usr/sbin/$t" ]
			grep -q "^\.TH ${p^^} " "$D/usr/share/man/man8/$p.8"
			MANWIDTH=80 man -l "$D/usr/share/man/man8/$p.8" > "$BATS_TEST_TMPDIR/man" 2>/dev/null
			[ -f "$D/usr/share/bash-completion/completions/$p" ]
			[ ! -e "$D/usr/share/bash-completion/completions/$t" ]
			"$D/usr/sbin/$p" --help > "$BATS_TEST_TMPDIR/help"
			"$D/usr/sbin/$p" --version | grep -q "^$p (AgentXDP) "
		fi
		grep -q "^Usage: $p " "$BATS_TEST_TMPDIR/help"
		# every example and usage line of the help, and the page's NAME
		# and SYNOPSIS, run the program by its installed name
		! grep -E "^ *(USAGE: |or: *)?$t( |\$)" "$BATS_TEST_TMPDIR/help" >&2
		grep -A1 '^NAME' "$BATS_TEST_TMPDIR/man" | grep -qE "^ *$p +- "
		grep -A1 '^SYNOPSIS' "$BATS_TEST_TMPDIR/man" | grep -q "^ *$p"
	done
	# another tool it points at, in the page and the help, by its new name
	grep -q 'fBbpf-rxedrop\\fR(8)' "$D/usr/share/man/man8/bpf-rocediag.8"
	"$D/usr/sbin/bpf-rocediag" --help | grep -q ' or bpf-rocelat --mirror\.$'
	# file names in the pages are the files' own
	grep -q 'node\\-exporter/rxedrop\.prom' "$D/usr/share/man/man8/bpf-rxedrop.8"
	if [ -f /usr/share/bash-completion/bash_completion ]; then
		run bash -c '
			source /usr/share/bash-completion/bash_completion
			source "$1/usr/share/bash-completion/completions/bpf-rxedrop"
			complete -p bpf-rxedrop
			COMP_WORDS=("$1/usr/sbin/bpf-rxedrop" --ro); COMP_CWORD=1
			COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
			_agentxdp "${COMP_WORDS[0]}" --ro "${COMP_WORDS[0]}"
			echo "${COMPREPLY[*]}"' _ "$D"
		echo "$output" >&2
		[ "${lines[0]}" = "complete -F _agentxdp bpf-rxedrop" ]
		[ "${lines[1]}" = "--roce-port" ]
	fi
	make -s -C "$AX_ROOT" OUTPUT="$AX_BUILD" uninstall DESTDIR="$D" prefix=/usr APP_PREFIX=bpf-
	run find "$D" ! -type d
	echo "$output" >&2
	[ -z "$output" ]
}

@test "default prefix is /usr/local" {
	make -s -C "$AX_ROOT" OUTPUT="$AX_BUILD" install DESTDIR="$D"
	[ -x "$D/usr/local/sbin/rxedrop" ]
	[ -f "$D/usr/local/share/man/man8/rxedrop.8" ]
	[ -f "$D/usr/local/share/bash-completion/completions/rxedrop" ]
	"$D/usr/local/sbin/rxedrop" --help | tr '\n' ' ' | grep -qF /usr/local/share/doc/agentxdp/README.md
	grep -q '^## Reporting bugs$' "$D/usr/local/share/doc/agentxdp/README.md"
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
		c "$2/rxedrop" --pr
		c "$2/rocelat" --net
		c "$2/rxeqp" -h
		# files after rocelat -r FILE: more files
		cd "$3" && : > one.pcap && : > two.pcap && c "$2/rocelat" -r one.pcap t
		c "$2/rocelat" -F t' _ "$AX_ROOT" "$AX_BUILD" "$BATS_TEST_TMPDIR"
	echo "$output" >&2
	[ "${lines[0]}" = "--roce-port" ]
	[ "${lines[1]}" = "lo" ]
	[ "${lines[2]}" = "--prom" ]
	# -N/--netns and -h are every tool's (the CLI core's)
	[ "${lines[3]}" = "--netns" ]
	[ "${lines[4]}" = "-h" ]
	[ "${lines[5]}" = "two.pcap" ]
	# without -r a word is rocelat's interval: no files offered
	[ "${#lines[@]}" -eq 6 ] || [ -z "${lines[6]}" ]
}

# One more tool, as CONTRIBUTING.md adds one: its files (a renamed copy of
# rxedrop: its folder tools/rxedrop/, every file renamed) and its
# man/<tool>.h2m in a scratch copy of the tree, no other file touched. The build, `make man`, install, uninstall and the bash
# completion must all pick it up. The other tools' objects are copied in
# (times kept), so only the new one is compiled.
@test "one more tool dropped in is built, documented, installed and completed with no list edited" {
	command -v help2man >/dev/null || skip "help2man not installed"
	local S=$BATS_TEST_TMPDIR/tree B t f
	B=$S/build
	mkdir -p "$S" "$B"
	(cd "$AX_ROOT" && tar cf - Makefile README.md bpf btf tools vmlinux man completion scripts debian prometheus) |
		(cd "$S" && tar xf -)
	for t in $(ax_tools); do
		for f in "$AX_BUILD/$t" "$AX_BUILD/$t".*; do [ ! -e "$f" ] || cp -a "$f" "$B"/; done
	done
	cp -a "$AX_BUILD"/lib "$AX_BUILD"/obj "$AX_BUILD"/libagentxdp.a "$AX_BUILD"/vmlinux_have_*.h \
		"$AX_BUILD"/rocelat_noloop.* "$B"/
	mkdir "$S/tools/axdemo"
	for f in man/rxedrop.h2m $(cd "$S" && ls tools/rxedrop/*); do
		f=${f#./}
		sed 's/rxedrop/axdemo/g; s/RXEDROP/AXDEMO/g' "$S/$f" > "$S/${f//rxedrop/axdemo}"
	done

	make -s -C "$S" OUTPUT="$B" tools
	"$B/axdemo" --help | grep -q "^Usage: axdemo"
	make -s -C "$S" OUTPUT="$B" man
	grep -q "axdemo" "$S/man/axdemo.8"
	make -s -C "$S" OUTPUT="$B" install DESTDIR="$D" prefix=/usr
	[ -x "$D/usr/sbin/axdemo" ]
	[ -f "$D/usr/share/man/man8/axdemo.8" ]
	[ -f "$D/usr/share/bash-completion/completions/axdemo" ]
	if [ -f /usr/share/bash-completion/bash_completion ]; then
		run bash -c '
			source /usr/share/bash-completion/bash_completion
			source "$1/usr/share/bash-completion/completions/axdemo"
			complete -p axdemo
			COMP_WORDS=("$1/usr/sbin/axdemo" --ro); COMP_CWORD=1
			COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
			_agentxdp "${COMP_WORDS[0]}" --ro "${COMP_WORDS[0]}"
			echo "${COMPREPLY[*]}"' _ "$D"
		echo "$output" >&2
		[ "${lines[0]}" = "complete -F _agentxdp axdemo" ]
		[ "${lines[1]}" = "--roce-port" ]
	fi
	make -s -C "$S" OUTPUT="$B" uninstall DESTDIR="$D" prefix=/usr
	run find "$D" ! -type d
	echo "$output" >&2
	[ -z "$output" ]
}
