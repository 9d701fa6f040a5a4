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

# every controller of our subsystem deleted (a test may connect twice)
disconnect() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" != "$NQN" ] || echo 1 >"$c/delete_controller"
	done
}

teardown_file() {
	ax_file_ran || return 0
	disconnect 2>/dev/null || true
	rm -f "$CFG/ports/4420/subsystems/$NQN"
	rmdir "$CFG/ports/4420" 2>/dev/null || true
	echo 0 >"$CFG/subsystems/$NQN/namespaces/1/enable" 2>/dev/null || true
	rmdir "$CFG/subsystems/$NQN/namespaces/1" "$CFG/subsystems/$NQN" 2>/dev/null || true
	modprobe -r nvme-rdma nvmet-rdma nvmet null_blk 2>/dev/null || true
	modprobe -r rds_rdma rds 2>/dev/null || true
	"$TESTBED" down >/dev/null 2>&1 || true
}

setup() {
	ax_file_skip
}

teardown() {
	ax_file_ran || return 0
	ax_cleanup
	# a test that failed connected leaves no controller to the next one
	disconnect 2>/dev/null || true
}

# one I/O queue, so the I/O QP is the second QP of each side; OPTS: more
# options of the connection
connect() {
	echo "transport=rdma,traddr=10.10.0.2,trsvcid=4420,nqn=$NQN,host_traddr=10.10.0.1,nr_io_queues=1${1:+,$1}" \
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

@test "NVMe-oF over rxe: WRs per opcode equal the I/O; every WR paired, flushes as IB_WC_WR_FLUSH_ERR; rocediag per QP the same" {
	local all=$BATS_TEST_TMPDIR/all.json io=$BATS_TEST_TMPDIR/io.json ev=$BATS_TEST_TMPDIR/ev.json
	local prom=$BATS_TEST_TMPDIR/io.prom host=$BATS_TEST_TMPDIR/host.json tgt=$BATS_TEST_TMPDIR/tgt.json
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
	qa=$(io_qpn "$all" rxe-a)
	qb=$(io_qpn "$all" rxe-b)
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
	run -1 "$VL" --ulp nvmf
	[ "$output" = "verbslat: invalid ULP: nvmf (want nvme, nvmet, nfs, iser, smb or rds)" ]
}

INJ="$AX_BUILD/roceinject"
HOLD="$AX_ROOT/tests/lib/pcap_hold.py"
DELAY_US=2000
DELAY_READS=200	# per path: the p50 of each within tens of us (see below)
# how far verbslat's added p50 may be from the hold roceinject made, in
# us. The p50 of base + hold is not the base's p50 plus the hold's median
# (the hold spreads, 2066-3359 us in the first 6.12 run, the base too):
# that run added 2302 us for a median hold of 2149 us (153 us over), the
# target's responses 16 us apart. One run only: 300 us until more runs say
DELAY_SLACK_US=300

# the multipath block device of our subsystem (nvmeNn1, a child of its
# nvme-subsysN) once two live controllers have an optimized path each
# (round-robin takes only those); else fails
two_paths() {
	local c p h n=0
	for c in /sys/class/nvme/nvme*; do
		[ "$(<"$c/subsysnqn")" = "$NQN" ] && [ "$(<"$c/state")" = live ] || continue
		for p in "$c"/nvme*c*n1; do
			[ -e "$p" ] || continue
			[ ! -e "$p/ana_state" ] || [ "$(<"$p/ana_state")" = optimized ] || continue
			n=$((n + 1))
		done
	done 2>/dev/null
	[ "$n" -eq 2 ] || return 1
	for h in /sys/class/nvme-subsystem/nvme-subsys*/nvme*n1; do
		[ "$(<"${h%/*}/subsysnqn")" = "$NQN" ] && [ -b "/dev/${h##*/}" ] || continue
		echo "${h##*/}"
		return 0
	done 2>/dev/null
	return 1
}

# vl_pair OUT DEV OPCODE QPN: "P50_US COUNT P50_US COUNT" of DEV's
# successful OPCODE completions on QP QPN, then on the busiest other QP
vl_pair() {
	jq -r -s --arg d "$2" --arg o "$3" --argjson q "$4" '[.[] | select(.type == "wr"
		and .dev == $d and .opcode == $o and .status == "IB_WC_SUCCESS")] as $r
		| ($r | map(select(.qpn == $q)) | first) as $b
		| ($r | map(select(.qpn != $q)) | max_by(.count)) as $a
		| "\($b.lat_us.p50) \($b.count) \($a.lat_us.p50) \($a.count)"' "$1"
}

