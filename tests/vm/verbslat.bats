#!/usr/bin/env bats
# verbslat on a real in-kernel RDMA user: NVMe over Fabrics (nvmet +
# nvmet-rdma with a null_blk namespace, the nvme-rdma host) over the two
# rxe devices of the test bed, in the Soft-RoCE guest. The host connects
# by writing to /dev/nvme-fabrics (what `nvme connect` does; nvme-cli is
# not in the guest). tests/unit/verbslat_btf.c covers the hardware
# drivers' modules.
#
# Ground truth: the I/O the test issues (dd, O_DIRECT, a known count of
# 4 KiB blocks) and what NVMe-oF makes of each (nvme-rdma and nvmet-rdma
# on 6.1): a read is a command SEND and a REG_MR (unsignaled) on the
# host, an RDMA WRITE (unsignaled, chained) and a response SEND_WITH_INV
# on the target; a 4 KiB write travels in the command capsule: a SEND on
# the host, a response SEND on the target.

load ../lib/common
bats_require_minimum_version 1.5.0

TESTBED="$AX_ROOT/scripts/testbed.sh"
VL="$AX_BUILD/verbslat"
DIAG="$AX_BUILD/rocediag"
CFG=/sys/kernel/config/nvmet
NQN=agentxdp-verbslat
READS=100
WRITES=50

setup_file() {
	ax_file_needs --rxe jq "$VL" "$DIAG" || return 0
	if ! modprobe -a null_blk nvmet nvmet-rdma nvme-rdma 2>/dev/null; then
		export AX_FILE_SKIP="no nvmet-rdma/nvme-rdma/null_blk modules for $(uname -r)"
		return 0
	fi
	"$TESTBED" up
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	mkdir "$CFG/subsystems/$NQN"
	echo 1 >"$CFG/subsystems/$NQN/attr_allow_any_host"
	mkdir "$CFG/subsystems/$NQN/namespaces/1"
	echo /dev/nullb0 >"$CFG/subsystems/$NQN/namespaces/1/device_path"
	echo 1 >"$CFG/subsystems/$NQN/namespaces/1/enable"
	mkdir "$CFG/ports/4420"
	echo 10.10.0.2 >"$CFG/ports/4420/addr_traddr"
	echo rdma >"$CFG/ports/4420/addr_trtype"
	echo 4420 >"$CFG/ports/4420/addr_trsvcid"
	echo ipv4 >"$CFG/ports/4420/addr_adrfam"
	ln -s "$CFG/subsystems/$NQN" "$CFG/ports/4420/subsystems/$NQN"
}

# the host's controller of our subsystem (nvmeN), none: empty
ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NQN" ] && { basename "$c"; return 0; }
	done
	return 0
}

disconnect() {
	local c
	c=$(ctrl)
	[ -z "$c" ] || echo 1 >"/sys/class/nvme/$c/delete_controller"
}

teardown_file() {
	ax_file_ran || return 0
	disconnect 2>/dev/null || true
	rm -f "$CFG/ports/4420/subsystems/$NQN"
	rmdir "$CFG/ports/4420" 2>/dev/null || true
	echo 0 >"$CFG/subsystems/$NQN/namespaces/1/enable" 2>/dev/null || true
	rmdir "$CFG/subsystems/$NQN/namespaces/1" "$CFG/subsystems/$NQN" 2>/dev/null || true
	modprobe -r nvme-rdma nvmet-rdma nvmet null_blk 2>/dev/null || true
	"$TESTBED" down >/dev/null 2>&1 || true
}

setup() {
	ax_file_skip
}

teardown() {
	ax_file_ran || return 0
	ax_cleanup
}

# one I/O queue, so the I/O QP is the second QP of each side
connect() {
	echo "transport=rdma,traddr=10.10.0.2,trsvcid=4420,nqn=$NQN,host_traddr=10.10.0.1,nr_io_queues=1" \
		>/dev/nvme-fabrics
	local end=$((SECONDS + 30)) c
	while [ "$SECONDS" -le "$end" ]; do
		c=$(ctrl)
		[ -n "$c" ] && [ -b "/dev/${c}n1" ] && return 0
		sleep 0.1
	done
	echo "no namespace block device of $NQN" >&2
	return 1
}

# count OUT DEV OPCODE [STATUS]: completions of the I/O QP (the highest
# QPN of DEV) with OPCODE, summed over intervals; UNSIG=1: its unsignaled
count() {
	jq -s --arg d "$2" --arg o "$3" --arg s "${4:-IB_WC_SUCCESS}" --arg u "${UNSIG:-0}" '
		[.[] | select(.type == "wr" and .dev == $d)] as $w
		| ($w | map(.qpn) | max) as $q
		| [$w[] | select(.qpn == $q and .opcode == $o and .status == $s)
		   | if $u == "1" then .unsignaled else .count end] | add // 0' "$1"
}

