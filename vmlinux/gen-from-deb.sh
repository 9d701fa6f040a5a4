#!/usr/bin/env bash
# Regenerate vmlinux/<arch>/vmlinux.h for an architecture this machine does
# not run, from Debian's own kernel package for it: download the package
# that linux-image-<debarch> depends on (into a private apt state, the host's
# apt configuration is untouched), find the kernel's BTF blob in the image
# (magic 0xeb9f, version 1, 24-byte header) and dump it as C.
#
# Usage: vmlinux/gen-from-deb.sh arm64
set -euo pipefail
debarch=${1:?usage: $0 DEBIAN_ARCH (e.g. arm64)}
case $debarch in
arm64) arch=arm64 ;;
amd64) arch=x86 ;;
*) echo "gen-from-deb: unsupported architecture $debarch" >&2; exit 1 ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
apt_opts=(-o "APT::Architectures::=$debarch" -o "APT::Architecture=$debarch"
	-o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
	-o Dir::State::status=/dev/null -o Debug::NoLocking=1)
apt-get "${apt_opts[@]}" -qq update
pkg=$(apt-cache "${apt_opts[@]}" depends "linux-image-$debarch" |
	sed -n "s/^  Depends: \(linux-image-[0-9].*-$debarch\)$/\1/p" | head -n 1)
[ -n "$pkg" ] || { echo "gen-from-deb: cannot resolve linux-image-$debarch" >&2; exit 1; }
echo "gen-from-deb: $pkg"
(cd "$work" && apt-get "${apt_opts[@]}" -qq download "$pkg:$debarch" 2>/dev/null)
dpkg-deb -x "$work"/linux-image-*.deb "$work/x"
image=$(ls "$work"/x/boot/vmlinuz-*)
case $(file -b "$image") in
*gzip*) zcat "$image" > "$work/Image" ;;
*) cp "$image" "$work/Image" ;;
esac
off=$(LC_ALL=C grep -obUaP '\x9f\xeb\x01\x00\x18\x00\x00\x00' "$work/Image" | head -n 1 | cut -d: -f1)
[ -n "$off" ] || { echo "gen-from-deb: no BTF in $image" >&2; exit 1; }
# header: magic, version, flags, hdr_len, type_off, type_len, str_off, str_len
read -r _ _ str_off str_len < <(od -An -tu4 -j $((off + 8)) -N 16 "$work/Image")
size=$((24 + str_off + str_len))
dd if="$work/Image" of="$work/vmlinux.btf" bs=1M iflag=skip_bytes,count_bytes \
	skip="$off" count="$size" status=none
mkdir -p "$top/vmlinux/$arch"
bpftool btf dump file "$work/vmlinux.btf" format c > "$top/vmlinux/$arch/vmlinux.h"
echo "gen-from-deb: wrote vmlinux/$arch/vmlinux.h ($(wc -l < "$top/vmlinux/$arch/vmlinux.h") lines) from $pkg"
