#!/usr/bin/env bash
# Sets up, builds and runs every test (tests tagged [gpu] report "skipped" with the reason
# where no GPU is usable); then, unless --quick, the same tests under ASan + UBSan
# (tools/sanitize.sh, a clang build shared with the fuzz targets) and 40 s of fuzzing per
# input reader (tools/fuzz.sh all 40; FUZZ_SECONDS=N for more). Prints each stage's time,
# to keep CI well inside its 90 minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
stage() { echo "test.sh: $1 took $((SECONDS - started)) s" >&2; started=$SECONDS; }
started=$SECONDS
tools/setup.sh
stage "setup and build"
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 300)
tools/skip-reasons.sh build  # CTest says "Skipped"; this says why
stage "tests"
[[ ${1:-} == --quick ]] && exit 0
tools/sanitize.sh
stage "sanitized build and tests"
tools/fuzz.sh all "${FUZZ_SECONDS:-40}"
stage "fuzzing"
