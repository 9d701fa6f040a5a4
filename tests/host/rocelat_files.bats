#!/usr/bin/env bats
# rocelat -r over several files read as one recording: the captures of
# tests/lib/roce_captures.py cut into parts (tests/lib/pcap_split.py, which
# says how many packets and bytes each part got) in runs of packets, as
# tcpdump -C rotates, or dealt round-robin so that every file overlaps the
# others in time. The report of the parts must equal the whole file's,
# line for line (every sample, count and per-flow figure), whatever the
# order the files are given in. And how one classic pcap file is read: in
# mapped windows (strace), with the report libpcap gives of it as pcapng,
# and as a use-once reader (its pages never reach the active list).
# Pure user space + BPF_PROG_TEST_RUN.

bats_require_minimum_version 1.5.0
load ../lib/common

RL=$AX_BUILD/rocelat
PY=/usr/bin/python3
SPLIT=$AX_ROOT/tests/lib/pcap_split.py
REORDER=$AX_ROOT/tests/lib/pcap_reorder.py

setup_file() {
	ax_file_needs "$RL" capinfos editcap jq || return 0
	ax_file_needs_captures "user space and BPF_PROG_TEST_RUN only" || return 0
	export CAP=$BATS_FILE_TMPDIR/cap
	mkdir -p "$CAP"
	"$PY" "$AX_ROOT/tests/lib/roce_captures.py" "$CAP" 2>/dev/null
	for s in connectx faults lossy cm; do
		"$RL" -r "$CAP/$s.pcap" -F -j --nanoseconds > "$CAP/$s.out"
	done
}

setup() {
	ax_file_skip
}

# the report without the capture object (which names the files)
report() {
	jq -c 'select(.type != "capture")' "$@"
}

# rocelat over the files given, -F -j in nanoseconds, into $BATS_TEST_TMPDIR/out
run_files() {
	"$RL" -F -j --nanoseconds -r "$@" > "$BATS_TEST_TMPDIR/out"
}

same_as_whole() {
	local s=$1
	[ "$(report "$BATS_TEST_TMPDIR/out" | wc -l)" -gt 3 ]
	diff <(report "$CAP/$s.out") <(report "$BATS_TEST_TMPDIR/out")
}

@test "rotated parts (runs of packets) report exactly what the whole file does, in any order given" {
	local s parts
	for s in connectx faults lossy; do
		"$PY" "$SPLIT" "$CAP/$s.pcap" "$BATS_TEST_TMPDIR/$s" chunks 50 > /dev/null
		mapfile -t parts < <(ls "$BATS_TEST_TMPDIR/$s"/part-*.pcap)
		echo "$s: ${#parts[@]} parts" >&2
		[ "${#parts[@]}" -ge 4 ]
		run_files "${parts[@]}"
		same_as_whole $s
		# reversed, and shuffled with -r repeated
		run_files $(printf '%s\n' "${parts[@]}" | sort -r)
		same_as_whole $s
		run_files $(printf -- '-r\n%s\n' $(printf '%s\n' "${parts[@]}" | shuf) | tail -n +2)
		same_as_whole $s
		[ "$(jq -r 'select(.type=="capture") | .files' "$BATS_TEST_TMPDIR/out")" -eq "${#parts[@]}" ]
	done
}

@test "files overlapping in time (packets dealt round-robin), pcap and pcapng mixed: merged by time, the same report" {
	local s d
	for s in connectx faults lossy; do
		d=$BATS_TEST_TMPDIR/$s
		"$PY" "$SPLIT" "$CAP/$s.pcap" "$d" deal 3 > /dev/null
		# each file's first packet is earlier than the one before's last
		editcap -F pcapng "$d/part-00001.pcap" "$d/part-00001.pcapng"
		rm "$d/part-00001.pcap"
		run_files "$d/part-00002.pcap" "$d/part-00001.pcapng" "$d/part-00000.pcap"
		same_as_whole $s
	done
}

@test "a bad file among good ones: one line naming it, exit 1, no report" {
	local d=$BATS_TEST_TMPDIR bad
	"$PY" "$SPLIT" "$CAP/faults.pcap" "$d/p" chunks 100 > /dev/null
	echo "not a capture" > "$d/text.pcap"
	mkdir "$d/dir.pcap"
	head -c 10 "$CAP/faults.pcap" > "$d/short.pcap"
	for bad in "$d/missing.pcap" "$d/text.pcap" "$d/dir.pcap" "$d/short.pcap"; do
		run -1 --separate-stderr "$RL" -r "$d"/p/part-*.pcap "$bad" -j
		echo "$bad: $stderr" >&2
		[ -z "$output" ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ $stderr == "rocelat: $bad: "* ]]
	done
	run -1 --separate-stderr "$RL" -r "$d/missing.pcap" "$d"/p/part-*.pcap
	[ -z "$output" ]
	[ "$stderr" = "rocelat: $d/missing.pcap: No such file or directory" ]
	run -1 --separate-stderr "$RL" -r "$d/text.pcap"
	[ "$stderr" = "rocelat: $d/text.pcap: not a pcap or pcapng file" ]
}

