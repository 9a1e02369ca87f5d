#!/usr/bin/env bash
# Builds the DocC documentation of Strata from symbol graphs, and fails on any DocC warning.
#
# One `docc convert` run documents every module in DOC_MODULES together, so that a doc comment
# or an article of one module can link to a symbol of another (``StrataStorage/ChangeSet``):
# - the public symbol graphs come from Scripts/Docs/symbol-graphs.sh, which reuses the test
#   build (same flags as Scripts/test.sh), so the package is not compiled a second time;
# - the catalogs `Modules/<Module>/<Module>.docc` (landing page, articles, extension files
#   with `## Topics`) are copied side by side into one catalog.
# A module whose folder has no Swift sources yet (a catalog made ahead of its module) is
# skipped, with a note.
#
# Output: .build/docs/Strata.doccarchive (override the folder with STRATA_DOCS_DIR), and every
# warning in .build/docs/docc.log. Preview with `docc preview` on the combined catalog, or
# serve the archive's folder with any static web server.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out="${STRATA_DOCS_DIR:-$root/.build/docs}"

# The documented modules: the user module, the engine interface, and the engines' public API.
DOC_MODULES=(Strata StrataStorage StrataSQLite StrataLMDB StrataPostgres)

has_sources() { [ -n "$(find "Modules/$1" -name '*.swift' -not -path '*.docc/*' -print -quit 2>/dev/null)" ]; }

graphs=$(bash Scripts/Docs/symbol-graphs.sh)
rm -rf "$out/catalog" "$out/symbol-graphs" "$out/Strata.doccarchive"
mkdir -p "$out/catalog/Strata.docc" "$out/symbol-graphs"
documented=()
for module in "${DOC_MODULES[@]}"; do
    if ! has_sources "$module"; then
        echo "build-docs: skipped $module (Modules/$module has no Swift sources yet)"
        continue
    fi
    [ -f "$graphs/$module.symbols.json" ] || { echo "build-docs: no symbol graph for $module in $graphs" >&2; exit 1; }
    cp "$graphs/$module.symbols.json" "$out/symbol-graphs/"
    find "$graphs" -maxdepth 1 -name "$module@*.symbols.json" -exec cp {} "$out/symbol-graphs/" \;
    [ -d "Modules/$module/$module.docc" ] && cp -R "Modules/$module/$module.docc" "$out/catalog/Strata.docc/$module"
    documented+=("$module")
done

status=0
docc convert "$out/catalog/Strata.docc" \
    --additional-symbol-graph-dir "$out/symbol-graphs" \
    --fallback-display-name Strata \
    --fallback-bundle-identifier org.strata.Strata \
    --output-path "$out/Strata.doccarchive" \
    --diagnostic-filter warning > "$out/docc.log" 2>&1 || status=$?
# DocC names files relative to the combined catalog: show the articles' and the sources' paths
# from the repository root instead.
sed -i -E -e "s#(--> )(\.\./)+Modules/#\1Modules/#" -e "s#(--> )([A-Za-z]+)/([^ ]*\.md:)#\1Modules/\2/\2.docc/\3#" "$out/docc.log"

count=$(grep -cE '^(warning|error): ' "$out/docc.log" || true)
if [ "$status" -ne 0 ] || [ "$count" -ne 0 ]; then
    cat "$out/docc.log" >&2
    echo "build-docs: $count DocC warnings and errors (docc exit status $status), by kind:" >&2
    grep -E '^(warning|error): ' "$out/docc.log" | sed -E "s/doesn't/does not/; s/'[^']*'/'…'/g" | sort | uniq -c | sort -rn >&2
    exit 1
fi
echo "build-docs: ${documented[*]} documented with 0 warnings: $out/Strata.doccarchive"
