#!/bin/bash
# Issue 46 on the GPU: each example's main job (its config, seven iterations), then its winner
# exported as a PyTorch package and a header, and `export --verify`: the package built by the
# confined PyTorch child with this machine's PyTorch and nvcc, its test run (the op against the
# run's reference kernel at every case and holdout shape, then under torch.compile) and the op
# timed through PyTorch against the run's medians, eager and compiled.
#   tools/bench/export_torch_device.sh OUT [EXAMPLE...]   (default: matmul softmax reduction gemm-fp8)
# MAX_ITER=N: the search's iterations (default: the example's config, 7); STOP_AFTER_S=S: start
# no example after S seconds (a device call has 10 minutes).
# Run from the repository root, binaries in build/ (tools/device-bundle.sh).
set -u
out=$(realpath -m "$1")
shift
examples=("$@")
[ ${#examples[@]} -eq 0 ] && examples=(matmul softmax reduction gemm-fp8)
opt=$PWD/build/cuda-optimizer
mkdir -p "$out"
began=$(date +%s)
for ex in "${examples[@]}"; do
    if [ -n "${STOP_AFTER_S:-}" ] && [ $(( $(date +%s) - began )) -gt "$STOP_AFTER_S" ]; then
        echo "== $ex: not started (past STOP_AFTER_S=$STOP_AFTER_S s)"
        continue
    fi
    start=$(date +%s)
    (cd "examples/$ex" && "$opt" optimize --config config.json --harness "$(dirname "$opt")/cuda-harness" \
        --results-dir "$out/runs/$ex" ${MAX_ITER:+--max-iterations "$MAX_ITER"}) > "$out/$ex.run.log" 2>&1
    echo "== $ex: optimize exit $? in $(( $(date +%s) - start )) s"
    grep -E "^(go|no_go|no_winner)" "$out/$ex.run.log" | cut -c1-200 | sed 's/^/    /'
    run=$(ls -d "$out/runs/$ex"/run-* | tail -1)
    force=""
    python3 -c "import json,sys; sys.exit(json.load(open(sys.argv[1]))['verdict'] != 'go')" "$run/summary.json" || force=--force
    start=$(date +%s)
    "$opt" export "$run" --torch "$out/pkg/$ex" --header "$out/header/$ex" $force --verify \
        > "$out/$ex.export.log" 2>&1
    echo "   export --torch --verify $force: exit $? in $(( $(date +%s) - start )) s"
    grep -v "^/" "$out/$ex.export.log" | sed 's/^/    /'
    for log in build test bench; do
        [ -f "$run/export-verify/$log.log" ] && cp "$run/export-verify/$log.log" "$out/$ex.$log.log"
    done
    [ -f "$out/$ex.test.log" ] && sed 's/^/    test: /' "$out/$ex.test.log" | tail -15
    [ -f "$out/$ex.build.log" ] && grep -iE "error|warning: " "$out/$ex.build.log" | head -5 | sed 's/^/    build: /'
done
