#!/usr/bin/env python3
"""Repeat a pcap capture until it holds at least N packets, as one long
recording: each copy later by the capture's duration plus 1 ms, and the
PSN of every IPv4 RoCE v2 frame (UDP 4791, no VLAN) moved on by 4096 a
copy, so that each copy's requests are new ones, not retransmits.
usage: repeat_pcap.py IN.pcap OUT.pcap N"""
import struct
import sys


def main(src, dst, want):
    raw = open(src, "rb").read()
    magic = struct.unpack("<I", raw[:4])[0]
    if magic not in (0xA1B2C3D4, 0xA1B23C4D):
        sys.exit(f"{src}: not a little-endian pcap file")
    tick = 1000 if magic == 0xA1B23C4D else 1  # ns or us per unit
    frames, off = [], 24
    while off + 16 <= len(raw):
        sec, sub, incl, orig = struct.unpack_from("<IIII", raw, off)
        frames.append(((sec * 1000000 * tick + sub) , bytearray(raw[off + 16:off + 16 + incl]), orig))
        off += 16 + incl
    if not frames:
        sys.exit(f"{src}: no packets")
    per_s = 1000000 * tick
    span = frames[-1][0] - frames[0][0] + per_s // 1000
    psn_at = [42 + 9 if len(f) >= 54 and f[12:14] == b"\x08\x00" and f[23] == 17 and
              f[36:38] == b"\x12\xb7" else None for _, f, _ in frames]
    reps = -(-want // len(frames))
    with open(dst, "wb") as out:
        out.write(raw[:24])
        for r in range(reps):
            for (t, f, orig), at in zip(frames, psn_at):
                if at is not None:
                    psn = int.from_bytes(f[at:at + 3], "big")
                    f = bytearray(f)
                    f[at:at + 3] = ((psn + 4096 * r) & 0xFFFFFF).to_bytes(3, "big")
                t += r * span
                out.write(struct.pack("<IIII", t // per_s, t % per_s, len(f), orig))
                out.write(f)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
