# Shared helpers for the bats suites. Load with: load ../lib/common
# Every helper that creates state registers its cleanup, and
# ax_cleanup (called from teardown) removes it, also after a failure.

AX_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AX_BUILD=${AX_BUILD:-$AX_ROOT/build}
export AX_ROOT AX_BUILD

# PIDs we started; ax_cleanup ends them (only them)
AX_PIDS=()
AX_NETNS=()
# perftest processes of ax_perf_start
AX_PERF_PIDS=()

# ax_netns_pair PREFIX ADDR_A ADDR_B: namespaces ${PREFIX}a/${PREFIX}b with a
# veth pair ${PREFIX}va / ${PREFIX}vb (addresses given with prefix length;
# IPv6 allowed). Loopback up in both.
ax_netns_pair() {
	local p=$1 a=$2 b=$3
	ip netns add "${p}a"
	AX_NETNS+=("${p}a")
	ip netns add "${p}b"
	AX_NETNS+=("${p}b")
	ip link add "${p}va" netns "${p}a" type veth peer name "${p}vb" netns "${p}b"
	ip -n "${p}a" link set lo up
	ip -n "${p}b" link set lo up
	ip -n "${p}a" addr add "$a" dev "${p}va" nodad 2>/dev/null || ip -n "${p}a" addr add "$a" dev "${p}va"
	ip -n "${p}b" addr add "$b" dev "${p}vb" nodad 2>/dev/null || ip -n "${p}b" addr add "$b" dev "${p}vb"
	ip -n "${p}a" link set "${p}va" up
	ip -n "${p}b" link set "${p}vb" up
	# a new veth sends into 'qdisc noop' (drops) until linkwatch activates
	# it, up to about a second later
	ax_link_ready "${p}a" "${p}va" && ax_link_ready "${p}b" "${p}vb"
}

# ax_link_ready NETNS DEV: until DEV has its real qdisc (at most 5 s)
ax_link_ready() {
	local end=$((SECONDS + 5))
	while [ "$SECONDS" -le "$end" ]; do
		ip -n "$1" link show dev "$2" | grep -q 'qdisc noop' || return 0
		sleep 0.1
	done
	echo "link $2 in $1 did not come up" >&2
	return 1
}

# ax_bg CMD...: run in the background, remember the PID in $AX_LAST_PID
ax_bg() {
	"$@" &
	AX_LAST_PID=$!
	AX_PIDS+=("$AX_LAST_PID")
}

# ax_stop PID [SIGNAL]: signal a process we started and wait for it;
# safe when it already exited. Sets AX_RC to its exit status.
ax_stop() {
	local pid=$1 sig=${2:-INT} i
	kill -s "$sig" "$pid" 2>/dev/null || true
	# a tool that ignores the signal fails the test instead of hanging it
	local end=$((SECONDS + 10))
	while [ "$SECONDS" -le "$end" ]; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "process $pid ignored SIG$sig for 10 s: killed" >&2
		kill -s KILL "$pid" 2>/dev/null || true
	fi
	AX_RC=0
	wait "$pid" 2>/dev/null || AX_RC=$?
}

# ax_until TIMEOUT_S WHAT CMD...: until CMD succeeds, tried every 0.2 s;
# after TIMEOUT_S seconds of wall time ($SECONDS) "timeout waiting for
# WHAT" on stderr and status 1. The way to wait for an event: the bound is
# a failure, never the thing waited for.
ax_until() {
	local t=$1 what=$2 end
	shift 2
	end=$((SECONDS + t))
	until "$@"; do
		if [ "$SECONDS" -gt "$end" ]; then
			echo "timeout (${t} s) waiting for $what" >&2
			return 1
		fi
		sleep 0.2
	done
}

# ax_snmp NS COUNTER: a counter of NS's /proc/net/snmp ("Udp:NoPorts",
# "Ip:InReceives") or /proc/net/snmp6 ("Udp6NoPorts"), counted by the
# kernel since NS was made
ax_snmp() {
	ip netns exec "$1" awk -v want="$2" '
		FILENAME ~ /6$/ { if ($1 == want) v = $2; next }
		!($1 in head) { head[$1] = $0; next }
		{ n = split(head[$1], h); for (i = 2; i <= n; i++) if ($1 h[i] == want) v = $i }
		END { print v + 0 }' /proc/net/snmp /proc/net/snmp6
}

