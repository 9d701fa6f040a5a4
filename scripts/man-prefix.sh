#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A man page (stdin to stdout) for programs installed under a prefix
# (make install APP_PREFIX=bpf-): every word naming one of NAMES (rxedrop,
# \fBrxedrop\fR, rxedrop(8)) gets PREFIX, and .TH the prefix upper-cased;
# a name in a path, a file name (rxedrop.prom, rocegen\-3flows.pcap) or a
# longer name (agentxdp_rxedrop_drops_total) stays. Empty PREFIX: a copy.
# usage: man-prefix.sh PREFIX "NAME..." < page > page
set -eu
[ $# -eq 2 ] || { echo "usage: man-prefix.sh PREFIX \"NAME...\"" >&2; exit 2; }
[ -n "$1" ] || exec cat
exec perl -pe '
	BEGIN { ($p, $n) = (shift, join("|", split(" ", shift))); }
	s/^(\.TH\s+"?)([\w-]+)/$1 . uc($p) . $2/e;
	s/(?:(?<=\\f[BIR])|(?<![\w.\/\\-]))($n)(?![\w-]|\.\w|\\-)/$p$1/g;
' "$1" "$2"
