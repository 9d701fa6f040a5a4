#!/usr/bin/env bats
# The Debian package: built from a copy of the tree (the checkout stays
# clean) with dpkg-buildpackage, checked with lintian, unpacked into a
# scratch root with dpkg -x, and every tool's --help run from there.
# The build takes about 1.5 minutes on this 2-core machine; it runs once
# (setup_file) for all the cases below.

bats_require_minimum_version 1.5.0
load ../lib/common

setup_file() {
	export PKG_SKIP=""
	# in the Soft-RoCE guest the build would run under emulation for many
	# minutes; the package does not depend on the kernel
	[ -z "${AGENTXDP_VM:-}" ] || { export PKG_SKIP="host-only: the package is built and checked on the host"; return 0; }
	for c in dpkg-buildpackage dh lintian; do
		command -v $c >/dev/null || { export PKG_SKIP="$c not installed (scripts/setup-deps.sh)"; return 0; }
	done
	dpkg-checkbuilddeps "$AX_ROOT/debian/control" 2>/dev/null ||
		{ export PKG_SKIP="build dependencies missing: $(dpkg-checkbuilddeps "$AX_ROOT/debian/control" 2>&1)"; return 0; }
	export PKG_DIR=$BATS_FILE_TMPDIR/pkg
	export PKG_SRC=$PKG_DIR/agentxdp
	export PKG_ROOT=$BATS_FILE_TMPDIR/root
	mkdir -p "$PKG_SRC" "$PKG_ROOT"
	# the tracked files as they are in the work tree, no build outputs
	if git -C "$AX_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$AX_ROOT" ls-files -z | (cd "$AX_ROOT" && tar --null -T - -cf -) | tar -xf - -C "$PKG_SRC"
	else
		tar -C "$AX_ROOT" --exclude=./build --exclude='./build-*' -cf - . | tar -xf - -C "$PKG_SRC"
	fi
	local start=$SECONDS
	(cd "$PKG_SRC" && dpkg-buildpackage -us -uc -b -j"$(nproc)") > "$PKG_DIR/build.log" 2>&1
	export PKG_RC=$?
	export PKG_SECONDS=$((SECONDS - start))
	export DEB
	DEB=$(ls "$PKG_DIR"/agentxdp_*.deb 2>/dev/null | head -1)
	[ -n "$DEB" ] && dpkg -x "$DEB" "$PKG_ROOT"
	return 0
}

setup() {
	[ -z "$PKG_SKIP" ] || skip "$PKG_SKIP"
}


@test "dpkg-buildpackage -us -uc -b builds the .deb" {
	echo "build took ${PKG_SECONDS}s" >&2
	[ "$PKG_RC" -eq 0 ] || { tail -40 "$PKG_DIR/build.log" >&2; false; }
	[ -f "$DEB" ]
	# no compiler warnings in the package build either
	! grep -E 'warning:' "$PKG_DIR/build.log" | grep -v 'dpkg-' >&2
}

@test "lintian: no errors" {
	[ -f "$DEB" ]
	run lintian --no-tag-display-limit "$DEB"
	echo "$output" >&2
	! grep -q '^E: ' <<< "$output"
}

@test "Depends: only what the tools link, from shlibs" {
	[ -f "$DEB" ]
	local dep
	dep=$(dpkg-deb -f "$DEB" Depends)
	echo "Depends: $dep" >&2
	grep -q 'libbpf1' <<< "$dep"
	grep -q 'libc6' <<< "$dep"
	# every dependency is a shared library some tool has as NEEDED
	local needed p lib
	needed=$(for t in $(ax_tools); do readelf -d "$PKG_ROOT/usr/sbin/$t"; done | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | sort -u)
	for p in $(tr ',' '\n' <<< "$dep" | sed 's/(.*//; s/ //g'); do
		lib=$(dpkg -L "$p" 2>/dev/null | grep -E '/lib[^/]*\.so\.[0-9]+$' | xargs -rn1 basename | head -5)
		[ -n "$lib" ] || continue
		grep -qxF -f <(echo "$lib") <<< "$needed" || { echo "$p: none of $lib is NEEDED" >&2; false; }
	done
}