# ax_wait_snmp NS COUNTER N: until COUNTER of NS (ax_snmp) reached N (at
# most 30 s). The kernel counts a packet in the softirq that receives it:
# e.g. Udp:NoPorts just before it drops a datagram to a closed port, so
# NoPorts reaching N says the receiver has dropped (or is dropping) all N
# a sender sent, which may still sit in a backlog when the sender returns.
ax_wait_snmp() {
	ax_until 30 "$2 of $1 to reach $3" _ax_snmp_ge "$@"
}

_ax_snmp_ge() {
	[ "$(ax_snmp "$1" "$2")" -ge "$3" ]
}

# ax_backlog_empty: no CPU holds packets in its receive backlog
# (/proc/net/softnet_stat, 12th column, 5.10+): every packet handed to a
# veth has been through the receiving stack, its packet taps included
ax_backlog_empty() {
	awk 'NF >= 12 && $12 != "00000000" { busy = 1 } END { exit busy }' /proc/net/softnet_stat
}

# ax_capture_counts ERR: "CAPTURED RECEIVED DROPPED", the last counts
# tcpdump wrote to its stderr ERR (on SIGUSR1 one line, at exit three):
# packets written, packets its filter took, packets the kernel dropped
ax_capture_counts() {
	grep -oE '[0-9]+ packets? (captured|received by filter|dropped by kernel)' "$1" |
		tail -3 | cut -d' ' -f1 | paste -sd' '
}

# tcpdump PID (stderr ERR) asked for its counts (SIGUSR1), until they are
# in ERR (at most T seconds)
_ax_capture_ask() {
	local n
	n=$(grep -c 'dropped by kernel' "$2")
	kill -USR1 "$1" 2>/dev/null || return 1
	ax_until "$3" "tcpdump's counts" _ax_capture_answered "$2" "$n"
}

_ax_capture_answered() {
	[ "$(grep -c 'dropped by kernel' "$1")" -gt "$2" ]
}

# ax_capture_ready PID ERR [TIMEOUT_S]: until tcpdump PID (stderr ERR)
# listens; then, before any traffic, what its counts hold that it will
# never write (in ERR.unwritten): packets queued before its filter was
# set count as taken by the filter, but tcpdump drops those that do not
# match it itself (libpcap on Linux; a stray IPv6 packet now and then)
ax_capture_ready() {
	local pid=$1 err=$2 t=${3:-20} c r d
	ax_wait_for "$err" "listening on" "$t" >/dev/null || return 1
	_ax_capture_ask "$pid" "$err" "$t" || return 1
	read -r c r d < <(ax_capture_counts "$err")
	echo $((r - c - d)) >"$err.unwritten"
}

# tcpdump PID (stderr ERR) has written or lost every packet its filter
# took, but for those ax_capture_ready() found it never writes
_ax_capture_caught_up() {
	local c r d
	_ax_capture_ask "$1" "$2" 10 || return 1
	read -r c r d < <(ax_capture_counts "$2")
	[ $((c + d + $(cat "$2.unwritten"))) -eq "$r" ]
}

# ax_capture_stop PID ERR [TIMEOUT_S]: stop tcpdump PID (stderr ERR,
# started with ax_capture_ready) once the traffic before it is all in the
# capture: no receive backlog left, and tcpdump has written every packet
# its filter took (SIGUSR1 prints its counts). Fails, saying why, when it
# lost any.
ax_capture_stop() {
	local pid=$1 err=$2 t=${3:-30} c r d
	ax_until "$t" "the receive backlogs to drain" ax_backlog_empty || return 1
	if ! ax_until "$t" "tcpdump to write all its filter took" _ax_capture_caught_up "$pid" "$err"; then
		cat "$err" >&2
		return 1
	fi
	ax_stop "$pid" INT
	read -r c r d < <(ax_capture_counts "$err")
	if [ "${d:-x}" != 0 ] || [ $((c + $(cat "$err.unwritten"))) -ne "$r" ]; then
		echo "tcpdump lost packets:" >&2
		cat "$err" >&2
		return 1
	fi
}

