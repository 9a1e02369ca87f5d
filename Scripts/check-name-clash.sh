#!/usr/bin/env bash
# Builds and runs Tests/Fixtures/NameClash: a user's package that imports Strata and StrataSQLite
# next to a library of its own declaring `Filter`, `ChangeSet`, `FetchPlan` and `SortKey`, and uses
# those names unqualified. It fails with "ambiguous for type lookup" errors if the engine interface's
# types ever leak into `import Strata` again.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-system-packages.sh
swift build --package-path Tests/Fixtures/NameClash -Xswiftc -warnings-as-errors
swift run --skip-build --package-path Tests/Fixtures/NameClash ShopApp
