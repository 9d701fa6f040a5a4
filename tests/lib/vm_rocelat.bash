# Helpers of the Soft-RoCE guest's rocelat suites (tests/vm/rocelat.bats,
# tests/vm/mirror.bats): the test bed, perftest runs and their results,
# rxe's counters, rocelat on veth-a and its JSON report, tcpdump captures.
# Loaded after tests/lib/common.bash.
# shellcheck shell=bash

TESTBED="$AX_ROOT/scripts/testbed.sh"
RL="$AX_BUILD/rocelat"
RC="$AX_BUILD/vm/rc_client"
A=10.10.0.1
B=10.10.0.2
PORT=18517 # perftest's TCP exchange (over lo)

# bed_up: the Soft-RoCE test bed, QP numbers made asymmetric: rxe numbers
# QPs cyclically from 0x11 on both devices; 3 more on rxe-b keep every
# later pair apart, so a requester/responder QPN mix-up shows
bed_up() {
	"$TESTBED" up
	if [ -x "$RC" ]; then
		"$RC" -p 3 -n 1 >/dev/null
	fi
}

# bed_down: the test bed gone, if this file set it up
bed_down() {
	! ax_file_ran || "$TESTBED" down >/dev/null 2>&1 || true
}

# rl_setup: a test's rocelat and perftest state, none yet
rl_setup() {
	ax_file_skip
	RL_PID=
	# shellcheck disable=SC2034 # start_rocelat sets it
	RL_PROGS=
	T=$BATS_TEST_TMPDIR
}

# holds EXPR: a comparison of (decimal) numbers, logged
holds() {
	echo "check: $*"
	awk "BEGIN { exit !($*) }"
}

measured() { echo "# measured: $*" >&3; }

# start_rocelat OUT ARGS...: rocelat on veth-a until it traces
start_rocelat() {
	local out=$1
	shift
	ax_tool_start RL_PID "$out" "$WAIT" Tracing "$RL" -i veth-a "$@" || return 1
	RL_PROGS=$(grep -h '^prog_id:' /proc/"$RL_PID"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u)
}

# stop_rocelat: SIGINT, exit 0, and nothing of it left on veth-a
stop_rocelat() {
	ax_tool_stop RL_PID || return 1
	[ -n "$RL_PROGS" ]
	if ip link show dev veth-a | grep -q xdp; then
		echo "XDP left on veth-a" >&2
		return 1
	fi
	[ -z "$(tc filter show dev veth-a egress)" ]
	local alive
	alive=$(bpftool prog show | awk -F: '/^[0-9]+:/ { print $1 }' | grep -Fx -f <(echo "$RL_PROGS") || true)
	[ -z "$alive" ] || {
		echo "rocelat programs still loaded: $alive" >&2
		return 1
	}
}

# perf_run NAME TOOL ARGS...: perftest's server on rxe-b, its client on
# rxe-a (ax_perf_start: GID 1, no -R, bounded in time), until both ended.
# Output in $T/NAME.cli and $T/NAME.srv; status: the client's. PERF_CLI_CPU
# and PERF_SRV_CPU, when set, pin the client and the server to that CPU.
perf_run() {
	local name=$1 tool=$2 rc=0 end
	shift 2
	AX_PERF_WAIT_S=$WAIT ax_perf_start "$T/$name" 150/120 "$PORT" "$tool" "$@" || return 1
	local spid=$AX_PERF_SRV cpid=$AX_PERF_CLI
	if [ -n "${PERF_STALL_S:-}" ]; then
		perf_watch "$cpid" || rc=$?
	fi
	local wrc=0
	wait "$cpid" || wrc=$?
	[ "$rc" -ne 0 ] || rc=$wrc
	end=$((SECONDS + 10))
	while kill -0 "$spid" 2>/dev/null && [ "$SECONDS" -le "$end" ]; do
		sleep 0.2
	done
	grep -v '^ *$' "$T/$name.cli" | tail -n 3
	if [ "$rc" -ne 0 ]; then
		echo "$tool client exited with $rc; rxe's counters:" >&2
		rdma statistic show >&2 2>&1 || true
	fi
	return "$rc"
}