@test "ACKs written before their requests (a capture of several queues): the same report, and a WARNING naming how many frames" {
	local s n
	for s in connectx faults cm; do
		n=$("$PY" "$REORDER" "$CAP/$s.pcap" "$BATS_TEST_TMPDIR/$s.pcap" swap)
		echo "$s: $n ACKs written before their request" >&2
		[ "$n" -ge 40 ]
		run -0 --separate-stderr "$RL" -F -j --nanoseconds -r "$BATS_TEST_TMPDIR/$s.pcap"
		printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/out"
		same_as_whole $s
		[ "$(jq -r 'select(.type=="capture") | .out_of_order_frames' "$BATS_TEST_TMPDIR/out")" -eq "$n" ]
		[ "$(jq -r 'select(.type=="counters") | .reordered' "$BATS_TEST_TMPDIR/out")" -eq 0 ]
		[ "$stderr" = "WARNING: $n frames earlier than a frame before them: the recording is not in time order, and what is paired across them may be wrong (sort it: reordercap IN OUT)" ]
	done
	# sorted, it is the whole file again, without a warning
	command -v reordercap >/dev/null || return 0
	reordercap "$BATS_TEST_TMPDIR/faults.pcap" "$BATS_TEST_TMPDIR/sorted.pcap" >&2
	run -0 --separate-stderr "$RL" -F -j --nanoseconds -r "$BATS_TEST_TMPDIR/sorted.pcap"
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/out"
	same_as_whole faults
	[ -z "$stderr" ]
}

@test "frames without a time (pcapng simple packet blocks): skipped as not recorded, in a WARNING; nothing timed from them" {
	local n c
	n=$("$PY" "$REORDER" "$CAP/connectx.pcap" "$BATS_TEST_TMPDIR/spb.pcapng" spb)
	# tshark reads them all, with no time
	[ "$(tshark -r "$BATS_TEST_TMPDIR/spb.pcapng" -Y infiniband 2>/dev/null | wc -l)" -eq "$n" ]
	run -0 --separate-stderr "$RL" -F -j --nanoseconds -r "$BATS_TEST_TMPDIR/spb.pcapng"
	c=$(printf '%s\n' "$output" | jq -c 'select(.type=="capture")')
	[ "$(jq -r .packets <<<"$c")" -eq "$n" ]
	[ "$(jq -r .no_time_frames <<<"$c")" -eq "$n" ]
	[ "$(printf '%s\n' "$output" | jq -r 'select(.type=="counters") | .roce_packets')" -eq 0 ]
	[ "$(printf '%s\n' "$output" | jq -r 'select(.type=="counters") | .samples')" -eq 0 ]
	[ "$stderr" = "WARNING: $n frames without a time (stamped 0, as pcapng simple packet blocks are) skipped, as if not recorded" ]
}

@test "pcapng with a second section of another link type: read up to it, libpcap's line, exit 1" {
	local n total
	n=$("$PY" "$REORDER" "$CAP/faults.pcap" "$BATS_TEST_TMPDIR/two.pcapng" twolink)
	total=$(tshark -r "$BATS_TEST_TMPDIR/two.pcapng" 2>/dev/null | wc -l)
	[ "$total" -gt "$n" ]
	run -1 --separate-stderr "$RL" -j -r "$BATS_TEST_TMPDIR/two.pcapng"
	[ "$(jq -r 'select(.type=="capture") | .packets' <<< "$output")" -eq "$n" ]
	[ "$(jq -r 'select(.type=="capture") | .complete' <<< "$output")" = false ]
	[ "$stderr" = "rocelat: $BATS_TEST_TMPDIR/two.pcapng: an interface has a type 113 different from the type of the first interface (after $n packets; the report covers those)" ]
}

@test "a compressed capture: one line naming the command that reads it, which gives the whole file's report" {
	local f z cat
	for z in gzip xz; do
		command -v $z >/dev/null || continue
		f=$BATS_TEST_TMPDIR/connectx.pcap.$z
		$z -c "$CAP/connectx.pcap" > "$f"
		cat=$([ $z = gzip ] && echo zcat || echo xzcat)
		run -1 --separate-stderr "$RL" -r "$f"
		[ -z "$output" ]
		[ "$stderr" = "rocelat: $f: compressed, not a pcap or pcapng file: read it as -r <($cat $f)" ]
		run_files <($cat "$f")
		same_as_whole connectx
	done
}

