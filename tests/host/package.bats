#!/usr/bin/env bats
# The Debian package: the source package (dpkg-buildpackage -S) and the
# .deb, built from a copy of the tree (the checkout stays clean), checked
# with lintian at every level, blhc, and a second build from the .dsc in
# another directory, umask, time zone, locale and clock (reproducible:
# byte-identical .deb); unpacked into a scratch root with dpkg -x, where
# every tool runs and debian/tests (autopkgtest's tests) run on it.
# The two builds take about 1.5 and 1 minutes on this 2-core machine; they
# run once (setup_file) for all the cases below. scripts/deb-check.sh (make
# deb-check), its own case, adds a build in a clean offline Debian 12
# chroot and autopkgtest proper.

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
	# the source package first (it cleans the tree), then the .deb
	(cd "$PKG_SRC" && dpkg-buildpackage -us -uc -S -d) > "$PKG_DIR/source.log" 2>&1
	export SRC_RC=$?
	export DSC
	DSC=$(ls "$PKG_DIR"/agentxdp_*.dsc 2>/dev/null | head -1)
	(cd "$PKG_SRC" && dpkg-buildpackage -us -uc -b -j"$(nproc)") > "$PKG_DIR/build.log" 2>&1
	export PKG_RC=$?
	export PKG_SECONDS=$((SECONDS - start))
	export DEB
	DEB=$(ls "$PKG_DIR"/agentxdp_*.deb 2>/dev/null | head -1)
	[ -n "$DEB" ] && dpkg -x "$DEB" "$PKG_ROOT"
	# the rebuild: from the .dsc, in a deeper directory of another name,
	# with another umask, time zone, locale and (faketime) clock, as
	# reprotest varies them
	export RE_DIR=$BATS_FILE_TMPDIR/rebuild/another/path
	export RE_RC=1 RE_SECONDS=0
	mkdir -p "$RE_DIR"
	start=$SECONDS
	if [ -n "$DSC" ] && dpkg-source -x "$DSC" "$RE_DIR/agentxdp-src" > "$RE_DIR/source.log" 2>&1; then
		local fake=()
		! command -v faketime >/dev/null || fake=(faketime '+1000 days')
		(cd "$RE_DIR/agentxdp-src" && umask 0002 &&
			TZ=Pacific/Chatham LC_ALL=C.UTF-8 LANG=fr_FR.UTF-8 \
			"${fake[@]}" dpkg-buildpackage -us -uc -b -j"$(nproc)") > "$RE_DIR/build.log" 2>&1
		RE_RC=$?
	fi
	RE_SECONDS=$((SECONDS - start))
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

# every level (info, pedantic, experimental); each override in
# debian/*lintian-overrides says why
@test "lintian -i -I -E --pedantic: nothing on the .deb nor on the source package" {
	[ "$SRC_RC" -eq 0 ] || { tail -20 "$PKG_DIR/source.log" >&2; false; }
	[ -f "$DEB" ] && [ -f "$DSC" ]
	run lintian -i -I -E --pedantic --no-tag-display-limit "$DEB" "$DSC"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	! grep -qE '^[EWIPXO]: ' <<< "$output"
}

@test "reproducible: the rebuild from the .dsc elsewhere gives a byte-identical .deb" {
	echo "rebuild took ${RE_SECONDS}s" >&2
	[ -f "$DEB" ]
	[ "$RE_RC" -eq 0 ] || { tail -40 "$RE_DIR/build.log" >&2; false; }
	local re
	re=$(ls "$RE_DIR"/agentxdp_*.deb)
	if ! cmp "$DEB" "$re"; then
		mkdir "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
		dpkg-deb -R "$DEB" "$BATS_TEST_TMPDIR/a"
		dpkg-deb -R "$re" "$BATS_TEST_TMPDIR/b"
		diff -r "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b" >&2
		false
	fi
	# neither build directory is in any file of the package
	! grep -rlF -e "$PKG_SRC" -e "$RE_DIR" "$PKG_ROOT" >&2
	# nor the date of the build: the man pages carry the changelog's
	local month
	month=$(LC_ALL=C date -u -d "@$(dpkg-parsechangelog -l "$PKG_SRC/debian/changelog" -STimestamp)" '+%B %Y')
	zcat "$PKG_ROOT/usr/share/man/man8/rxedrop.8.gz" | grep -q "^\.TH RXEDROP \"8\" \"$month\""
}

