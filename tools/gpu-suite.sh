#!/usr/bin/env bash
# The GPU proof, in one go on a machine with a GPU: every test (the [gpu] ones run for
# real), the bundled example end to end (and under compute-sanitizer), the benchmark.
# Logs and figures go to $1 (default results/gpu-suite). Build first (tools/setup.sh)
# or carry build/ from a machine that can. BENCH=0 skips the benchmarks (about 5 min,
# most of it ncu's replays).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/gpu-suite}
mkdir -p "$out"
[[ -x build/cuda-harness ]] || tools/setup.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv >"$out/summary.txt" 2>&1

echo "== tests" | tee -a "$out/summary.txt"
build/tests/cuopt_tests --durations yes >"$out/tests.log" 2>&1
echo "cuopt_tests exit $?" | tee -a "$out/summary.txt"
tail -3 "$out/tests.log" | tee -a "$out/summary.txt"
grep -c "skipped:" "$out/tests.log" | sed 's/^/tests that printed a skip reason: /' | tee -a "$out/summary.txt"

echo "== example" | tee -a "$out/summary.txt"
build/cuda-harness examples/harness/matmul/request.json 2>&1 | tee -a "$out/summary.txt"
cp examples/harness/matmul/response.json "$out/example-response.json"
# --report-api-errors no: the harness probes cuFuncGetParamInfo one past the last parameter on purpose.
compute-sanitizer --tool memcheck --leak-check full --report-api-errors no build/cuda-harness examples/harness/matmul/request.json \
  --no-stream-hold --quiet >"$out/sanitizer.log" 2>&1
echo "compute-sanitizer exit $?: $(grep -E 'ERROR SUMMARY' "$out/sanitizer.log")" | tee -a "$out/summary.txt"

echo "== cuda-optimizer" | tee -a "$out/summary.txt"
tools/gpu-optimizer-suite.sh "$out" 2>&1 | tail -6 | tee -a "$out/summary.txt"

[[ ${BENCH:-1} == 0 ]] && exit 0
echo "== bench" | tee -a "$out/summary.txt"
build/event-floor >"$out/event-floor.json" 2>&1 && cat "$out/event-floor.json" | tee -a "$out/summary.txt"
python3 tools/bench/harness_bench.py --out "$out/bench.json" 2>&1 | tee -a "$out/summary.txt"
