#!/usr/bin/env bash
# Runs the main example on the default embedded engine (SQLite). Extra arguments go to the example.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-system-packages.sh
exec swift run strata-quickstart "$@"
