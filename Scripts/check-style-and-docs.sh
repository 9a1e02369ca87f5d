#!/usr/bin/env bash
# Runs the style and documentation checks that CI runs after the tests, each one even when an
# earlier one failed, and fails if any failed:
#   Scripts/lint.sh                swift format lint --strict, and no line over the limit
#   Scripts/build-docs.sh          the DocC build, with zero warnings
#   Scripts/check-doc-coverage.sh  a doc comment on every public declaration, `## Topics` on
#                                  every central type
#   Scripts/check-api-surface.sh   no public member of Strata names an engine-interface type
# The last three reuse the test build (see Scripts/Docs/symbol-graphs.sh): run them after
# Scripts/test.sh, or they compile the package first.
set -uo pipefail
cd "$(dirname "$0")/.."
failed=()
for check in lint build-docs check-doc-coverage check-api-surface; do
    echo "== $check"
    bash "Scripts/$check.sh" || failed+=("$check")
done
if [ ${#failed[@]} -ne 0 ]; then
    echo "check-style-and-docs: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "check-style-and-docs: lint, DocC build, doc coverage and the user API surface all pass"
