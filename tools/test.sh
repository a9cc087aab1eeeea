#!/usr/bin/env bash
# Sets up, builds and runs every test. Tests tagged [gpu] report "skipped" with the
# reason where no GPU is usable.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 300
