# Reading a tool's -w file back with tshark (the suites of rxedrop and
# nfdrop). Load after common.

# pcap_fields FILE FIELD...: one line per packet, the fields tab-separated
pcap_fields() {
	local f=$1 a=()
	shift
	for x in "$@"; do a+=(-e "$x"); done
	tshark -r "$f" -T fields -E separator=/t "${a[@]}" 2>/dev/null
}

# pcap_count FILE: packets in the file (0 while it has none or is partial)
pcap_count() {
	tshark -r "$1" -T fields -e frame.number 2>/dev/null | wc -l
}

# pcap_headers FILE: "saddr daddr dport dqpn psn" per packet, dqpn decimal,
# as the JSON events carry them
pcap_headers() {
	pcap_fields "$1" ip.src ip.dst udp.dstport infiniband.bth.destqp infiniband.bth.psn |
		while IFS=$'\t' read -r s d p q n; do
			echo "$s $d $p $((q)) $n"
		done
}

# pcap_need_tshark: skip without tshark
pcap_need_tshark() {
	command -v tshark >/dev/null || skip "tshark not installed"
}
