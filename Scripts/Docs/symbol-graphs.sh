#!/usr/bin/env bash
# Writes the public symbol graphs of the package's modules and prints the directory that holds
# them (one `<Module>.symbols.json` per module, plus `<Module>@<Other>.symbols.json` for its
# extensions of other modules' types). Used by build-docs.sh and check-doc-coverage.sh.
#
# `swift package dump-symbol-graph` builds first. It passes the same flags as Scripts/test.sh
# (`-Xswiftc -warnings-as-errors`), so after the tests that build is a no-op and only the
# extraction runs; with other flags SwiftPM would compile the whole package again.
set -euo pipefail
cd "$(dirname "$0")/../.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! swift package -Xswiftc -warnings-as-errors dump-symbol-graph \
        --minimum-access-level public --skip-synthesized-members > "$log" 2>&1; then
    cat "$log" >&2
    echo "symbol-graphs: swift package dump-symbol-graph failed" >&2
    exit 1
fi
directory=$(sed -n 's/^Files written to //p' "$log" | tail -1)
[ -d "$directory" ] || { cat "$log" >&2; echo "symbol-graphs: no output directory in the log above" >&2; exit 1; }
echo "$directory"