no_ctrl() { [ -z "$(ctrl)" ]; }

# Ground truth: the hold roceinject made, measured where it makes it
# (each delayed packet's time at tc egress, its "inject" line, and as it
# leaves veth-a's fq, a capture of veth-a's egress: tests/lib/pcap_hold.py;
# TCG's emulated timers let fq release a packet late, so the hold is 2 ms
# and a little more). Two controllers of one host on the subsystem are
# two paths of one multipath device; round-robin alternates dd's reads
# (queue depth 1) between their I/O QPs, so both see the same emulation
# at the same moments and the base latency's drift under TCG (hundreds of
# us between runs) cancels: roceinject delays only the commands sent to
# the target's QP of the second controller. The host's SEND of a command
# completes at its ACK, so each one of that QP takes the hold longer than
# the other QP's. The target's responses on that QP pair are the control:
# their ACKs are not requests, not delayed.
@test "roceinject delays one NVMe-oF queue's commands 2 ms: that QP's SEND p50 moves by the hold made, the other queue's and the target's responses do not" {
	local vl=$BATS_TEST_TMPDIR/delay.json inj=$BATS_TEST_TMPDIR/inj.json cap=$BATS_TEST_TMPDIR/cmd.pcap
	local t0=$SECONDS head hq tq capture
	connect
	connect duplicate_connect
	ax_until 30 "two optimized paths" two_paths >/dev/null
	head=$(two_paths)
	local s
	for s in /sys/class/nvme-subsystem/nvme-subsys*; do
		[ "$(<"$s/subsysnqn")" != "$NQN" ] || echo round-robin >"$s/iopolicy"
	done
	# the second controller's I/O QP: rxe-a's last RC QP made; its peer
	read -r hq tq < <(rdma -j res show qp link rxe-a/1 |
		jq -r -s 'flatten | map(select(.type == "RC")) | max_by(.lqpn) | "\(.lqpn) \(.rqpn)"')
	echo "paths of /dev/$head; delayed: the QP $hq -> $tq" >&2
	ax_tool_start --err VLD "$vl" 120 '' "$VL" -j
	ax_tool_start --err INJD "$inj" 120 '' "$INJ" -i veth-a --delay ${DELAY_US}us -Q "$tq" \
		--class requests -e -j
	ax_bg tcpdump -i veth-a -Q out -n -U -w "$cap" \
		"src host 10.10.0.1 and udp dst port 4791 and (udp[12:4] & 0xffffff) = $tq and udp[8] = 4" \
		2>"$cap.err"
	capture=$AX_LAST_PID
	ax_tool_wait --err VLD 120 Tracing
	ax_tool_wait --err INJD 120 '^Injecting'
	ax_capture_ready "$capture" "$cap.err" 60
	dd if="/dev/$head" of=/dev/null bs=4k count=$((2 * DELAY_READS)) iflag=direct status=none
	ax_capture_stop "$capture" "$cap.err"
	ax_tool_stop INJD
	ax_tool_stop VLD
	disconnect
	python3 "$HOLD" "$cap" "$inj" >"$cap.hold"
	local hold pb nb pa na tpb tnb tpa tna n made
	hold=$(grep "\"dqpn\": $tq," "$cap.hold")
	read -r pb nb pa na < <(vl_pair "$vl" rxe-a SEND "$hq")
	read -r tpb tnb tpa tna < <(vl_pair "$vl" rxe-b SEND_WITH_INV "$tq")
	read -r n made < <(jq -r '"\(.paired) \(.median_us)"' <<<"$hold")
	echo "delayed QP $hq -> $tq, hold $hold; host SEND p50 $pb us (n $nb) vs $pa us (n $na);" \
		"target SEND_WITH_INV p50 $tpb us (n $tnb) vs $tpa us (n $tna)" >&3
	# the I/O QPs: each took one read in two, exactly, on both sides
	[ "$nb $na $tnb $tna" = "$DELAY_READS $DELAY_READS $DELAY_READS $DELAY_READS" ]
	# every command to that QP (RC SEND ONLY, the capture's filter; the
	# ACKs to it are not requests) delayed, roceinject's line for each,
	# and seen leaving; a retransmission counts as its own packet
	[ "$(jq -r '"\(.in) \(.out)"' <<<"$hold")" = "$n $n" ]
	[ "$n" -ge "$DELAY_READS" ]
	# the hold made: the delay asked and at most 1 ms of emulation more
	awk -v h="$made" -v d=$DELAY_US 'BEGIN { exit !(h >= d * 0.99 && h <= d + 1000) }'
	# verbslat: the delayed QP's SEND p50 above the other's by the hold
	# made; the target's responses on the two QP pairs alike
	local verdict
	verdict=$(awk -v a="$pa" -v b="$pb" -v h="$made" -v s=$DELAY_SLACK_US -v x="$tpa" -v y="$tpb" 'BEGIN {
		d = b - a - h; if (d < 0) d = -d
		e = y - x; if (e < 0) e = -e
		printf "added %.1f us for a hold of %.1f us, target responses %.1f us apart: %s\n",
			b - a, h, e, d <= s && e <= s ? "ok" : "out of bounds" }')
	echo "$verdict" >&3
	[[ $verdict == *": ok" ]]
	ax_until 30 "the controllers gone" no_ctrl
	echo "guest seconds: $((SECONDS - t0))" >&3
}

