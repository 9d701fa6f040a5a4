#!/usr/bin/env bash
# Build, or reuse from the cache, the Soft-RoCE guest that tests/vm/run boots:
# Debian's generic kernel (the package linux-image-amd64 depends on today),
# its modules, the uncompressed ELF vmlinux (qemu boots it through the PVH
# entry, about twice as fast as the bzImage under software emulation) and a
# tiny busybox initramfs whose /init mounts the host's root over virtio-9p.
#
# Usage: tests/vm/build-guest.sh [--kernel LINE] [--force] [--print-dir]
#   --kernel LINE  Debian kernel line: 6.1 (Debian 12, the default), 5.10
#                (Debian 11: bullseye + bullseye-security) or 6.12 (Debian 13:
#                trixie); also AGENTXDP_VM_KERNEL. 6.1 resolves through the
#                host's apt sources; the others through a private apt state
#                under the cache (its own sources list and package lists), so
#                the host's sources are never touched.
#   --force      rebuild even if a complete guest is cached
#   --print-dir  print only the guest directory on stdout (progress goes to
#                stderr either way); this is what tests/vm/run uses
#
# The guest lives in $AGENTXDP_VM_CACHE/<kernel-version>/ (default
# /var/cache/agentxdp/vm). It is built in a scratch directory next to it and
# renamed into place, so a directory that exists is a complete guest.
# Nothing is installed on the host: apt-get download + dpkg-deb -x only.
#
# Needs: root, apt-get, dpkg-deb, kmod (depmod, modprobe), busybox-static,
# cpio, xz-utils (the 5.10 and 6.1 bzImages are xz; gzip/zstd/lz4/bzip2 are
# handled too). A payload that does not decompress to an ELF (6.12's) is
# booted as the bzImage itself: slower to boot, same guest.
set -euo pipefail

CACHE_ROOT=${AGENTXDP_VM_CACHE:-/var/cache/agentxdp/vm}
BUSYBOX=${AGENTXDP_VM_BUSYBOX:-/bin/busybox}

# What /init needs before the root is reachable; their dependencies are
# resolved with modprobe --show-depends, so only the leaves are named here.
ROOT_MODULES=(virtio_pci 9pnet_virtio 9p overlay)
# Changes to this script (the init above all) rebuild a cached initramfs.
INITRAMFS_STAMP=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)

force=0
print_dir=0
kline=${AGENTXDP_VM_KERNEL:-6.1}
while (($#)); do
	arg=$1
	shift
	case $arg in
	--kernel) kline=${1:?--kernel needs a line: 5.10, 6.1 or 6.12}; shift ;;
	--kernel=*) kline=${arg#*=} ;;
	--force) force=1 ;;
	--print-dir) print_dir=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "build-guest: unknown argument '$arg' (try --help)" >&2
		exit 2
		;;
	esac
done

log() { echo "build-guest: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# The Debian suites of a kernel line other than the host's own (6.1).
line_sources() {
	local main=http://deb.debian.org/debian sec=http://deb.debian.org/debian-security
	case $1 in
	5.10)
		echo "deb $main bullseye main"
		echo "deb $sec bullseye-security main"
		;;
	6.12)
		echo "deb $main trixie main"
		echo "deb $sec trixie-security main"
		;;
	esac
}

case $kline in
6.1 | 5.10 | 6.12) ;;
*)
	echo "build-guest: unknown kernel line '$kline' (5.10, 6.1 or 6.12)" >&2
	exit 2
	;;
esac

