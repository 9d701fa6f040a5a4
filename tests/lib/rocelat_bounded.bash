# shellcheck shell=bash
# rocelat's build for kernels without bpf_loop (before 5.17; bounded loops,
# rocelat_noloop.bpf.o), forced on a kernel that has bpf_loop with the
# loader's test hook ROCELAT_FORCE_NO_BPF_LOOP, against the bpf_loop build.

# rl_bounded_same PCAP [LOOP_OUT]: `rocelat -r PCAP -F -j --nanoseconds`
# with the bounded build prints, byte for byte, what the bpf_loop build
# printed (LOOP_OUT, else a run of it now), but for the read time and
# rates; echoes the samples timed
# the capture object's figures that depend on the machine's speed
RL_READ_TIME='del(.read_seconds, .packets_per_s, .mb_per_s)'

rl_bounded_same() {
	local pcap=$1 want=${2:-} got=$BATS_TEST_TMPDIR/bounded.out
	if [ -z "$want" ]; then
		want=$BATS_TEST_TMPDIR/loop.out
		"$RL" -r "$pcap" -F -j --nanoseconds > "$want"
	fi
	ROCELAT_FORCE_NO_BPF_LOOP=1 "$RL" -v -r "$pcap" -F -j --nanoseconds > "$got" 2> "$got.err" || {
		grep -v '^libbpf: ' "$got.err" >&2
		return 1
	}
	# the build under test is the one that ran
	grep -q 'loading the build with bounded loops' "$got.err"
	# all but how fast the capture was read
	diff <(jq -c "$RL_READ_TIME" "$want") <(jq -c "$RL_READ_TIME" "$got") >&2
	jq -r 'select(.type=="counters") | .samples' "$got"
}
