#!/usr/bin/env bash
# Orchestrator overhead per attempt (CPU; no GPU needed): a 7-iteration autotune run with
# batches of 8 on tiny cases against fake-harness, five times. Overhead = (run wall time -
# time spent inside harness processes) / attempts, from each run.json. Target: <= 20 ms.
# Prints and writes JSON ($1, default results/bench/orchestrator-overhead.json).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-results/bench/orchestrator-overhead.json}
[[ -x build/tests/fake-harness ]] || tools/setup.sh
work=$(mktemp -d)
cp examples/matmul/{reference.cu,initial.cu} "$work/"
python3 - "$work" <<'PY'
import json, sys
m = json.load(open("examples/matmul/input_cases.json"))
m["cases"] = [{"name": "c-8", "kind": "correctness", "params": {"m": 8, "n": 8, "k": 8}},
              {"name": "p-16", "kind": "performance", "params": {"m": 16, "n": 16, "k": 16}}]
json.dump(m, open(sys.argv[1] + "/input_cases.json", "w"))
PY
for i in 1 2 3 4 5; do
  build/cuda-optimizer optimize --reference "$work/reference.cu" --initial-kernel "$work/initial.cu" \
    --input-cases "$work/input_cases.json" --harness build/tests/fake-harness --results-dir "$work/results" \
    --max-iterations 7 --batch 8 --quiet
done
mkdir -p "$(dirname "$out")"
python3 - "$work/results" "$out" <<'PY'
import glob, json, statistics, sys
per = []
for run in sorted(glob.glob(sys.argv[1] + "/run-*/run.json")):
    r = json.load(open(run))
    per.append((r["wall_s"] - r["harness_wall_s"]) * 1000 / r["attempts"])
res = {"overhead_ms_per_attempt_median": statistics.median(per), "runs_ms": per, "attempts_per_run": r["attempts"], "target_ms": 20}
json.dump(res, open(sys.argv[2], "w"), indent=2)
print(f"orchestrator overhead per attempt: median {res['overhead_ms_per_attempt_median']:.2f} ms over {len(per)} runs "
      f"of {r['attempts']} attempts (target <= 20 ms)")
PY
rm -rf "$work"
