# shellcheck shell=bash
# rocelat -r's three builds of one source: the native one (-r's default,
# tools/rocelat/rocelat_native.c), the kernel's bpf_loop build and its build for
# kernels without bpf_loop (before 5.17; bounded loops,
# rocelat_noloop.bpf.o), forced on a kernel that has bpf_loop with the
# loader's test hook ROCELAT_FORCE_NO_BPF_LOOP.

# rl_bounded_same PCAP [NATIVE_OUT]: `rocelat -r PCAP -F -j --nanoseconds`
# run natively (the default: NATIVE_OUT, else a run of it now), through
# the kernel's bpf_loop build (--in-kernel) and through its bounded build
# print the same, byte for byte, but for the read time and rates; echoes
# the samples timed. The bounded build's report stays in
# $BATS_TEST_TMPDIR/bounded.out, its -v log in bounded.out.err (with
# ROCELAT_VERIFIER_STATS set, each program's verifier statistics).
# the capture object's figures that depend on the machine's speed
RL_READ_TIME='del(.read_seconds, .packets_per_s, .mb_per_s)'

rl_bounded_same() {
	local pcap=$1 want=${2:-} got=$BATS_TEST_TMPDIR/bounded.out
	if [ -z "$want" ]; then
		want=$BATS_TEST_TMPDIR/native.out
		"$RL" -r "$pcap" -F -j --nanoseconds > "$want"
	fi
	"$RL" --in-kernel -r "$pcap" -F -j --nanoseconds > "$got.loop"
	diff <(jq -c "$RL_READ_TIME" "$want") <(jq -c "$RL_READ_TIME" "$got.loop") >&2
	ROCELAT_FORCE_NO_BPF_LOOP=1 "$RL" --in-kernel -v -r "$pcap" -F -j --nanoseconds > "$got" 2> "$got.err" || {
		grep -v '^libbpf: ' "$got.err" >&2
		return 1
	}
	# the build under test is the one that ran
	grep -q 'loading the build with bounded loops' "$got.err"
	diff <(jq -c "$RL_READ_TIME" "$want") <(jq -c "$RL_READ_TIME" "$got") >&2
	jq -r 'select(.type=="counters") | .samples' "$got"
}