# blhc: every compile and link line carries dpkg-buildflags' hardening
# (hardening=+all: bindnow too)
@test "blhc: the build log is clean" {
	command -v blhc >/dev/null || skip "blhc not installed (scripts/setup-deps.sh)"
	[ "$PKG_RC" -eq 0 ]
	run blhc --bindnow "$PKG_DIR/build.log"
	echo "$output" >&2
	[ "$status" -eq 0 ] && [ -z "$output" ]
}

# the distribution's CFLAGS are for the host compiler: none reaches a BPF
# compile (retis' Fedora spec has to patch them out; ours need not)
@test "no dpkg-buildflags flag reaches clang -target bpf" {
	[ "$PKG_RC" -eq 0 ]
	local flags f bpf n
	flags=$(cd "$PKG_SRC" && DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CFLAGS &&
		DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CPPFLAGS)
	bpf=$(grep -E '^clang .*-target bpf' "$PKG_DIR/build.log")
	# one compile per BPF object: a tool's and rocelat's noloop one
	n=$(ls "$AX_ROOT"/tools/*/*.bpf.c | wc -l)
	[ "$(wc -l <<< "$bpf")" -eq $((n + 1)) ]
	for f in $flags; do
		# the BPF compile's own -O2 -g are not the distribution's
		case $f in -O2|-g) continue ;; esac
		# and the host compiles do carry each: the check has teeth
		grep -E '^cc .* -c tools/lib/cli\.c' "$PKG_DIR/build.log" | grep -qF -- " $f " ||
			{ echo "host compile lacks $f" >&2; false; }
		! grep -F -- "$f" <<< "$bpf" >&2 || { echo "$f reached clang -target bpf" >&2; false; }
	done
}

# debian/tests (autopkgtest's) on the unpacked package, from the source
# tree as autopkgtest runs them; scripts/deb-check.sh runs autopkgtest
# itself on an installed package
@test "autopkgtest's tests pass on the unpacked package" {
	[ -f "$DEB" ]
	cd "$PKG_SRC"
	PROGS="$(ls -d "$PKG_ROOT"/usr/sbin/* "$PKG_ROOT"/usr/bin/*)" debian/tests/help-version
	BIN=$PKG_ROOT/usr/sbin SAMPLES=$PKG_ROOT/usr/share/doc/agentxdp/samples debian/tests/rocelat-read
	[ "$(id -u)" -eq 0 ] || skip "rxedrop-veth needs root"
	BIN=$PKG_ROOT/usr/sbin debian/tests/rxedrop-veth
}

# scripts/deb-check.sh (make deb-check): a reviewer's build in a clean
# Debian 12 chroot of Debian's archive (mmdebstrap, the Build-Depends and
# nothing else; cached in /var/cache/agentxdp-deb-check), the build step
# with no network but lo, then autopkgtest proper on the .deb it made,
# installed and purged again. About 80 s here with the chroot to make.
@test "make deb-check: the .dsc builds offline in a clean Debian 12 chroot; autopkgtest passes on its .deb" {
	! dpkg -s agentxdp >/dev/null 2>&1 || skip "agentxdp is installed here: autopkgtest would replace it"
	cd "$AX_ROOT"
	git rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout (deb-check packs the tracked files)"
	run scripts/deb-check.sh
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[[ $output == *"deb-check: offline build from the .dsc in the chroot: "* ]]
	local t
	for t in help-version rocelat-read rxedrop-veth; do
		grep -Eq "^$t +PASS" <<< "$output"
	done
	# and the package is gone again
	! dpkg -s agentxdp >/dev/null 2>&1
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