# iqp OUT DEV: the I/O QP of DEV (its highest QPN) in verbslat's OUT
iqp() {
	jq -s --arg d "$2" '[.[] | select(.type == "wr" and .dev == $d) | .qpn] | max' "$1"
}

# dcount OUT DEV QPN OPCODE: rocediag's successful WRs of QP QPN of DEV
# with OPCODE, summed over its intervals; STATUS=...: its completions
# with that error status instead
dcount() {
	jq -s --arg d "$2" --argjson q "$3" --arg o "$4" --arg s "${STATUS:-}" '
		[.[] | select(.type == "qp") | .verbs[]? | select(.dev == $d and .qpn == $q)
		 | if $s == "" then (.ops[] | select(.opcode == $o) | .count)
		   else (.errors_by_status[$s] // 0) end] | add // 0' "$1"
}

# vflush OUT DEV QPN: verbslat's flushed WRs of the QP, every opcode
vflush() {
	jq -s --arg d "$2" --argjson q "$3" '[.[] | select(.type == "wr" and .dev == $d
		and .qpn == $q and .status == "IB_WC_WR_FLUSH_ERR") | .count] | add // 0' "$1"
}

total() { # total OUT NAME: a counter of the last totals line
	jq -s --arg n "$2" '[.[] | select(.type == "totals")] | last | .[$n]' "$1"
}

