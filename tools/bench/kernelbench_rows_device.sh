#!/bin/bash
# Issue 45 on the GPU, second part: a user's own kernel beside PyTorch eager, and suite --submit.
#  1. KernelBench #88 imported unmodified, with a plain one-element-per-thread GELU as its
#     initial_kernel (tools/bench/kernelbench/88_MinGPTNewGelu/initial/plain.cu) and the fused
#     float4 one as the files proposer's candidate: eager stays the baseline, the plain kernel is
#     a row ("yours"), the verdict is over eager, torch.compile in the closing table.
#  export: (after own) its winner exported as a PyTorch package with `export --verify`: built,
#     tested against the module itself, timed beside the run's medians.
#  replace: (after export) the built package's replace(model) on the KernelBench module itself:
#     its forward swapped for the op, its output against the unmodified module's, both timed.
#  2. The same problem and #12 as a deck given to `suite --submit`: a real daemon (serve, the
#     real harness) runs them as jobs; suite.json collects them.
# Run from the repository root on the device, binaries in build/ (tools/device-bundle.sh).
#   tools/bench/kernelbench_rows_device.sh KERNELBENCH_LEVEL1_DIR OUT [own|export|replace|submit]...
set -u
kb=$1 out=$2
shift 2
opt=build/cuda-optimizer
mkdir -p "$out/deck"
# A problem folder of the deck: imported, its candidates inlined (sgemm.cuh) beside its config,
# which names them (a daemon job's files must lie in its folder).
problem() {
    local p=$1 dir=$out/deck/$1
    "$opt" import "$kb/$p.py" --timeout 120 --out "$dir" > "$out/deck/$p.import.log" 2>&1 || return 1
    mkdir -p "$dir/cands"
    for c in tools/bench/kernelbench/$p/*.cu; do
        sed -e '/#include "sgemm.cuh"/{r tools/bench/kernelbench/sgemm.cuh' -e 'd}' "$c" > "$dir/cands/$(basename "$c")"
        cp "${c%.cu}.json" "$dir/cands/"
    done
    local initial=""
    if [ -d "tools/bench/kernelbench/$p/initial" ]; then
        cp tools/bench/kernelbench/$p/initial/*.cu "$dir/"
        initial=$(basename tools/bench/kernelbench/$p/initial/*.cu)
    fi
    python3 - "$dir/config.json" "$initial" <<'PY'
import json, sys
path, initial = sys.argv[1], sys.argv[2]
c = json.load(open(path))
c.update({"proposer": "files", "candidates": "cands", "max_iterations": 1})
if initial:
    c["initial_kernel"] = initial
json.dump(c, open(path, "w"), indent=2)
PY
}
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(own submit)
for s in "${steps[@]}"; do
    case $s in
    own)
        problem 88_MinGPTNewGelu || { echo "import of 88 failed"; cat "$out/deck/88_MinGPTNewGelu.import.log"; continue; }
        start=$(date +%s)
        "$opt" optimize --config "$out/deck/88_MinGPTNewGelu/config.json" \
            --results-dir "$out/own" > "$out/own.log" 2>&1
        echo "own kernel run: exit $? in $(( $(date +%s) - start )) s"
        grep -E "^\[iter|torch.compile baseline|^case |^perf|^(go|no_go|no_winner)|why:" "$out/own.log" | sed 's/^/    /'
        python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print('    summary initial_kernel:', json.dumps(s.get('initial_kernel')))" "$out"/own/run-001/summary.json
        ;;
    export)
        start=$(date +%s)
        "$opt" export "$out/own/run-001" --torch "$out/own-pkg" --verify --force > "$out/export.log" 2>&1
        echo "export --torch --verify: exit $? in $(( $(date +%s) - start )) s"
        grep -v "^/" "$out/export.log" | sed 's/^/    /'
        for log in build test bench; do
            [ -f "$out/own/run-001/export-verify/$log.log" ] && tail -25 "$out/own/run-001/export-verify/$log.log" | sed "s/^/    $log: /"
        done
        ;;
    replace)
        verify=$out/own/run-001/export-verify
        python3 - "$verify" "$kb/88_MinGPTNewGelu.py" <<'PY' 2>&1 | sed 's/^/    /'
import glob, importlib, importlib.util, os, sys, torch
verify, source = sys.argv[1], sys.argv[2]
sys.path.insert(0, verify)
pkg = importlib.import_module(os.path.basename(glob.glob(os.path.join(verify, "cuopt_*"))[0]))
spec = importlib.util.spec_from_file_location("kb_module", source)
kb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kb)
torch.manual_seed(0)
model = kb.Model(*kb.get_init_inputs()).cuda()
inputs = [t.cuda() if isinstance(t, torch.Tensor) else t for t in kb.get_inputs()]
def median_ms(f):
    times = []
    for _ in range(30):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); b.synchronize()
        times.append(a.elapsed_time(b))
    return sorted(times)[len(times) // 2]
with torch.no_grad():
    want = model(*inputs)
    eager = median_ms(lambda: model(*inputs))
    swapped = pkg.replace(model)
    got = swapped(*inputs)
    ours = median_ms(lambda: swapped(*inputs))
torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
print(f"replace(model): output matches the module's ({tuple(got.shape)}, max abs diff "
      f"{(got - want).abs().max().item():.2e}); module {eager:.4f} ms, replaced {ours:.4f} ms "
      f"({eager / ours:.2f}x, median of 30, events around one call)")
PY
        ;;
    submit)
        [ -d "$out/deck/88_MinGPTNewGelu" ] || problem 88_MinGPTNewGelu
        problem 12_Matmul_with_diagonal_matrices_
        "$opt" serve --spool "$out/spool" --harness build/cuda-harness --poll 0.5 > "$out/serve.log" 2>&1 &
        serve=$!
        sleep 2
        start=$(date +%s)
        "$opt" suite "$out/deck" --submit "$out/spool" --poll 2 --results-dir "$out/suite" > "$out/suite.log" 2>&1
        echo "suite --submit: exit $? in $(( $(date +%s) - start )) s"
        sed 's/^/    /' "$out/suite.log"
        "$opt" status --spool "$out/spool" | sed 's/^/    /'
        kill -TERM $serve; wait $serve
        ;;
    esac
done
