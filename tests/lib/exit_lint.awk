# The suite's rule on exit statuses: a test never throws away the status
# of the tool it stopped. Prints FILE:LINE: TEXT for each `|| true` after
# ax_tool_stop or a stop_* wrapper outside a teardown function (where a
# failed test's leftover is stopped and the test is judged already).
# Usage: awk -f tests/lib/exit_lint.awk FILE.bats...
FNR == 1 { ctx = "" }
/^@test|^[A-Za-z_][A-Za-z0-9_]*\(\) *\{|^function / { ctx = $0 }
/(ax_tool_stop|[^A-Za-z_]stop_[a-z]+|^[ \t]*stop_[a-z]+)[^#]*\|\|[ \t]*(true|:)/ {
	if (ctx !~ /^(teardown|teardown_file)\(\)/)
		printf "%s:%d: %s\n", FILENAME, FNR, $0
}
