#!/usr/bin/env bash
# A short GPU check that a change moved nothing, in one go on a machine with a GPU:
# every test (the [gpu] ones run for real, the exploit matrix among them), the harness
# example and its compute-sanitizer run (API errors reported), the device measurement,
# the pilot autotuned for ITERATIONS (default 2) with its holdout and evidence and a
# replay of each best-case request, matmul-tiled at 4096^3 beside cuBLAS, gemm-fp8 at 2048^3
# beside cuBLASLt (autotuned for ITERATIONS, replayed), the bad-candidate folder through --proposer files, and the event floor.
# Logs go to $1 (default results/gpu-quick-check); compare them with docs/evidence/.
# BENCH=1 adds tools/bench/harness_bench.py (about 5 minutes, most of it ncu); SKIP_TESTS=1
# leaves out the test binaries; RUNS_DIR=DIR keeps the run folders (tools/gpu-confinement-check.sh
# counts how their responses were confined).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/gpu-quick-check}
iterations=${ITERATIONS:-2}
mkdir -p "$out"
[[ -x build/cuda-harness ]] || tools/setup.sh
opt=build/cuda-optimizer
runs=${RUNS_DIR:-$(mktemp -d)}  # RUNS_DIR=DIR keeps the run folders there
log="$out/summary.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$log" 2>&1

if [[ ${SKIP_TESTS:-0} != 1 ]]; then  # SKIP_TESTS=1: the tests ran already
echo "== tests" | tee -a "$log"
# Two processes: once a [gpu] test has started the CUDA driver, NVRTC in that process leaves
# ptxas's report out of its log, which the NVRTC tests check.
build/tests/cuopt_tests "~[gpu]~[.]" --durations yes >"$out/tests.log" 2>&1
echo "cuopt_tests ~[gpu]~[.] exit $?" | tee -a "$log"
tail -2 "$out/tests.log" | tee -a "$log"
build/tests/cuopt_tests "[gpu]" --durations yes >>"$out/tests.log" 2>&1
echo "cuopt_tests [gpu] exit $?" | tee -a "$log"
tail -2 "$out/tests.log" | tee -a "$log"
grep -B2 -A12 "FAILED" "$out/tests.log" | head -60 | tee -a "$log"
grep -c "skipped:" "$out/tests.log" | sed 's/^/tests that printed a skip reason: /' | tee -a "$log"
echo "== exploit matrix" | tee -a "$log"
build/tests/cuopt_exploit_tests --durations yes >"$out/exploits.log" 2>&1
echo "cuopt_exploit_tests exit $?" | tee -a "$log"
grep -E "^exploit .*s:|FAILED|^test cases|^assertions" "$out/exploits.log" | tee -a "$log"
fi

echo "== harness example" | tee -a "$log"
build/cuda-harness examples/harness/matmul/request.json 2>&1 | tee -a "$log"
compute-sanitizer --tool memcheck --leak-check full --report-api-errors all build/cuda-harness \
  examples/harness/matmul/request.json --no-stream-hold --quiet >"$out/sanitizer.log" 2>&1
echo "compute-sanitizer exit $?: $(grep -E 'ERROR SUMMARY' "$out/sanitizer.log")" | tee -a "$log"

echo "== device measurement" | tee -a "$log"
build/cuda-harness --device-info --measure --remeasure >"$out/device-measure.json" 2>&1
grep -E 'copy_bandwidth_gbps|"f32"|"tf32"|peak_note' "$out/device-measure.json" | tee -a "$log"

echo "== pilot: autotune, $iterations iterations" | tee -a "$log"
$opt optimize --config examples/matmul/config.json --results-dir "$runs/pilot" --max-iterations "$iterations" \
  >"$out/pilot.log" 2>&1
echo "optimize exit $?" | tee -a "$log"
grep -E '^\[iter 0|NEW BEST|^perf|^correctness|^holdout|^evidence|^  warning|^  launches|^sol|^vendor|^best:|^stop|vendor baseline' "$out/pilot.log" | tee -a "$log"
for r in "$runs"/pilot/run-001/best-case-*.json; do $opt replay "$r" 2>&1 | tee -a "$log"; done
cp "$runs/pilot/run-001/summary.json" "$out/pilot-summary.json" 2>/dev/null
cp "$runs/pilot/run-001/best.cu" "$out/pilot-best.cu" 2>/dev/null
echo "== the main job with --json: stdout is summary.json" | tee -a "$log"
$opt optimize --config examples/matmul/config.json --results-dir "$runs/json" --max-iterations 1 --json \
  2>/dev/null | python3 -c 'import json, sys; d = json.load(sys.stdin); print("stdout is JSON; best:", d["best"]["label"], d["run_dir"])' 2>&1 | tee -a "$log"

echo "== matmul-tiled at 4096^3 beside cuBLAS, 1 iteration" | tee -a "$log"
$opt optimize --config examples/matmul-tiled/config.json --results-dir "$runs/tiled" --max-iterations 1 \
  >"$out/tiled.log" 2>&1
echo "optimize exit $?" | tee -a "$log"
grep -E '^case|^perf|^correctness|^evidence|^  warning|^  launches|^sol|^vendor|^stop|vendor baseline' "$out/tiled.log" | tee -a "$log"
cp "$runs/tiled/run-001/summary.json" "$out/tiled-summary.json" 2>/dev/null

echo "== gemm-fp8 at 2048^3 beside cuBLASLt's FP8 GEMM, $iterations iterations" | tee -a "$log"
$opt optimize --config examples/gemm-fp8/config.json --results-dir "$runs/fp8" --max-iterations "$iterations" \
  >"$out/fp8.log" 2>&1
echo "optimize exit $?" | tee -a "$log"
grep -E '^case|^perf|^correctness|^holdout|^evidence|^  warning|^  launches|^sol|^vendor|^best:|^stop|vendor baseline' "$out/fp8.log" | tee -a "$log"
for r in "$runs"/fp8/run-001/best-case-*.json; do $opt replay "$r" 2>&1 | tee -a "$log"; done
cp "$runs/fp8/run-001/summary.json" "$out/fp8-summary.json" 2>/dev/null
cp "$runs/fp8/run-001/best.cu" "$out/fp8-best.cu" 2>/dev/null

echo "== bad candidates: files" | tee -a "$log"
$opt optimize --config examples/matmul/config.json --proposer files --candidates examples/matmul/bad-candidates \
  --timeout 15 --results-dir "$runs/bad" 2>&1 | grep -E '^\[iter|^evidence|^stop' | tee -a "$log"

echo "== event floor" | tee -a "$log"
build/event-floor >"$out/event-floor.json" 2>&1 && tee -a "$log" <"$out/event-floor.json"
if [[ ${BENCH:-0} == 1 ]]; then
  echo "== harness bench" | tee -a "$log"
  python3 tools/bench/harness_bench.py --out "$out/bench.json" 2>&1 | tee -a "$log"
fi
[[ -n ${RUNS_DIR:-} ]] || rm -rf "$runs"
