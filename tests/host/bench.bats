#!/usr/bin/env bats
# make bench in quick mode (bench/run --quick): every bench runs and prints
# its figures, each a real, non-zero, well-formed number with its spread
# over the rounds, and the closing table has every figure. Never the
# numbers' values: a benchmark measures, it does not pass or fail on one.
# The guest parts (rxeqp, nfdrop's fexit path) are skipped on the host in
# quick mode, with the reason in the table.

load ../lib/common


# the namespaces and processes a bench would leave behind
leftovers() {
	ip netns list | awk '{ print $1 }' | grep -E '^ax(br|lb|nb|ib|ls)[0-9]+[ab]$' || true
	pgrep -f "$AX_BUILD/bench/bpfstat hold" || true
	pgrep -f "$AX_BUILD/bench/rocelat_bench xdp-pass " || true
	pgrep -f "$AX_BUILD/bench/tcpass " || true
}

setup_file() {
	ax_file_needs bpftool jq nft "$AX_BUILD/bench/rocelat_bench" "$AX_BUILD/bench/bpfstat" \
		"$AX_BUILD/bench/tcpass" || return 0
	if [ -n "${AGENTXDP_VM:-}" ]; then
		# make bench runs on a host; its guest parts are make bench's own
		export AX_FILE_SKIP="the benches' quick mode runs on the host"
		return 0
	fi
	leftovers >"$BATS_FILE_TMPDIR/before"
	# once for the whole file: the tests read what this run printed, and
	# its own summary (not the one of a make bench running meanwhile);
	# a failing run is a failing test below, not a failed setup_file
	local rc=0
	AX_BENCH_SUMMARY=$BATS_FILE_TMPDIR/summary.tsv "$AX_ROOT/bench/run" --quick >"$BATS_FILE_TMPDIR/out" 2>&1 || rc=$?
	echo $rc >"$BATS_FILE_TMPDIR/rc"
	leftovers >"$BATS_FILE_TMPDIR/after"
}

setup() {
	ax_file_skip
	OUT=$BATS_FILE_TMPDIR/out
	SUMMARY=$BATS_FILE_TMPDIR/summary.tsv
}

# figure BENCH NAME: that figure's row of the closing table, well-formed:
# median, min and max numbers above zero, min <= median <= max, a target
figure() {
	local row
	row=$(awk -F'\t' -v b="$1" -v f="$2" '$1 == b && $2 == f' "$SUMMARY")
	[ -n "$row" ] || { echo "no figure '$2' of $1 in $SUMMARY:" >&2; cat "$SUMMARY" >&2; return 1; }
	awk -F'\t' '
	function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ && x + 0 > 0 }
	{ ok = num($3) && num($4) && num($5) && $4 + 0 <= $3 + 0 && $3 + 0 <= $5 + 0 &&
		$6 ~ /^(-|<= [0-9.]+|>= [0-9.]+)$/ }
	END { exit !ok }' <<<"$row" || { echo "malformed: $row" >&2; return 1; }
}

