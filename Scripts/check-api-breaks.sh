#!/usr/bin/env bash
# Compares the public API of Strata's library products with the last release's commit, which
# CHANGELOG.md names (`## X.Y.Z — DATE — commit <40 hex digits>`), with
# `swift package diagnose-api-breaking-changes`, and fails when a break is not in the changelog:
# every declaration the tool reports as broken must be named, in backticks, in the
# "## Unreleased" section (a removal, a changed signature or a changed enum case is always listed
# there, with what replaces it).
#
#   bash Scripts/check-api-breaks.sh            # in CI, after the tests
#   BASELINE=<commit> bash Scripts/check-api-breaks.sh   # against another commit
#
# Needs the release commit in the clone (a full clone; a shallow one is deepened first).
set -euo pipefail
cd "$(dirname "$0")/.."

products=(Strata StrataStorage StrataSQLite StrataLMDB StrataPostgres StrataMemory StrataConformance StrataTestSupport)

baseline="${BASELINE:-}"
if [ -z "$baseline" ]; then
  release_line="$(grep -m1 -E '^## [0-9]+\.[0-9]+\.[0-9]+ ' CHANGELOG.md || true)"
  if [ -z "$release_line" ]; then
    echo "check-api-breaks: CHANGELOG.md names no release yet, so there is no API to compare with"
    exit 0
  fi
  baseline="$(grep -oE '[0-9a-f]{40}' <<<"$release_line" | head -1 || true)"
  if [ -z "$baseline" ]; then
    echo "check-api-breaks: the release line \"$release_line\" names no commit (40 hex digits): add it" >&2
    exit 1
  fi
fi

if ! git cat-file -e "${baseline}^{commit}" 2>/dev/null; then
  if [ "$(git rev-parse --is-shallow-repository)" = "true" ]; then git fetch -q --unshallow || true; fi
  if ! git cat-file -e "${baseline}^{commit}" 2>/dev/null; then
    echo "check-api-breaks: the release commit $baseline is not in this clone; clone the whole history" >&2
    exit 1
  fi
fi

unreleased="$(awk '/^## Unreleased/{inside=1; next} /^## /{inside=0} inside' CHANGELOG.md)"
log="$(mktemp -t strata-api-breaks.XXXXXX)"
trap 'rm -f "$log"' EXIT

echo "check-api-breaks: comparing the public API of ${products[*]} with $baseline"
status=0
swift package diagnose-api-breaking-changes "$baseline" --products "${products[@]}" >"$log" 2>&1 || status=$?
breaks="$(grep -E 'API breakage:' "$log" | sed -E 's/.*API breakage: //' | sort -u || true)"
if [ "$status" -ne 0 ] && [ -z "$breaks" ]; then
  tail -40 "$log" >&2
  echo "check-api-breaks: the comparison itself failed (status $status); see above" >&2
  exit 1
fi
if [ -z "$breaks" ]; then
  echo "check-api-breaks: no API break since $baseline"
  exit 0
fi

unlisted=0
while IFS= read -r line; do
  # "func ObjectContext.objectID(forURIString:) has been removed" → kind "func",
  # declaration "ObjectContext.objectID(forURIString:)", tail "objectID(forURIString:)".
  kind="$(awk '{print $1}' <<<"$line")"
  declaration="$(sed -E 's/^[a-z]+ //; s/ (has|is|changes|was|now) .*//' <<<"$line")"
  if [[ "$declaration" == *"("* ]]; then
    tail="$(sed -E 's/^([^(]*\.)?([^.(]+\(.*)$/\2/' <<<"$declaration")"
  else
    tail="${declaration##*.}"
  fi
  base="${tail%%(*}"
  if grep -qF "$tail" <<<"$unreleased"; then
    echo "  listed:   $line"
    continue
  fi
  # The digester also compares `package` declarations, which are no API: a declaration that was
  # not public in the release is no break. It was public when a public or open declaration of
  # that name (and, for a function or initializer, first argument label) is in the release's source.
  label="$(sed -E 's/^[^(]*\(([^:)]*).*/\1/' <<<"$tail")"
  case "$kind" in
    constructor) pattern="(public|open)[^/]*init\\??\\($label" ;;
    func) pattern="(public|open)[^/]*func $base(<[^>]*>)?\\($label" ;;
    var | subscript) pattern="(public|open)[^/]*(var|let|subscript) $base" ;;
    *) pattern="(public|open)[^/]*(case|struct|class|enum|protocol|typealias|associatedtype|actor)[^/]* $base\\b" ;;
  esac
  [ "$kind" = "enumelement" ] && pattern="case[^/]*\\b$base\\b"
  if ! git grep -qE "$pattern" "$baseline" -- 'Modules/*.swift'; then
    echo "  package:  $line (not public in the release)"
    continue
  fi
  echo "  UNLISTED: $line"
  unlisted=$((unlisted + 1))
done <<<"$breaks"

if [ "$unlisted" -ne 0 ]; then
  echo "check-api-breaks: $unlisted API break(s) since $baseline are not in CHANGELOG.md's Unreleased section:" \
    "list each (with what replaces it), or deprecate instead of removing" >&2
  exit 1
fi
echo "check-api-breaks: every API break since $baseline is listed in CHANGELOG.md"