# ax_wait_for FILE PATTERN [TIMEOUT_S]: until FILE contains PATTERN; the
# bound is in seconds of wall time ($SECONDS), not loop turns, which take
# far longer than 0.1 s under software emulation
ax_wait_for() {
	local f=$1 pat=$2 t=${3:-20} end
	end=$((SECONDS + t))
	while [ "$SECONDS" -le "$end" ]; do
		grep -q -- "$pat" "$f" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "timeout waiting for '$pat' in $f" >&2
	cat "$f" >&2 || true
	return 1
}

# ax_wait_banner PID FILE... : until one of FILEs says "Tracing" (a tool's
# banner: on stdout, or on stderr with -j), or "Injecting" (roceinject's);
# fails at once, with the files
# shown, when process PID ended first, else after AX_WAIT_BANNER_S (90).
# Bash builtins only: a process start costs 0.1-0.4 s under emulation.
ax_wait_banner() {
	local pid=$1 end f l
	shift
	end=$((SECONDS + ${AX_WAIT_BANNER_S:-90}))
	while [ "$SECONDS" -le "$end" ]; do
		for f in "$@"; do
			while IFS= read -r l; do
				[[ $l == *Tracing* || $l == Injecting* ]] && return 0
			done 2>/dev/null <"$f"
		done
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "no banner from process $pid:" >&2
	cat "$@" >&2 || true
	return 1
}

# Tools under test. Start one with
#   ax_tool_start [--out|--err] VAR OUT TIMEOUT_S READY CMD...
# CMD runs in the background (through ax_bg) with stdout in OUT and stderr
# in OUT.err; its PID goes into the variable VAR (a global: teardown may
# stop it). The call returns once a line of OUT or OUT.err (--out: only
# OUT, --err: only OUT.err) matches the extended regular expression READY
# (the tool's ready line: "Tracing", "Attached", ...), as ax_tool_wait.
# With READY empty it returns at once: start several tools, then
# ax_tool_wait for each (they load side by side).
#   ax_tool_wait [--out|--err] VAR TIMEOUT_S READY
# until that line; fails, with both files on stderr, when the tool ended
# before it or after TIMEOUT_S seconds of wall time ($SECONDS). Bash
# builtins only in the loop (a process start costs 0.1-0.4 s under
# emulation).
#   ax_tool_stop VAR [SIGNAL]
# sends SIGNAL (INT) to the PID in VAR, waits for it at most 10 s (then
# SIGKILL), empties VAR, sets AX_RC to the tool's exit status and returns
# non-zero, failing the test with the tool's stderr shown, unless the tool
# ended as asked: status 0 after INT or TERM, killed (137) after KILL.
# Never `|| true` on it in a test (tests/host/suite.bats checks): a test
# expecting another status says `ax_tool_stop X || [ "$AX_RC" -eq N ]`.
# OUT and OUT.err stay for the
# test to read. Nothing to do (status 0) when VAR is empty, so a teardown
# may stop what a failed test left running; ax_cleanup SIGKILLs it anyway.
declare -gA AX_TOOL_OUT=()
ax_tool_start() {
	local sel=()
	case $1 in --out|--err) sel=("$1"); shift ;; esac
	local var=$1 out=$2 t=$3 ready=$4
	shift 4
	ax_bg "$@" >"$out" 2>"$out.err"
	printf -v "$var" '%s' "$AX_LAST_PID"
	AX_TOOL_OUT[$var]=$out
	[ -z "$ready" ] || ax_tool_wait "${sel[@]}" "$var" "$t" "$ready"
}

ax_tool_wait() {
	local files=both
	case $1 in
	--out) files=out; shift ;;
	--err) files=err; shift ;;
	esac
	local var=$1 t=$2 ready=$3 end pid out f l gone=0
	pid=${!var}
	out=${AX_TOOL_OUT[$var]}
	local watch=("$out" "$out.err")
	[ "$files" != out ] || watch=("$out")
	[ "$files" != err ] || watch=("$out.err")
	end=$((SECONDS + t))
	while :; do
		for f in "${watch[@]}"; do
			while IFS= read -r l || [ -n "$l" ]; do
				[[ $l =~ $ready ]] && return 0
			done 2>/dev/null <"$f"
		done
		# once ended, its files are read once more: it may have printed
		# the line just before it ended
		[ "$gone" = 0 ] || break
		kill -0 "$pid" 2>/dev/null || { gone=1; continue; }
		[ "$SECONDS" -le "$end" ] || break
		sleep 0.1
	done
	if [ "$gone" = 1 ]; then
		echo "$var (PID $pid) ended before '$ready'; its stdout and stderr:" >&2
	else
		echo "timeout (${t} s) waiting for '$ready' from $var (PID $pid); its stdout and stderr:" >&2
	fi
	cat "$out" "$out.err" >&2 || true
	return 1
}