@test "standard input named twice: one line, exit 1, nothing read" {
	run -1 --separate-stderr "$RL" -r - - < "$CAP/faults.pcap"
	[ -z "$output" ]
	[ "$stderr" = "rocelat: -: standard input named twice (it can be read once)" ]
}

@test "352 files under ulimit -n 64: each opened when the merge reaches it, the same report" {
	local d=$BATS_TEST_TMPDIR/many n
	"$PY" "$SPLIT" "$CAP/connectx.pcap" "$d" chunks 5 > /dev/null
	n=$(ls "$d" | wc -l)
	[ "$n" -ge 300 ]
	(ulimit -n 64 && run_files "$d"/part-*.pcap)
	same_as_whole connectx
	[ "$(jq -r 'select(.type=="capture") | .files' "$BATS_TEST_TMPDIR/out")" -eq "$n" ]
	[ "$(jq -r 'select(.type=="capture") | .complete' "$BATS_TEST_TMPDIR/out")" = true ]
}

@test "pipes: -r <(cat part), stdin as -, among regular files" {
	local d=$BATS_TEST_TMPDIR/p
	"$PY" "$SPLIT" "$CAP/faults.pcap" "$d" chunks 80 > /dev/null
	[ -e "$d/part-00002.pcap" ]
	run_files <(cat "$d/part-00000.pcap") "$d/part-00002.pcap" - < "$d/part-00001.pcap"
	same_as_whole faults
	cat "$CAP/lossy.pcap" | run_files -
	same_as_whole lossy
}

@test "the capture object and the summary: files, packets and bytes as the parts hold them, rates from the read time" {
	local d=$BATS_TEST_TMPDIR/p c want_pkts want_bytes n
	"$PY" "$SPLIT" "$CAP/connectx.pcap" "$d" deal 7 > "$BATS_TEST_TMPDIR/truth"
	n=$(wc -l < "$BATS_TEST_TMPDIR/truth")
	want_pkts=$(awk '{p += $2} END {print p}' "$BATS_TEST_TMPDIR/truth")
	want_bytes=$(awk '{b += $3} END {print b}' "$BATS_TEST_TMPDIR/truth")
	# capinfos counts the same independently
	[ "$(capinfos -T -r -c "$d"/part-*.pcap | awk '{p += $2} END {print p}')" -eq "$want_pkts" ]
	[ "$(capinfos -T -r -d -M "$d"/part-*.pcap | awk '{b += $2} END {print b}')" -eq "$want_bytes" ]
	run_files "$d"/part-*.pcap
	c=$(jq -c 'select(.type=="capture")' "$BATS_TEST_TMPDIR/out")
	echo "$c" >&2
	jq -e -n --argjson c "$c" --argjson n "$n" --argjson p "$want_pkts" --argjson b "$want_bytes" '
		def near(a; x): (a - x | fabs) <= 0.01 * x + 1;
		$c.files == $n and $c.packets == $p and $c.bytes == $b and
		($c | has("file") | not) and $c.complete and $c.read_seconds > 0 and
		near($c.packets_per_s; $p / $c.read_seconds) and
		near($c.mb_per_s * 1000; $b / 1000 / $c.read_seconds)' > /dev/null
	# the text summary, last line
	run -0 "$RL" -r "$d"/part-*.pcap
	echo "${lines[-1]}" >&2
	[[ ${lines[-1]} =~ ^read\ $want_pkts\ packets\ from\ $n\ files:\ [0-9.]+\ MB\ in\ [0-9.]+\ s,\ [0-9]+\ packets/s,\ [0-9.]+\ MB/s$ ]]
	run -0 "$RL" -r "$CAP/faults.pcap"
	[[ ${lines[-1]} =~ ^read\ 239\ packets\ from\ $CAP/faults.pcap:\ [0-9.]+\ MB\ in ]]
}

