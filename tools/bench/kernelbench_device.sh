#!/bin/bash
# Issue 45 on the GPU: KernelBench level-1 files imported unmodified, a hand-written candidate
# per problem through --proposer files (tools/bench/kernelbench/), verdicts and speedups over
# PyTorch eager and torch.compile, and our eager figure against KernelBench's own recipe
# (kernelbench_timing.py). Run from the repository root on the device with the binaries in
# build/ (tools/device-bundle.sh) and the GPU's PyTorch as python3.
#   tools/bench/kernelbench_device.sh KERNELBENCH_LEVEL1_DIR OUT [PROBLEM...]
set -u
kb=$1 out=$2
shift 2
mkdir -p "$out/problems" "$out/runs" "$out/cands"
opt=build/cuda-optimizer
# Every .py in the level-1 folder given is imported (its own sizes, no edit), eight at a time
# (IMPORT_ALL=0: only the problems named).
problems=("$@")
if [ "${IMPORT_ALL:-1}" = 0 ]; then sources=$(for p in "$@"; do echo "$kb/$p.py"; done); else sources=$(ls "$kb"/*.py); fi
echo "$sources" | xargs -P 8 -I{} sh -c \
    'n=$(basename {} .py); '"$opt"' import {} --timeout 120 --out '"$out"'/problems/$n > '"$out"'/problems/$n.log 2>&1; echo "$n exit $?"' \
    | sort -n > "$out/imports.txt"
echo "imports: $(grep -c 'exit 0' "$out/imports.txt") of $(wc -l < "$out/imports.txt") imported"
[ ${#problems[@]} -eq 0 ] && problems=($(ls tools/bench/kernelbench | grep -v '\.'))
for p in "${problems[@]}"; do
    mkdir -p "$out/cands/$p"
    for c in tools/bench/kernelbench/$p/*.cu; do
        sed -e '/#include "sgemm.cuh"/{r tools/bench/kernelbench/sgemm.cuh' -e 'd}' "$c" \
            > "$out/cands/$p/$(basename "$c")"
        cp "${c%.cu}.json" "$out/cands/$p/"
    done
    start=$(date +%s)
    "$opt" optimize --config "$out/problems/$p/config.json" --proposer files \
        --candidates "$out/cands/$p" --max-iterations 1 --results-dir "$out/runs/$p" \
        > "$out/runs/$p.log" 2>&1
    echo "$p: exit $? in $(( $(date +%s) - start )) s: $(grep -E '^(go|no_go|no_winner)' "$out/runs/$p.log" | head -1)"
    grep -E "torch.compile baseline|^perf-|^case " "$out/runs/$p.log" | sed 's/^/    /'
    python3 tools/bench/kernelbench_timing.py "$kb/$p.py" >> "$out/kernelbench-timing.jsonl" 2>&1
done
