#!/usr/bin/env bash
# The harness's confinement on a GPU, in one go (issue 22's device evidence): medians of the
# harness example confined and --unconfined, alternating, 5 runs each; ncu and compute-sanitizer
# on a confined harness; and how every response under the folders given was confined.
#   tools/gpu-confinement-check.sh OUT_DIR [RESULTS_DIR...]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-confinement-check.sh OUT_DIR [RESULTS_DIR...]}
shift
mkdir -p "$out"
h=$PWD/build/cuda-harness
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r examples/harness/matmul "$work/m"
medians() {  # the measured cases' medians and the confinement mode of one response
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['confinement']['mode'], d.get('timer',{}).get('name'), ' '.join('%s=%.5f' % (c['name'], c['timing']['median_ms']) for c in d['cases'] if c.get('timing')))" "$1"
}
echo "== harness example, alternating confined / --unconfined (ms)"
for i in 1 2 3 4 5; do
  "$h" "$work/m/request.json" --response "$work/c.json" --quiet && medians "$work/c.json"
  "$h" --unconfined "$work/m/request.json" --response "$work/u.json" --quiet 2>/dev/null && medians "$work/u.json"
done | tee "$out/confinement-medians.txt"
python3 - "$out/confinement-medians.txt" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    mode, _, *cases = line.split()
    for c in cases:
        name, v = c.split('=')
        rows[(name, mode)].append(float(v))
for name in sorted({n for n, _ in rows}):
    c, u = statistics.median(rows[(name, 'landlock')]), statistics.median(rows[(name, 'none')])
    print(f"{name}: confined {c:.5f} ms, unconfined {u:.5f} ms, ratio {c / u:.4f}")
PY
echo "== compute-sanitizer (memcheck) on a confined harness"
compute-sanitizer --tool memcheck "$h" "$work/m/request.json" --response "$work/cs.json" --quiet 2>&1 | tail -2
medians "$work/cs.json"
echo "== ncu on a confined harness"
ncu --clock-control none -c 3 "$h" "$work/m/request.json" --response "$work/ncu.json" --quiet 2>&1 | grep -E "==PROF==|==ERROR==|Duration" | head -8
medians "$work/ncu.json"
echo "== how every response was confined"
for d in "$@"; do
  find "$d" -name 'response*.json' -print0 | xargs -0 -r python3 -c "
import json, sys, collections
modes = collections.Counter()
for f in sys.argv[1:]:
    try: modes[json.load(open(f)).get('confinement', {}).get('mode', 'absent')] += 1
    except Exception: modes['unreadable'] += 1
print(sys.argv[1].split('/results/')[0] if False else '', dict(modes))" | sed "s|^|$d: |"
done
