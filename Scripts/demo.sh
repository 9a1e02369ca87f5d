#!/usr/bin/env bash
# Runs the main example, `ledger demo`, on the default embedded engine (SQLite) in a new
# temporary store. Extra arguments go to the ledger, e.g. `--engine lmdb`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-system-packages.sh
exec swift run ledger demo "$@"