# apt options of the private state for a kernel line: its own sources list,
# package lists and archive cache, none of the host's sources.list.d. Empty
# for 6.1, which uses the host's apt as it is.
APT_OPTS=()
apt_state() {
	[ "$kline" != 6.1 ] || return 0
	local st=$CACHE_ROOT/apt-$kline
	mkdir -p "$st/lists/partial" "$st/archives/partial" "$st/sources.list.d"
	line_sources "$kline" >"$st/sources.list"
	APT_OPTS=(-o "Dir::Etc::sourcelist=$st/sources.list" -o "Dir::Etc::sourceparts=$st/sources.list.d"
		-o "Dir::State::Lists=$st/lists" -o "Dir::Cache=$st" -o "Dir::Cache::archives=$st/archives"
		-o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=")
	if id _apt >/dev/null 2>&1; then chown -R _apt "$st/lists" "$st/archives"; fi
}

# Refresh the private lists when they are missing or a day old.
apt_state_update() {
	[ "$kline" != 6.1 ] || return 0
	local st=$CACHE_ROOT/apt-$kline
	if [ -z "$(find "$st/lists" -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null)" ]; then
		log "refreshing the private package lists of $kline ($(tr '\n' ';' <"$st/sources.list"))"
		apt-get "${APT_OPTS[@]}" update -qq >&2 || log "warning: apt-get update for $kline failed"
	fi
}

# linux-image-amd64 is a metapackage whose only job is to depend on the
# current ABI's image package; old ABI packages vanish from the archive when
# Debian updates, so the name is looked up every time, never hard-coded.
resolve_kernel_package() {
	apt-cache "${APT_OPTS[@]}" show --no-all-versions linux-image-amd64 2>/dev/null |
		sed -n 's/^Depends: //p' | head -n1 | sed 's/[,|]/\n/g' |
		sed 's/^ *//; s/[ (].*//' | grep -m1 '^linux-image-[0-9]' || true
}

# Whether a kernel version belongs to the chosen line (5.10.0-46-amd64 is
# 5.10; 6.12.57+deb13-amd64 is 6.12; 6.1.0-57-amd64 is 6.1, not 6.12).
in_line() {
	case $1 in "$kline".*) return 0 ;; esac
	return 1
}

# The newest complete guest in the cache, for when apt has no package lists.
newest_cached_guest() {
	local d best=
	for d in "$CACHE_ROOT"/*/; do
		d=${d%/}
		case $d in *.tmp.* | */apt-*) continue ;; esac
		in_line "$(basename "$d")" || continue
		[ -f "$d/build-info" ] || continue
		if [ -z "$best" ] || [ "$d/build-info" -nt "$best/build-info" ]; then best=$d; fi
	done
	[ -n "$best" ] && echo "$best"
}

le32() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' \n'; }
le8() { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' \n'; }

# Pull the compressed kernel out of a bzImage and decompress it to an ELF.
# Boot protocol >= 2.08 records where the payload sits: it starts
# payload_offset bytes into the protected-mode part, which follows the
# (setup_sects + 1) sectors of real-mode setup code. The build appends the
# uncompressed size as 4 little-endian bytes; it is cut off before
# decompressing and used to check the result.
extract_vmlinux() {
	local bz=$1 out=$2
	local magic setup_sects version payload_offset payload_length start want got
	magic=$(od -An -c -j 0x202 -N4 "$bz" | tr -d ' \n')
	[ "$magic" = HdrS ] || die "$bz: not a bzImage (no HdrS header)"
	version=$(od -An -tu2 -j 0x206 -N2 "$bz" | tr -d ' \n')
	[ "$version" -ge $((0x208)) ] || die "$bz: boot protocol too old for payload_offset"
	setup_sects=$(le8 "$bz" 0x1f1)
	[ "$setup_sects" -eq 0 ] && setup_sects=4
	payload_offset=$(le32 "$bz" 0x248)
	payload_length=$(le32 "$bz" 0x24c)
	start=$(((setup_sects + 1) * 512 + payload_offset))
	want=$(od -An -tu4 -j $((start + payload_length - 4)) -N4 "$bz" | tr -d ' \n')

	local head decompress
	head=$(od -An -tx1 -j "$start" -N6 "$bz" | tr -d ' \n')
	case $head in
	fd377a585a00) decompress="xz -dc --single-stream" ;;
	1f8b*) decompress="gzip -dc" ;;
	28b52ffd*) decompress="zstd -dcq" ;;
	02214c18*) decompress="lz4 -dc" ;;
	425a68*) decompress="bzip2 -dc" ;;
	5d0000*) decompress="xz -dc --format=lzma" ;;
	*) die "$bz: unknown payload compression (magic $head)" ;;
	esac
	dd if="$bz" iflag=skip_bytes,count_bytes skip="$start" count=$((payload_length - 4)) \
		bs=1M status=none | $decompress >"$out" ||
		die "$bz: decompressing the payload with '$decompress' failed"
	got=$(stat -c %s "$out")
	[ "$got" = "$want" ] || die "$bz: vmlinux is $got bytes, the bzImage says $want"
	[ "$(od -An -c -N4 "$out" | tr -d ' \n')" = '177ELF' ] || die "$bz: payload is not an ELF file"
}