# ax_tool_ended VAR: the tool ax_tool_start started into VAR has ended
# (gone, or a zombie not reaped yet); for ax_until, before ax_tool_stop
# judges how a tool that ends by itself (interval and count) ended
ax_tool_ended() {
	local pid=${!1:-}
	[ -n "$pid" ] || return 0
	[ ! -e /proc/$pid/stat ] || [ "$(awk '{ print $3 }' /proc/$pid/stat 2>/dev/null)" = Z ]
}

ax_tool_stop() {
	local var=$1 sig=${2:-INT} pid
	pid=${!var:-}
	AX_RC=0
	[ -n "$pid" ] || return 0
	ax_stop "$pid" "$sig"
	printf -v "$var" '%s' ""
	# SIGKILL's own status is what was asked for
	[ "$sig" != KILL ] || [ "$AX_RC" -ne 137 ] || return 0
	if [ "$AX_RC" -ne 0 ]; then
		echo "$var (PID $pid) exited with $AX_RC after SIG$sig; its stderr:" >&2
		cat "${AX_TOOL_OUT[$var]:-/dev/null}.err" >&2 2>/dev/null || true
	fi
	return "$AX_RC"
}

# ax_perf_start OUT LIMIT_S[/CLIENT_LIMIT_S] PORT TOOL ARGS...: a perftest pair on the
# Soft-RoCE test bed (scripts/testbed.sh): the server `TOOL -d rxe-b -x 1
# -p PORT ARGS...`, then, once it listens on TCP PORT (a client that
# connects earlier fails), the client `TOOL -d rxe-a -x 1 -p PORT ARGS...
# 10.10.0.2` (AX_PERF_SERVER, AX_PERF_CLIENT, AX_PERF_ADDR change them).
# GID 1 (RoCE v2, IPv4), no -R (rdma_cm would loop back inside one device).
# Each runs under `timeout -k 3 LIMIT_S` (the client under CLIENT_LIMIT_S
# when given; perftest's retry_cnt 7 means "forever" on rxe) and `stdbuf -oL` (its output survives a kill), stdin
# /dev/null, stdout and stderr in OUT.srv and OUT.cli; PERF_SRV_CPU and
# PERF_CLI_CPU, when set, pin each to that CPU. Their PIDs in AX_PERF_SRV
# and AX_PERF_CLI, and added to AX_PERF_PIDS (ax_perf_stop) and AX_PIDS.
# Fails, with the server's output, when PORT is taken already or the
# server ends or does not listen within AX_PERF_WAIT_S (60) seconds. The
# caller waits for the client: its exit, or a line of OUT.cli.
ax_perf_start() {
	local out=$1 slimit=${2%/*} climit=${2#*/} port=$3 tool=$4 end
	shift 4
	if ax_tcp_listening "$port"; then
		echo "TCP port $port is taken" >&2
		return 1
	fi
	local pin_srv=() pin_cli=()
	[ -z "${PERF_SRV_CPU:-}" ] || pin_srv=(taskset -c "$PERF_SRV_CPU")
	[ -z "${PERF_CLI_CPU:-}" ] || pin_cli=(taskset -c "$PERF_CLI_CPU")
	timeout -k 3 "$slimit" "${pin_srv[@]}" stdbuf -oL "$tool" -d "${AX_PERF_SERVER:-rxe-b}" \
		-x 1 -p "$port" "$@" </dev/null >"$out.srv" 2>&1 &
	AX_PERF_SRV=$!
	AX_PIDS+=("$AX_PERF_SRV")
	AX_PERF_PIDS+=("$AX_PERF_SRV")
	end=$((SECONDS + ${AX_PERF_WAIT_S:-60}))
	until ax_tcp_listening "$port"; do
		if ! kill -0 "$AX_PERF_SRV" 2>/dev/null || [ "$SECONDS" -gt "$end" ]; then
			echo "$tool server did not listen on TCP port $port:" >&2
			cat "$out.srv" >&2
			return 1
		fi
		sleep 0.2
	done
	timeout -k 3 "$climit" "${pin_cli[@]}" stdbuf -oL "$tool" -d "${AX_PERF_CLIENT:-rxe-a}" \
		-x 1 -p "$port" "$@" "${AX_PERF_ADDR:-10.10.0.2}" </dev/null >"$out.cli" 2>&1 &
	AX_PERF_CLI=$!
	AX_PIDS+=("$AX_PERF_CLI")
	AX_PERF_PIDS+=("$AX_PERF_CLI")
}

