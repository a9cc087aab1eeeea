#!/usr/bin/env bash
# Fails when a production file (common/, harness/, orchestrator/) is over 400 lines, or a class
# over 250: its definition plus the member functions defined outside it, found by
# universal-ctags as tools/check-function-size.sh finds functions. A class in the list below is
# a known exception, each with its reason; the list fails too once its class fits (keep it short).
#   tools/check-file-size.sh [--list N]   (--list: the N largest files and classes, nothing failed)
set -euo pipefail
cd "$(dirname "$0")/.."
list=0
[[ ${1:-} == --list ]] && list=${2:-15}
if ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
  echo "file size: universal-ctags not found; fix: apt-get install universal-ctags (tools/setup.sh does)" >&2
  exit 2
fi
files=$(git ls-files 'common/*.cpp' 'common/*.hpp' 'common/*.h' 'harness/*.cpp' 'harness/*.hpp' 'orchestrator/*.cpp' 'orchestrator/*.hpp')
sizes=$(mktemp)
trap 'rm -f "$sizes"' EXIT
# shellcheck disable=SC2086
wc -l $files | grep -v ' total$' >"$sizes"
echo "$files" | ctags -L - --languages=C++ --kinds-C++=fcs --fields=+neZ --extras=-q -x \
  --_xformat='%F	%n	%e	%N	%K	%Z' -f - |
  python3 -c '
import collections, sys
file_limit, class_limit, listed, sizes_file = 400, 250, int(sys.argv[1]), sys.argv[2]
known = {  # class: why it stays over the limit for now
}
files = []
for row in open(sizes_file):
    n, path = row.split()
    files.append((int(n), path))
classes, members = {}, []
for row in sys.stdin:
    path, start, end, name, kind, scope = row.rstrip("\n").split("\t")
    if not end:
        continue
    s, e = int(start), int(end)
    if kind in ("class", "struct"):
        full = (scope + "::" if scope and scope != "-" else "") + name
        classes.setdefault(full, []).append((path, s, e))
    elif kind == "function" and scope and scope != "-":
        members.append((scope, path, s, e))
size = collections.Counter()
for full, spans in classes.items():
    for _, s, e in spans:
        size[full] += e - s + 1
for scope, path, s, e in members:
    spans = classes.get(scope)
    if spans and not any(p == path and a <= s <= b for p, a, b in spans):
        size[scope] += e - s + 1
files.sort(reverse=True)
if listed:
    for n, path in files[:listed]:
        print(f"{n:5d} {path}")
    for name, n in size.most_common(listed):
        print(f"{n:5d} class {name}")
    sys.exit(0)
bad = [f"  {path}: {n} lines (limit {file_limit})" for n, path in files if n > file_limit]
bad += [f"  class {name}: {n} lines (limit {class_limit})" for name, n in size.items()
        if n > class_limit and name not in known]
bad += [f"  class {name} is listed as over {class_limit} lines but has {size[name]}: take it off "
        "the list in tools/check-file-size.sh" for name in known if size[name] <= class_limit]
if bad:
    print("file size: over the limits (split by concept, docs/layout.md):", *bad, sep="\n",
          file=sys.stderr)
    sys.exit(1)
exceptions = ", ".join(sorted(known))
exceptions = f" but the {len(known)} listed ({exceptions})" if known else ""
print(f"file size: none of the {len(files)} files is over {file_limit} lines; no class over "
      f"{class_limit}{exceptions}")
' "$list" "$sizes"
