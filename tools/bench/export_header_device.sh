#!/bin/bash
# Issue 46 on the GPU: the pilot's winner exported as a header (export --header), built with
# nvcc beside tools/bench/export_header_check.cu, launched through launch_matmul_f32 at the
# pilot's three shapes, checked against a host matmul and timed (medians over 200 launches),
# then the run's own medians beside it.
#   tools/bench/export_header_device.sh RUN OUT
set -u
run=$1 out=$2
mkdir -p "$out"
build/cuda-optimizer export "$run" --header "$out/export" || build/cuda-optimizer export "$run" --header "$out/export" --force
arch=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['device']['arch'])" "$run/run.json")
nvcc -std=c++17 -arch="$arch" -I "$out/export" tools/bench/export_header_check.cu -o "$out/check" \
    && "$out/check"
echo "exported header check: exit $?"
python3 - "$run/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("the run's verdict:", s["verdict"], "; its medians (search):",
      {c["name"]: c.get("best_median_ms") for c in s["cases"]})
PY