# The initramfs's PID 1. Everything run-specific (the command, the checkout
# path) arrives over the "run" 9p share that tests/vm/run sets up, so one
# initramfs serves every run.
write_init() {
	cat >"$1" <<'EOF'
#!/bin/sh
# PID 1 of the AgentXDP guest (generated by tests/vm/build-guest.sh).
# Console (ttyS0): kernel and harness messages. ttyS1: the command's output.
export PATH=/bin:/sbin
/bin/busybox mkdir -p /bin /sbin /proc /sys /dev
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

say() { echo "agentxdp-init: $*" >/dev/console; }
halt() {
	echo "AGENTXDP-EXIT=$1" >/dev/console
	sync
	poweroff -f
	sleep 5
	echo o >/proc/sysrq-trigger
}
fatal() {
	say "FATAL: $*"
	halt 125
}

while read -r m; do
	insmod "/modules/$m" || fatal "insmod $m failed"
done </modules/order

p9=trans=virtio,version=9p2000.L,msize=262144
mkdir -p /lower /rw /newroot
mount -t 9p -o "$p9,ro,cache=loose" hostroot /lower || fatal "cannot mount the host root over 9p"
mount -t tmpfs -o mode=0755 tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
	fatal "cannot mount the overlay root"

R=/newroot
mkdir -p $R/usr/lib/modules
mount -t 9p -o "$p9,ro,cache=loose" modules $R/usr/lib/modules || fatal "cannot mount the modules share"
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
mount -t tmpfs -o mode=1777 tmpfs $R/tmp
mount -t tmpfs -o mode=0755 tmpfs $R/run
mount -t debugfs debugfs $R/sys/kernel/debug
mount -t tracefs tracefs $R/sys/kernel/tracing
mount -t bpf bpf $R/sys/fs/bpf
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup
ln -sf /proc/self/fd $R/dev/fd
ln -sf /proc/self/fd/0 $R/dev/stdin
ln -sf /proc/self/fd/1 $R/dev/stdout
ln -sf /proc/self/fd/2 $R/dev/stderr
[ -e $R/dev/ptmx ] || ln -sf pts/ptmx $R/dev/ptmx

RUN=$R/run/agentxdp-vm
mkdir -p $RUN
mount -t 9p -o "$p9" run $RUN || fatal "cannot mount the run share"
checkout=$(cat $RUN/checkout)
if [ -n "$checkout" ]; then
	mkdir -p "$R$checkout"
	mount -t 9p -o "$p9" checkout "$R$checkout" || fatal "cannot mount the checkout share"
fi

ip link set lo up
hostname agentxdp-vm

# The kernel runs its module helper (/proc/sys/kernel/modprobe) in PID 1's
# root, which is this initramfs and has no modules tree: without this
# wrapper, autoloading (rdma link add -> rdma_rxe -> crc32, nf_tables, xt_*)
# fails with ENOENT inside the chroot. Programs in the chroot read the same
# path to run modprobe themselves (iptables-legacy loads ip_tables so), so
# the name exists there too, as a plain exec of modprobe.
echo /sbin/modprobe-chroot >/proc/sys/kernel/modprobe
printf '#!/bin/sh\nexec /sbin/modprobe "$@"\n' >$R/usr/sbin/modprobe-chroot
chmod 755 $R/usr/sbin/modprobe-chroot

# Should the host side be killed without cleaning up (SIGKILL), the guest
# still ends: tests/vm/run asks for a little more than its own timeout.
limit=$(cat $RUN/timeout 2>/dev/null)
if [ -n "$limit" ]; then
	(sleep "$limit" && say "guest watchdog: $limit s are up" && halt 124) &
fi

stty -F /dev/ttyS1 raw -echo 2>/dev/null
say "running the command at $(cut -d' ' -f1 /proc/uptime) s of uptime"
chroot $R /bin/bash /run/agentxdp-vm/cmd </dev/null >/dev/ttyS1 2>&1
status=$?
echo "$status" >$RUN/status
sync
umount $RUN 2>/dev/null
[ -n "$checkout" ] && umount "$R$checkout" 2>/dev/null
halt "$status"
EOF
	chmod 755 "$1"
}

