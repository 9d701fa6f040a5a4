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
CFG=/sys/kernel/config/nvmet
NQN=agentxdp-verbslat
READS=100
WRITES=50

setup_file() {
	ax_file_needs --rxe jq "$VL" || return 0
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

total() { # total OUT NAME: a counter of the last totals line
	jq -s --arg n "$2" '[.[] | select(.type == "totals")] | last | .[$n]' "$1"
}

# json_wrs OUT / prom_wrs PROM: "dev qpn opcode status count" per QP,
# opcode and status, summed over intervals / of the --prom file, sorted
json_wrs() {
	jq -rs '[.[] | select(.type == "wr")] | group_by([.dev, .qpn, .opcode, .status])[]
		| "\(.[0].dev) \(.[0].qpn) \(.[0].opcode) \(.[0].status) \(map(.count) | add)"' "$1" |
		LC_ALL=C sort
}
prom_wrs() {
	sed -n 's/^agentxdp_verbslat_completions_total{dev="\([^"]*\)",qpn="\([^"]*\)",opcode="\([^"]*\)",status="\([^"]*\)"} \([0-9]*\)$/\1 \2 \3 \4 \5/p' "$1" |
		LC_ALL=C sort
}

# prom_get PROM SAMPLE: the value of one sample (name{labels}), exactly
prom_get() {
	local n v
	while read -r n v; do
		[ "$n" != "$2" ] || { echo "$v"; return 0; }
	done <"$1"
	echo "no sample $2 in $1" >&2
	return 1
}

# io_qpn OUT DEV: the I/O QP of DEV (its highest QPN with completions)
io_qpn() {
	jq -s --arg d "$2" '[.[] | select(.type == "wr" and .dev == $d) | .qpn] | max' "$1"
}

# owners OUT: the distinct "dev owner" pairs of the traced QPs
owners() {
	jq -rs '[.[] | select(.type == "qp") | "\(.dev) \(.owner)"] | unique[]' "$1"
}

@test "NVMe-oF over rxe: WRs per opcode equal the I/O; every WR paired, flushes as IB_WC_WR_FLUSH_ERR" {
	local all=$BATS_TEST_TMPDIR/all.json io=$BATS_TEST_TMPDIR/io.json ev=$BATS_TEST_TMPDIR/ev.json
	local prom=$BATS_TEST_TMPDIR/io.prom host=$BATS_TEST_TMPDIR/host.json tgt=$BATS_TEST_TMPDIR/tgt.json
	local c t0=$SECONDS
	# from before the connection: every WR of its QPs is seen posted
	ax_tool_start --err ALL "$all" 120 Tracing "$VL" -j
	grep -q 'rdma_rxe via fentry' "$all.err"
	connect
	c=$(ctrl)
	# side by side: all of them with --prom, each ULP's own QPs (--ulp)
	ax_tool_start --err IO "$io" 120 "" "$VL" -j --prom "$prom"
	ax_tool_start --err HOST "$host" 120 "" "$VL" -j --ulp nvme
	ax_tool_start --err TGT "$tgt" 120 "" "$VL" -j --ulp nvmet
	ax_tool_wait --err IO 120 Tracing
	ax_tool_wait --err HOST 120 Tracing
	ax_tool_wait --err TGT 120 Tracing
	dd if="/dev/${c}n1" of=/dev/null bs=4k count=$READS iflag=direct status=none
	dd if=/dev/zero of="/dev/${c}n1" bs=4k count=$WRITES oflag=direct status=none
	ax_tool_stop IO
	ax_tool_stop HOST
	ax_tool_stop TGT
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
	# --prom: the same completions per QP, opcode and status as the JSON
	# (the tables of the whole run), so the same truth; the latency
	# histogram counts each QP's WRs of an opcode, the I/O QP's sends
	# are all complete
	local qa qb
	qa=$(io_qpn "$io" rxe-a) qb=$(io_qpn "$io" rxe-b)
	echo "prom: $(grep -v '_bucket' "$prom" | grep -v '^#')" >&3
	[ -n "$(json_wrs "$io")" ]
	[ "$(prom_wrs "$prom")" = "$(json_wrs "$io")" ]
	[ "$(prom_get "$prom" "agentxdp_verbslat_completions_total{dev=\"rxe-a\",qpn=\"$qa\",opcode=\"SEND\",status=\"IB_WC_SUCCESS\"}")" -eq $((READS + WRITES)) ]
	[ "$(prom_get "$prom" "agentxdp_verbslat_wr_latency_seconds_count{dev=\"rxe-a\",qpn=\"$qa\",opcode=\"SEND\"}")" -eq $((READS + WRITES)) ]
	[ "$(prom_get "$prom" "agentxdp_verbslat_wr_latency_seconds_bucket{dev=\"rxe-a\",qpn=\"$qa\",opcode=\"REG_MR\",le=\"+Inf\"}")" -eq "$READS" ]
	[ "$(prom_get "$prom" "agentxdp_verbslat_wr_latency_seconds_count{dev=\"rxe-b\",qpn=\"$qb\",opcode=\"RDMA_WRITE\"}")" -eq "$READS" ]
	[ "$(prom_get "$prom" "agentxdp_verbslat_completions_total{dev=\"rxe-b\",qpn=\"$qb\",opcode=\"SEND_WITH_INV\",status=\"IB_WC_SUCCESS\"}")" -eq "$READS" ]
	[ "$(prom_get "$prom" "agentxdp_verbslat_outstanding_wrs{dev=\"rxe-a\",qpn=\"$qa\",owner=\"nvme_rdma\",queue=\"send\"}")" -eq 0 ]
	[ "$(prom_get "$prom" "agentxdp_verbslat_outstanding_wrs{dev=\"rxe-b\",qpn=\"$qb\",owner=\"nvmet_rdma\",queue=\"send\"}")" -eq 0 ]
	[ "$(prom_get "$prom" agentxdp_verbslat_map_full_total)" -eq 0 ]
	[ "$(prom_get "$prom" agentxdp_verbslat_kernel_skipped_total)" -eq 0 ]
	# the owners: the host's PD is nvme_rdma's, the target's nvmet_rdma's,
	# as RDMA netlink names them (the QPs it names rdma_cm's)
	echo "rdma res: $(rdma res show pd; rdma res show qp)" >&3
	rdma res show pd dev rxe-a | grep -Eq 'comm \[?nvme_rdma\]?( |$)'
	rdma res show pd dev rxe-b | grep -Eq 'comm \[?nvmet_rdma\]?( |$)'
	[ "$(owners "$io")" = "$(printf 'rxe-a nvme_rdma\nrxe-b nvmet_rdma')" ]
	# --ulp nvme: the host's WRs alone, as many as the I/O implies; nvmet:
	# the target's
	echo "host: $(cat "$host")" >&3
	[ "$(owners "$host")" = "rxe-a nvme_rdma" ]
	[ "$(owners "$tgt")" = "rxe-b nvmet_rdma" ]
	[ "$(jq -s '[.[] | select(.type == "wr" and .dev != "rxe-a")] | length' "$host")" -eq 0 ]
	[ "$(jq -s '[.[] | select(.type == "wr" and .dev != "rxe-b")] | length' "$tgt")" -eq 0 ]
	[ "$(count "$host" rxe-a SEND)" -eq $((READS + WRITES)) ]
	[ "$(count "$host" rxe-a REG_MR)" -eq "$READS" ]
	[ "$(count "$tgt" rxe-b RDMA_WRITE)" -eq "$READS" ]
	[ "$(count "$tgt" rxe-b SEND_WITH_INV)" -eq "$READS" ]
	[ "$(count "$tgt" rxe-b SEND)" -eq "$WRITES" ]
	# tear down: the receives still posted come back flushed, one -e line each
	ax_tool_start --err EV "$ev" 120 Tracing "$VL" -j -e
	disconnect
	local end=$((SECONDS + 30))
	until [ -z "$(ctrl)" ] || [ "$SECONDS" -gt "$end" ]; do sleep 0.1; done
	[ -z "$(ctrl)" ]
	ax_tool_stop EV
	ax_tool_stop ALL
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
	echo "guest seconds: $((SECONDS - t0))" >&3
}

@test "verbslat: bad input and a device that is not there, one line and exit 1" {
	run -1 "$VL" -d no-such-dev
	[ "$output" = "verbslat: no RDMA device no-such-dev" ]
	run -1 "$VL" -Q 0x1000000
	[ "$output" = "verbslat: invalid QP number: 0x1000000 (0-16777215)" ]
	run -1 "$VL" --ulp nvmf
	[ "$output" = "verbslat: invalid ULP: nvmf (want nvme, nvmet, nfs, iser, smb or rds)" ]
}