@test "bench/run --quick runs every bench and exits 0" {
	cat "$OUT"
	[ "$(cat "$BATS_FILE_TMPDIR/rc")" -eq 0 ]
	# every bench/*.sh, offline's and rocelat_scale's too
	local f n=0
	for f in "$AX_ROOT"/bench/*.sh; do
		grep -q "^=== bench/$(basename "$f"): [0-9]* s$" "$OUT" ||
			{ echo "bench/$(basename "$f") did not run" >&2; false; }
		n=$((n + 1))
	done
	[ "$n" -ge 7 ]
	! grep -q 'failed' "$OUT"
	grep -q '^=== summary' "$OUT"
}

@test "rocelat: cost per packet, steady state in clock reads and packets per second, each with its spread" {
	figure rocelat "non-RoCE packet / empty XDP"
	figure rocelat "request / empty XDP, one call each"
	figure rocelat "ACK / empty XDP, one call each"
	figure rocelat "own cost per request, clock reads"
	figure rocelat "own cost per ACK, clock reads"
	figure rocelat "timing floor / empty program"
	figure rocelat "pps rocelat / empty XDP"
	figure rocelat "pps rocelat / no program"
	figure rocelat "pps rocelat --skb-mode / no program"
	# every steady-state request was answered and timed, in every round
	grep -qE '^  steady-state samples all taken \(1 = yes\): +1 \(1\.\.1\)$' "$OUT"
}

@test "rxedrop: counts and events mode against the bpftrace one-liner, and what each counted" {
	command -v bpftrace >/dev/null || skip "bpftrace not installed"
	figure rxedrop "counts mode / bpftrace one-liner"
	figure rxedrop "events mode / bpftrace one-liner"
	# ns per call of each mode and of the one-liner beside it, non-zero
	for m in "counts mode" "bpftrace one-liner" "events mode" "one-liner beside it"; do
		grep -qE "^  $m: +[0-9.]*[1-9][0-9.]* \([0-9.]+\.\.[0-9.]+\)$" "$OUT"
	done
	# what each mode counted and printed, in every round; counts mode
	# counted what the rule's own counter says it dropped, in every round
	grep -qE '^counts mode counted ([1-9][0-9]*) \(([1-9][0-9]*)\.\.([1-9][0-9]*)\) of \1 \(\2\.\.\3\) the rule dropped \(ratio 1\.0000 \(1\.0000\.\.1\.0000\)\); events mode printed [1-9][0-9]* \([1-9][0-9]*\.\.[1-9][0-9]*\), lost [0-9]+ \([0-9]+\.\.[0-9]+\)$' "$OUT"
}

@test "nfdrop: BPF time per packet against the flood's own, for the drop and the pass flood" {
	figure nfdrop "drop flood: BPF time / flood's (host, kfree_skb)"
	figure nfdrop "pass flood: BPF time / flood's (host, kfree_skb)"
	# the drop floods' packets were counted by nfdrop
	grep -qE '^nfdrop counted [1-9][0-9]* of [1-9][0-9]* drop flood packets$' "$OUT"
}

@test "roceinject: RoCE packets it does not select and other packets, against an empty tc program on the same hook" {
	figure roceinject "RoCE not selected / empty tc program"
	figure roceinject "not RoCE / empty tc program"
	# ns per call of both programs, non-zero, for both kinds of traffic
	grep -qE '^  RoCE, not selected: +empty [0-9.]*[1-9][0-9.]* \([0-9.]+\.\.[0-9.]+\), roceinject [0-9.]*[1-9][0-9.]* ' "$OUT"
	grep -qE '^  not RoCE \(UDP 4793\): +empty [0-9.]*[1-9][0-9.]* \([0-9.]+\.\.[0-9.]+\), roceinject [0-9.]*[1-9][0-9.]* ' "$OUT"
	# it saw the requests as RoCE in every round, and selected none
	grep -qE '^roceinject saw [1-9][0-9]* \([1-9][0-9]*\.\.[1-9][0-9]*\) RoCE packets a round and selected 0 \(0\.\.0\)$' "$OUT"
}

@test "the guest parts are skipped in quick mode, and the closing table says why" {
	awk -F'\t' '$1 == "rxeqp" && $2 ~ /^skipped: quick mode: needs the Soft-RoCE guest/' "$SUMMARY" | grep -q .
	awk -F'\t' '$1 == "nfdrop" && $2 ~ /^skipped: fexit path: quick mode/' "$SUMMARY" | grep -q .
	grep -qE '^rxeqp +skipped: quick mode' "$OUT"
}

# the closing table of OUT: its rows, between the header and the totals
table_rows() {
	sed -n '/^BENCH  *FIGURE/,/^=== targets met/p' "$1" | sed '1d; $d'
}

@test "the closing table lists every figure of the summary, one row each, with its spread, target and verdict" {
	sed -n '/^=== summary/,$p' "$OUT"
	grep -qE '^BENCH +FIGURE +MEDIAN +MIN\.\.MAX +SPREAD +TARGET +MET +LAST RUN$' "$OUT"
	[ "$(table_rows "$OUT" | wc -l)" -eq "$(wc -l <"$SUMMARY")" ]
	# a measured row: spread in %, marked ~ over 15%; a target with its
	# verdict, or none; nothing to compare with (no last quick run here)
	local measured targets met noisy
	measured=$(table_rows "$OUT" | grep -vE '^[a-z]+ +(skipped|FAILED)')
	[ -n "$measured" ]
	awk '{ n = NF } $(n) != "-" { bad = 1 }
	$(n - 1) ~ /^(yes|NO)$/ { if ($(n - 2) !~ /^[0-9.]+$/ || $(n - 3) !~ /^(<=|>=)$/ || $(n - 4) !~ /^[0-9]+%~?$/) bad = 1; next }
	$(n - 1) != "-" || $(n - 2) !~ /^[0-9]+%~?$/ { bad = 1 }
	END { exit bad }' <<<"$measured"
	targets=$(grep -cE ' (yes|NO) +-$' <<<"$measured")
	met=$(grep -cE ' yes +-$' <<<"$measured")
	noisy=$(grep -cE ' [0-9]+%~ ' <<<"$measured")
	grep -qE "^=== targets met: $met of $targets; spread over 15% \(~\): $noisy of $(wc -l <<<"$measured") figures" "$OUT"
	# every target not met is named after the totals
	[ "$(sed -n '/^=== targets met/,$p' "$OUT" | grep -c '^    .*, target [<>]= ')" -eq $((targets - met)) ]
}

@test "bench/run --table prints the last run's table again, with each figure's change since the run before" {
	local s=$BATS_TEST_TMPDIR/summary.tsv
	cp "$SUMMARY" "$s"
	# the run before: every figure twice what it is now
	awk -F'\t' -v OFS='\t' '$3 ~ /^[0-9.]+$/ { $3 = $3 * 2 } 1' "$SUMMARY" >"$s.last"
	run env AX_BENCH_SUMMARY="$s" "$AX_ROOT/bench/run" --table
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(table_rows <(echo "$output") | wc -l)" -eq "$(wc -l <"$SUMMARY")" ]
	# nothing measured, and every measured row compared: -50%
	! grep -q '^=== bench/' <<<"$output"
	[ "$(table_rows <(echo "$output") | grep -vE '^[a-z]+ +(skipped|FAILED)' | grep -cvE ' [0-9.]+ -50%$')" -eq 0 ]
}

@test "bench/run NAME runs that bench alone, its figures in the table; an unknown name is one line, exit 2" {
	local s=$BATS_TEST_TMPDIR/summary.tsv
	run env AX_BENCH_SUMMARY="$s" "$AX_ROOT/bench/run" --quick roceinject
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^=== bench/' <<<"$output")" -eq 2 ]
	grep -qE '^=== bench/roceinject.sh: [0-9]+ s$' <<<"$output"
	[ "$(cut -f1 "$s" | sort -u)" = roceinject ]
	[ "$(table_rows <(echo "$output") | wc -l)" -eq "$(wc -l <"$s")" ]
	run "$AX_ROOT/bench/run" nosuch
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"no bench/nosuch.sh"* ]]
}

@test "the benches leave no namespace and no process behind" {
	diff "$BATS_FILE_TMPDIR/before" "$BATS_FILE_TMPDIR/after"
}