# The initramfs for the kernel tree under BASE/lib/modules/KVER: static
# busybox, the modules that reach the root, and /init.
build_initramfs() {
	local base=$1 kver=$2 out=$3
	local ir
	ir=$(mktemp -d "$CACHE_ROOT/initramfs.tmp.XXXXXX")
	mkdir -p "$ir"/{bin,sbin,dev,proc,sys,modules}
	cp "$BUSYBOX" "$ir/bin/busybox"
	ln -s busybox "$ir/bin/sh"
	# Module paths from modprobe, in load order, each once; "builtin" lines
	# need nothing; anything after the path is options from the host's
	# modprobe.d, which the guest does not want.
	local m path name
	for m in "${ROOT_MODULES[@]}"; do
		modprobe -d "$base" -S "$kver" --show-depends "$m" ||
			die "modprobe cannot resolve $m for $kver"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' |
		while read -r path; do
			name=$(basename "$path")
			case $name in
			*.ko) cp "$path" "$ir/modules/$name" ;;
			*.ko.xz) xz -dc "$path" >"$ir/modules/${name%.xz}" ;;
			*.ko.zst) zstd -dcq "$path" >"$ir/modules/${name%.zst}" ;;
			*.ko.gz) gzip -dc "$path" >"$ir/modules/${name%.gz}" ;;
			*) die "unexpected module file $path" ;;
			esac
			basename "${name%.ko*}.ko" >>"$ir/modules/order"
		done
	[ -s "$ir/modules/order" ] || die "no modules resolved for the initramfs"
	write_init "$ir/init"
	printf '#!/bin/sh\nexec /bin/chroot /newroot /sbin/modprobe "$@"\n' >"$ir/sbin/modprobe-chroot"
	chmod 755 "$ir/sbin/modprobe-chroot"
	(cd "$ir" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) >"$out.new"
	rm -rf "$ir"
	mv "$out.new" "$out"
}

# Before the 70 MB download: what the build needs from the host.
check_prereqs() {
	local c
	for c in apt-get apt-cache dpkg-deb depmod modprobe cpio xz od dd flock; do
		command -v "$c" >/dev/null || die "'$c' not found (see scripts/setup-deps.sh)"
	done
	[ -f "$BUSYBOX" ] || die "$BUSYBOX not found (install busybox-static)"
	[ "$(od -An -c -N4 "$BUSYBOX" | tr -d ' \n')" = '177ELF' ] || die "$BUSYBOX is not an ELF binary"
	if LC_ALL=C readelf -l "$BUSYBOX" 2>/dev/null | grep -q 'program interpreter'; then
		die "$BUSYBOX is dynamically linked (install busybox-static)"
	fi
}

