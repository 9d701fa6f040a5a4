#!/usr/bin/env python3
"""How long each RoCE v2 packet was held in a router: one capture of its
interfaces (tcpdump -i any, link type LINUX_SLL or LINUX_SLL2), the kernel's own
timestamp of each packet as it came in (packet type "to us") and as it
went out ("outgoing"), paired by destination QP, PSN and occurrence (a
retransmission is its own packet).

usage: pcap_hold.py CAPTURE.pcap
       pcap_hold.py CAPTURE.pcap INJECTED.json
With INJECTED (roceinject -e -j's lines), how long roceinject's --delay
held each packet in the qdisc of the interface it runs on: the time in is
its "inject" line's (taken at tc egress, before the qdisc), the time out
its capture's (CAPTURE of that interface, outgoing: taken as the driver
gets it, after the qdisc); the capture may be of the interface itself
(Ethernet) or of any.
Prints one JSON line per destination QP: {"dqpn":N,"in":N,"out":N,
"paired":N,"median_us":F,"min_us":F,"max_us":F}; a packet seen one way
only counts in its "in" or "out" and is not paired. Classic pcap, IPv4
or IPv6, UDP port 4791; no other packet is read.
"""
import re
import struct
import sys

ROCE_PORT = 4791


SLL_HOST, SLL_OUTGOING = 0, 4
# link type: (packet type offset, protocol offset, header length); an
# Ethernet capture (one interface, -Q out) has no packet type: outgoing
SLL = {113: (0, 14, 16), 276: (10, 0, 20), 1: (None, 12, 14)}


def packets(path):
    """(time in us, packet type, dqpn, psn) of every RoCE packet of a
    LINUX_SLL(2) or Ethernet pcap file"""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    order, nano = {0xA1B2C3D4: ("<", False), 0xA1B23C4D: ("<", True),
                   0xD4C3B2A1: (">", False), 0x4D3CB2A1: (">", True)}[magic]
    # LINUX_SLL: packet type at 0, protocol at 14; LINUX_SLL2: 10, 0
    linktype = struct.unpack(order + "I", data[20:24])[0]
    if linktype not in SLL:
        sys.exit("%s: link type %d, not LINUX_SLL(2) or EN10MB" % (path, linktype))
    ptype_at, proto_at, hdr = SLL[linktype]
    off = 24
    while off + 16 <= len(data):
        sec, frac, cap, _ = struct.unpack(order + "IIII", data[off:off + 16])
        frame = data[off + 16:off + 16 + cap]
        off += 16 + cap
        t = sec * 1e6 + (frac / 1e3 if nano else frac)
        bth = roce_bth(frame, proto_at, hdr)
        if bth:
            ptype = SLL_OUTGOING if ptype_at is None else frame[ptype_at + (linktype == 113)]
            yield (t, ptype,
                   bth[5] << 16 | bth[6] << 8 | bth[7], bth[9] << 16 | bth[10] << 8 | bth[11])


def roce_bth(frame, proto_at, l3):
    """the BTH of a cooked frame carrying RoCE v2, or None"""
    etype = struct.unpack(">H", frame[proto_at:proto_at + 2])[0]
    if etype == 0x0800 and len(frame) >= l3 + 20 and frame[l3 + 9] == 17:
        udp = l3 + (frame[l3] & 0xF) * 4
    elif etype == 0x86DD and len(frame) >= l3 + 40 and frame[l3 + 6] == 17:
        udp = l3 + 40
    else:
        return None
    if len(frame) < udp + 20 or struct.unpack(">H", frame[udp + 2:udp + 4])[0] != ROCE_PORT:
        return None
    return frame[udp + 8:udp + 20]


def keyed(path, ptype):
    """{(dqpn, psn, occurrence): time} of the packets of one direction"""
    seen, out = {}, {}
    for t, pt, qpn, psn in packets(path):
        if pt != ptype:
            continue
        n = seen.get((qpn, psn), 0)
        seen[(qpn, psn)] = n + 1
        out[(qpn, psn, n)] = t
    return out


def injected(path):
    """{(dqpn, psn, occurrence): time} of roceinject's inject lines"""
    field = re.compile(r'"(time|dqpn|psn)": ?([0-9.]+)')
    seen, out = {}, {}
    with open(path) as f:
        for line in f:
            if '"inject"' not in line:
                continue
            v = dict(field.findall(line))
            qpn, psn = int(v["dqpn"]), int(v["psn"])
            n = seen.get((qpn, psn), 0)
            seen[(qpn, psn)] = n + 1
            out[(qpn, psn, n)] = float(v["time"]) * 1e6
    return out


def median(v):
    v = sorted(v)
    return (v[len(v) // 2] + v[(len(v) - 1) // 2]) / 2


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    pout = keyed(sys.argv[1], SLL_OUTGOING)
    pin = injected(sys.argv[2]) if len(sys.argv) == 3 else keyed(sys.argv[1], SLL_HOST)
    # no json or statistics module: each costs seconds to import in the
    # emulated guest
    for qpn in sorted({k[0] for k in pin} | {k[0] for k in pout}):
        held = [pout[k] - pin[k] for k in pin if k[0] == qpn and k in pout]
        row = '{"dqpn": %d, "in": %d, "out": %d, "paired": %d' % (
            qpn, sum(k[0] == qpn for k in pin), sum(k[0] == qpn for k in pout), len(held))
        if held:
            row += ', "median_us": %.1f, "min_us": %.1f, "max_us": %.1f' % (
                median(held), min(held), max(held))
        print(row + "}")

if __name__ == "__main__":
    main()
