#!/usr/bin/env bash
# Times the ledger's service-level tests on the in-memory engine against SQLite (issue 26's
# target: at least 3× faster on memory), in a release build of the tests, as the project measures
# speed, and in the debug build `swift test` uses by default. Runs alternate between the engines,
# RUNS times each (default 5), and the medians and their ratio are printed per build.
#
#   bash Scripts/measure-ledger-on-memory.sh            # both builds
#   BUILDS=release RUNS=7 bash Scripts/measure-ledger-on-memory.sh
#
# The filter is the ledger's service tests: `--filter Ledger --skip CLI --skip Migration` (the CLI
# tests time child processes, the migration tests open stores of older versions). The run's time
# is Swift Testing's "Test run … passed after N seconds". Other load on the machine moves the
# figures by ±20%; run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-5}"
builds="${BUILDS:-release debug}"

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

for build in $builds; do
  flags=()
  [ "$build" = release ] && flags=(-c release -Xswiftc -enable-testing)
  swift build "${flags[@]}" --build-tests >/dev/null
  declare -A times=([sqlite]="" [memory]="")
  for _ in $(seq "$runs"); do
    for engine in sqlite memory; do
      line="$(STRATA_TEST_ENGINES=$engine swift test "${flags[@]}" --skip-build --filter Ledger --skip CLI \
        --skip Migration 2>&1 | grep -E 'Test run with .* passed after' || true)"
      if [ -z "$line" ]; then
        echo "measure-ledger-on-memory: the $build run on $engine failed" >&2
        exit 1
      fi
      times[$engine]+="$(sed -E 's/.*after ([0-9.]+) seconds.*/\1/' <<<"$line") "
    done
  done
  sqlite="$(tr ' ' '\n' <<<"${times[sqlite]}" | grep . | median)"
  memory="$(tr ' ' '\n' <<<"${times[memory]}" | grep . | median)"
  ratio="$(awk -v s="$sqlite" -v m="$memory" 'BEGIN { printf "%.2f", s / m }')"
  echo "$build build, ledger service tests, median of $runs: SQLite $sqlite s, memory $memory s: memory is ${ratio}× faster"
  echo "  SQLite runs: ${times[sqlite]}"
  echo "  memory runs: ${times[memory]}"
done