# rxe's count of completions that ran out of retries, on DEV
retry_exceeded() {
	rdma statistic show link "$1/1" |
		awk '{ for (i = 1; i < NF; i++) if ($i == "retry_exceeded_err") print $(i + 1) }'
}

# RDS's log lines of a send that ran out of retries (net/rds/ib_send.c,
# rds_ib_send_cqe_handler: one per error completion while the connection
# is up; it drops the connection at the first, so the flushes that follow
# are not logged)
rds_retry_logged() {
	dmesg | awk '/RDS\/IB: send completion on .* had status 12 \(transport retry counter exceeded\)/ { n++ }
		END { print n + 0 }'
}

rds_logged_more() { [ "$(rds_retry_logged)" -gt "$1" ]; }

# An RDS message from 10.10.0.1 to 10.10.0.2: what RDS over IB (rds_rdma)
# makes of it is kernel work requests on a kernel QP pair, rxe-a's and
# rxe-b's, connected by rdma_cm
rds_send() {
	exec python3 -c 'import signal, socket as s, sys
t = s.socket(s.AF_RDS, s.SOCK_SEQPACKET)
t.bind(("10.10.0.1", 18001))
if sys.argv[1] == "hello":
    r = s.socket(s.AF_RDS, s.SOCK_SEQPACKET)
    r.bind(("10.10.0.2", 18000))
t.sendto(sys.argv[1].encode(), ("10.10.0.2", 18000))
if sys.argv[1] == "hello":
    print(r.recv(64).decode(), flush=True)
else:
    signal.pause()' "$1"
}

