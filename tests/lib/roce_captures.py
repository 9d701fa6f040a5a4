#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""RoCE v2 captures shaped like hardware RNICs' traffic, built with scapy's
RoCE layer (scapy.contrib.roce: BTH with its ICRC, AETH), not with anything
of ours, plus the ground truth of each by construction.

    roce_captures.py OUTDIR

writes OUTDIR/<scenario>.pcap and OUTDIR/<scenario>.json for every
scenario: per flow (requester, responder, responder QPN) the exact latency
of every request that gets timed, in ns, and the counts rocelat must find.
Deterministic (fixed seeds). What real NICs do that rxe and rocegen do not:
each side of a QP pair sends from its own UDP source port, several QPs
between the same two hosts, random 24-bit starting PSNs, coalesced ACKs,
4 KiB READs at MTU 1024, RNR NAKs, CNPs, IPv6 in a VLAN, atomics.
"""
import json
import random
import struct
import sys
from decimal import Decimal

from scapy.all import Ether, IP, IPv6, UDP, Dot1Q, Raw, wrpcap
from scapy.contrib.roce import BTH, AETH

US = 1000
MS = 1000 * US

OP = {
    "SEND_ONLY": 0x04, "WRITE_ONLY": 0x0A, "READ_REQUEST": 0x0C,
    "READ_RESP_FIRST": 0x0D, "READ_RESP_MIDDLE": 0x0E,
    "READ_RESP_LAST": 0x0F, "READ_RESP_ONLY": 0x10, "ACK": 0x11,
    "ATOMIC_ACK": 0x12, "FETCH_ADD": 0x14, "CNP": 0x81,
}


def nearest_rank(vals, q):
    s = sorted(vals)
    k = max(1, -(-int(q * len(s) * 1000000) // 1000000))  # ceil(q * n)
    return s[min(k, len(s)) - 1]


class Capture:
    """Frames in time order with their ground truth."""

    def __init__(self, v6=False, vlan=None):
        self.frames = []          # (t_ns, scapy packet)
        self.v6 = v6
        self.vlan = vlan
        self.flows = {}
        self.ip_id = 0

    def flow(self, req, resp, resp_qpn, req_qpn, sport):
        key = "%s>%s/%d" % (req, resp, resp_qpn)
        f = self.flows.setdefault(key, {
            "requester": req, "responder": resp, "dqpn": resp_qpn,
            "req_qpn": req_qpn, "sport": sport, "latencies_ns": [],
            "retransmits": 0, "naks": 0, "rnr_naks": 0, "cnps": 0,
            "ecn_ce": 0, "responses_missing": 0})
        return f

    def pkt(self, t, src, dst, sport, bth, extra=b"", ecn=0):
        self.ip_id = (self.ip_id + 1) & 0xFFFF
        if self.v6:
            l3 = IPv6(src=src, dst=dst, tc=ecn)
        else:
            l3 = IP(src=src, dst=dst, tos=ecn, id=self.ip_id, flags="DF")
        eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
        if self.vlan is not None:
            eth = eth / Dot1Q(vlan=self.vlan)
        p = eth / l3 / UDP(sport=sport, dport=4791) / bth
        if extra:
            p = p / Raw(extra)
        self.frames.append((t, p))

    def write(self, base, totals):
        # sorted in place: connectx() and faults() return the Capture, and
        # tests/lib/mirror_captures.py re-wraps its frames in time order
        self.frames.sort(key=lambda x: x[0])
        pkts = []
        for t, p in self.frames:
            p.time = Decimal(t) / Decimal(10 ** 9)
            pkts.append(p)
        wrpcap(base + ".pcap", pkts, nano=True)
        flows = []
        for f in self.flows.values():
            lat = f["latencies_ns"]
            f["samples"] = len(lat)
            if lat:
                f["p50"] = nearest_rank(lat, 0.50)
                f["p90"] = nearest_rank(lat, 0.90)
                f["p99"] = nearest_rank(lat, 0.99)
                f["max"] = max(lat)
            flows.append(f)
        totals["samples"] = sum(f["samples"] for f in flows)
        with open(base + ".json", "w") as out:
            json.dump({"flows": flows, "totals": totals}, out, indent=1)


def bump(f, tot, key, n=1, total=None):
    """count n of key on flow f and in the totals (under total if named)"""
    f[key] = f.get(key, 0) + n
    tot[total or key] = tot.get(total or key, 0) + n


def reth(length):
    return struct.pack("!QII", 0x7f0000001000, 0x1234, length)


def aeth(syndrome, msn):
    return struct.pack("!I", (syndrome << 24) | (msn & 0xFFFFFF))


def connectx(out):
    """4 QPs between two hosts, each side its own source port per QP,
    random starting PSNs, SENDs with coalesced ACKs (one ACK for three
    back-to-back requests), 4 KiB READs at MTU 1024, fetch-and-adds."""
    rnd = random.Random(8)
    c = Capture()
    A, B = "10.1.0.1", "10.1.0.2"
    tot = {"requests": 0, "acks": 0, "read_responses": 0, "retransmits": 0,
           "nak_psn_seq_err": 0, "rnr_naks": 0, "cnps": 0, "ecn_ce": 0,
           "unmatched_answers": 0, "timeouts": 0, "responses_missing": 0}
    qps = []
    for i in range(4):
        qps.append({
            "req_qpn": 0x100 + 7 * i, "resp_qpn": 0x2c0 + 3 * i,
            # per side: the port each RNIC picked for its QP
            "req_sport": 49152 + rnd.randrange(16000),
            "resp_sport": 49152 + rnd.randrange(16000),
            "psn": rnd.randrange(1 << 24),
            "base_us": [12, 18, 30, 250][i],
        })
    t = 1 * MS
    for rnd_i in range(120):
        for q in qps:
            f = c.flow(A, B, q["resp_qpn"], q["req_qpn"], q["req_sport"])
            kind = rnd_i % 3
            if kind == 0:
                # three SENDs back to back; the responder ACKs only the
                # last, which acknowledges all three (coalescing)
                burst = []
                for k in range(3):
                    c.pkt(t + 2 * US * k, A, B, q["req_sport"],
                          BTH(opcode=OP["SEND_ONLY"], dqpn=q["resp_qpn"],
                              ackreq=1, psn=q["psn"]), b"\0" * 64)
                    tot["requests"] += 1
                    burst.append(t + 2 * US * k)
                    q["psn"] = (q["psn"] + 1) & 0xFFFFFF
                lat = int(q["base_us"] * US * rnd.lognormvariate(0, 0.25))
                ta = burst[-1] + lat
                c.pkt(ta, B, A, q["resp_sport"],
                      BTH(opcode=OP["ACK"], dqpn=q["req_qpn"],
                          psn=(q["psn"] - 1) & 0xFFFFFF) / AETH(syndrome=0x1f, msn=rnd_i))
                tot["acks"] += 1
                f["latencies_ns"] += [ta - ts for ts in burst]
            elif kind == 1:
                # a 4 KiB READ at MTU 1024: four responses; the first
                # answers it, the READ took four PSNs
                c.pkt(t, A, B, q["req_sport"],
                      BTH(opcode=OP["READ_REQUEST"], dqpn=q["resp_qpn"],
                          ackreq=1, psn=q["psn"]), reth(4096))
                tot["requests"] += 1
                lat = int(q["base_us"] * US * rnd.lognormvariate(0, 0.25))
                names = ["READ_RESP_FIRST", "READ_RESP_MIDDLE",
                         "READ_RESP_MIDDLE", "READ_RESP_LAST"]
                for k, name in enumerate(names):
                    ext = aeth(0x1f, rnd_i) if name != "READ_RESP_MIDDLE" else b""
                    c.pkt(t + lat + k * 800, B, A, q["resp_sport"],
                          BTH(opcode=OP[name], dqpn=q["req_qpn"],
                              psn=(q["psn"] + k) & 0xFFFFFF), ext + b"\x5a" * 1024)
                    tot["read_responses"] += 1
                f["latencies_ns"].append(lat)
                q["psn"] = (q["psn"] + 4) & 0xFFFFFF
            else:
                # fetch-and-add, answered by its ATOMIC ACKNOWLEDGE
                c.pkt(t, A, B, q["req_sport"],
                      BTH(opcode=OP["FETCH_ADD"], dqpn=q["resp_qpn"],
                          ackreq=1, psn=q["psn"]),
                      reth(8)[:12] + struct.pack("!QQ", 1, 0))
                tot["requests"] += 1
                lat = int(q["base_us"] * US * rnd.lognormvariate(0, 0.25))
                c.pkt(t + lat, B, A, q["resp_sport"],
                      BTH(opcode=OP["ATOMIC_ACK"], dqpn=q["req_qpn"], psn=q["psn"]),
                      aeth(0x1f, rnd_i) + struct.pack("!Q", 41))
                tot["acks"] += 1
                f["latencies_ns"].append(lat)
                q["psn"] = (q["psn"] + 1) & 0xFFFFFF
            t += 3 * MS // 4 + rnd.randrange(100 * US)
        t += 2 * MS
    c.write(out + "/connectx", tot)
    return c


def faults(out, v6=False):
    """One QP per direction (both hosts are requesters), IPv6 in a VLAN
    when v6: RNR NAK then the retry, a lost request answered by a
    sequence-error NAK and go-back-N, CE marks with CNPs both ways, a READ
    whose first response is lost (a later ACK passes it), and requests left
    unanswered at the end (timeouts)."""
    rnd = random.Random(11)
    if v6:
        c = Capture(v6=True, vlan=301)
        A, B = "fd00:10::1", "fd00:10::2"
    else:
        c = Capture()
        A, B = "10.2.0.1", "10.2.0.2"
    tot = {"rnr_naks": 0, "nak_psn_seq_err": 0, "retransmits": 0, "cnps": 0,
           "ecn_ce": 0, "timeouts": 0, "responses_missing": 0, "karn_discarded": 0}
    sides = [
        # requester, responder, requester QPN, responder QPN, ports, PSN
        (A, B, 0x4a1, 0x9c3, 50001, 60002, rnd.randrange(1 << 24)),
        (B, A, 0x9c5, 0x4a7, 61003, 51004, rnd.randrange(1 << 24)),
    ]
    t = 1 * MS
    for (rq, rs, rqpn, sqpn, rport, sport, psn) in sides:
        f = c.flow(rq, rs, sqpn, rqpn, rport)

        def req(tt, p, op="SEND_ONLY", ecn=0, extra=b"\0" * 32):
            c.pkt(tt, rq, rs, rport, BTH(opcode=OP[op], dqpn=sqpn, ackreq=1,
                                         psn=p & 0xFFFFFF), extra, ecn=ecn)

        def ans(tt, p, syn=0x1f, op="ACK", extra=b"", ecn=0):
            c.pkt(tt, rs, rq, sport, BTH(opcode=OP[op], dqpn=rqpn,
                                         psn=p & 0xFFFFFF), aeth(syn, 0) + extra, ecn=ecn)

        # 40 clean SENDs, 20 of them CE-marked, each CE answered by a CNP
        # from the responder to the requester's QP
        for i in range(40):
            lat = int((20 + 40 * rnd.random()) * US)
            ce = 3 if i % 2 else 0
            req(t, psn, ecn=ce)
            ans(t + lat, psn)
            f["latencies_ns"].append(lat)
            if ce:
                bump(f, tot, "ecn_ce")
                c.pkt(t + lat + 5 * US, rs, rq, sport + 1,
                      BTH(opcode=OP["CNP"], dqpn=rqpn, psn=0), b"\0" * 16)
                bump(f, tot, "cnps")
            psn += 1
            t += 500 * US
        # RNR NAK, then the retry is ACKed (Karn: no sample)
        req(t, psn)
        ans(t + 30 * US, psn, syn=0x20 | 12)
        req(t + 2 * MS, psn)
        ans(t + 2 * MS + 25 * US, psn)
        bump(f, tot, "rnr_naks")
        bump(f, tot, "retransmits")
        tot["karn_discarded"] += 1
        psn += 1
        t += 4 * MS
        # psn+0 arrives, psn+1 is lost, psn+2 arrives: NAK(psn+1) acks
        # psn+0; go-back-N resends psn+1 and psn+2, ACKed together
        req(t, psn)
        req(t + 10 * US, psn + 2)   # psn+1 never seen here
        ans(t + 40 * US, psn + 1, syn=0x60)
        f["latencies_ns"].append(40 * US)
        bump(f, tot, "naks", total="nak_psn_seq_err")
        req(t + 100 * US, psn + 1)
        req(t + 110 * US, psn + 2)
        ans(t + 150 * US, psn + 2)
        # both resends are retransmissions (psn+1's original was lost
        # before this observer), so the ACK times nothing (Karn)
        bump(f, tot, "retransmits", 2)
        tot["karn_discarded"] += 1
        psn += 3
        t += 4 * MS
        # a READ whose responses are all lost; the next SEND's ACK
        # passes it: no sample, its response counted as missing
        req(t, psn, op="READ_REQUEST", extra=reth(2048))
        req(t + 20 * US, psn + 2)
        ans(t + 80 * US, psn + 2)
        f["latencies_ns"].append(60 * US)
        bump(f, tot, "responses_missing")
        psn += 3
        t += 4 * MS
        # a CE-marked READ RESPONSE makes the requester send the CNP, to
        # the responder's QP
        req(t, psn, op="READ_REQUEST", extra=reth(512))
        ans(t + 35 * US, psn, op="READ_RESP_ONLY", extra=b"\x11" * 512, ecn=3)
        c.pkt(t + 60 * US, rq, rs, rport + 7,
              BTH(opcode=OP["CNP"], dqpn=sqpn, psn=0), b"\0" * 16)
        f["latencies_ns"].append(35 * US)
        bump(f, tot, "ecn_ce")
        bump(f, tot, "cnps")
        psn += 1
        t += 4 * MS
        # three requests never answered: timeouts once 1 s has passed
        for i in range(3):
            req(t + i * US, psn + i)
        f["timeouts"] = 3
        tot["timeouts"] += 3
        psn += 3
        t += 1 * MS
    # the capture runs on past the 1 s timeout: a last unrelated packet
    c.pkt(t + 1500 * MS, A, B, 50001, BTH(opcode=OP["SEND_ONLY"], dqpn=0x777,
                                          ackreq=0, psn=5), b"\0" * 8)
    c.write(out + ("/faults6" if v6 else "/faults"), tot)
    return c


def mad(attr, body):
    """a CM MAD: base version 1, class 7 (CM), class version 2, Send"""
    hdr = struct.pack("!BBBBHHQHHI", 1, 0x07, 2, 0x03, 0, 0,
                      0x5eed0000 + attr, attr, 0, 0)
    return (hdr + body).ljust(256, b"\0")


def cm_req(comm_id, qpn, psn):
    body = struct.pack("!II", comm_id, 0) + struct.pack("!QQ", 0x0106000000000000 | 4791, 0x0202)
    body += struct.pack("!II", 0, 0)                       # reserved, Q_Key
    body += struct.pack("!I", qpn << 8 | 0x10)              # local QPN, resp. resources
    body += struct.pack("!II", 0x10, 0x07)                  # EECNs, depth, flags
    body += struct.pack("!I", psn << 8 | 0x77)              # starting PSN, timeouts
    return mad(0x0010, body)


def cm_rep(comm_id, remote_id, qpn, psn):
    body = struct.pack("!III", comm_id, remote_id, 0)
    body += struct.pack("!II", qpn << 8, 0) + struct.pack("!I", psn << 8)
    return mad(0x0013, body)


def cm(out):
    """RDMA CM sets up two QPs between two hosts whose requests start at
    the same PSN (as generators and some drivers do) and whose answers
    come from ports of their own: only the CM exchange (REQ on QP 1 with
    the requester's QPN, REP with the responder's) tells the QPs' answers
    apart."""
    rnd = random.Random(5)
    c = Capture()
    A, B = "10.4.0.1", "10.4.0.2"
    deth = struct.pack("!II", 0x80010000, 1)
    qps = [(0x1a2, 0x3b4, 50100, 60100, 0xaaa0001, 0xbbb0001),
           (0x1a9, 0x3c1, 50101, 60101, 0xaaa0002, 0xbbb0002)]
    t = 1 * MS
    for rq, rs, rport, sport, cid_a, cid_b in qps:
        c.pkt(t, A, B, 49999, BTH(opcode=0x64, dqpn=1, psn=0), deth + cm_req(cid_a, rq, 1000))
        c.pkt(t + 300 * US, B, A, 49998, BTH(opcode=0x64, dqpn=1, psn=0), deth + cm_rep(cid_b, cid_a, rs, 7000))
        t += 1 * MS
    tot = {"cm_requests": 2, "cm_paired": 2, "ambiguous_answers": 0,
           "unmatched_answers": 0, "qps_paired": 0}
    psn = 1000
    for i in range(50):
        # both QPs' requests are out before either answer: their windows
        # hold the same PSN
        for k, (rq, rs, rport, sport, _, _) in enumerate(qps):
            f = c.flow(A, B, rs, rq, rport)
            ts = t + 2 * US * k
            lat = int((15 + 60 * k) * US * rnd.lognormvariate(0, 0.2))
            c.pkt(ts, A, B, rport, BTH(opcode=OP["SEND_ONLY"], dqpn=rs, ackreq=1,
                                       psn=psn), b"\0" * 32)
            c.pkt(ts + lat, B, A, sport, BTH(opcode=OP["ACK"], dqpn=rq, psn=psn)
                  / AETH(syndrome=0x1f, msn=i))
            f["latencies_ns"].append(lat)
        t += 400 * US
        psn += 1
    c.write(out + "/cm", tot)


def cm_reconnect(out):
    """A requester QP connected by RDMA CM to one responder QP, then, with
    the same QPN, to another (a connection torn down and made again): the
    second REP re-pairs it, and every later answer belongs to the new
    responder QP, none to the old one (rocelat caches pairings per CPU:
    a stale entry would credit them to the old flow)."""
    rnd = random.Random(7)
    c = Capture()
    A, B = "10.4.1.1", "10.4.1.2"
    deth = struct.pack("!II", 0x80010000, 1)
    rq = 0x2a5
    t = 1 * MS
    tot = {"cm_requests": 2, "cm_paired": 2, "ambiguous_answers": 0,
           "unmatched_answers": 0, "qps_paired": 0}
    for n, (rs, psn, cid_a, cid_b) in enumerate([(0x4b1, 3000, 0xccc0001, 0xddd0001),
                                                 (0x4c9, 3000, 0xccc0002, 0xddd0002)]):
        c.pkt(t, A, B, 49999, BTH(opcode=0x64, dqpn=1, psn=0), deth + cm_req(cid_a, rq, psn))
        c.pkt(t + 300 * US, B, A, 49998, BTH(opcode=0x64, dqpn=1, psn=0),
              deth + cm_rep(cid_b, cid_a, rs, 9000))
        t += 1 * MS
        f = c.flow(A, B, rs, rq, 50200 + n)
        for i in range(40):
            lat = int((20 + 50 * n) * US * rnd.lognormvariate(0, 0.2))
            c.pkt(t, A, B, 50200 + n, BTH(opcode=OP["SEND_ONLY"], dqpn=rs, ackreq=1,
                                          psn=psn + i), b"\0" * 32)
            c.pkt(t + lat, B, A, 60200 + n, BTH(opcode=OP["ACK"], dqpn=rq, psn=psn + i)
                  / AETH(syndrome=0x1f, msn=i))
            f["latencies_ns"].append(lat)
            t += 400 * US
    c.write(out + "/cm_reconnect", tot)


HELD_ANSWERS = 8    # answers rocelat holds per QP not yet paired (README)


def exact_pairing(frames, timeout_ns=1000 * MS):
    """The independent pairing of a recording: per direction of a QP pair
    (known by construction), each recorded request asking for an answer
    is timed by the first recorded ACK of that direction after it whose
    PSN covers it (cumulative). late[d] = time direction d gets paired
    (by the other direction's first answer): answers of d before then are
    held, at most HELD_ANSWERS; what forgotten ones covered is untimed.
    Returns {d: {"lat": [...], "untimed": n, "timeouts": n}}."""
    out, pend, held = {}, {}, {}
    end = max(t for t, _ in frames)
    for t, m in sorted(frames, key=lambda x: x[0]):
        d = m["dir"]
        r = out.setdefault(d, {"lat": [], "untimed": 0, "timeouts": 0})
        q = pend.setdefault(d, [])
        # requests older than the timeout at this frame's time are out
        for ot in [x for x in q if t - x[0] > timeout_ns]:
            q.remove(ot)
            r["timeouts"] += 1
        if m["kind"] == "req":
            q.append((t, m["psn"]))
            continue
        if m.get("held"):
            held.setdefault(d, []).append((t, m["psn"]))
            continue
        h = held.pop(d, [])
        for ht, hp in h[:-HELD_ANSWERS]:
            for x in [x for x in q if x[1] <= hp]:
                q.remove(x)
                r["untimed"] += 1
        for ht, hp in h[-HELD_ANSWERS:] + [(t, m["psn"])]:
            for x in [x for x in q if x[1] <= hp]:
                q.remove(x)
                r["lat"].append(ht - x[0])
    for d, q in pend.items():
        out[d]["timeouts"] += sum(1 for x in q if end - x[0] > timeout_ns)
    return out


def lossy(out):
    """A sniffer that lost packets, on 4 bidirectional QP pairs (each QP
    pair sends both ways, each side from its own port): in the B->A
    direction of pairs 0-2 every second request is lost, and the ACK
    covering both (coalesced) is ahead of every request recorded, so that
    direction is paired only through the other one, which starts later:
    its first answers wait (pair 2: more than HELD_ANSWERS of them, the
    oldest forgotten). Pair 3's A->B leaves a request unanswered, and its
    connection is made again on the same QPNs 5 s later."""
    rnd = random.Random(28)
    c = Capture()
    A, B = "10.6.0.1", "10.6.0.2"
    frames = []

    def send(t, d, src, dst, sport, qpn, psn, kind, held=False):
        if kind == "req":
            bth = BTH(opcode=OP["SEND_ONLY"], dqpn=qpn, ackreq=1, psn=psn)
            c.pkt(t, src, dst, sport, bth, b"\0" * 32)
        else:
            c.pkt(t, src, dst, sport, BTH(opcode=OP["ACK"], dqpn=qpn, psn=psn)
                  / AETH(syndrome=0x1f, msn=0))
        frames.append((t, {"dir": d, "kind": kind, "psn": psn, "held": held}))

    dirs = {}
    t0 = 1 * MS
    for i in range(4):
        qa, qb = 0x300 + 7 * i, 0x500 + 11 * i
        pa, pb = 50300 + i, 60300 + i
        ab = (A, B, qb, qa, pa)   # requester, responder, resp QPN, req QPN, port
        ba = (B, A, qa, qb, pb)
        dirs[(i, "ab")] = ab
        dirs[(i, "ba")] = ba
        psn_ab, psn_ba = rnd.randrange(1 << 23), rnd.randrange(1 << 23)
        nheld = 3 if i < 2 else 10
        t = t0 + i * 50 * MS
        if i < 3:
            # B->A first, every answer ahead of the requests recorded
            for j in range(nheld + 30):
                p = psn_ba + 2 * j
                send(t, (i, "ba"), B, A, pb, qa, p, "req")
                # p + 1 lost by the sniffer
                lat = int(20 * US * rnd.lognormvariate(0, 0.5))
                send(t + lat, (i, "ba"), A, B, pa, qb, p + 1, "ack",
                     held=j < nheld)
                t += 200 * US
                if j == nheld - 1:
                    # A->B starts: a clean request and ACK pair it, and
                    # through it B->A
                    for k in range(20):
                        send(t, (i, "ab"), A, B, pa, qb, psn_ab + k, "req")
                        send(t + int(30 * US * rnd.lognormvariate(0, 0.3)),
                             (i, "ab"), B, A, pb, qa, psn_ab + k, "ack")
                        t += 100 * US
        else:
            for k in range(20):
                send(t, (i, "ab"), A, B, pa, qb, psn_ab + k, "req")
                if k != 19:
                    send(t + 25 * US, (i, "ab"), B, A, pb, qa, psn_ab + k, "ack")
                t += 100 * US
            # torn down; 5 s later the same QPNs again, a new PSN far
            # behind (a new connection, which forgets what the old one
            # left: its request must have been a timeout by then)
            t += 5000 * MS
            psn2 = (psn_ab - (1 << 22)) & 0xFFFFFF
            for k in range(20):
                send(t, (i, "ab"), A, B, pa, qb, psn2 + k, "req")
                send(t + 35 * US, (i, "ab"), B, A, pb, qa, psn2 + k, "ack")
                t += 100 * US
    truth = exact_pairing(frames)
    tot = {"untimed": 0, "timeouts": 0, "unmatched_answers": 0, "ambiguous_answers": 0}
    for d, (rq, rs, rsq, rqq, port) in dirs.items():
        r = truth.get(d)
        if not r:
            continue
        f = c.flow(rq, rs, rsq, rqq, port)
        f["latencies_ns"] = r["lat"]
        f["untimed"] = r["untimed"]
        f["timeouts"] = r["timeouts"]
        tot["untimed"] += r["untimed"]
        tot["timeouts"] += r["timeouts"]
    c.write(out + "/lossy", tot)


def burst_qps(out, n=60, name="burst_qps"):
    """n QPs between two hosts, random first PSNs (as RNICs pick them),
    all sending their first request before the first answer comes (a
    collective starting its QPs): each is paired by its answer's PSN, up
    to PAIR_QPS (64) waiting at once, and timed: (400 + i) us for QP i's
    first request, 50 us for its second. Over 64, the oldest ones' answers
    cannot be paired (pair_candidates_dropped)."""
    rnd = random.Random(n)
    c = Capture()
    A, B = "10.6.0.1", "10.6.0.2"
    tot = {"requests": 0, "acks": 0}
    for i in range(n):
        req_qpn, resp_qpn, sport = 0x2000 + i, 0x3000 + i, 49152 + i
        psn = rnd.randrange(1 << 24)
        f = c.flow(A, B, resp_qpn, req_qpn, sport)
        t = 1 * MS + i * US
        for lat in ((400 + i) * US, 50 * US):
            c.pkt(t, A, B, sport, BTH(opcode=OP["SEND_ONLY"], dqpn=resp_qpn,
                                      ackreq=1, psn=psn), b"\0" * 64)
            c.pkt(t + lat, B, A, sport, BTH(opcode=OP["ACK"], dqpn=req_qpn, psn=psn) /
                  AETH(syndrome=0x1f, msn=1))
            f["latencies_ns"].append(lat)
            tot["requests"] += 1
            tot["acks"] += 1
            t += lat + 10 * US
            psn = (psn + 1) & 0xFFFFFF
    c.write(out + "/" + name, tot)


def many_qps(out, n=100000, name="many_qps", spread=False):
    """n QPs, one request each, never answered: between two hosts with
    consecutive QPNs, or (spread) between random address pairs with random
    QPNs, as a cluster's hosts have them (seeded: the same file each
    time). One scapy-built frame, its addresses, QPN and PSN patched per
    copy (the IPv4 checksum and ICRC left stale: nobody here checks them),
    written as pcap by hand: scapy takes minutes for 100000 frames."""
    tmpl = bytearray(bytes(
        Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
        IP(src="10.5.0.1", dst="10.5.0.2", flags="DF") /
        UDP(sport=49152, dport=4791) /
        BTH(opcode=OP["SEND_ONLY"], dqpn=0, ackreq=1, psn=0) / Raw(b"\0" * 16)))
    bth = 14 + 20 + 8
    rnd = random.Random(n)
    seen = set()
    with open(out + "/" + name + ".pcap", "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))
        for i in range(n):
            qpn = 0x1000 + i
            if spread:
                while True:
                    qpn = rnd.randrange(1, 1 << 24)
                    src = bytes([10, rnd.randrange(256), rnd.randrange(256), rnd.randrange(1, 255)])
                    dst = bytes([10, rnd.randrange(256), rnd.randrange(256), rnd.randrange(1, 255)])
                    if (qpn, src, dst) not in seen:
                        break
                seen.add((qpn, src, dst))
                tmpl[14 + 12:14 + 20] = src + dst
            tmpl[bth + 5:bth + 8] = qpn.to_bytes(3, "big")
            tmpl[bth + 9:bth + 12] = ((i * 7919) & 0xFFFFFF).to_bytes(3, "big")
            t = 1 * MS + i * 10 * US
            f.write(struct.pack("<IIII", t // 10 ** 9, t % 10 ** 9, len(tmpl), len(tmpl)))
            f.write(tmpl)
    with open(out + "/" + name + ".json", "w") as f:
        json.dump({"flows": [], "totals": {"requests": n, "tracked": n,
                                          "flows_started": n}}, f)


if __name__ == "__main__":
    connectx(sys.argv[1])
    faults(sys.argv[1])
    faults(sys.argv[1], v6=True)
    cm(sys.argv[1])
    cm_reconnect(sys.argv[1])
    lossy(sys.argv[1])
    burst_qps(sys.argv[1])
    burst_qps(sys.argv[1], 80, "burst_qps_over")
    many_qps(sys.argv[1])
    many_qps(sys.argv[1], 2048, "spread_qps", spread=True)
