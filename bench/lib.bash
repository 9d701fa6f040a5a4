# Shared by the bench/*.sh scripts; source it after tests/lib/common.bash.
#
# AX_BENCH_QUICK=1 (bench/run --quick): every bench in seconds, with small
# floods and call counts. The figures are real, and noisier.
# AX_BENCH_SUMMARY=FILE: each bench appends one line per figure there for
# bench/run's closing table (bench_result). In the Soft-RoCE guest it must
# be in the checkout (bench/run gives the guest parts a file there).
# Rounds: every bench repeats its measurement ROUNDS times (3), rounds of
# the conditions interleaved, and reports the median with min..max.

# a bench that cannot measure says where, instead of ending silently
set -E
trap 'echo "${0##*/}: line $LINENO: \"$BASH_COMMAND\" failed" >&2' ERR

BENCH_QUICK=${AX_BENCH_QUICK:-0}
ROUNDS=${ROUNDS:-3}
BENCH_STATS=$AX_BUILD/bench/bpfstat

# Floods are sent from one CPU and everything else runs on another, where
# there are two (unpinned, eight floods in a row here ranged 408k..573k
# packets per second; pinned, 466k..550k).
# BENCH_SEND / BENCH_ASIDE: the prefix that runs a command on the flood's
# CPU (the last one) / off it (receivers, tracers' readers); empty where
# there is one CPU. (Arrays, not functions: they go after ip netns exec.)
BENCH_SEND=() BENCH_ASIDE=()
if [ "$(nproc)" -ge 2 ]; then
	BENCH_SEND=(taskset -c $(($(nproc) - 1)))
	BENCH_ASIDE=(taskset -c 0-$(($(nproc) - 2)))
fi

# bench_size FULL QUICK: the size of a measurement in this mode
bench_size() {
	if [ "$BENCH_QUICK" = 1 ]; then echo "$2"; else echo "$1"; fi
}

declare -A BENCH_SAMPLES=()

# bench_add KEY VALUE: one round's figure
bench_add() {
	BENCH_SAMPLES[$1]="${BENCH_SAMPLES[$1]:-} $2"
}

# bench_stat KEY: "median min max" of its rounds ("- - -" for none), in
# one process: each one costs a good part of a second in the guest
bench_stat() {
	awk -v s="${BENCH_SAMPLES[$1]:-}" 'BEGIN {
		n = split(s, v, " ")
		if (!n) { print "- - -"; exit }
		for (i = 2; i <= n; i++)	# insertion sort: a few rounds
			for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		print v[int((n + 1) / 2)], v[1], v[n] }'
}

# bench_pick KEY median|min|max
bench_pick() {
	local med min max
	read -r med min max < <(bench_stat "$1")
	case $2 in
	min) echo "$min" ;;
	max) echo "$max" ;;
	*) echo "$med" ;;
	esac
}

# bench_fig KEY: "median (min..max)"
bench_fig() {
	local med min max
	read -r med min max < <(bench_stat "$1")
	echo "$med ($min..$max)"
}

# bench_ratio A B [DECIMALS]: A / B with two decimals or DECIMALS (0 when
# B is 0)
bench_ratio() {
	awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN { printf "%.*f", d, b ? a / b : 0 }'
}

# bench_result BENCH FIGURE KEY TARGET: a figure of the closing table
# (TARGET like "<= 2.5", ">= 0.9", or "-" for a figure shown as it is)
bench_result() {
	local med min max
	[ -n "${AX_BENCH_SUMMARY:-}" ] || return 0
	read -r med min max < <(bench_stat "$3")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$med" "$min" "$max" "$4" >>"$AX_BENCH_SUMMARY"
}

# bench_skipped BENCH WHY: the closing table says the bench did not run
bench_skipped() {
	echo "$1 bench: skipped, $2"
	[ -z "${AX_BENCH_SUMMARY:-}" ] ||
		printf '%s\tskipped: %s\t-\t-\t-\t-\n' "$1" "$2" >>"$AX_BENCH_SUMMARY"
}

# bench_stats_on: BPF run-time statistics on until ax_cleanup (bpfstat
# hold: immune to another process writing kernel.bpf_stats_enabled)
bench_stats_on() {
	local out
	out=$(mktemp)
	ax_bg "$BENCH_STATS" hold >"$out"
	ax_wait_for "$out" enabled 10 >/dev/null
	rm -f "$out"
}

# bench_prog_ids PID: the BPF programs PID holds (its program and link
# file descriptors name them): ours, whatever else runs on the machine
bench_prog_ids() {
	{ grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null || true; } | awk '{ print $2 }' | sort -un
}

# bench_prog_stats ID...: "id run_time_ns run_cnt name" of each
bench_prog_stats() {
	"$BENCH_STATS" show "$@"
}

# bench_calls ID...: run_cnt summed
bench_calls() {
	bench_prog_stats "$@" | awk '{ s += $3 } END { print s + 0 }'
}

# bench_wait_calls N ID...: until the programs ran N times (a flood's
# packets are freed in softirq, after the sender returned), at most 10 s
bench_wait_calls() {
	local n=$1 end=$((SECONDS + 10))
	shift
	while [ "$(bench_calls "$@")" -lt "$n" ] && [ "$SECONDS" -le "$end" ]; do
		sleep 0.1
	done
}
