#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Split a classic pcap file into several, record bytes untouched.

pcap_split.py IN OUTDIR MODE N
  chunks  N: consecutive runs of N packets (a tcpdump -C rotation), files
             part-00000.pcap, part-00001.pcap, ...
  deal    N: packet i into file i % N (N files overlapping in time: each
             file's first packet is earlier than the previous file's last)
Prints how many packets and captured bytes each file got, one line each:
"FILE PACKETS BYTES", the ground truth the tests compare with.
"""
import os
import struct
import sys


def records(data, endian):
    off = 24
    while off < len(data):
        caplen = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        yield data[off:off + 16 + caplen], caplen
        off += 16 + caplen


def main():
    src, outdir, mode, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    data = open(src, "rb").read()
    magic = data[:4]
    endian = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    header = data[:24]
    parts = []
    for i, (rec, caplen) in enumerate(records(data, endian)):
        k = i // n if mode == "chunks" else i % n
        while len(parts) <= k:
            parts.append([])
        parts[k].append((rec, caplen))
    os.makedirs(outdir, exist_ok=True)
    for k, recs in enumerate(parts):
        path = os.path.join(outdir, "part-%05d.pcap" % k)
        with open(path, "wb") as f:
            f.write(header)
            for rec, _ in recs:
                f.write(rec)
        print(path, len(recs), sum(c for _, c in recs))


if __name__ == "__main__":
    main()