@test "installed into a scratch root: tools in /usr/sbin run --help" {
	[ -f "$DEB" ]
	local t
	for t in $(ax_tools); do
		[ -x "$PKG_ROOT/usr/sbin/$t" ] || { echo "no /usr/sbin/$t in the package" >&2; false; }
		"$PKG_ROOT/usr/sbin/$t" --help > "$BATS_TEST_TMPDIR/$t.help"
		grep -q "^Usage: $t" "$BATS_TEST_TMPDIR/$t.help"
	done
	# unsuffixed and nothing else in sbin (libbpf-tools style)
	[ "$(ls "$PKG_ROOT/usr/sbin" | sort)" = "$(ax_tools | sort)" ]
}

@test "man pages and bash completion are in the package" {
	[ -f "$DEB" ]
	local t
	for t in $(ax_tools); do
		[ -f "$PKG_ROOT/usr/share/man/man8/$t.8.gz" ] || { echo "no man page for $t" >&2; false; }
		MANWIDTH=80 man -l "$PKG_ROOT/usr/share/man/man8/$t.8.gz" 2>/dev/null | grep -q "^NAME"
		[ -f "$PKG_ROOT/usr/share/bash-completion/completions/$t" ]
	done
	bash -n "$PKG_ROOT/usr/share/bash-completion/completions/rxedrop"
	# where --help's "Report bugs to" sends the user, uncompressed
	"$PKG_ROOT/usr/sbin/rxedrop" --help | tr '\n' ' ' | grep -qF /usr/share/doc/agentxdp/README.md
	grep -q '^## Reporting bugs$' "$PKG_ROOT/usr/share/doc/agentxdp/README.md"
	# the recording to try rocelat -r on, uncompressed, readable as it is
	cmp "$AX_ROOT/samples/rocegen-3flows.pcap" "$PKG_ROOT/usr/share/doc/agentxdp/samples/rocegen-3flows.pcap"
}

@test "rocegen, the test traffic generator, is in the package with its man page" {
	[ -f "$DEB" ]
	[ -x "$PKG_ROOT/usr/bin/rocegen" ]
	run "$PKG_ROOT/usr/bin/rocegen" --version
	[ "$status" -eq 0 ]
	[[ "$output" == "rocegen (AgentXDP) "* ]]
	MANWIDTH=80 man -l "$PKG_ROOT/usr/share/man/man1/rocegen.1.gz" 2>/dev/null | grep -q "rocegen requester -d ADDR"
}

@test "the node agent: unit and settings installed, neither enabled nor started by the package" {
	[ -f "$DEB" ]
	[ -f "$PKG_ROOT/lib/systemd/system/agentxdp.service" ] || [ -f "$PKG_ROOT/usr/lib/systemd/system/agentxdp.service" ]
	[ -f "$PKG_ROOT/etc/default/agentxdp" ]
	grep -q '^AGENTXDP_IFACE=$' "$PKG_ROOT/etc/default/agentxdp"
	dpkg-deb -e "$DEB" "$BATS_TEST_TMPDIR/ctl"
	# installed disabled and not started, the interface is the admin's to
	# choose: no start at all, and enable only where it was enabled before
	# (an upgrade)
	! grep -qs 'deb-systemd-invoke' "$BATS_TEST_TMPDIR/ctl/postinst"
	[ "$(grep -c "deb-systemd-helper enable" "$BATS_TEST_TMPDIR/ctl/postinst")" -eq \
		"$(grep -A2 'was-enabled' "$BATS_TEST_TMPDIR/ctl/postinst" | grep -c "deb-systemd-helper enable")" ]
}

@test "the fleet's Prometheus rules in /usr/share/agentxdp/prometheus, promtool clean" {
	[ -f "$DEB" ]
	cmp "$AX_ROOT/prometheus/agentxdp.rules.yml" "$PKG_ROOT/usr/share/agentxdp/prometheus/agentxdp.rules.yml"
	command -v promtool >/dev/null || skip "promtool not installed (Debian package prometheus)"
	promtool check rules "$PKG_ROOT/usr/share/agentxdp/prometheus/agentxdp.rules.yml"
}

@test "the checkout stays clean: nothing written into the repository" {
	[ ! -e "$AX_ROOT/debian/agentxdp" ]
	[ ! -e "$AX_ROOT/debian/.debhelper" ]
	[ ! -e "$AX_ROOT/debian/files" ]
	! ls "$AX_ROOT"/../agentxdp_*.deb 2>/dev/null
}
