#!/usr/bin/env bash
# Fails when a function in common/, harness/ or orchestrator/ is longer than 80 lines,
# as clang-tidy's readability-function-size counts them (build/compile_commands.json,
# written by every configure, tells it how each file is compiled).
#   tools/check-function-size.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
limit=80
if ! command -v clang-tidy >/dev/null; then
  echo "function size: clang-tidy not found; fix: apt-get install clang-tidy (tools/setup.sh does)" >&2
  exit 2
fi
[[ -f $build/compile_commands.json ]] || { echo "function size: no $build/compile_commands.json; run tools/setup.sh" >&2; exit 2; }
report=$(git ls-files 'common/*.cpp' 'harness/*.cpp' 'orchestrator/*.cpp' |
  xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet -checks='-*,readability-function-size' \
    -config="{CheckOptions: [{key: readability-function-size.LineThreshold, value: $limit}]}" 2>/dev/null |
  grep -E 'warning:|note:' || true)
if [[ -n $report ]]; then
  echo "function size: functions over $limit lines:" >&2
  echo "$report" >&2
  exit 1
fi
echo "function size: no function in common/, harness/ or orchestrator/ is over $limit lines"