@test "a classic pcap is mapped 8 MiB at a time, each window once, never read(): the same report as libpcap makes of it as pcapng" {
	command -v strace >/dev/null || skip "strace not installed (scripts/setup-deps.sh installs it)"
	local big=$BATS_TEST_TMPDIR/big.pcap tr=$BATS_TEST_TMPDIR/trace fd size
	# about 20 MB: frames across two edges of the windows
	"$PY" "$AX_ROOT/bench/repeat_pcap.py" "$CAP/connectx.pcap" "$big" 45000
	size=$(stat -c %s "$big")
	[ "$size" -gt $((16 << 20)) ]
	editcap -F pcapng "$big" "$big.pcapng"
	# (LeakSanitizer cannot run under ptrace: off for a SANITIZE=1 build)
	ASAN_OPTIONS=detect_leaks=0 strace -o "$tr" -e trace=openat,mmap,read,munmap "$RL" -F -j --nanoseconds -r "$big" > "$BATS_TEST_TMPDIR/out"
	fd=$(sed -n "s|^openat(.*\"$big\", O_RDONLY.*= \([0-9]*\)$|\1|p" "$tr" | head -1)
	[ -n "$fd" ]
	# windows of 8 MiB at most that cover the file, no read() of it
	grep -E "^mmap\(NULL, [0-9]+, PROT_READ, MAP_PRIVATE\|MAP_POPULATE, $fd, " "$tr" > "$tr.win"
	cat "$tr.win" >&2
	[ "$(awk -F', ' '$2 > 8388608' "$tr.win" | wc -l)" -eq 0 ]
	awk -F', ' '{ print $6 }' "$tr.win" | sed 's/).*//' | sort > "$tr.off"
	[ "$(uniq "$tr.off" | wc -l)" -ge $(( (size + (8 << 20) - 1) / (8 << 20) )) ]
	# each window once (the first one too, which the check of the file read)
	[ "$(uniq -d "$tr.off" | wc -l)" -eq 0 ]
	! grep -qE "^read\($fd," "$tr"
	# libpcap reads the pcapng: the same report, line for line
	"$RL" -F -j --nanoseconds -r "$big.pcapng" > "$BATS_TEST_TMPDIR/ng.out"
	[ "$(report "$BATS_TEST_TMPDIR/out" | wc -l)" -gt 3 ]
	diff <(report "$BATS_TEST_TMPDIR/ng.out") <(report "$BATS_TEST_TMPDIR/out")
}

# this process's memory cgroup directory (cgroup v1's memory hierarchy,
# or v2's), where a child cgroup can be made
mem_cgroup() {
	local id ctrl path
	while IFS=: read -r id ctrl path; do
		if [ "$ctrl" = memory ] && [ -d "/sys/fs/cgroup/memory$path" ]; then
			echo "/sys/fs/cgroup/memory$path"
			return 0
		fi
		if [ -z "$ctrl" ] && [ -f "/sys/fs/cgroup$path/memory.stat" ]; then
			echo "/sys/fs/cgroup$path"
			return 0
		fi
	done </proc/self/cgroup
	return 1
}

# bytes of the cgroup's page cache on the active list
active_file() {
	awk '$1 == "active_file" { print $2 }' "$1/memory.stat"
}

teardown() {
	[ -z "${LRU_CG:-}" ] || rmdir "$LRU_CG" 2>/dev/null || true
	[ -z "${LRU_DIR:-}" ] || rm -rf "$LRU_DIR"
}

@test "a capture read once stays use-once: rocelat -r moves none of its pages to the active list (cat twice does)" {
	local parent size a0 a1 a2
	parent=$(mem_cgroup) || skip "no memory cgroup to count the pages in"
	# a disk file system's page cache (tmpfs pages are not on the file LRU)
	LRU_DIR=$(mktemp -d /var/tmp/ax-lru.XXXXXX)
	[ "$(stat -f -c %T "$LRU_DIR")" != tmpfs ] || skip "/var/tmp is a tmpfs"
	LRU_CG=$parent/ax-lru-$$
	mkdir "$LRU_CG"
	[ -f "$LRU_CG/memory.stat" ] || skip "no memory.stat in a new cgroup under $parent"
	# everything that touches the file runs in the cgroup, whose page
	# cache is then the file's alone, whatever else the machine does
	in_cg() { bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$LRU_CG" "$@"; }
	in_cg "$PY" "$AX_ROOT/bench/repeat_pcap.py" "$CAP/connectx.pcap" "$LRU_DIR/c.pcap" 200000
	size=$(stat -c %s "$LRU_DIR/c.pcap")
	a0=$(active_file "$LRU_CG")
	in_cg "$RL" -r "$LRU_DIR/c.pcap" -j > "$BATS_TEST_TMPDIR/out"
	[ "$(jq -r 'select(.type == "counters") | .roce_packets' "$BATS_TEST_TMPDIR/out")" -gt 190000 ]
	a1=$(active_file "$LRU_CG")
	# the measure sees a second use: read() twice activates the pages
	in_cg cat "$LRU_DIR/c.pcap" "$LRU_DIR/c.pcap" > /dev/null
	a2=$(active_file "$LRU_CG")
	echo "file $size B; active_file $a0 -> $a1 (rocelat -r) -> $a2 (cat twice)" >&2
	[ $((a1 - a0)) -lt $((size / 10)) ]
	[ $((a2 - a1)) -gt $((size / 2)) ]
	rm -f "$LRU_DIR/c.pcap"
}
