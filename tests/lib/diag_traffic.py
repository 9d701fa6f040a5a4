#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ConnectX-shaped RoCE v2 between two namespaces for rocediag's host test,
built with scapy's RoCE layer (scapy.contrib.roce), nothing of ours: three
QPs, each side of a QP pair sending from its own UDP source port, random
QPNs and 24-bit starting PSNs, three back-to-back SENDs answered by one
coalesced ACK.

    diag_traffic.py plan A B          the plan as JSON (ground truth)
    diag_traffic.py requests A B DEV  the requests, A -> B (run in A's netns)
    diag_traffic.py answers A B DEV   the ACKs, B -> A (run in B's netns)
    diag_traffic.py pcap A B FILE     both, as a capture (for tshark)

Deterministic: the plan comes from a fixed seed, so the three calls agree.
"""
import json
import random
import sys

from scapy.all import Ether, IP, UDP, Raw, send, wrpcap
from scapy.contrib.roce import BTH, AETH

SEND_ONLY, ACK = 0x04, 0x11
BURSTS = 10          # per QP: 3 SENDs and one ACK each


def plan():
    rnd = random.Random(15)
    qps = []
    for _ in range(3):
        qps.append({
            "req_qpn": rnd.randrange(0x100, 0xFFFFFF),
            "resp_qpn": rnd.randrange(0x100, 0xFFFFFF),
            "req_sport": 49152 + rnd.randrange(16000),
            "resp_sport": 49152 + rnd.randrange(16000),
            "psn": rnd.randrange(1 << 24),
            "requests": 3 * BURSTS,
            "acks": BURSTS,
        })
    return {"qps": qps}


def requests(a, b):
    pkts = []
    for burst in range(BURSTS):
        for q in plan()["qps"]:
            for k in range(3):
                psn = (q["psn"] + 3 * burst + k) & 0xFFFFFF
                pkts.append(IP(src=a, dst=b, flags="DF") /
                            UDP(sport=q["req_sport"], dport=4791) /
                            BTH(opcode=SEND_ONLY, dqpn=q["resp_qpn"], ackreq=1, psn=psn) /
                            Raw(b"\0" * 64))
    return pkts


def answers(a, b):
    pkts = []
    for burst in range(BURSTS):
        for q in plan()["qps"]:
            psn = (q["psn"] + 3 * burst + 2) & 0xFFFFFF
            pkts.append(IP(src=b, dst=a, flags="DF") /
                        UDP(sport=q["resp_sport"], dport=4791) /
                        BTH(opcode=ACK, dqpn=q["req_qpn"], psn=psn) /
                        AETH(syndrome=0x1f, msn=burst))
    return pkts


def main():
    mode, a, b = sys.argv[1:4]
    if mode == "plan":
        json.dump(plan(), sys.stdout)
        print()
        return
    if mode == "pcap":
        wrpcap(sys.argv[4], [Ether() / p for p in requests(a, b) + answers(a, b)])
        return
    pkts = requests(a, b) if mode == "requests" else answers(a, b)
    send(pkts, iface=sys.argv[4], verbose=0)


if __name__ == "__main__":
    main()
