#!/usr/bin/env bash
# Builds Tests/Fixtures/OutsideEngine, a package of its own that depends on Strata by path and
# builds a storage engine (the in-memory engine's source, linked in) as a module of its own, where
# only Strata's public API is visible, then runs the whole conformance kit on it: one line per
# check, and a last line with the count. Fails when the engine does not build from outside the
# package or any check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-system-packages.sh
swift build --package-path Tests/Fixtures/OutsideEngine -Xswiftc -warnings-as-errors
swift run --skip-build --package-path Tests/Fixtures/OutsideEngine outside-kit
