#!/usr/bin/env bash
# Installs the system libraries Strata builds against (and the LMDB tools and the PostgreSQL
# server the tests use) when they are missing. Debian/Ubuntu only; uses sudo when not root.
set -euo pipefail

packages=(libsqlite3-dev liblmdb-dev lmdb-utils libpq-dev postgresql)
missing=()
for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "Strata needs: ${missing[*]} (SQLite, LMDB and libpq development files, the PostgreSQL server). Install them with your package manager." >&2
    exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "Installing ${missing[*]} ..." >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
