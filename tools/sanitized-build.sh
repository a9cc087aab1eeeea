#!/usr/bin/env bash
# Builds build-asan/ with clang: AddressSanitizer + UndefinedBehaviorSanitizer, every report
# fatal, plus libFuzzer's coverage hooks (fuzzer-no-link) and the fuzz targets, so the
# sanitized test run (tools/sanitize.sh) and the fuzzing (tools/fuzz.sh) share one build
# instead of compiling everything twice. The test programs' own code is not instrumented
# (CUOPT_TEST_CODE_FLAGS), nor the fake harness's CPU matmul (CUOPT_FAKE_HARNESS_FLAGS): what
# is checked is the product they call and start. Configures
# once; builds the targets named (all when none): tools/sanitized-build.sh fuzz-request
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-asan
# pointer-overflow stays off: RapidJSON 1.1's internal Stack::Reserve adds an offset to a
# null pointer on every first push (harmless, and in a Debian header we do not patch).
sanitize="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-sanitize=pointer-overflow"
if [[ ! -f $build/build.ninja ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCUOPT_FUZZ=ON \
    -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only \
    -DCUDAToolkit_ROOT="${CUDAToolkit_ROOT:-/usr/local/cuda}" \
    "-DCMAKE_CXX_FLAGS=-O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $sanitize" \
    "-DCMAKE_EXE_LINKER_FLAGS=$sanitize -Wl,--as-needed" \
    "-DCUOPT_TEST_CODE_FLAGS=-O1;-g1;-fno-sanitize=all" \
    "-DCUOPT_FAKE_HARNESS_FLAGS=-O2;-fno-sanitize=all" >/dev/null
fi
if (($#)); then
  cmake --build "$build" -j "$(nproc)" --target "$@"
else
  cmake --build "$build" -j "$(nproc)"
fi
