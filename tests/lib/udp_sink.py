#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""udp_sink.py PORT: receive and discard UDP datagrams on PORT (IPv4, any
address) until killed, so that traffic to it is delivered, not dropped as
NO_SOCKET."""
import socket
import sys

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind(("0.0.0.0", int(sys.argv[1])))
while True:
    s.recv(65536)