# ax_perf_stop: every perftest ax_perf_start started ended, gently (SIGTERM:
# timeout passes it on to perftest, and SIGKILLs it 3 s later)
ax_perf_stop() {
	local pid
	for pid in "${AX_PERF_PIDS[@]}"; do
		ax_stop "$pid" TERM
	done
	AX_PERF_PIDS=()
}

ax_cleanup() {
	local pid ns
	for pid in "${AX_PIDS[@]}"; do
		kill -s KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	AX_PIDS=()
	AX_PERF_PIDS=()
	for ns in "${AX_NETNS[@]}"; do
		ip netns del "$ns" 2>/dev/null || true
	done
	AX_NETNS=()
}

# ax_send_roce NETNS DST COUNT [OPCODE_HEX] [PORT]: COUNT UDP datagrams to
# DST:PORT (default 4791) carrying a valid-looking BTH (SEND_ONLY, AckReq,
# dest QP 0x12, PSN = sequence number) + 16 bytes + zero ICRC, from one
# socket (build/udpflood; a process per datagram took 0.1 s each in the
# emulated guest). Fails unless every datagram went out.
ax_send_roce() {
	local ns=$1 dst=$2 n=$3 op=${4:-04} port=${5:-4791}
	ip netns exec "$ns" "$AX_BUILD/udpflood" -o "$op" "$dst" "$port" "$n" > /dev/null
}

ax_need_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
}

# Suites that can run only somewhere (the Soft-RoCE guest, a host with
# rdma_rxe): bats 1.8 cannot `skip` from setup_file (it reports "setup_file
# failed"), so setup_file records why the file cannot run and setup() skips
# each test with that reason.
#   setup_file() { ax_file_needs --rxe rdma ib_write_bw || return 0; ...; }
#   setup() { ax_file_skip; ...; }
# --rxe: the rdma_rxe module; --vm: inside tests/vm/run (AGENTXDP_VM=1);
# other words: commands that must be installed, or built paths (containing
# a slash) that must be executable.
ax_file_needs() {
	local why= w
	[ "$(id -u)" -eq 0 ] || why="needs root"
	for w in "$@"; do
		[ -z "$why" ] || break
		case $w in
		--rxe) modinfo rdma_rxe >/dev/null 2>&1 || why="no rdma_rxe module for $(uname -r)" ;;
		--vm) [ -n "${AGENTXDP_VM:-}" ] || why="runs in the Soft-RoCE guest (tests/vm/run-suites)" ;;
		*/*) [ -x "$w" ] || why="${w#"$AX_ROOT"/} not built (make)" ;;
		*) command -v "$w" >/dev/null || why="$w not installed" ;;
		esac
	done
	export AX_FILE_SKIP=$why
	[ -z "$why" ]
}

# ax_host_only [WHY]: in a test of user-space logic the host tier covers;
# the guest emulates its CPU, so there the test skips, saying WHY
ax_host_only() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "${1:-user-space logic, tested on the host}"
}

# ax_file_needs_captures WHY: in setup_file after ax_file_needs, for suites
# that build captures with scapy (/usr/bin/python3: the python3 on PATH may
# lack it) and read them back on the host; WHY says why the guest skips
# (emulated, scapy takes minutes). False when the file cannot run.
ax_file_needs_captures() {
	if [ -n "${AGENTXDP_VM:-}" ]; then
		export AX_FILE_SKIP="$1: the host runs it"
	elif ! /usr/bin/python3 -c 'import scapy.contrib.roce, scapy.contrib.erspan' 2>/dev/null; then
		export AX_FILE_SKIP="python3-scapy not installed"
	fi
	[ -z "${AX_FILE_SKIP:-}" ]
}

# in setup(): skip when setup_file found the file cannot run here
ax_file_skip() {
	[ -z "${AX_FILE_SKIP:-}" ] || skip "$AX_FILE_SKIP"
}

# in teardown/teardown_file: true when the file ran (so there is state to undo)
ax_file_ran() {
	[ -z "${AX_FILE_SKIP:-}" ]
}

# ax_tools: every tool, one a line, what the Makefile builds and installs
# (its TOOLS): each tools/<tool>/ with <tool>.bpf.c and its loader
# <tool>.c, then each with <tool>.uses instead (a tool on other tools' BPF
# objects: rocediag)
ax_tools() {
	local f t
	for f in "$AX_ROOT"/tools/*/*.bpf.c "$AX_ROOT"/tools/*/*.uses; do
		[ -e "$f" ] || continue
		t=${f##*/}
		t=${t%.bpf.c}
		t=${t%.uses}
		[ "$f" = "$AX_ROOT/tools/$t/${f##*/}" ] && [ -f "$AX_ROOT/tools/$t/$t.c" ] && echo "$t"
	done
}

