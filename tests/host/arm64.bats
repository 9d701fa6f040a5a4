#!/usr/bin/env bats
# arm64 (Grace and other arm64 GPU hosts): every tool's BPF object and
# skeleton builds against the vendored vmlinux/arm64/vmlinux.h (Debian's
# arm64 kernel), where nf_tables and x_tables are modules (nfdrop reads them
# through local CO-RE types) and ib_core is built in (btf/rdma_rxe.h leaves
# its types to vmlinux.h). Nothing here runs on arm64: the objects are
# checked for what makes them arm64's. A build check, on the host only.

load ../lib/common

# every BPF object the tree builds: each tool's (tools/<tool>/<tool>.bpf.c)
# and rocelat's bounded variant
arm64_objects() {
	local f
	for f in "$AX_ROOT"/tools/*/*.bpf.c; do
		basename "$f" .bpf.c
	done
	echo rocelat_noloop
}

setup_file() {
	export A_OUT=$BATS_FILE_TMPDIR/arm64 A_RC=0
	[ -z "${AGENTXDP_VM:-}" ] || return 0
	local t skels=()
	for t in $(arm64_objects); do
		skels+=("$A_OUT/$t.skel.h")
	done
	make -s -C "$AX_ROOT" ARCH=arm64 OUTPUT="$A_OUT" "${skels[@]}" > "$BATS_FILE_TMPDIR/make.log" 2>&1
	export A_RC=$?
}

setup() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "a build check, done on the host"
	[ "$A_RC" -eq 0 ] || { cat "$BATS_FILE_TMPDIR/make.log" >&2; false; }
}

btf_of() { bpftool btf dump file "$A_OUT/$1.bpf.o"; }

@test "arm64: every BPF object and skeleton builds (each tool's and rocelat's bounded one), each an eBPF ELF" {
	local t n=0
	for t in $(arm64_objects); do
		[ "$(readelf -h "$A_OUT/$t.bpf.o" | awk -F': *' '/Machine/ {print $2}')" = "Linux BPF" ]
		grep -q "${t}_bpf__open_and_load" "$A_OUT/$t.skel.h"
		n=$((n + 1))
	done
	# the five tools with a BPF side today, and the bounded rocelat
	[ "$n" -ge 6 ]
}

@test "arm64: rxeqp's kprobe fallback reads arm64 registers, ib_core types come from arm64's vmlinux.h" {
	# PT_REGS_* on arm64 go through struct user_pt_regs; x86 has no such type
	btf_of rxeqp | grep -q "STRUCT 'user_pt_regs'"
	! bpftool btf dump file "$AX_BUILD/rxeqp.bpf.o" | grep -q "STRUCT 'user_pt_regs'"
	# arm64's full struct ib_qp from its vmlinux.h, more members than the
	# minimal one btf/rdma_rxe.h gives the x86 build
	local vlen='s/.*STRUCT .ib_qp. size=[0-9]* vlen=\([0-9]*\)$/\1/p'
	[ "$(btf_of rxeqp | sed -n "$vlen")" -gt \
	  "$(bpftool btf dump file "$AX_BUILD/rxeqp.bpf.o" | sed -n "$vlen")" ]
	# the rxe types still come from btf/rdma_rxe.h
	btf_of rxeqp | grep -q "STRUCT 'rxe_qp'"
}

@test "arm64: nfdrop's nf_tables and x_tables types are local CO-RE flavours" {
	local t
	for t in nft_pktinfo nft_chain nft_table nft_base_chain xt_table; do
		btf_of nfdrop | grep -q "STRUCT '${t}___ax'"
		# vmlinux/arm64/vmlinux.h has none of them (modules on arm64)
		! grep -q "^struct $t {" "$AX_ROOT/vmlinux/arm64/vmlinux.h"
	done
}
