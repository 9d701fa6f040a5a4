#!/bin/sh
# help-for-man.sh TOOL OPTION: what help2man reads for `make man`. --version
# passes through; --help is the tool's own argp help, reshaped into the
# layout help2man recognises (nothing added, nothing dropped):
#   - the doc's "USAGE:" lines replace argp's generic "Usage: TOOL [OPTION...]"
#     (continuation lines become "or:" lines: several SYNOPSIS forms);
#   - "EXAMPLES:" becomes help2man's "Examples:" section;
#   - "Options:" starts the OPTIONS section at the first option line;
#   - argp's " Group options:" headings become sub-sections.
set -eu
tool=$1
shift
[ "${1:-}" = --help ] || exec "$tool" "$@"
"$tool" --help | awk '
	NR == 1 && /^Usage: / { next }
	/^USAGE: / { sub(/^USAGE: +/, "Usage: "); print; usage = 1; next }
	usage && /^ +[^ ]/ { sub(/^ +/, "  or:  "); print; next }
	{ usage = 0 }
	/^EXAMPLES:$/ { print "Examples:"; next }
	!opts && /^  +-/ { print "Options:"; opts = 1 }
	/^ [A-Z][^:]*:$/ { sub(/^ /, "") }
	{ print }
'
