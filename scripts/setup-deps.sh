#!/usr/bin/env bash
# Install every package needed to build, test and benchmark AgentXDP on Debian 12.
# With --demo, only what scripts/demo.sh needs: the build and the test bed
# (iproute2, nftables). --list prints the packages instead of installing
# them. Safe to run again; needs root.
set -euo pipefail
LIST=0
[ "${1:-}" != --list ] || { LIST=1; shift; }
[ "${2:-}" != --list ] || { LIST=1; set -- "$1"; }
if [ "$LIST" = 0 ] && [ "$(id -u)" -ne 0 ]; then
	echo "setup-deps: needs root (apt-get install)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
BUILD=(
	make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libpcap-dev pkg-config
	libmnl-dev libnftnl-dev libnftables-dev
)
PKGS=(
	"${BUILD[@]}"
	# host tests
	bats jq iproute2 nftables iptables tcpdump tshark procps kmod python3-scapy strace
	# the functions' lengths in C (tests/host/sizes.bats: its C parser)
	universal-ctags
	# the fuzz target (make fuzz: clang's libFuzzer and sanitizer runtimes)
	libclang-rt-14-dev
	# benchmark
	bpftrace stress-ng
	# docs, packaging, fleet output (make man, tests/host/{docs,package,prom}.bats)
	help2man groff man-db debhelper dpkg-dev fakeroot lintian prometheus bash-completion
	# the package's reproducibility and hardening (package.bats), make deb-check's
	# clean chroot and autopkgtest (scripts/deb-check.sh)
	blhc faketime mmdebstrap autopkgtest
	# the fleet end to end (tests/host/fleet.bats): a real node_exporter,
	# Prometheus' HTTP API read with curl
	prometheus-node-exporter curl
	libzstd-dev
	# rocelat --svg rendered as a person sees it (tests/host/rocelat_captures.bats):
	# rsvg-convert (4 MB) and headless Chromium (124 MB, ~40 s to install)
	librsvg2-bin chromium
	# Soft-RoCE VM tier
	qemu-system-x86 busybox-static rdma-core ibverbs-utils perftest libibverbs-dev
	cpio xz-utils zstd
)
case ${1:-} in
--demo) PKGS=("${BUILD[@]}" iproute2 nftables) ;;
"") ;;
*) echo "setup-deps: unknown argument '$1' (want --demo or nothing)" >&2; exit 2 ;;
esac
if [ "$LIST" = 1 ]; then
	printf '%s\n' "${PKGS[@]}"
	exit 0
fi
apt-get update -qq
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get install -y -qq --no-install-recommends "${PKGS[@]}" >/dev/null
echo "setup-deps: ok"
