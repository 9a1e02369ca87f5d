#!/usr/bin/env bash
# Fails when a public declaration of `Strata` names an engine-interface type (`StrataStorage`)
# that `Strata/Exports.swift` does not re-export. The symbol graphs come from
# Scripts/Docs/symbol-graphs.sh, which reuses the test build.
set -euo pipefail
cd "$(dirname "$0")/.."
graphs=$(bash Scripts/Docs/symbol-graphs.sh)
swift Scripts/Docs/api-surface.swift "$(pwd)" "$graphs"
