#!/usr/bin/env bash
# Formats the project's C++ and CUDA sources with the checked-in .clang-format.
#   tools/format.sh          rewrites every file in place
#   tools/format.sh --check  changes nothing; lists unformatted files and exits 1 if any
# The example kernels under examples/ are user material and left as written.
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format}
if ! command -v "$clang_format" >/dev/null; then
  echo "format: $clang_format not found; fix: apt-get install clang-format (tools/setup.sh does)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files --cached --others --exclude-standard \
  'common/*' 'harness/*' 'orchestrator/*' 'tests/*' 'tools/*' |
  grep -E '\.(cpp|hpp|h|cu|cuh)$' | while read -r f; do [[ -f $f ]] && echo "$f"; done)
if [[ ${1:-} == --check ]]; then
  # One clang-format per batch of files, a batch per core: it names each file that differs.
  mapfile -t bad < <(printf '%s\0' "${files[@]}" |
    xargs -0 -P "$(nproc)" -n 40 "$clang_format" --style=file --dry-run -Werror 2>&1 |
    grep -oE '^[^:]+:[0-9]+:[0-9]+: error:' | cut -d: -f1 | sort -u)
  if ((${#bad[@]})); then
    echo "format: ${#bad[@]} of ${#files[@]} files differ from .clang-format; fix: tools/format.sh" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files match .clang-format"
else
  "$clang_format" --style=file -i "${files[@]}"
  echo "format: ${#files[@]} files formatted"
fi
