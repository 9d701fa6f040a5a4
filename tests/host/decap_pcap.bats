#!/usr/bin/env bats
#
# The mirror and tunnel frames of the parser's decap unit test
# (tests/unit/gen_decap.py, built by scapy into build/tests/decap.pcap)
# checked by a second opinion: Wireshark's own dissectors, through tshark,
# must see in each frame the tunnel the generator says (GRE, ERSPAN, VXLAN,
# Geneve), its session ID or VNI, and the inner RoCE frame's destination
# QP and PSN that tests/unit/parse_decap.c expects the parser to read.
# Needs tshark and a built tree (make; AX_BUILD as in tests/lib/common).

load ../lib/common

PCAP="$AX_BUILD/tests/decap.pcap"
EXPECT="$AX_BUILD/tests/decap.expect"

setup() {
	command -v tshark >/dev/null || skip "needs tshark"
	[ -s "$PCAP" ] && [ -s "$EXPECT" ] || skip "needs make (build/tests/decap.pcap)"
}

# one line per frame: number, protocols, ERSPAN span ID, VXLAN VNI,
# Geneve VNI, BTH destination QP, BTH PSN (nested layers: the last), '|'
# between them: empty fields must not merge as tabs do in read
dissect() {
	tshark -r "$PCAP" -T fields -E separator='|' -E occurrence=l \
		-e frame.number -e frame.protocols -e erspan.spanid -e vxlan.vni \
		-e geneve.vni -e infiniband.bth.destqp -e infiniband.bth.psn 2>/dev/null
}

@test "tshark decodes every generated frame as the generator built it" {
	local n proto span vni gvni qp psn want_tok want_id want_qp want_psn name bad=0 frames=0
	declare -A got
	while IFS='|' read -r n proto span vni gvni qp psn; do
		got[$n]="$proto|$span|$vni|$gvni|$qp|$psn"
	done < <(dissect)
	while IFS=$'\t' read -r n want_tok want_id want_qp want_psn name; do
		frames=$((frames + 1))
		IFS='|' read -r proto span vni gvni qp psn <<< "${got[$n]}"
		if [ "$want_tok" != - ] && [[ ":$proto:" != *":$want_tok:"* ]]; then
			echo "frame $n ($name): no $want_tok in $proto"; bad=1
		fi
		if [ "$want_id" != - ]; then
			local id=$span
			[ "$want_tok" = vxlan ] && id=$vni
			[ "$want_tok" = geneve ] && id=$gvni
			if [ -z "$id" ] || [ $((id)) -ne "$want_id" ]; then
				echo "frame $n ($name): $want_tok id '$id', want $want_id"; bad=1
			fi
		fi
		if [ "$want_qp" != - ]; then
			if [[ ":$proto:" != *":infiniband:"* ]] || [ $((qp)) -ne "$want_qp" ] ||
			   [ $((psn)) -ne "$want_psn" ]; then
				echo "frame $n ($name): BTH qp '$qp' psn '$psn', want $want_qp $want_psn"; bad=1
			fi
		fi
	done < "$EXPECT"
	[ "$frames" -ge 20 ]
	[ "$bad" -eq 0 ]
}
