#!/usr/bin/env bash
# Install every package needed to build, test and benchmark AgentXDP on Debian 12.
# Safe to run again; needs root.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
	echo "setup-deps: needs root (apt-get install)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
PKGS=(
	# build
	make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libpcap-dev pkg-config
	libmnl-dev libnftnl-dev libnftables-dev
	# host tests
	bats jq iproute2 nftables iptables tcpdump tshark procps kmod python3-scapy
	# benchmark
	bpftrace stress-ng
	# docs, packaging, fleet output (make man, tests/host/{docs,package,prom}.bats)
	help2man groff man-db debhelper dpkg-dev fakeroot lintian prometheus bash-completion
	libzstd-dev
	# Soft-RoCE VM tier
	qemu-system-x86 busybox-static rdma-core ibverbs-utils perftest libibverbs-dev
	cpio xz-utils zstd
)
apt-get update -qq
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get install -y -qq --no-install-recommends "${PKGS[@]}" >/dev/null
echo "setup-deps: ok"
