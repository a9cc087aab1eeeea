#!/usr/bin/env bash
# Fails when a function in common/, harness/ or orchestrator/ has a body over 80 lines, counted
# as clang-tidy's readability-function-size counts them: the closing brace's line minus the
# opening brace's. universal-ctags finds every function definition and the line it ends on (a
# lexical parse of all the files in a fraction of a second, where clang-tidy took 90 s of both
# cores); a lambda is counted within the function that holds it.
#   tools/check-function-size.sh [--list N]   (--list: the N longest functions, nothing failed)
set -euo pipefail
cd "$(dirname "$0")/.."
limit=80
list=0
[[ ${1:-} == --list ]] && list=${2:-20}
if ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
  echo "function size: universal-ctags not found; fix: apt-get install universal-ctags (tools/setup.sh does)" >&2
  exit 2
fi
git ls-files 'common/*.cpp' 'harness/*.cpp' 'orchestrator/*.cpp' |
  ctags -L - --languages=C++ --kinds-C++=f --fields=+ne --extras=-q -x \
    --_xformat='%F	%n	%e	%N' -f - |
  python3 -c '
import sys
limit, listed = int(sys.argv[1]), int(sys.argv[2])
sizes, unended, files = [], [], {}
for row in sys.stdin:
    path, start, end, name = row.rstrip("\n").split("\t", 3)
    if not end:
        unended.append(f"{path}:{start}: {name}")
        continue
    lines = files.setdefault(path, open(path, encoding="utf-8").read().split("\n"))
    start, end = int(start), int(end)
    brace = next((n for n in range(start, end + 1) if "{" in lines[n - 1]), start)
    sizes.append((end - brace, f"{path}:{brace}: {name}"))
sizes.sort(reverse=True)
if listed:
    for size, where in sizes[:listed]:
        print(f"{size:4d} {where}")
    sys.exit(0)
if unended:
    print("function size: ctags found no end for:", *unended, sep="\n  ", file=sys.stderr)
    sys.exit(2)
over = [f"  {where}: {size} lines" for size, where in sizes if size > limit]
if over:
    print(f"function size: functions over {limit} lines:", *over, sep="\n", file=sys.stderr)
    sys.exit(1)
print(f"function size: none of the {len(sizes)} functions in common/, harness/ or "
      f"orchestrator/ is over {limit} lines")
' "$limit" "$list"
