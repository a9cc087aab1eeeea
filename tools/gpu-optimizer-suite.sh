#!/usr/bin/env bash
# cuda-optimizer on a GPU, in one go: the pilot end to end (7 iterations, autotune) and a
# replay of every best-case request; the bad-candidate folder through --proposer files;
# matmul-tiled at 4096^3: autotune (7 iterations) against an exhaustive sweep of its space,
# and cuBLAS at the same shape. Everything lands in $1 (default results/gpu-optimizer);
# tools/bench/optimizer_evidence.py condenses it into optimizer-evidence.json.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/gpu-optimizer}
mkdir -p "$out"
runs=$(mktemp -d)
opt=build/cuda-optimizer
log="$out/optimizer.log"

echo "== pilot: autotune, 7 iterations" | tee "$log"
$opt optimize --config examples/matmul/config.json --results-dir "$runs/pilot" --device 0 2>&1 | tail -8 | tee -a "$log"
for r in "$runs"/pilot/run-001/best-case-*.json; do $opt replay "$r" 2>&1 | tee -a "$log"; done

echo "== bad candidates: files" | tee -a "$log"
$opt optimize --config examples/matmul/config.json --proposer files --candidates examples/matmul/bad-candidates \
  --timeout 15 --results-dir "$runs/bad" 2>&1 | grep -E '^\[iter|^stop' | tee -a "$log"

tiled=(--config examples/matmul-tiled/config.json --warmup 5 --iterations 30 --timeout 120)
echo "== matmul-tiled 4096^3: autotune, 7 iterations x 8" | tee -a "$log"
$opt optimize "${tiled[@]}" --results-dir "$runs/tiled" --quiet 2>&1 | tee -a "$log"
echo "== matmul-tiled 4096^3: exhaustive sweep (every configuration in one batch)" | tee -a "$log"
$opt optimize "${tiled[@]}" --results-dir "$runs/sweep" --max-iterations 1 --batch 1000 --quiet 2>&1 | tee -a "$log"
echo "== cuBLAS SGEMM 4096^3 (no TF32)" | tee -a "$log"
build/cublas-sgemm 4096 4096 4096 | tee "$out/cublas.json" | tee -a "$log"

python3 tools/bench/optimizer_evidence.py "$runs" "$out/cublas.json" "$out/optimizer-evidence.json" | tee -a "$log"
cp "$runs/pilot/run-001/heatmap.png" "$out/pilot-heatmap.png" 2>/dev/null
tar -C "$runs" -czf "$out/runs.tar.gz" --exclude='*.bin' . 2>/dev/null
