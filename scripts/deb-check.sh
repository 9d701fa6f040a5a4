#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# What a Debian reviewer runs on the package, beyond tests/host/package.bats
# (make deb-check; root, the Debian archive reachable for the chroot):
#  1. the source package: dpkg-buildpackage -S from the tracked files,
#     lintian -i -I -E --pedantic on the .dsc;
#  2. a build from that .dsc in a clean Debian 12 chroot (mmdebstrap,
#     variant buildd: essential, build-essential and the Build-Depends,
#     nothing else), the build step without network (unshare -n), so
#     vmlinux.h comes from the tree; the chroot is cached by the
#     Build-Depends (/var/cache/agentxdp-deb-check), so a warm run pays
#     only for unpacking it and the build;
#  3. autopkgtest on the .deb that chroot built, on this machine (null
#     runner; rxedrop-veth's isolation-machine waived: it makes and
#     removes its own namespaces), then the package purged again.
# Prints the seconds of each step. KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
CACHE=${CACHE:-/var/cache/agentxdp-deb-check}
[ "$(id -u)" -eq 0 ] || { echo "deb-check: needs root (chroot, unshare, autopkgtest)" >&2; exit 1; }
for c in dpkg-buildpackage lintian mmdebstrap autopkgtest unshare; do
	command -v $c >/dev/null || { echo "deb-check: $c missing (scripts/setup-deps.sh)" >&2; exit 1; }
done
if dpkg -s agentxdp >/dev/null 2>&1; then
	echo "deb-check: agentxdp is installed here; autopkgtest would replace it" >&2
	exit 1
fi
W=$(mktemp -d /tmp/deb-check.XXXXXX)
CH=$W/chroot
cleanup() {
	local rc=$?
	umount -R "$CH/proc" 2>/dev/null || true
	if dpkg -s agentxdp >/dev/null 2>&1; then dpkg --purge agentxdp >/dev/null || rc=1; fi
	[ "${KEEP:-0}" = 1 ] && echo "deb-check: kept $W" >&2 || rm -rf "$W"
	exit $rc
}
trap cleanup EXIT
step() { echo "deb-check: $1: $2 s"; }

t=$SECONDS
mkdir -p "$W/src/agentxdp"
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$W/src/agentxdp"
(cd "$W/src/agentxdp" && dpkg-buildpackage -S -us -uc -d) > "$W/source.log" 2>&1 ||
	{ tail -20 "$W/source.log" >&2; exit 1; }
DSC=$(ls "$W"/src/agentxdp_*.dsc)
out=$(lintian -i -I -E --pedantic --no-tag-display-limit "$DSC" 2>&1)
if grep -E '^[EWIPX]: ' <<< "$out"; then echo "deb-check: lintian on the source package" >&2; exit 1; fi
step "source package, lintian clean" $((SECONDS - t))

# the chroot: Debian's archive, the Build-Depends of debian/control
t=$SECONDS
deps=$(sed -n '/^Build-Depends:/,/^[A-Z][A-Za-z-]*:/p' debian/control | sed '1s/^Build-Depends://; $d' | tr -d '\n' | tr -s ' \t' ' ')
key=$(printf '%s %s %s\n' "$SUITE" "$MIRROR" "$deps" | sha256sum | cut -c1-16)
TAR=$CACHE/$SUITE-$key.tar
if [ ! -f "$TAR" ]; then
	mkdir -p "$CACHE"
	mmdebstrap --variant=buildd --quiet \
		--customize-hook="chroot \"\$1\" apt-get satisfy -y -q --no-install-recommends '$deps'" \
		--customize-hook='chroot "$1" apt-get clean' \
		"$SUITE" "$TAR.tmp.tar" "$MIRROR" > "$W/mmdebstrap.log" 2>&1 ||
		{ tail -20 "$W/mmdebstrap.log" >&2; exit 1; }
	mv "$TAR.tmp.tar" "$TAR"
	step "chroot made ($TAR)" $((SECONDS - t))
fi
mkdir -p "$CH"
tar -C "$CH" -xf "$TAR"
mkdir -p "$CH/build"
cp "$DSC" "${DSC%.dsc}".tar.* "$CH/build/"
step "chroot unpacked" $((SECONDS - t))

# the build: no network, a build user, from the .dsc alone
t=$SECONDS
chroot "$CH" useradd -m builder 2>/dev/null || true
cat > "$CH/build/run.sh" <<'INNER'
#!/bin/sh
# in the chroot, as the build user: no interface but lo, then the build
set -eu
if awk 'NR > 2 && $1 != "lo:"' /proc/net/dev | grep -q .; then
	echo "deb-check: the build step has a network" >&2
	exit 1
fi
cd /build
dpkg-source -x ./*.dsc src
cd src
dpkg-buildpackage -us -uc -b
INNER
chmod +x "$CH/build/run.sh"
chroot "$CH" chown -R builder /build
unshare --net --mount --fork sh -c 'mount -t proc proc "$1/proc" &&
	exec chroot "$1" su builder -s /bin/sh -c /build/run.sh' _ "$CH" > "$W/build.log" 2>&1 ||
	{ tail -30 "$W/build.log" >&2; exit 1; }
DEB=$(ls "$CH"/build/agentxdp_*.deb)
step "offline build from the .dsc in the chroot" $((SECONDS - t))
[ -z "${DEB_OUT:-}" ] || cp "$DEB" "$DEB_OUT"

# autopkgtest of what the chroot built
t=$SECONDS
autopkgtest --ignore-restrictions=isolation-machine -o "$W/autopkgtest" "$DEB" "$W/src/agentxdp" -- null \
	> "$W/autopkgtest.log" 2>&1 || { cat "$W/autopkgtest/summary" "$W/autopkgtest.log" >&2 || true; exit 1; }
cat "$W/autopkgtest/summary"
step "autopkgtest" $((SECONDS - t))