# perf_watch PID: wait for the perftest client PID; 75 (and the client
# ended) when rdma_rxe stopped sending for PERF_STALL_S polls of a second
# in a row once it had begun. 6.1's rdma_rxe has been seen to stop a
# requester for good with work posted and nothing outstanding (every
# packet delivered and answered, no retry, the client polling), under a
# CPU hog: a stall of the test bed's kernel, not of what a test measures.
perf_watch() {
	local pid=$1 first last cur still=0
	first=$(rdma statistic show link rxe-a/1 | sed -n 's/.* sent_pkts \([0-9]*\) .*/\1/p')
	last=$first
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		cur=$(rdma statistic show link rxe-a/1 | sed -n 's/.* sent_pkts \([0-9]*\) .*/\1/p')
		if [ "$cur" != "$last" ]; then
			still=0
			last=$cur
		elif [ "$cur" != "$first" ]; then
			still=$((still + 1))
		fi
		if [ "$still" -ge "$PERF_STALL_S" ]; then
			echo "rdma_rxe stalled: rxe-a sent nothing for $still s with the client waiting" >&2
			kill "$pid" 2>/dev/null
			wait "$pid"
			return 75
		fi
	done
}

# perf_result FILE COLUMN: that column of perftest's result line (2 is the
# iteration count, 5 a latency test's t_typical)
perf_result() {
	awk -v c="$2" '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 { print $c; exit }' "$1"
}

# perf_us CYCLES: perftest -C cycles in microseconds at the guest's TSC rate
perf_us() {
	awk -v c="$1" -F: '/^cpu MHz/ { printf "%.1f\n", c / $2; exit }' /proc/cpuinfo
}

# perf_qpn FILE local|remote: a QP number perftest's client printed, decimal
perf_qpn() {
	echo $(($(sed -n "s/^ *$2 address:.* QPN \(0x[0-9a-fA-F]*\) .*/\1/p" "$1" | head -1)))
}