build() {
	local kpkg=$1 kver=$2 dest=$3
	local t0=$SECONDS
	local work
	work=$(mktemp -d "$CACHE_ROOT/$kver.tmp.XXXXXX")
	chmod 755 "$work"
	# shellcheck disable=SC2064
	trap "rm -rf '$work'" EXIT

	log "downloading $kpkg (from linux-image-amd64)"
	# apt drops privileges to _apt for downloads; let it write here.
	if id _apt >/dev/null 2>&1; then chown _apt "$work"; fi
	if ! (cd "$work" && apt-get "${APT_OPTS[@]}" download -q "$kpkg" >&2); then
		log "download failed; refreshing the package lists once"
		apt-get "${APT_OPTS[@]}" update -qq >&2 || true
		(cd "$work" && apt-get "${APT_OPTS[@]}" download -q "$kpkg" >&2) || die "apt-get download $kpkg failed"
	fi
	chown -R root "$work"
	local deb pkgver
	deb=$(ls "$work"/*.deb)
	pkgver=$(dpkg-deb -f "$deb" Version)

	log "extracting"
	mkdir "$work/pkg"
	dpkg-deb -x "$deb" "$work/pkg"
	rm -f "$deb"
	local moddir
	for moddir in "$work/pkg/lib/modules" "$work/pkg/usr/lib/modules"; do
		[ -d "$moddir/$kver" ] && break
	done
	[ -d "$moddir/$kver" ] || die "$kpkg ships no modules for $kver"
	# depmod -b and modprobe -d want BASE/lib/modules/VERSION; a merged-/usr
	# package (6.12) has them under usr/lib/modules.
	mkdir -p "$work/lib"
	mv "$moddir" "$work/lib/modules"
	mkdir -p "$work/boot"
	mv "$work/pkg/boot/vmlinuz-$kver" "$work/boot/"
	mv "$work/pkg/boot/config-$kver" "$work/pkg/boot/System.map-$kver" "$work/boot/" 2>/dev/null || true
	rm -rf "$work/pkg"

	# The package ships no modules.dep: it is generated at install time.
	log "depmod"
	depmod -b "$work" "$kver"
	if [ -f "$work/boot/config-$kver" ]; then
		local opt
		for opt in CONFIG_RDMA_RXE CONFIG_9P_FS CONFIG_NET_9P_VIRTIO CONFIG_OVERLAY_FS; do
			grep -Eq "^$opt=[ym]" "$work/boot/config-$kver" || die "$kver lacks $opt"
		done
	fi

	# The ELF boots through the PVH entry, about twice as fast; a payload
	# that is no ELF after decompressing (6.12) is booted as the bzImage.
	log "extracting vmlinux from the bzImage"
	local boot=vmlinux
	if ! (extract_vmlinux "$work/boot/vmlinuz-$kver" "$work/vmlinux"); then
		log "booting the bzImage itself"
		rm -f "$work/vmlinux"
		cp "$work/boot/vmlinuz-$kver" "$work/bzImage"
		boot=bzImage
	fi

	log "building the initramfs"
	build_initramfs "$work" "$kver" "$work/initramfs.cpio"

	{
		echo "kernel_package=$kpkg"
		echo "kernel_version=$kver"
		echo "kernel_line=$kline"
		echo "boot_image=$boot"
		echo "package_version=$pkgver"
		echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "initramfs=$INITRAMFS_STAMP"
		echo "build_seconds=$((SECONDS - t0))"
	} >"$work/build-info"

	rm -rf "$dest"
	mv "$work" "$dest"
	trap - EXIT
	log "guest for $kver built in $((SECONDS - t0)) s: $dest"
}

main() {
	[ "$(id -u)" -eq 0 ] || die "needs root (writes $CACHE_ROOT; the guest tier runs as root)"
	mkdir -p "$CACHE_ROOT"

	local kpkg kver dest
	apt_state
	# One builder at a time; a second caller waits and then finds it built.
	exec 9>"$CACHE_ROOT/.lock"
	flock 9
	apt_state_update
	kpkg=$(resolve_kernel_package)
	if [ -n "$kpkg" ] && ! in_line "${kpkg#linux-image-}"; then
		die "linux-image-amd64 of the $kline sources depends on $kpkg, not a $kline kernel"
	fi
	if [ -z "$kpkg" ]; then
		dest=$(newest_cached_guest || true)
		[ -n "$dest" ] || die "apt cannot resolve linux-image-amd64 for $kline (run apt-get update) and no guest is cached"
		log "warning: apt cannot resolve linux-image-amd64 for $kline; using the cached $(basename "$dest")"
		[ "$print_dir" -eq 1 ] && echo "$dest"
		return 0
	fi
	kver=${kpkg#linux-image-}
	dest=$CACHE_ROOT/$kver

	if [ "$force" -eq 0 ] && [ -f "$dest/build-info" ] &&
		{ [ -f "$dest/vmlinux" ] || [ -f "$dest/bzImage" ]; } &&
		[ -f "$dest/initramfs.cpio" ] && [ -d "$dest/lib/modules/$kver" ]; then
		if ! grep -qx "initramfs=$INITRAMFS_STAMP" "$dest/build-info"; then
			check_prereqs
			log "this script changed: rebuilding the initramfs of the cached $kver guest"
			build_initramfs "$dest" "$kver" "$dest/initramfs.cpio"
			sed -i '/^initramfs=/d' "$dest/build-info"
			echo "initramfs=$INITRAMFS_STAMP" >>"$dest/build-info"
		fi
		log "guest for $kver is cached: $dest"
	else
		check_prereqs
		build "$kpkg" "$kver" "$dest"
	fi
	flock -u 9
	if [ "$print_dir" -eq 1 ]; then echo "$dest"; fi
	return 0
}

main
