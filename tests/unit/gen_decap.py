#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""
Mirror and tunnel frames for tests/unit/parse_decap.c, built by scapy (an
independent builder: its GRE, ERSPAN, VXLAN, Geneve and RoCE layers, with
scapy's own ICRC) rather than by our pkt_build.h.

Usage: gen_decap.py OUT.h [OUT.pcap]   (with a pcap also OUT.expect)

OUT.h holds one struct decap_case per frame: the bytes, the verdict
pkt_parse_eth() must return with decap on and with decap off, and the
struct pkt_info it must fill, every field of it. Header fields expected
are the values scapy was given; lengths, offsets and addresses are read
back from scapy's dissection of the bytes it built, not computed the way
the parser computes them. OUT.pcap has
the same frames for a second opinion, and OUT.expect what it must show:

    tshark -r build/tests/decap.pcap -V

decodes every frame with Wireshark's own dissectors (GRE, ERSPAN I/II/III
with the platform-specific subheader, VXLAN, Geneve, InfiniBand BTH/AETH);
tests/host/decap_pcap.bats holds that dissection (tshark 4.0, Debian 12)
against OUT.expect: the tunnel, its session ID or VNI, the inner BTH's
destination QP and PSN.

Deterministic: every field that scapy would fill from a clock or a
random source is given.
"""
import logging
import sys

# scapy's RoCE layer computes the ICRC over IPv4 only and warns for IPv6
# frames (their ICRC stays as scapy leaves it); the parser never reads it
logging.getLogger("scapy").setLevel(logging.ERROR)

from scapy.all import Ether, Dot1Q, Dot1AD, IP, IPv6, IPv6ExtHdrDestOpt, UDP, TCP, ARP, \
    GRE, Raw
from scapy.layers.vxlan import VXLAN
from scapy.contrib.roce import BTH, AETH
from scapy.contrib.erspan import ERSPAN_II, ERSPAN_III, ERSPAN_PlatformSpecific
from scapy.contrib.geneve import GENEVE, GeneveOptions
from scapy.utils import PcapWriter

# outer: the switch that mirrors and the collector; inner: the RoCE pair
SW4, COL4 = "192.0.2.10", "192.0.2.99"
SW6, COL6 = "2001:db8::10", "2001:db8::99"
RQ4, RS4 = "10.1.0.1", "10.1.0.2"
RQ6, RS6 = "fd00:1::1", "fd00:1::2"
MAC_SW, MAC_COL = "02:aa:00:00:00:01", "02:aa:00:00:00:02"
MAC_RQ, MAC_RS = "02:bb:00:00:00:01", "02:bb:00:00:00:02"

OP_SEND_ONLY, OP_WRITE_ONLY, OP_ACK = 0x04, 0x0A, 0x11
GRA = {0: "PKT_GRA_100US", 1: "PKT_GRA_100NS", 2: "PKT_GRA_IEEE1588", 3: "PKT_GRA_USER"}


def reth(va, rkey, dma_len):
    return Raw(va.to_bytes(8, "big") + rkey.to_bytes(4, "big") + dma_len.to_bytes(4, "big"))


def roce(family=4, vlans=(), op=OP_SEND_ONLY, dqpn=0x12, psn=7, ackreq=1,
         sport=49152, payload=64, syndrome=0, msn=1, dma_len=4096, ecn=0):
    """one RoCE v2 frame as the mirrored port saw it"""
    f = Ether(src=MAC_RQ, dst=MAC_RS)
    for i, v in enumerate(vlans):
        f = f / (Dot1AD(vlan=v) if i == 0 and len(vlans) == 2 else Dot1Q(vlan=v))
    if family == 4:
        f = f / IP(src=RQ4, dst=RS4, id=1, tos=ecn, flags="DF")
    else:
        f = f / IPv6(src=RQ6, dst=RS6, tc=ecn, fl=0x12345)
    f = f / UDP(sport=sport, dport=4791, chksum=0)
    bth = BTH(opcode=op, dqpn=dqpn, psn=psn, ackreq=ackreq, migreq=1)
    if op == OP_ACK:
        ext = AETH(syndrome=syndrome, msn=msn)
    elif op == OP_WRITE_ONLY:
        ext = reth(0x7f0000001000, 0x1234, dma_len)
    else:
        ext = Raw(b"")
    # the ICRC (scapy's FCS field) goes after the payload
    return f / bth / ext / Raw(bytes(range(payload % 256)) * (payload // 256) +
                               bytes(range(payload % 256)))


def outer_ip(family, vlans=()):
    f = Ether(src=MAC_SW, dst=MAC_COL)
    for v in vlans:
        f = f / Dot1Q(vlan=v)
    if family == 4:
        return f / IP(src=SW4, dst=COL4, id=7, ttl=63)
    return f / IPv6(src=SW6, dst=COL6, hlim=63)


def gre_teb(family, key=None, vlans=()):
    g = GRE(proto=0x6558)
    if key is not None:
        g.key_present = 1
        g.key = key
    return outer_ip(family, vlans) / g


def erspan2(family, session, seq=1000, vlans=(), t=0):
    return (outer_ip(family, vlans) /
            GRE(proto=0x88BE, seqnum_present=1, seqence_number=seq) /
            ERSPAN_II(ver=1, vlan=0, cos=0, en=3, t=t, session_id=session, index=5))


def erspan3(family, session, ts, gra=1, plat=None, vlans=(), t=0, ft=0):
    e = ERSPAN_III(ver=2, vlan=0, cos=0, bso=0, t=t, session_id=session,
                   timestamp=ts, sgt_other=0, p=0, ft=ft, hw=1, d=0, gra=gra,
                   o=1 if plat else 0)
    f = (outer_ip(family, vlans) /
         GRE(proto=0x22EB, seqnum_present=1, seqence_number=77) / e)
    if plat:
        f = f / ERSPAN_PlatformSpecific(platf_id=plat[0], info1=plat[1], info2=plat[2])
    return f


def vxlan(family, vni, vlans=(), flags=0x08):
    return outer_ip(family, vlans) / UDP(sport=61000, dport=4789, chksum=0) / \
        VXLAN(flags=flags, vni=vni)


def geneve(family, vni, options=()):
    return outer_ip(family) / UDP(sport=61001, dport=6081, chksum=0) / \
        GENEVE(vni=vni, proto=0x6558, options=list(options))


CASES = []


def case(name, frame, decap, plain, cut=None, inner=None, outer=None, full=None,
         tun=None):
    """frame: the whole frame (scapy) or its bytes; decap/plain: the verdicts
    with decap on and off (FILTERED: the quick pre-filter drops it);
    inner: the scapy frame pkt_info describes (None: the frame itself, or
    full when the frame is a cut copy of it); cut: bytes of inner (or full)
    the mirror kept; outer: pkt_info describes this outer packet, the
    tunnel not followed; tun: the tun_* fields and extra flags"""
    CASES.append(dict(name=name, frame=frame, decap=decap, plain=plain, cut=cut,
                      inner=inner, outer=outer, full=full, tun=dict(tun or {})))


def addr_bytes(a, family):
    import socket
    b = socket.inet_pton(socket.AF_INET if family == 4 else socket.AF_INET6, a)
    return b + bytes(16 - len(b))


def frame_fields(f, kept, l4=True, bth=True):
    """pkt_info fields of frame f (as built): header values are what scapy
    was given, lengths what scapy's dissection of its bytes says; kept: the
    bytes of f the mirror kept; l4/bth: stop before UDP/before the BTH"""
    fd = Ether(bytes(f))
    d, flags = {}, []
    p = fd.payload
    first = True
    while isinstance(p, (Dot1Q, Dot1AD)):
        if first:
            d["vlan"] = p.vlan
            flags.append("PKT_F_VLAN")
            first = False
        p = p.payload
    if not isinstance(p, (IP, IPv6)):
        return d, flags
    ip = p
    if ip.version == 4:
        d.update(family=4, ip_proto=ip.proto, ecn=ip.tos & 3, l3_len=ip.len)
    else:
        d.update(family=6, ip_proto=ip.nh, ecn=ip.tc & 3, l3_len=40 + ip.plen)
    d["saddr"] = addr_bytes(ip.src, d["family"])
    d["daddr"] = addr_bytes(ip.dst, d["family"])
    if len(fd) - len(ip) + d["l3_len"] > kept:
        flags.append("PKT_F_TRUNC")
    udp = ip.payload
    if not l4 or not isinstance(udp, UDP):
        return d, flags
    d.update(sport=udp.sport, dport=udp.dport)
    if udp.dport != 4791 or not bth or BTH not in f:
        return d, flags
    b = f[BTH]
    d.update(opcode=b.opcode, dqpn=b.dqpn, psn=b.psn)
    ext = 0
    if b.ackreq:
        flags.append("PKT_F_ACKREQ")
    if AETH in f:
        d.update(syndrome=f[AETH].syndrome, msn=f[AETH].msn)
        flags.append("PKT_F_AETH")
        ext = 4
    elif b.opcode == OP_WRITE_ONLY:
        d["dma_len"] = int.from_bytes(bytes(b.payload)[12:16], "big")
        flags.append("PKT_F_RETH")
        ext = 16
    # the UDP length as the header says, less UDP, BTH, extended header, ICRC
    d["payload_len"] = udp.len - 8 - 12 - ext - 4
    return d, flags


def expect(c, wire):
    """the struct pkt_info pkt_parse_eth() fills with decap on"""
    tun = dict(c["tun"])
    extra = tun.pop("flags", [])
    strip_bth = tun.pop("strip_bth", False)
    if c["inner"] is not None:
        ib = bytes(c["inner"])
        kept = c["cut"] or len(ib)
        off = wire.find(ib[:kept])
        assert off > 0, c["name"]
        tun["tun_off"] = off
        d, flags = frame_fields(c["inner"], kept, bth=not strip_bth)
    elif c["outer"] is not None:
        # the outer UDP, if any, is the tunnel's: no BTH behind it
        d, flags = frame_fields(c["outer"], len(wire), bth=False)
    elif c["full"] is not None:
        d, flags = frame_fields(c["full"], len(wire))
    else:
        d, flags = frame_fields(c["frame"], len(wire))
    if "PKT_F_TRUNC" in extra and "PKT_F_TRUNC" in flags:
        extra.remove("PKT_F_TRUNC")
    d["flags"] = " | ".join(flags + extra) if flags + extra else "0"
    d.update(tun)
    d["cap_len"] = len(wire)
    return d


def c_init(d):
    out = []
    for k, v in d.items():
        if isinstance(v, bytes):
            out.append(".%s = { %s }" % (k, ", ".join("0x%02x" % b for b in v)))
        elif isinstance(v, int):
            out.append(".%s = 0x%x" % (k, v))
        else:
            out.append(".%s = %s" % (k, v))
    return ",\n\t\t  ".join(out)


def build():
    # plain RoCE: the same with decap on and off
    case("plain IPv4 SEND_ONLY", roce(), "PKT_ROCE", "PKT_ROCE")
    case("plain QinQ IPv6 ACK", roce(6, vlans=(100, 42), op=OP_ACK, syndrome=0x61, msn=9),
         "PKT_ROCE", "PKT_ROCE")
    # GRE transparent Ethernet bridging, with and without a key
    r = roce(op=OP_WRITE_ONLY, psn=0x10000, dqpn=0x345)
    case("GRE/TEB IPv4 outer, key", gre_teb(4, key=0xC0FFEE) / r, "PKT_ROCE", "FILTERED",
         inner=r, tun=dict(tun_kind="PKT_TUN_GRE", tun_family=4, tun_id=0xC0FFEE,
                           tun_saddr=addr_bytes(SW4, 4)))
    r = roce(6, vlans=(5,), psn=0xFFFFFF)
    case("GRE/TEB IPv6 outer, VLAN inside", gre_teb(6) / r, "PKT_ROCE", "FILTERED",
         inner=r, tun=dict(tun_kind="PKT_TUN_GRE", tun_family=6,
                           tun_saddr=addr_bytes(SW6, 6)))
    # ERSPAN type II
    r = roce(op=OP_ACK, syndrome=0x60 | 0, msn=3, dqpn=0x11, psn=99)
    case("ERSPAN II IPv4 outer", erspan2(4, 0x155) / r, "PKT_ROCE", "FILTERED",
         inner=r, tun=dict(tun_kind="PKT_TUN_ERSPAN2", tun_family=4, tun_id=0x155,
                           tun_saddr=addr_bytes(SW4, 4)))
    r = roce(vlans=(42,), op=OP_ACK, syndrome=0x20 | 14, msn=4)
    case("ERSPAN II IPv6 outer, VLAN outside and inside",
         erspan2(6, 0x3FF, vlans=(7,)) / r, "PKT_ROCE", "PKT_IP",
         inner=r, tun=dict(tun_kind="PKT_TUN_ERSPAN2", tun_family=6, tun_id=0x3FF,
                           tun_saddr=addr_bytes(SW6, 6)))
    # GRE with checksum, key and sequence number: 16 bytes to skip
    r = roce(psn=2)
    case("GRE/TEB with checksum, key and sequence number",
         outer_ip(4) / GRE(proto=0x6558, chksum_present=1, key_present=1, key=0xFFFFFFFF,
                           seqnum_present=1, seqence_number=3) / r,
         "PKT_ROCE", "FILTERED", inner=r,
         tun=dict(tun_kind="PKT_TUN_GRE", tun_family=4, tun_id=0xFFFFFFFF,
                  tun_saddr=addr_bytes(SW4, 4)))
    # an IPv6 extension header between the outer IPv6 header and GRE
    r = roce(psn=3)
    f = (Ether(src=MAC_SW, dst=MAC_COL) / IPv6(src=SW6, dst=COL6, hlim=63) /
         IPv6ExtHdrDestOpt() / GRE(proto=0x88BE, seqnum_present=1, seqence_number=4) /
         ERSPAN_II(ver=1, session_id=12, index=1) / r)
    case("ERSPAN II IPv6 outer with a destination options header", f,
         "PKT_ROCE", "PKT_IP", inner=r,
         tun=dict(tun_kind="PKT_TUN_ERSPAN2", tun_family=6, tun_id=12,
                  tun_saddr=addr_bytes(SW6, 6)))
    # ERSPAN type I: no header after a GRE header without sequence number
    r = roce(psn=1)
    case("ERSPAN I IPv4 outer", outer_ip(4) / GRE(proto=0x88BE) / r,
         "PKT_ROCE", "FILTERED", inner=r,
         tun=dict(tun_kind="PKT_TUN_ERSPAN1", tun_family=4,
                  tun_saddr=addr_bytes(SW4, 4)))
    # ERSPAN type III, with and without the platform-specific subheader
    r = roce(op=OP_WRITE_ONLY, dma_len=65536, ecn=3)
    case("ERSPAN III IPv4 outer, 100 ns timestamp", erspan3(4, 17, 0xDEADBEEF, gra=1) / r,
         "PKT_ROCE", "FILTERED", inner=r,
         tun=dict(tun_kind="PKT_TUN_ERSPAN3", tun_family=4, tun_id=17,
                  tun_ts=0xDEADBEEF, tun_ts_gra=GRA[1], flags=["PKT_F_TUN_TS"],
                  tun_saddr=addr_bytes(SW4, 4)))
    r = roce(vlans=(300, 301), psn=0x800000)
    case("ERSPAN III IPv4 outer, platform subheader, QinQ inside",
         erspan3(4, 600, 123456789, gra=2, plat=(5, 0x2ABCDEF, 1764561600)) / r,
         "PKT_ROCE", "FILTERED", inner=r,
         tun=dict(tun_kind="PKT_TUN_ERSPAN3", tun_family=4, tun_id=600,
                  tun_ts=123456789, tun_ts_gra=GRA[2], tun_plat_id=5,
                  tun_plat_word=1764561600, flags=["PKT_F_TUN_TS", "PKT_F_TUN_PLAT"],
                  tun_saddr=addr_bytes(SW4, 4)))
    r = roce(6, op=OP_ACK, syndrome=0x60 | 0, msn=77, dqpn=0xABCDEF)
    case("ERSPAN III IPv6 outer, platform subheader",
         erspan3(6, 1, 42, gra=0, plat=(3, 0x1, 0x2)) / r,
         "PKT_ROCE", "FILTERED", inner=r,
         tun=dict(tun_kind="PKT_TUN_ERSPAN3", tun_family=6, tun_id=1, tun_ts=42,
                  tun_ts_gra=GRA[0], tun_plat_id=3, tun_plat_word=2,
                  flags=["PKT_F_TUN_TS", "PKT_F_TUN_PLAT"],
                  tun_saddr=addr_bytes(SW6, 6)))
    # VXLAN and Geneve
    r = roce(sport=50001)
    case("VXLAN IPv4 outer", vxlan(4, 0xABCDEF) / r, "PKT_ROCE", "FILTERED", inner=r,
         tun=dict(tun_kind="PKT_TUN_VXLAN", tun_family=4, tun_id=0xABCDEF,
                  tun_saddr=addr_bytes(SW4, 4)))
    r = roce(6, vlans=(9,), op=OP_WRITE_ONLY)
    case("VXLAN IPv6 outer, VLAN inside", vxlan(6, 1) / r, "PKT_ROCE", "FILTERED",
         inner=r, tun=dict(tun_kind="PKT_TUN_VXLAN", tun_family=6, tun_id=1,
                           tun_saddr=addr_bytes(SW6, 6)))
    r = roce(6)
    opts = [GeneveOptions(classid=0x0102, type=0x80, data=b"abcdefgh"),
            GeneveOptions(classid=0xFFFF, type=0x01, data=b"wxyz")]
    case("Geneve IPv4 outer, 20 bytes of options", geneve(4, 0x123456, opts) / r,
         "PKT_ROCE", "FILTERED", inner=r,
         tun=dict(tun_kind="PKT_TUN_GENEVE", tun_family=4, tun_id=0x123456,
                  tun_saddr=addr_bytes(SW4, 4)))
    r = roce(vlans=(11,))
    case("Geneve IPv6 outer, no options", geneve(6, 7) / r, "PKT_ROCE", "FILTERED",
         inner=r, tun=dict(tun_kind="PKT_TUN_GENEVE", tun_family=6, tun_id=7,
                           tun_saddr=addr_bytes(SW6, 6)))
    # truncated mirrors: the switch cut the frame to 128 bytes, then
    # encapsulated it (the outer lengths are right, the inner IP's not)
    r = roce(op=OP_WRITE_ONLY, payload=1024, dma_len=1024)
    case("ERSPAN II, frame cut to 128 bytes: RETH read",
         erspan2(4, 2, t=1) / Raw(bytes(r)[:128]), "PKT_ROCE", "FILTERED",
         cut=128, inner=r,
         tun=dict(tun_kind="PKT_TUN_ERSPAN2", tun_family=4, tun_id=2,
                  tun_saddr=addr_bytes(SW4, 4), flags=["PKT_F_TRUNC"]))
    r = roce(op=OP_ACK, payload=900, msn=5)
    case("ERSPAN III, frame cut to 128 bytes, T bit clear: AETH read",
         erspan3(4, 3, 1000) / Raw(bytes(r)[:128]), "PKT_ROCE", "FILTERED",
         cut=128, inner=r,
         tun=dict(tun_kind="PKT_TUN_ERSPAN3", tun_family=4, tun_id=3, tun_ts=1000,
                  tun_ts_gra=GRA[1], flags=["PKT_F_TUN_TS"],
                  tun_saddr=addr_bytes(SW4, 4)))
    # cut so short the BTH is incomplete: malformed, and flagged as cut
    r = roce(vlans=(1, 2), payload=1000)
    cut = 14 + 8 + 20 + 8 + 6
    case("ERSPAN III, frame cut inside the BTH",
         erspan3(6, 4, 5, plat=(3, 0, 0)) / Raw(bytes(r)[:cut]), "PKT_MALFORMED", "FILTERED",
         cut=cut, inner=r,
         tun=dict(tun_kind="PKT_TUN_ERSPAN3", tun_family=6, tun_id=4, tun_ts=5,
                  tun_ts_gra=GRA[1], tun_plat_id=3,
                  flags=["PKT_F_TUN_TS", "PKT_F_TUN_PLAT"],
                  tun_saddr=addr_bytes(SW6, 6), strip_bth=True))
    # tunnels whose inner frame is not RoCE
    a = Ether(src=MAC_RQ, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc=RQ4, pdst=RS4)
    case("VXLAN carrying ARP", vxlan(4, 5) / a, "PKT_TUN_NOT_ROCE", "FILTERED", inner=a,
         tun=dict(tun_kind="PKT_TUN_VXLAN", tun_family=4, tun_id=5,
                  tun_saddr=addr_bytes(SW4, 4)))
    t = Ether(src=MAC_RQ, dst=MAC_RS) / IP(src=RQ4, dst=RS4, id=1) / TCP(sport=1, dport=2)
    case("ERSPAN II carrying TCP", erspan2(4, 6) / t, "PKT_TUN_NOT_ROCE", "FILTERED",
         inner=t, tun=dict(tun_kind="PKT_TUN_ERSPAN2", tun_family=4, tun_id=6,
                           tun_saddr=addr_bytes(SW4, 4)))
    # one level only: RoCE in VXLAN in ERSPAN is the inner VXLAN's UDP
    r = roce()
    v = Ether(src=MAC_RQ, dst=MAC_RS) / IP(src=RQ4, dst=RS4, id=1) / \
        UDP(sport=61000, dport=4789, chksum=0) / VXLAN(vni=9) / r
    case("ERSPAN II carrying VXLAN: not followed twice", erspan2(4, 8) / v,
         "PKT_TUN_NOT_ROCE", "FILTERED", inner=v,
         tun=dict(tun_kind="PKT_TUN_ERSPAN2", tun_family=4, tun_id=8,
                  tun_saddr=addr_bytes(SW4, 4)))
    # headers not followed: pkt_info describes the outer packet
    o = erspan2(4, 9)
    bad = bytes(o / roce())
    erspan_at = len(bytes(o)) - 8
    bad = bad[:erspan_at] + bytes([0x30 | (bad[erspan_at] & 0x0F)]) + bad[erspan_at + 1:]
    case("ERSPAN unknown version 3", bad, "PKT_TUN_UNKNOWN", "FILTERED", outer=Ether(bad),
         tun=dict(tun_kind="PKT_TUN_ERSPAN2", tun_family=4, tun_id=9,
                  tun_saddr=addr_bytes(SW4, 4)))
    g = outer_ip(4) / GRE(proto=0x0800) / IP(src=RQ4, dst=RS4) / UDP(dport=4791)
    case("GRE carrying IP, not Ethernet", g, "PKT_TUN_UNKNOWN", "FILTERED",
         outer=g, tun=dict(tun_kind="PKT_TUN_GRE", tun_family=4,
                           tun_saddr=addr_bytes(SW4, 4)))
    e = erspan3(4, 13, 99, ft=2) / IP(src=RQ4, dst=RS4) / UDP(dport=4791)
    case("ERSPAN III frame type IP, not Ethernet", e, "PKT_TUN_UNKNOWN", "FILTERED",
         outer=e, tun=dict(tun_kind="PKT_TUN_ERSPAN3", tun_family=4, tun_id=13,
                           tun_ts=99, tun_ts_gra=GRA[1], flags=["PKT_F_TUN_TS"],
                           tun_saddr=addr_bytes(SW4, 4)))
    g = outer_ip(4) / UDP(sport=61001, dport=6081, chksum=0) / \
        GENEVE(vni=14, proto=0x0800) / IP(src=RQ4, dst=RS4) / UDP(dport=4791)
    case("Geneve carrying IPv4, not Ethernet", g, "PKT_TUN_UNKNOWN", "FILTERED",
         outer=g, tun=dict(tun_kind="PKT_TUN_GENEVE", tun_family=4, tun_id=14,
                           tun_saddr=addr_bytes(SW4, 4)))
    v = vxlan(4, 10, flags=0x00) / roce()
    case("VXLAN without the I flag", v, "PKT_TUN_UNKNOWN", "FILTERED", outer=v,
         tun=dict(tun_kind="PKT_TUN_VXLAN", tun_family=4, tun_id=10,
                  tun_saddr=addr_bytes(SW4, 4)))
    # a SPAN port's own truncation (no tunnel): decap says so, plain does not
    r = roce(op=OP_WRITE_ONLY, payload=2000, dma_len=2000)
    case("plain RoCE cut to 128 bytes (SPAN truncation)", bytes(r)[:128],
         "PKT_ROCE", "PKT_ROCE", full=r)


TSHARK_TOKEN = {"PKT_TUN_GRE": "gre", "PKT_TUN_ERSPAN1": "erspan",
                "PKT_TUN_ERSPAN2": "erspan", "PKT_TUN_ERSPAN3": "erspan",
                "PKT_TUN_VXLAN": "vxlan", "PKT_TUN_GENEVE": "geneve"}


def expect_line(n, c, d):
    """what tshark must show of frame n: the tunnel's protocol, its session
    ID or VNI (ERSPAN, VXLAN, Geneve), and where the inner RoCE frame's BTH
    is whole, its destination QP and PSN"""
    kind = d.get("tun_kind", "PKT_TUN_NONE")
    token = TSHARK_TOKEN.get(kind, "-")
    # Wireshark, too, stops at an ERSPAN version it does not know
    sid = d.get("tun_id", 0) if token in ("erspan", "vxlan", "geneve") and \
        kind != "PKT_TUN_ERSPAN1" and not (token == "erspan" and
                                           c["decap"] == "PKT_TUN_UNKNOWN") else "-"
    roce = c["decap"] == "PKT_ROCE"
    return "\t".join(str(x) for x in (
        n, token, sid, d["dqpn"] if roce else "-", d["psn"] if roce else "-",
        c["name"]))


def main():
    build()
    out = sys.argv[1]
    pcap = PcapWriter(sys.argv[2], sync=True) if len(sys.argv) > 2 else None
    exp = []
    lines = ["/* generated by tests/unit/gen_decap.py: do not edit */",
             "static const struct decap_case decap_cases[] = {"]
    for c in CASES:
        f = c["frame"]
        wire = f if isinstance(f, bytes) else bytes(f)
        if pcap:
            pkt = Ether(wire)
            pkt.time = 1764547200 + len(exp) / 1000  # the same bytes every build
            pcap.write(pkt)
        d = expect(c, wire)
        exp.append(expect_line(len(exp) + 1, c, d))
        lines.append("\t{ .name = \"%s\", .len = %d,\n\t  .decap = %s, .plain = %s,"
                     % (c["name"], len(wire), c["decap"],
                        "PARSE_T_FILTERED" if c["plain"] == "FILTERED" else c["plain"]))
        lines.append("\t  .pkt = (const unsigned char[]){ %s }," %
                     ", ".join("0x%02x" % b for b in wire))
        lines.append("\t  .want = { %s } }," % c_init(d))
    lines.append("};")
    open(out, "w").write("\n".join(lines) + "\n")
    if pcap:
        # tests/host/decap_pcap.bats holds tshark's dissection against it
        open(sys.argv[2].rsplit(".", 1)[0] + ".expect", "w").write("\n".join(exp) + "\n")


if __name__ == "__main__":
    main()