# Ground truth: rdma_rxe's own count of completions with
# IB_WC_RETRY_EXC_ERR (its retry_exceeded_err counter) and the kernel
# ULP's log of them. NVMe-oF cannot give one here: nvme-rdma (and
# nvmet-rdma, which takes the REQ's) asks retry_count 7, which rdma_rxe
# takes as "retry forever" (rxe_comp.c), so its QPs never run out; RDS
# over IB asks rds_ib_retry_count (loaded with 3): a request dropped four
# times (its send and three retries, each after the QP's ack timeout,
# about 0.5 s from rdma_cm's packet lifetime) completes with
# IB_WC_RETRY_EXC_ERR. roceinject drops the requests to rxe-b's QP at
# veth-b's ingress (a lossy link; a drop at rxe's own egress would be
# resent at once as a send error). verbslat prints its table every second:
# the QP's oldest WR must show older than 100 ms (a completing WR on this
# path takes a few ms) and no older than the failed WR's latency in a
# table before the one with the error; the retry budget, about 2 s, holds
# two tables at least.
@test "RDS over rxe, the requests to its QP dropped: verbslat names the QP stuck, then counts IB_WC_RETRY_EXC_ERR exactly as rxe and RDS do" {
	local vl=$BATS_TEST_TMPDIR/retry.json inj=$BATS_TEST_TMPDIR/drop.json t0=$SECONDS
	local hq tq k0a k0b l0 v k l sender
	if ! modprobe rds_rdma rds_ib_retry_count=3 2>/dev/null; then
		skip "no rds_rdma module for $(uname -r)"
	fi
	[ "$(</sys/module/rds_rdma/parameters/rds_ib_retry_count)" -eq 3 ]
	# connected: the first message delivered
	[ "$(timeout 60 bash -c "$(declare -f rds_send); rds_send hello")" = hello ]
	read -r hq tq < <(rdma -j res show qp link rxe-a/1 |
		jq -r -s 'flatten | map(select(.type == "RC")) | max_by(.lqpn) | "\(.lqpn) \(.rqpn)"')
	echo "RDS's QP $hq -> $tq" >&2
	k0a=$(retry_exceeded rxe-a) k0b=$(retry_exceeded rxe-b) l0=$(rds_retry_logged)
	ax_tool_start --err VLR "$vl" 120 '' "$VL" -j 1
	ax_tool_start --err INJR "$inj" 120 '' "$INJ" -i veth-b --direction ingress --drop \
		-Q "$tq" --class requests -j
	ax_tool_wait --err VLR 120 Tracing
	ax_tool_wait --err INJR 120 '^Injecting'
	ax_bg rds_send stuck
	sender=$AX_LAST_PID
	ax_until 30 "verbslat's IB_WC_RETRY_EXC_ERR" grep -q '"status":"IB_WC_RETRY_EXC_ERR"' "$vl"
	ax_until 10 "RDS's log of it" rds_logged_more "$l0"
	ax_tool_stop INJR
	ax_tool_stop VLR
	ax_stop "$sender" TERM
	dmesg | grep 'RDS/IB' | tail -n 5 >&2
	k=$(($(retry_exceeded rxe-a) - k0a + $(retry_exceeded rxe-b) - k0b))
	l=$(($(rds_retry_logged) - l0))
	v=$(jq -s '[.[] | select(.type == "wr" and .status == "IB_WC_RETRY_EXC_ERR") | .count] | add // 0' "$vl")
	echo "QP $hq -> $tq: IB_WC_RETRY_EXC_ERR verbslat $v, rxe $k, RDS's log $l;" \
		"$(jq -c -s '[.[] | select(.type == "wr" and .status != "IB_WC_SUCCESS") | {dev, qpn, opcode, status, count}]' "$vl")" >&3
	[ "$v" -ge 1 ] && [ "$v" -eq "$k" ] && [ "$v" -eq "$l" ]
	# every one on the QP whose requests were dropped
	[ "$(jq -s --argjson q "$hq" '[.[] | select(.type == "wr" and .status == "IB_WC_RETRY_EXC_ERR"
		and (.dev != "rxe-a" or .qpn != $q))] | length' "$vl")" -eq 0 ]
	# named stuck first: a table before the error's shows the QP's oldest
	# send WR older than 100 ms, and not older than the WR that failed
	run jq -r -s --argjson q "$hq" '(map(.type == "wr" and .status == "IB_WC_RETRY_EXC_ERR") | index(true)) as $e
		| (.[$e].lat_us.max / 1000) as $failed
		| [.[:$e][] | select(.type == "qp" and .dev == "rxe-a" and .qpn == $q
		   and .send_outstanding >= 1 and .send_oldest_ms >= 100 and .send_oldest_ms <= $failed)
		   | .send_oldest_ms] | "\(length) \($failed) \(.)"' "$vl"
	echo "stuck: tables before the error showing it stuck, the failed WR's latency (ms), their ages: $output" >&3
	[ "${output%% *}" -ge 1 ]
	modprobe -r rds_rdma rds
	echo "guest seconds: $((SECONDS - t0))" >&3
}
