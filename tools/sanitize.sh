#!/usr/bin/env bash
# The CPU test suite built with AddressSanitizer and UndefinedBehaviorSanitizer into
# build-asan/ (tools/sanitized-build.sh: clang, every report fatal, shared with the fuzz
# targets). The binaries the tests start (cuda-harness, cuda-optimizer, fake-harness) are
# built the same way, so the integration tests run them sanitized too.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-asan
tools/sanitized-build.sh
# Leaks are not what this run looks for (the harness keeps its CUDA context on purpose);
# a SIGSEGV must stay a signal, as the crash tests expect of a crashing harness.
export CUOPT_LOAD_JOBS=${CUOPT_LOAD_JOBS:-30}  # the daemon load test: 200 jobs in the plain run
export ASAN_OPTIONS=detect_leaks=0:handle_segv=0 UBSAN_OPTIONS=print_stacktrace=1
cd "$build"
# Left to the plain run: the source checks, and the tests that mostly wait on another program
# (a real one-node Slurm's timers, headless Chromium, node's type checker) and would spend
# CI's minutes there twice; the code they reach is exercised under ASan by the other tests.
ctest --output-on-failure -j "$(nproc)" --timeout 600 \
  -E "source_is_formatted|functions_are_short|on a real Slurm|[Cc]hromium|model_requests_match_sdk"
