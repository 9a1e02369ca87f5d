#!/usr/bin/env bash
# Runs the whole test suite (every engine-level and service-level test on SQLite and LMDB),
# treating any compiler warning as an error.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-system-packages.sh
exec swift test -Xswiftc -warnings-as-errors "$@"
