#!/usr/bin/env bash
# Fails when a public (or open) declaration of the documented modules has no doc comment of its
# own, or when a central type has no `## Topics` section (in its doc comment, or in a DocC
# extension file `# ``Module/Type``` of its module's catalog, Modules/<Module>/<Module>.docc).
# Prints each one as file:line, then the coverage per module.
#
# The rules (which comments count, what is skipped) are at the top of Scripts/Docs/coverage.swift.
# The symbol graphs come from Scripts/Docs/symbol-graphs.sh, which reuses the test build.
set -euo pipefail
cd "$(dirname "$0")/.."

# The user module, the engine interface, and the engines' public API. A module whose folder has
# no Swift sources yet is skipped, with a note.
DOC_MODULES=(Strata StrataStorage StrataSQLite StrataLMDB StrataPostgres)
# Types whose members are grouped under `## Topics`, as GRDB does.
CENTRAL_TYPES=(ObjectContext PersistentContainer ManagedObject FetchRequest StrataError StorageEngine StoreReader ChangeSet FetchPlan)

modules=()
for module in "${DOC_MODULES[@]}"; do
    if [ -z "$(find "Modules/$module" -name '*.swift' -not -path '*.docc/*' -print -quit 2>/dev/null)" ]; then
        echo "check-doc-coverage: skipped $module (Modules/$module has no Swift sources yet)"
        continue
    fi
    modules+=("$module")
done

graphs=$(bash Scripts/Docs/symbol-graphs.sh)
swift Scripts/Docs/coverage.swift "$(pwd)" "$graphs" "${modules[*]}" "${CENTRAL_TYPES[*]}"