@test "NVMe-oF over rxe: WRs per opcode equal the I/O; every WR paired, flushes as IB_WC_WR_FLUSH_ERR; rocediag per QP the same" {
	local all=$BATS_TEST_TMPDIR/all.json io=$BATS_TEST_TMPDIR/io.json ev=$BATS_TEST_TMPDIR/ev.json
	local c t0=$SECONDS
	local dg=$BATS_TEST_TMPDIR/diag.json
	# from before the connection: every WR of its QPs is seen posted, by
	# verbslat and by rocediag's verbs source (as on a hardware RNIC's
	# host: no rxeqp, no rules; RDMA netlink names each QP's peer)
	ax_tool_start --err DG "$dg" 120 "" "$DIAG" --no-rxe --no-rules -j 1
	ax_tool_start --err ALL "$all" 120 Tracing "$VL" -j
	grep -q 'rdma_rxe via fentry' "$all.err"
	ax_tool_wait --err DG 120 Tracing
	grep -q "kernel QPs' work requests (rdma_rxe via fentry)" "$dg.err"
	connect
	c=$(ctrl)
	ax_tool_start --err IO "$io" 120 Tracing "$VL" -j
	dd if="/dev/${c}n1" of=/dev/null bs=4k count=$READS iflag=direct status=none
	dd if=/dev/zero of="/dev/${c}n1" bs=4k count=$WRITES oflag=direct status=none
	ax_tool_stop IO
	echo "I/O: $(cat "$io")" >&3
	# host: a command SEND per I/O, a REG_MR per read (unsignaled)
	[ "$(count "$io" rxe-a SEND)" -eq $((READS + WRITES)) ]
	[ "$(count "$io" rxe-a REG_MR)" -eq "$READS" ]
	[ "$(UNSIG=1 count "$io" rxe-a REG_MR)" -eq "$READS" ]
	# target: the data of a read as an RDMA WRITE retired by its response
	[ "$(count "$io" rxe-b RDMA_WRITE)" -eq "$READS" ]
	[ "$(UNSIG=1 count "$io" rxe-b RDMA_WRITE)" -eq "$READS" ]
	[ "$(count "$io" rxe-b SEND_WITH_INV)" -eq "$READS" ]
	[ "$(count "$io" rxe-b SEND)" -eq "$WRITES" ]
	# no error completion, no drop in the BPF side
	[ "$(jq -s '[.[] | select(.type == "wr" and .status != "IB_WC_SUCCESS")] | length' "$io")" -eq 0 ]
	[ "$(total "$io" map_full)" -eq 0 ]
	[ "$(total "$io" chain_too_long)" -eq 0 ]
	[ "$(total "$io" poll_too_long)" -eq 0 ]
	[ "$(total "$io" kernel_skipped)" -eq 0 ]
	[ "$(total "$io" cookie_again)" -eq 0 ]
	# tear down: the receives still posted come back flushed, one -e line each
	ax_tool_start --err EV "$ev" 120 Tracing "$VL" -j -e
	disconnect
	local end=$((SECONDS + 30))
	until [ -z "$(ctrl)" ] || [ "$SECONDS" -gt "$end" ]; do sleep 0.1; done
	[ -z "$(ctrl)" ]
	ax_tool_stop EV
	ax_tool_stop ALL
	ax_tool_stop DG
	echo "all: $(grep -v '"wr"' "$all")" >&3
	echo "events: $(wc -l <"$ev") $(head -n 2 "$ev")" >&3
	# every completion matched a post seen, every post completed
	[ "$(total "$all" unpaired)" -eq 0 ]
	[ "$(total "$all" posted)" -gt 0 ]
	[ "$(total "$all" completed)" -eq "$(total "$all" posted)" ]
	# on the I/O queue, from its connect on: each command received once
	# (receives posted before the second tool started are not its to pair)
	[ "$(count "$all" rxe-b RECV)" -eq "$(count "$all" rxe-a SEND)" ]
	[ "$(count "$all" rxe-b RECV)" -ge $((READS + WRITES)) ]
	# and each response
	[ "$(count "$all" rxe-a RECV)" -eq $(($(count "$all" rxe-b SEND) + $(count "$all" rxe-b SEND_WITH_INV))) ]
	local flushed
	flushed=$(jq -s '[.[] | select(.type == "wr" and .status == "IB_WC_WR_FLUSH_ERR") | .count] | add // 0' "$all")
	[ "$flushed" -gt 0 ]
	[ "$(jq -s '[.[] | select(.type == "error" and .status == "IB_WC_WR_FLUSH_ERR")] | length' "$ev")" -eq "$flushed" ]
	[ "$(jq -s '[.[] | select(.type == "error" and .status != "IB_WC_WR_FLUSH_ERR")] | length' "$ev")" -eq 0 ]
	# rocediag: per I/O QP, the same WRs per opcode and the same flushes
	# as verbslat, from its intervals summed; every read's data an RDMA
	# WRITE after a REG_MR and a response with invalidate, every command
	# answered
	local qa qb op
	qa=$(iqp "$all" rxe-a)
	qb=$(iqp "$all" rxe-b)
	echo "rocediag: $(jq -c 'select(.type == "qp" and .verbs)' "$dg" | tail -n 3)" >&3
	for op in SEND REG_MR RECV; do
		[ "$(dcount "$dg" rxe-a "$qa" $op)" -eq "$(count "$all" rxe-a $op)" ]
	done
	for op in SEND SEND_WITH_INV RDMA_WRITE RECV; do
		[ "$(dcount "$dg" rxe-b "$qb" $op)" -eq "$(count "$all" rxe-b $op)" ]
	done
	# (from the connect on: the kernel's own reads of the new namespace too)
	local rd
	rd=$(dcount "$dg" rxe-b "$qb" SEND_WITH_INV)
	[ "$rd" -ge "$READS" ]
	[ "$(dcount "$dg" rxe-a "$qa" REG_MR)" -eq "$rd" ]
	[ "$(dcount "$dg" rxe-b "$qb" RDMA_WRITE)" -ge "$rd" ]
	[ "$(dcount "$dg" rxe-a "$qa" SEND)" -eq $((rd + $(dcount "$dg" rxe-b "$qb" SEND))) ]
	[ "$(dcount "$dg" rxe-b "$qb" SEND)" -ge "$WRITES" ]
	# the flushes at disconnect: the QPs' error evidence, not a failure
	local fa fb
	fa=$(STATUS=IB_WC_WR_FLUSH_ERR dcount "$dg" rxe-a "$qa")
	fb=$(STATUS=IB_WC_WR_FLUSH_ERR dcount "$dg" rxe-b "$qb")
	[ "$fa" -eq "$(vflush "$all" rxe-a "$qa")" ]
	[ "$fb" -eq "$(vflush "$all" rxe-b "$qb")" ]
	[ $((fa + fb)) -gt 0 ]
	[ "$(jq -s '[.[] | select(.type == "qp") | .verbs[]? | .errors_by_status.IB_WC_WR_FLUSH_ERR // 0] | add // 0' "$dg")" -eq "$flushed" ]
	jq -e -s --argjson q "$qa" 'any(.[]; .type == "qp" and any(.verbs[]?; .dev == "rxe-a"
		and .qpn == $q and .errors_by_status.IB_WC_WR_FLUSH_ERR > 0)
		and (.why | test("rxe-a QP 0x[0-9a-f]+: [0-9]+ IB_WC_WR_FLUSH_ERR"))
		and (.why | contains("work requests failed") | not))' "$dg"
	# the only errors were flushes, and no QP stuck on a work request
	[ "$(jq -s '[.[] | select(.type == "qp") | .verbs[]? | .errors_by_status
		| to_entries[] | select(.key != "IB_WC_WR_FLUSH_ERR")] | length' "$dg")" -eq 0 ]
	[ "$(jq -s '[.[] | select(.type == "qp" and (.why | contains("work request")) and .verdict == "STUCK")] | length' "$dg")" -eq 0 ]
	echo "guest seconds: $((SECONDS - t0))" >&3
}

@test "verbslat: bad input and a device that is not there, one line and exit 1" {
	run -1 "$VL" -d no-such-dev
	[ "$output" = "verbslat: no RDMA device no-such-dev" ]
	run -1 "$VL" -Q 0x1000000
	[ "$output" = "verbslat: invalid QP number: 0x1000000 (0-16777215)" ]
}
