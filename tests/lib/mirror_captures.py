#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The RoCE captures of tests/lib/roce_captures.py as a collector behind a
switch's remote mirror session receives them: every frame wrapped whole
(or cut, as switches truncate) in ERSPAN II, ERSPAN III, GRE/TEB, VXLAN or
Geneve by scapy's own layers, with the ground truth of each.

    mirror_captures.py OUTDIR

writes OUTDIR/<inner>.pcap/.json (the inner scenarios, by roce_captures)
and OUTDIR/<inner>_<mirror>.pcap/.json for each mirrored copy. A mirrored
copy's truth is its inner scenario's (totals and flows, latencies in ns)
plus, per flow, the mirror session it must be reported under and the
clock that must time it, and the decap counters' exact values.

Why the arrival times are what they are: a mirror path is a FIFO queue.
Where a capture carries no switch timestamp (ERSPAN II, GRE, VXLAN,
Geneve) frames arrive at their true time plus a constant path delay, so
the inner truth's latencies still hold on the collector's clock. ERSPAN
III captures carry the true time in their timestamp and arrive with
random queueing delay (0..200 us, never overtaking the frame before):
only the switch clock gives the inner truth's latencies back.

Deterministic: fixed seeds, every field scapy would take from a clock or
a random source given.
"""
import json
import logging
import os
import random
import struct
import sys

# scapy's RoCE layer warns for IPv6 frames (it computes the ICRC over IPv4
# only); nobody here checks the ICRC
logging.getLogger("scapy").setLevel(logging.ERROR)

from scapy.all import Ether, Dot1Q, IP, IPv6, UDP, TCP, ARP, GRE, Raw
from scapy.layers.vxlan import VXLAN
from scapy.contrib.erspan import ERSPAN_II, ERSPAN_III
from scapy.contrib.geneve import GENEVE

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roce_captures  # noqa: E402

US = 1000

# the collector, and the switches that mirror into it
COL4, COL6 = "192.0.2.99", "2001:db8::99"
SWITCHES = {
    # name: (IPv4 source, IPv6 source, MAC)
    "leaf1": ("192.0.2.10", "2001:db8::10", "02:aa:00:00:00:10"),
    "leaf2": ("192.0.2.20", "2001:db8::20", "02:aa:00:00:00:20"),
}
MAC_COL = "02:aa:00:00:00:99"
GRA_100US, GRA_100NS, GRA_IEEE1588 = 0, 1, 2

# a frame cut inside its BTH (inner Ethernet, IPv4, UDP, 6 of 12 BTH bytes)
CUT_IN_BTH = 14 + 20 + 8 + 6


class Session:
    """One switch's mirror session: how it wraps each frame it copies."""

    def __init__(self, kind, switch="leaf1", family=4, sid=0, gra=GRA_100NS,
                 path_delay_ns=5 * US, jitter_ns=0, snaplen=None, seed=1, ts_base=0):
        self.kind = kind          # erspan2, erspan3, gre, vxlan, geneve
        self.family = family
        self.src = SWITCHES[switch][family == 6]
        self.mac = SWITCHES[switch][2]
        self.sid = sid
        self.gra = gra
        self.path_delay_ns = path_delay_ns
        self.jitter_ns = jitter_ns
        self.snaplen = snaplen
        self.rnd = random.Random(seed)
        # the switch's clock at the capture's time 0, in its own ticks:
        # its 32-bit timestamp wraps where ts_base + t reaches 2^32
        self.ts_base = ts_base
        self.seq = 0
        self.last_arrival = 0

    def truth(self):
        return {"kind": self.kind, "src": self.src, "id": self.sid}

    def clock(self):
        # the timestamps rocelat may trust: 100 ns ticks, or IEEE 1588 (ns)
        if self.kind == "erspan3" and self.gra in (GRA_100NS, GRA_IEEE1588):
            return "switch"
        return "arrival"

    def timestamp(self, t_ns):
        if self.gra == GRA_100US:
            return (self.ts_base + t_ns // 100000) & 0xFFFFFFFF
        if self.gra == GRA_100NS:
            return (self.ts_base + t_ns // 100) & 0xFFFFFFFF
        return (self.ts_base + t_ns) & 0xFFFFFFFF

    def arrival(self, t_ns, wire_len):
        """FIFO: the path's delay plus queueing, never before the frame
        ahead of it has been serialised (10 Gb/s)"""
        a = t_ns + self.path_delay_ns
        if self.jitter_ns:
            a += self.rnd.randrange(self.jitter_ns)
            a = max(a, self.last_arrival + wire_len * 8 // 10)
        # without jitter the path is idle: the true time plus its delay
        self.last_arrival = a
        return a

    def outer(self, t_ns, cut, ver=None):
        """the headers in front of the copied frame; ver: an ERSPAN
        version to write instead of the real one"""
        self.seq += 1
        if self.family == 4:
            o = Ether(src=self.mac, dst=MAC_COL) / IP(src=self.src, dst=COL4, id=self.seq & 0xFFFF,
                                                       ttl=62, flags="DF")
        else:
            o = Ether(src=self.mac, dst=MAC_COL) / IPv6(src=self.src, dst=COL6, hlim=62)
        if self.kind == "erspan2":
            return o / GRE(proto=0x88BE, seqnum_present=1, sequence_number=self.seq) / \
                ERSPAN_II(ver=1 if ver is None else ver, vlan=0, cos=0, en=3, t=int(cut),
                          session_id=self.sid, index=1)
        if self.kind == "erspan3":
            return o / GRE(proto=0x22EB, seqnum_present=1, sequence_number=self.seq) / \
                ERSPAN_III(ver=2 if ver is None else ver, vlan=0, cos=0, bso=0, t=int(cut),
                           session_id=self.sid, timestamp=self.timestamp(t_ns),
                           sgt_other=0, p=0, ft=0, hw=1, d=0, gra=self.gra, o=0)
        if self.kind == "gre":
            return o / GRE(proto=0x6558, key_present=1, key=self.sid)
        # the UDP source port is the outer flow's entropy: one per session
        if self.kind == "vxlan":
            return o / UDP(sport=60000 + self.sid % 5000, dport=4789, chksum=0) / \
                VXLAN(flags=0x08, vni=self.sid)
        if self.kind == "geneve":
            return o / UDP(sport=60000 + self.sid % 5000, dport=6081, chksum=0) / \
                GENEVE(vni=self.sid, proto=0x6558)
        raise ValueError(self.kind)

    def wrap(self, t_ns, inner, ver=None, snaplen=None):
        """(arrival ns, bytes) of the mirrored copy of inner (bytes)"""
        snap = snaplen or self.snaplen
        cut = snap is not None and len(inner) > snap
        if cut:
            inner = inner[:snap]
        wire = bytes(self.outer(t_ns, cut, ver) / Raw(inner))
        return self.arrival(t_ns, len(wire)), wire


def write_pcap(path, frames):
    """frames: (t_ns, bytes); nanosecond pcap written by hand (scapy's
    writer would re-dissect every frame)"""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))
        for t, b in frames:
            f.write(struct.pack("<IIII", t // 10 ** 9, t % 10 ** 9, len(b), len(b)))
            f.write(b)


def not_roce_frames(rnd, t0, t1, n):
    """n inner frames that are no RoCE: TCP between the same hosts, ARP,
    DNS over UDP, at random times in [t0, t1)"""
    out = []
    for i in range(n):
        t = t0 + rnd.randrange(t1 - t0)
        eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
        k = i % 3
        if k == 0:
            p = eth / IP(src="10.2.0.1", dst="10.2.0.2", id=40000 + i) / \
                TCP(sport=40000 + i, dport=22, seq=i, flags="A") / Raw(b"x" * 40)
        elif k == 1:
            p = Ether(src="02:00:00:00:00:01", dst="ff:ff:ff:ff:ff:ff") / \
                ARP(psrc="10.2.0.1", pdst="10.2.0.2", hwsrc="02:00:00:00:00:01")
        else:
            p = eth / IP(src="10.2.0.1", dst="10.2.0.53", id=41000 + i) / \
                UDP(sport=5353, dport=53) / Raw(b"\0" * 30)
        out.append((t, bytes(p), "not_roce"))
    return out


def cut_in_bth_frames(t0, n):
    """n RoCE frames the mirror cut inside the BTH (a QP of their own):
    parse errors, not RoCE traffic"""
    out = []
    for i in range(n):
        p = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / \
            IP(src="10.9.0.1", dst="10.9.0.2", id=50000 + i, flags="DF") / \
            UDP(sport=49999, dport=4791) / \
            roce_captures.BTH(opcode=0x04, dqpn=0x999, ackreq=1, psn=i) / Raw(b"\0" * 200)
        out.append((t0 + i * 100 * US, bytes(p)[:CUT_IN_BTH], "cut_in_bth"))
    return out


class Inner:
    """a roce_captures scenario: its frames (time order) and its truth"""

    def __init__(self, name, cap, out):
        self.name = name
        # each frame built once: the ICRC is computed as scapy serialises
        self.frames = [(t, bytes(p)) for t, p in cap.frames]
        with open(os.path.join(out, name + ".json")) as f:
            self.truth = json.load(f)


def write_mirror(out, name, inner, sessions, extra=(), unknown_every=0, note=""):
    """OUTDIR/name.pcap: inner's frames through each session (a switch each,
    all copying the same traffic), extra (t_ns, bytes, what) frames
    through the first session that are not the scenario's, and with unknown_every an extra
    copy of every n-th frame under ERSPAN version 3 (no such version);
    OUTDIR/name.json: the truth"""
    frames = []
    for s in sessions:
        for t, b in inner.frames:
            frames.append(s.wrap(t, b))
    for t, b, what in extra:
        frames.append(sessions[0].wrap(t, b))
    n_unknown = 0
    if unknown_every:
        for i, (t, b) in enumerate(inner.frames):
            if i % unknown_every == 0:
                frames.append(sessions[0].wrap(t + 1 * US, b, ver=3))
                n_unknown += 1
    # the collector writes frames in the order they arrive (sort is
    # stable: equal arrivals keep their order)
    frames.sort(key=lambda x: x[0])
    write_pcap(os.path.join(out, name + ".pcap"), frames)

    snap = sessions[0].snaplen
    totals = {k: v * len(sessions) for k, v in inner.truth["totals"].items()}
    totals["tunnel_not_roce"] = sum(1 for x in extra if x[2] == "not_roce")
    totals["tunnel_unknown"] = n_unknown
    totals["truncated"] = len(sessions) * sum(1 for t, b in inner.frames
                                              if snap is not None and len(b) > snap)
    totals["parse_errors"] = sum(1 for x in extra if x[2] == "cut_in_bth")
    flows = []
    for s in sessions:
        for f in inner.truth["flows"]:
            f = {k: v for k, v in f.items() if k != "latencies_ns"}
            f["session"] = s.truth()
            f["clock"] = s.clock()
            flows.append(f)
    truth = {"inner": inner.name, "kind": sessions[0].kind,
             "outer_family": sessions[0].family, "frames": len(frames),
             "note": note, "flows": flows, "totals": totals}
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(truth, f, indent=1)


def main(out):
    os.makedirs(out, exist_ok=True)
    inners = {
        "connectx": Inner("connectx", roce_captures.connectx(out), out),
        "faults": Inner("faults", roce_captures.faults(out), out),
        "faults6": Inner("faults6", roce_captures.faults(out, v6=True), out),
    }
    # one session ID / VNI / key per capture, so a mix-up shows
    ids = {"erspan2": 101, "erspan3": 301, "gre": 0xC0FFEE, "vxlan": 0x5A0042, "geneve": 0x123456}
    for scn in ("connectx", "faults"):
        for kind in ("erspan2", "erspan3", "gre", "vxlan", "geneve"):
            jitter = 200 * US if kind == "erspan3" else 0
            write_mirror(out, "%s_%s" % (scn, kind), inners[scn],
                         [Session(kind, sid=ids[kind], jitter_ns=jitter, seed=len(kind))])
    # a switch clock that wraps (2^32 ticks of 100 ns: every 429 s) in the
    # middle of the capture
    mid = inners["connectx"].frames[len(inners["connectx"].frames) // 2][0]
    write_mirror(out, "connectx_erspan3_wrap", inners["connectx"],
                 [Session("erspan3", sid=302, jitter_ns=200 * US, seed=302,
                          ts_base=(1 << 32) - mid // 100)],
                 note="ERSPAN III 100 ns timestamps wrap mid-capture")
    # IPv6 outer: the IPv6-in-VLAN-301 scenario over ERSPAN II, and an
    # ERSPAN III session with IEEE 1588 timestamps (32 bits of ns)
    write_mirror(out, "faults6_erspan2_v6", inners["faults6"],
                 [Session("erspan2", family=6, sid=602)],
                 note="IPv6 outer, IPv6 in VLAN 301 inside")
    write_mirror(out, "faults_erspan3_1588_v6", inners["faults"],
                 [Session("erspan3", family=6, sid=603, gra=GRA_IEEE1588,
                          jitter_ns=200 * US, seed=603)],
                 note="IPv6 outer, ERSPAN III timestamps in IEEE 1588 ns")
    # 100 us ticks time nothing that takes 20-60 us: the arrival clock
    write_mirror(out, "faults_erspan3_100us", inners["faults"],
                 [Session("erspan3", sid=604, gra=GRA_100US, jitter_ns=200 * US, seed=604)],
                 note="ERSPAN III timestamps in 100 us ticks")
    # two switches mirror the same traffic, over paths of their own
    write_mirror(out, "connectx_two_mirrors", inners["connectx"],
                 [Session("erspan2", switch="leaf1", sid=11, path_delay_ns=3 * US),
                  Session("erspan2", switch="leaf2", sid=22, path_delay_ns=11 * US)],
                 note="two switches, one inner traffic")
    # switch truncation to 128 bytes: ERSPAN II says so (T bit), VXLAN
    # cannot (only the inner IP length tells); plus frames cut inside the BTH
    write_mirror(out, "connectx_trunc", inners["connectx"],
                 [Session("erspan2", sid=128, snaplen=128)],
                 extra=cut_in_bth_frames(2 * 1000 * US, 5),
                 note="cut to 128 bytes, ERSPAN T bit; 5 frames cut inside the BTH")
    write_mirror(out, "faults_trunc", inners["faults"],
                 [Session("vxlan", sid=128, snaplen=128)],
                 note="cut to 128 bytes, VXLAN (no T bit)")
    # an overlay carries more than RoCE
    rnd = random.Random(42)
    t0, t1 = inners["faults"].frames[0][0], inners["faults"].frames[-1][0]
    write_mirror(out, "faults_not_roce", inners["faults"],
                 [Session("vxlan", sid=77)],
                 extra=not_roce_frames(rnd, t0, t1, 60),
                 note="60 inner frames that are not RoCE: TCP, ARP, DNS")
    # every 10th frame copied once more under an ERSPAN version that does
    # not exist: the header cannot be followed, nothing in it is counted
    write_mirror(out, "connectx_unknown", inners["connectx"],
                 [Session("erspan2", sid=33)], unknown_every=10,
                 note="every 10th frame also as ERSPAN version 3")


if __name__ == "__main__":
    main(sys.argv[1])
