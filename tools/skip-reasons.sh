#!/usr/bin/env bash
# Prints why each skipped test skipped: CTest says only "Skipped", the reason is in the
# test's own output ("skipped: <reason>", Catch2 WARN lines) in CTest's LastTest.log.
# Usage: tools/skip-reasons.sh [BUILD_DIR]   (default build)
set -euo pipefail
log="${1:-build}/Testing/Temporary/LastTest.log"
[[ -f $log ]] || { echo "skip-reasons: no $log (run ctest first)" >&2; exit 1; }
awk '
  /^[0-9]+\/[0-9]+ Testing: / { sub(/^[0-9]+\/[0-9]+ Testing: /, ""); name = $0; next }
  /^  skipped: / { reason = substr($0, 12); grab = 1; next }
  grab && /^  [^ ]/ { reason = reason " " substr($0, 3); next }
  grab { grab = 0; if (!(name in seen)) { seen[name] = 1; count[reason]++; names[reason] = names[reason] "\n    " name } }
  END {
    for (r in count) printf "%d test(s) skipped: %s%s\n", count[r], r, names[r]
  }' "$log"
