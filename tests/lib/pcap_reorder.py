#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Rewrite a classic pcap file (Ethernet, IPv4 or IPv6, RoCE v2 on UDP
4791) into one that rocelat -r must read with care.

pcap_reorder.py IN OUT MODE
  swap  every ACK (an ACKNOWLEDGE with an ACK syndrome, not a NAK) that
        directly follows a request of the other direction, but its QP's
        first ACK (which pairs the QPs), is written before it, each record keeping its own time
        (what a capture of several queues writes): OUT is out of time
        order, its packets and their times those of IN
  spb   OUT is pcapng, every packet a simple packet block (no time)
  twolink  OUT is pcapng: the first half of the packets, then a second
        section whose interface is Linux cooked (SLL) with the rest
Prints how many records were swapped (swap) or written (spb; twolink:
the first half's): the ground truth the tests compare with.
"""
import struct
import sys

ROCE_PORT = 4791
OP_ACK = 0x11


def records(data, endian):
    off = 24
    while off < len(data):
        caplen = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        yield data[off:off + 16 + caplen]
        off += 16 + caplen


def roce(rec):
    """(opcode, src, dst, BTH destination QP, AETH syndrome or None, PSN)
    of a RoCE v2 frame, else None"""
    f = rec[16:]
    if len(f) < 14:
        return None
    etype = struct.unpack(">H", f[12:14])[0]
    if etype == 0x0800 and len(f) >= 34 and f[23] == 17:
        ihl = (f[14] & 15) * 4
        src, dst, udp = f[26:30], f[30:34], 14 + ihl
    elif etype == 0x86DD and len(f) >= 54 and f[20] == 17:
        src, dst, udp = f[22:38], f[38:54], 54
    else:
        return None
    bth = udp + 8
    if len(f) < bth + 12 or struct.unpack(">H", f[udp + 2:udp + 4])[0] != ROCE_PORT:
        return None
    op, qpn, psn = f[bth], f[bth + 5:bth + 8], f[bth + 9:bth + 12]
    syndrome = f[bth + 12] if op == OP_ACK and len(f) > bth + 12 else None
    return op, src, dst, qpn, syndrome, psn


def is_request(op):
    # RC SEND/WRITE/READ/atomic requests: opcodes 0x00-0x0c, 0x13-0x14
    return op <= 0x0C or op in (0x13, 0x14)


def swap(data, endian):
    out, n, prev, acked, sent = [], 0, None, set(), set()
    prev_first = False
    for rec in records(data, endian):
        r = roce(rec)
        # an ACK (not a NAK), not its QP's first: that one pairs the QPs
        ack = r and r[0] == OP_ACK and r[4] is not None and r[4] >> 5 == 0
        if prev is not None and ack and r[1:4] in acked and prev_first:
            p = roce(prev)
            # a request's first sighting only: the ACK of a retransmission
            # shown before it would answer the first one, rightly
            if (p[1], p[2]) == (r[2], r[1]):
                out += [rec, prev]
                n += 1
                prev = None
                continue
        if ack:
            acked.add(r[1:4])
        prev_first = False
        if r and is_request(r[0]):
            key = (r[1], r[2], r[3], r[5])
            prev_first = key not in sent
            sent.add(key)
        if prev is not None:
            out.append(prev)
        prev = rec
    if prev is not None:
        out.append(prev)
    return data[:24] + b"".join(out), n


def block(kind, body):
    pad = (4 - len(body) % 4) % 4
    total = 12 + len(body) + pad
    return struct.pack("<II", kind, total) + body + b"\0" * pad + struct.pack("<I", total)


def spb(data, endian):
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    out = section(linktype)
    n = 0
    for rec in records(data, endian):
        orig = struct.unpack(endian + "I", rec[12:16])[0]
        out.append(block(3, struct.pack("<I", orig) + rec[16:]))
        n += 1
    return b"".join(out), n


def section(linktype):
    return [block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)),
            block(1, struct.pack("<HHI", linktype, 0, 0))]


def epb(rec, endian, frame):
    sec, frac = struct.unpack(endian + "II", rec[:8])
    orig = struct.unpack(endian + "I", rec[12:16])[0]
    ts = sec * 1000000 + frac        # the default if_tsresol: us
    return block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF,
                                len(frame), orig) + frame)


def twolink(data, endian):
    recs = list(records(data, endian))
    half = len(recs) // 2
    out = section(1) + [epb(r, endian, r[16:]) for r in recs[:half]]
    # SLL: packet type, ARPHRD_ETHER, address length 6, the address, the
    # ethertype; then the frame past its Ethernet header
    out += section(113)
    for r in recs[half:]:
        f = r[16:]
        sll = struct.pack(">HHH8sH", 0, 1, 6, f[6:12] + b"\0\0", struct.unpack(">H", f[12:14])[0])
        out.append(epb(r, endian, sll + f[14:]))
    return b"".join(out), half


def main():
    src, dst, mode = sys.argv[1:4]
    data = open(src, "rb").read()
    endian = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    out, n = {"swap": swap, "spb": spb, "twolink": twolink}[mode](data, endian)
    with open(dst, "wb") as f:
        f.write(out)
    print(n)


if __name__ == "__main__":
    main()