# ax_wait_udp NETNS PORT: until a UDP socket is bound to PORT in NETNS
# (IPv4; at most 60 s). After starting rocegen's responder: a requester
# that starts before it is bound loses its first requests (port
# unreachable) and retransmits them.
ax_wait_udp() {
	local hex end=$((SECONDS + 60))
	printf -v hex ':%04X ' "$2"
	while [ "$SECONDS" -le "$end" ]; do
		ip netns exec "$1" cat /proc/net/udp | grep -q "$hex" && return 0
		sleep 0.1
	done
	echo "nothing bound to UDP $2 in $1" >&2
	return 1
}

# ax_tcp_listening PORT: something in this namespace listens on TCP PORT
# (IPv4 or IPv6)
ax_tcp_listening() {
	local hex f _ addr state
	printf -v hex '%04X' "$1"
	for f in /proc/net/tcp /proc/net/tcp6; do
		while read -r _ addr _ state _; do
			[[ $addr == *":$hex" && $state == 0A ]] && return 0
		done 2>/dev/null <"$f"
	done
	return 1
}

# ax_columns_aligned FILE HEADER_PREFIX COLUMN...: the first line of FILE
# starting with HEADER_PREFIX is a table header; every line after it that
# starts like a row (not indented, not another header, not empty) has each
# named COLUMN's text start where the header's does: a blank before it, and
# a non-blank at it. Prints the offending line on failure.
ax_columns_aligned() {
	local f=$1 head=$2
	shift 2
	awk -v head="$head" -v cols="$*" '
		!h && index($0, head) == 1 { h = $0; n = split(cols, c, " ")
			for (i = 1; i <= n; i++) { p[i] = index(h, c[i])
				if (!p[i]) { print "no column " c[i] " in: " h; bad = 1 } }
			next }
		h && $0 != "" && $0 !~ /^ / && index($0, head) != 1 && $0 !~ /^WARNING/ {
			rows++
			for (i = 1; i <= n; i++)
				if ((p[i] > 1 && substr($0, p[i] - 1, 1) != " ") ||
				    substr($0, p[i], 1) == " " || substr($0, p[i], 1) == "") {
					print "column " c[i] " misaligned: " $0; bad = 1; break
				}
		}
		END { if (!h) print "no header " head; exit (bad || !h || !rows) }' "$f" >&2
}

# ax_ftrace_bursts TRACE PID FUNC: the calls of FUNC by thread PID in an
# ftrace function-tracer file TRACE, grouped into bursts (calls 0.4 s
# apart or more begin a new one): one count a line, in time order
ax_ftrace_bursts() {
	awk -v pid="$2" -v fn="$3" '{
		split($1, tp, "-"); if (tp[length(tp)] != pid) next
		hit = 0
		for (i = 2; i <= NF; i++) {
			if ($i ~ /^[0-9]+\.[0-9]+:$/) t = $i + 0
			if ($i == fn) hit = 1
		}
		if (!hit) next
		if (n && t - last > 0.4) { print c; c = 0 }
		c++; n++; last = t
	} END { if (c) print c }' "$1"
}
