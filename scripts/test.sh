#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12, as root: install the packages,
# build, run every tier (unit, host, Soft-RoCE VM). The last line is
# "N passed, N failed, N skipped". Extra arguments go to tests/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
# the tools and the tests' programs, again with ASan and UBSan (build/san),
# and the fuzz target; CI fails on any warning
make -j"$(nproc)" WERROR=1 tests sanitize fuzz-build
exec tests/run "$@"
