#!/usr/bin/env bash
# Lists the unsafe sites of every module, per file, and checks that the library modules (every
# folder of `Modules/`, all built with strict memory safety) keep theirs in their walled files:
# the files under `Modules/<module>/Walled/`. It also checks that the table of section "Unsafe
# code" of `Docs/Architecture.md` describes exactly those files.
#
#   Scripts/count-unsafe.sh            # the table; exits 1 if a module has a site outside Walled/
#   Scripts/count-unsafe.sh --files    # also one line per file with sites
#
# A site is one distinct `file:line:column` that the compiler reports under
# `-strict-memory-safety` ([#StrictMemorySafety]). So that acknowledged sites count too, the
# script builds a copy of the package (in `.build/unsafe-sites`) from which the
# acknowledgements are stripped first: the `unsafe` expression marker and the `@safe` /
# `@unsafe` attributes (`unowned(unsafe)`, `nonisolated(unsafe)` and `@exclusivity(unchecked)`
# stay; the compiler then reports their uses). Every run builds the copy from scratch (an
# incremental build would not repeat the warnings of files it does not recompile): about two
# to three minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work="$root/.build/unsafe-sites"
copy="$work/src"
rm -rf "$copy"   # a stale copy would keep files moved or deleted since
mkdir -p "$copy"

python3 - "$root" "$copy" <<'PY'
import os, re, subprocess, sys
root, copy = sys.argv[1], sys.argv[2]
files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=root, check=True,
                       capture_output=True, text=True).stdout.split("\n")
marker = re.compile(r"(?<![\w(@.])unsafe\s+(?=[\w(\[&!.$])")
attribute = re.compile(r"@(?:un)?safe\b\s*")
wanted = set()
for name in files:
    if not name or not os.path.isfile(os.path.join(root, name)):
        continue
    wanted.add(name)
    text = open(os.path.join(root, name), "rb").read()
    if name.endswith(".swift") and name != "Package.swift":
        text = attribute.sub("", marker.sub("", text.decode())).encode()
    target = os.path.join(copy, name)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if not os.path.exists(target) or open(target, "rb").read() != text:
        open(target, "wb").write(text)
for directory, _, names in os.walk(copy):
    if "/.build" in directory:
        continue
    for name in names:
        path = os.path.relpath(os.path.join(directory, name), copy)
        if path not in wanted:
            os.remove(os.path.join(directory, name))
PY

rm -rf "$work/build"
(cd "$copy" && swift build --build-tests --scratch-path "$work/build" -Xswiftc -strict-memory-safety >"$work/log" 2>&1) || {
    tail -30 "$work/log" >&2
    echo "the stripped copy did not build (log: $work/log)" >&2
    exit 1
}

python3 - "$copy" "$work/log" "$root/Docs/Architecture.md" "${1:-}" <<'PY'
import collections, os, re, sys
copy, log, architecture, option = os.path.realpath(sys.argv[1]) + "/", sys.argv[2], sys.argv[3], sys.argv[4]
sites = set()
for line in open(log, errors="replace"):
    match = re.match(r"(/[^:]+):(\d+):(\d+): warning: .*\[#StrictMemorySafety\]", line)
    if match:
        path = os.path.realpath(match.group(1))
        if not path.startswith(copy):
            continue  # generated files (the test runner's main)
        sites.add((path[len(copy):], match.group(2), match.group(3)))

def module(path):
    parts = path.split("/")
    if parts[:2] == ["Tests", "HelperPrograms"] and len(parts) > 3:
        return parts[2]  # each helper program the tests start is a module of its own
    return parts[1] if parts[0] in ("Modules", "Tests", "Examples") and len(parts) > 2 else parts[0]

def walled(path):
    parts = path.split("/")
    return len(parts) > 3 and parts[0] == "Modules" and parts[2] == "Walled"

# The table of "Unsafe code" must name every walled file, and nothing else.
listed, section = set(), False
for line in open(architecture):
    if line.startswith("## "):
        section = line.strip() == "## Unsafe code"
    elif section and line.startswith("|"):
        listed.update(re.findall(r"`(Modules/[^`]+\.swift)`", line))
root = os.path.dirname(os.path.dirname(os.path.realpath(architecture)))
on_disk = set()
for directory, _, names in os.walk(os.path.join(root, "Modules")):
    relative = os.path.relpath(directory, root)
    for name in names:
        if name.endswith(".swift") and walled(os.path.join(relative, name)):
            on_disk.add(os.path.join(relative, name))
strict = {path.split("/")[1] for path in on_disk}
for name in os.listdir(os.path.join(root, "Modules")):
    for directory, _, names in os.walk(os.path.join(root, "Modules", name)):
        if any(n.endswith(".swift") for n in names):
            strict.add(name)

per_file = collections.Counter(site[0] for site in sites)
modules = collections.defaultdict(lambda: [0, 0, 0])  # sites, files, sites outside walled files
for path, count in per_file.items():
    entry = modules[module(path)]
    entry[0] += count
    entry[1] += 1
    if module(path) in strict and not walled(path):
        entry[2] += count
print("%-22s %6s %6s  %s" % ("module", "sites", "files", "walled?"))
for name, (count, files, outside) in sorted(modules.items(), key=lambda item: -item[1][0]):
    status = ("only in walled files" if outside == 0 else "%d OUTSIDE the walled files" % outside) if name in strict else "-"
    print("%-22s %6d %6d  %s" % (name, count, files, status))
print("%-22s %6d %6d" % ("total", len(sites), len(per_file)))
failed = False
for path, count in sorted(per_file.items(), key=lambda item: (module(item[0]), -item[1], item[0])):
    unwalled = module(path) in strict and not walled(path)
    failed |= unwalled
    if option == "--files" or unwalled:
        print("%6d  %s%s" % (count, path, "   <- not a walled file" if unwalled else ""))
for path in sorted(on_disk - listed):
    failed = True
    print("%s is a walled file that Docs/Architecture.md's \"Unsafe code\" table does not describe" % path)
for path in sorted(listed - on_disk):
    failed = True
    print("Docs/Architecture.md's \"Unsafe code\" table names %s, which is not a file under a Walled/ folder" % path)
sys.exit(1 if failed else 0)
PY