# counters ARRAY: rxe's port counters of both devices into the associative
# ARRAY, keyed DEVICE.COUNTER (rxe-a.sent_pkts)
counters() {
	local -n _ct=$1
	local d w i
	_ct=()
	for d in rxe-a rxe-b; do
		read -ra w < <(rdma statistic show link "$d/1")
		for ((i = 2; i + 1 < ${#w[@]}; i += 2)); do
			_ct[$d.${w[i]}]=${w[i + 1]}
		done
	done
}

# delta ARRAY0 ARRAY1 KEY: how much rxe's counter KEY (rxe-a.sent_pkts)
# grew between two counters calls
delta() {
	local -n _c0=$1 _c1=$2
	echo $((${_c1[$3]} - ${_c0[$3]}))
}

# perf_stop: every perftest of the test ended (timeout passes TERM on to
# perftest, and KILLs it 3 s later), then the test's other processes
perf_stop() {
	ax_perf_stop
	ax_cleanup
}

# rl_cpu_counts ENUM_INDEX: rocelat's global counter number ENUM_INDEX
# (enum rocelat_counter) on each CPU, one line "CPU COUNT" per CPU, read
# from its per-CPU counters map while it runs
rl_cpu_counts() {
	local prog map
	for prog in $RL_PROGS; do
		for map in $(bpftool prog show id "$prog" -j | jq -r '.map_ids[]?'); do
			if [ "$(bpftool map show id "$map" -j | jq -r .name)" = counters ]; then
				bpftool map dump id "$map" -j |
					jq -r --argjson i "$1" '.[0].formatted.values[] | "\(.cpu) \(.value.c[$i])"'
				return
			fi
		done
	done
}

# rl_load FILE ARRAY: rocelat's JSON report (one jq run) into the associative
# ARRAY: c.NAME (the counters), a.NAME and b.NAME (the flow whose requester
# is rxe-a or rxe-b: its scalar fields, and below_20ms: its samples in log2
# slots wholly below 20 ms), a.flows and b.flows (how many such flows)
# shellcheck disable=SC2004 # _rl is associative (a nameref)
rl_load() {
	local -n _rl=$2
	local k v
	_rl=()
	while read -r k v; do
		if [[ $k == *.flows ]]; then
			_rl[$k]=$((${_rl[$k]:-0} + 1))
		else
			_rl[$k]=$v
		fi
	done < <(jq -r --arg a "$A" --arg b "$B" '
		if .type == "counters" then
			to_entries[] | "c.\(.key) \(.value)"
		elif .type == "flow" then
			. as $f |
			(if .saddr == $a then "a." elif .saddr == $b then "b." else "x." end) as $p |
			"\($p)flows 1",
			(to_entries[] | select(.value | type != "array") | "\($p)\(.key) \(.value)"),
			"\($p)below_20ms \([$f.buckets[]? | select(.hi < 20000) | .count] | add // 0)"
		else empty end' "$1")
	[ "${#_rl[@]}" -gt 0 ] || {
		echo "nothing in $1" >&2
		return 1
	}
}

# start_capture PCAP: tcpdump of RoCE v2 on veth-a, until it listens
start_capture() {
	ax_bg tcpdump -i veth-a -nn -U -Z root -s 128 -w "$1" udp dst port 4791 2>"$1.err"
	CAP_PID=$AX_LAST_PID
	ax_wait_for "$1.err" "listening on" "$WAIT"
}

# cap_count PCAP MIN: the capture holds at least MIN packets (tcpdump -U
# writes each one whole; a record being written is left out)
cap_count() {
	local n
	n=$(tcpdump -r "$1" 2>/dev/null | wc -l)
	[ "$n" -ge "$2" ]
}

# stop_capture PCAP MIN: once the capture holds MIN packets (what rxe's
# counters say crossed veth-a: under emulation tcpdump lags, and SIGINT
# drops what it has not read), stop it; the kernel dropped none of the
# packets it gave it, and it wrote at least MIN. A packet arriving after
# the wait (rxe's timer resends even on a clean link) may be counted by
# the filter and left unread: not a loss
stop_capture() {
	local f=$1 min=$2 rc=0
	ax_until "$WAIT" "$min packets in $f" cap_count "$f" "$min" || rc=$?
	ax_stop "$CAP_PID" INT
	cat "$f.err"
	[ "$rc" -eq 0 ] || return 1
	local got lost
	got=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured$/\1/p' "$f.err")
	lost=$(sed -n 's/^\([0-9]*\) packets\{0,1\} dropped by kernel$/\1/p' "$f.err")
	[ -n "$got" ] && [ "$got" -ge "$min" ] && [ "$lost" = 0 ]
}

# cap_samples PCAP: "REQUESTER LATENCY_US" for every request answered on
# the wire (SEND/WRITE/READ REQUEST -> ACK or READ RESPONSE with its PSN);
# like rocelat (Karn), a request sent again before its answer is left out.
# IPv4 without options: BTH at byte 28 of the IP header, PSN at 37-39.
cap_samples() {
	tcpdump -r "$1" -tt -nn -x 2>/dev/null | awk '
	function hx(s,   i, v) {
		v = 0
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	function ip(o) { return hx(b[o]) "." hx(b[o + 1]) "." hx(b[o + 2]) "." hx(b[o + 3]) }
	function packet(   op, k) {
		if (nb < 40)
			return
		op = hx(b[28])
		if (op <= 12) {
			k = ip(12) " " hx(b[37] b[38] b[39])
			if (!(k in sent))
				sent[k] = us
			else if (!(k in answered))
				ambiguous[k] = 1
		} else if (op <= 17) {
			k = ip(16) " " hx(b[37] b[38] b[39])
			if ((k in sent) && !(k in answered) && !(k in ambiguous))
				print ip(16), us - sent[k]
			if (k in sent)
				answered[k] = 1
		}
	}
	/^[0-9]+\.[0-9]+ / {
		packet()
		split($1, t, ".")
		if (t0 == "")
			t0 = t[1]
		us = (t[1] - t0) * 1000000 + t[2]
		nb = 0
		next
	}
	$1 ~ /^0x[0-9a-f]+:$/ {
		for (i = 2; i <= NF; i++) {
			b[nb++] = substr($i, 1, 2)
			if (length($i) == 4)
				b[nb++] = substr($i, 3, 2)
		}
	}
	END { packet() }'
}

# cap_stat SAMPLES REQUESTER: "COUNT MEDIAN_US" of that requester's samples
cap_stat() {
	awk -v r="$2" '$1 == r { print $2 }' "$1" | sort -n |
		awk '{ v[NR] = $1 } END { print NR, (NR ? v[int((NR + 1) / 2)] : -1) }'
}
