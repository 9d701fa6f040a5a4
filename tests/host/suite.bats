#!/usr/bin/env bats
# The test suite's own rules, read from its sources: no test throws away
# the exit status of a tool it stopped (a crash or an error at exit would
# pass), and every README sentence naming a test as its check is in
# tests/README.md's "Checked by" table with tests that exist. Source
# checks, on the host only.

load ../lib/common

setup() {
	[ -z "${AGENTXDP_VM:-}" ] || skip "host-only: a check of the test sources"
}

@test "no test ignores how a tool it stopped ended: no '|| true' on ax_tool_stop outside teardown" {
	run awk -f "$AX_ROOT/tests/lib/exit_lint.awk" "$AX_ROOT"/tests/host/*.bats "$AX_ROOT"/tests/vm/*.bats
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "the exit-status lint finds a planted '|| true' in a test and allows it in teardown" {
	local f=$BATS_TEST_TMPDIR/planted.bats ok='|| true' ok2='|| :'
	# written piecewise: bats would take a test line of this file as its own
	printf '%s\n' 'teardown() {' "	ax_tool_stop RL_PID $ok" '}' \
		"@test \"planted\" {" "	ax_tool_stop RL_PID $ok" "	stop_rocelat KILL $ok2" \
		'	ax_tool_stop RL_PID' '}' > "$f"
	run awk -f "$AX_ROOT/tests/lib/exit_lint.awk" "$f"
	echo "$output"
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} == "$f:5: "* ]]
	[[ ${lines[1]} == "$f:6: "* ]]
}

@test "every test file README, CONTRIBUTING and the man pages name as a claim's check exists" {
	local f n=0 missing=()
	while read -r f; do
		n=$((n + 1))
		[ -e "$AX_ROOT/$f" ] || missing+=("$f")
	done < <(grep -ho 'tests/[A-Za-z0-9_/.-]*\.\(bats\|c\|py\|sh\)' \
		"$AX_ROOT/README.md" "$AX_ROOT/CONTRIBUTING.md" "$AX_ROOT"/man/*.h2m | sort -u)
	printf 'named, not in the tree: %s\n' "${missing[@]}" >&2
	# README names a score of them: the grep read what it should
	[ "$n" -ge 20 ]
	[ "${#missing[@]}" -eq 0 ]
}

@test "every README sentence that names a test as its check is in tests/README.md's table, and its tests exist" {
	run python3 "$AX_ROOT/tests/lib/doc_claims.py" "$AX_ROOT"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *" rows, "*" mentions of test files in README" ]]
}

@test "the claims check finds a README claim outside the table, a missing test file and a test name no file has" {
	local r=$BATS_TEST_TMPDIR/root
	mkdir -p "$r/tests"
	ln -s "$AX_ROOT"/tests/host "$AX_ROOT"/tests/vm "$AX_ROOT"/tests/unit "$AX_ROOT"/tests/lib "$r/tests/"
	cp "$AX_ROOT/tests/README.md" "$r/tests/"
	{ cat "$AX_ROOT/README.md"; echo; echo 'Planted: checked by `tests/host/demo.bats` and by'
	  echo '`tests/host/nosuch.bats`; `tests/host/rxedrop.bats` ("no such test") too.'; } > "$r/README.md"
	run python3 "$AX_ROOT/tests/lib/doc_claims.py" "$r"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 4 ]
	[[ ${lines[0]} == "README names tests/host/demo.bats outside the table: "* ]]
	[[ ${lines[1]} == "README names tests/host/nosuch.bats outside the table: "* ]]
	[[ ${lines[2]} == "README names tests/host/rxedrop.bats outside the table: "* ]]
	[[ ${lines[3]} == "tests/host/rxedrop.bats has no test named like 'no such test'" ]]
	# a row whose test is gone
	sed -i 's/`-w: every RoCE drop in the file/`-w: every RoCE drop in a file/' "$r/tests/README.md"
	cp "$AX_ROOT/README.md" "$r/README.md"
	run python3 "$AX_ROOT/tests/lib/doc_claims.py" "$r"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == "tests/host/rocediag.bats has no test '-w: every RoCE drop in a file"* ]]
}
