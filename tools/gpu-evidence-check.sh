#!/usr/bin/env bash
# Issue 44 on a GPU, in one go: the [gpu] tests (keyed inputs made on the GPU are the CPU's bit
# for bit), what keying costs the generator (tools/bench/keyed_inputs_bench.py), and with
# EXPLOITS=1 the exploit matrix (tests/exploits, every folder through the real cuda-optimizer).
# Logs go to $1 (default results/gpu-evidence-check). The examples' honest winners and their
# amortised-work figures come from tools/gpu-quick-check.sh (its "  launches:" lines).
set -uo pipefail
cd "$(dirname "$0")/.." || exit
out=${1:-results/gpu-evidence-check}
mkdir -p "$out"
log="$out/evidence-check.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$log" 2>&1
if [[ ${EXPLOITS:-0} == 1 ]]; then
  echo "== exploit matrix" | tee -a "$log"
  build/tests/cuopt_exploit_tests --durations yes >"$out/exploits.log" 2>&1
  echo "cuopt_exploit_tests exit $?" | tee -a "$log"
  grep -E "^exploit .*s:|FAILED|^test cases|^assertions|known gap" "$out/exploits.log" | tee -a "$log"
  exit 0
fi
echo "== [gpu] tests" | tee -a "$log"
build/tests/cuopt_tests "[gpu]" --durations yes >"$out/gpu-tests.log" 2>&1
echo "cuopt_tests [gpu] exit $?" | tee -a "$log"
grep -E "keyed inputs|FAILED|^test cases|^assertions" "$out/gpu-tests.log" | tee -a "$log"
echo "== keyed generator cost" | tee -a "$log"
python3 tools/bench/keyed_inputs_bench.py build/cuda-harness "$out/keyed-inputs-bench.json" 2>&1 | tee -a "$log"
