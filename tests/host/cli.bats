#!/usr/bin/env bats
# The command line's rough edges, as a new user meets them: Ctrl-C at a
# terminal, error prefixes, an interval given to -r, a bad --sort key, and
# rocegen's option prefixes and --usage.

bats_require_minimum_version 1.5.0
load ../lib/common

teardown() {
	ax_cleanup
}

@test "Ctrl-C at a terminal: the last table starts on a line of its own, not after ^C" {
	ax_need_root
	local out
	# rxedrop needs no interface; its table ends the run
	run python3 "$AX_ROOT/tests/lib/pty_interrupt.py" 30 "$AX_BUILD/rxedrop"
	echo "$output" | cat -A >&2
	[ "$status" -eq 0 ]
	out=${output//$'\r'/}
	# the terminal echoed ^C where the cursor was; the table header follows
	# on the next line
	grep -qx '\^C' <<< "$out"
	[ "$(grep -A1 -x '\^C' <<< "$out" | tail -1 | awk '{ print $1 }')" = LOCATION ]
	! grep -q '\^C.' <<< "$out"
}

@test "Ctrl-C without a terminal: no extra empty line" {
	ax_need_root
	local out=$BATS_TEST_TMPDIR/out
	ax_tool_start RXD_PID "$out" 30 'Hit Ctrl-C' "$AX_BUILD/rxedrop"
	ax_tool_stop RXD_PID
	[ "$AX_RC" -eq 0 ]
	[ "$(sed -n 2p "$out" | awk '{ print $1 }')" = LOCATION ]
}

@test "option errors carry the program's short name, as every other error" {
	local t
	for t in $(ax_tools); do
		run "$AX_BUILD/$t" --no-such-option
		[ "$status" -eq 1 ]
		[ "${lines[0]}" = "$t: unrecognized option '--no-such-option'" ] ||
			{ echo "$t: ${lines[0]}" >&2; false; }
		run "$AX_BUILD/$t" --roce-port 0
		[ "$status" -eq 1 ]
		[[ "${lines[0]}" == "$t: invalid RoCE port: 0 "* ]] || { echo "$t: ${lines[0]}" >&2; false; }
	done
	run "$AX_BUILD/rocegen" requester --no-such-option
	[ "$status" -eq 1 ]
	[ "$output" = "rocegen: unknown option '--no-such-option' (see rocegen --help)" ]
}

@test "rocelat -r FILE 5: an interval with -r is a one-line error, not '5: No such file'" {
	run "$AX_BUILD/rocelat" -r /nonexistent.pcap 5
	[ "$status" -eq 1 ]
	[ "$output" = "rocelat: 5: no such capture file; an interval and count apply to live tracing, not -r" ]
	# a file whose name is a number is still a file
	cp "$AX_ROOT/samples/rocegen-3flows.pcap" "$BATS_TEST_TMPDIR/5"
	cd "$BATS_TEST_TMPDIR"
	run "$AX_BUILD/rocelat" -r 5
	[ "$status" -eq 0 ]
	[[ "$output" == *"round trip: "*" samples, "* ]]
}

@test "rxeqp --sort: a bad key lists the valid ones, which all work" {
	local keys k
	run "$AX_BUILD/rxeqp" --sort latency
	[ "$status" -eq 1 ]
	[[ "$output" =~ ^rxeqp:\ invalid\ sort\ key:\ latency\ \(want\ (.*)\)$ ]]
	keys=$(sed -e 's/,//g' -e 's/ or / /' <<< "${BASH_REMATCH[1]}")
	[ "$(wc -w <<< "$keys")" -eq 5 ]
	# each listed key is one its --help names, and the parser takes it
	for k in $keys; do
		"$AX_BUILD/rxeqp" --help | grep -q -- "--sort=KEY .*$k" ||
			"$AX_BUILD/rxeqp" --help | grep -A2 -- "--sort=KEY" | grep -qw "$k"
		run "$AX_BUILD/rxeqp" --sort "$k" --no-such-option
		[ "$output" = "rxeqp: unrecognized option '--no-such-option'" ] || [[ "$output" == "rxeqp: unrecognized option '--no-such-option'"$'\n'* ]]
	done
}

@test "rocegen: unique option prefixes work per role, ambiguous ones name the candidates; --usage" {
	local r=$AX_BUILD/rocegen
	run "$r" requester -d 192.0.2.1 --flow 3
	[ "$status" -eq 1 ]
	[ "$output" = "rocegen: option '--flow' is ambiguous: --flows, --flow-stats" ]
	# --coun is --count for the requester (count-only is the responder's):
	# it is parsed (a bad value says so under the full name)
	run "$r" requester -d 192.0.2.1 --coun x
	[ "$status" -eq 1 ]
	[[ "$output" == "rocegen: "*"--count"* ]]
	[[ "$output" != *"unknown option"* ]]
	run "$r" requester -d 192.0.2.1 --flows-x 3
	[ "$status" -eq 1 ]
	[ "$output" = "rocegen: unknown option '--flows-x' (see rocegen --help)" ]
	run "$r" requester -d 192.0.2.1 --coalesce 2
	[ "$output" = "rocegen: --coalesce is a responder option" ]
	run "$r" responder --dst 192.0.2.1
	[ "$output" = "rocegen: --dst is a requester option" ]
	# --usage: the two usage lines of --help, exit 0, before or after a role
	run "$r" --usage
	[ "$status" -eq 0 ]
	[ "$output" = "$("$r" --help | sed -n '1,/^$/p' | sed '$d')" ]
	[ "${#lines[@]}" -eq 2 ]
	run "$r" requester --usage
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
}
