#!/usr/bin/env bash
# Sets up, builds and runs every test (tests tagged [gpu] report "skipped" with the reason
# where no GPU is usable); then, unless --quick, the same tests under ASan + UBSan
# (tools/sanitize.sh) and 40 s of fuzzing per input reader (tools/fuzz.sh all 40; FUZZ_SECONDS=N
# for more), which keeps CI well inside its 90 minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 300)
tools/skip-reasons.sh build  # CTest says "Skipped"; this says why
[[ ${1:-} == --quick ]] && exit 0
tools/sanitize.sh
tools/fuzz.sh all "${FUZZ_SECONDS:-40}"
