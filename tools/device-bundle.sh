#!/usr/bin/env bash
# Packs what the GPU machine needs into .bundle/ (git-ignored; carry it): the stripped
# binaries, built here where the Debian dependencies are. On the device, unpack with
#   mkdir -p build/tests && cp .bundle/cuda-harness .bundle/event-floor build/ && cp .bundle/cuopt_tests build/tests/
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x build/cuda-harness ]] || tools/setup.sh
rm -rf .bundle && mkdir -p .bundle
strip -o .bundle/cuda-harness build/cuda-harness
strip -o .bundle/cuopt_tests build/tests/cuopt_tests
strip -o .bundle/event-floor build/event-floor
du -sh .bundle
