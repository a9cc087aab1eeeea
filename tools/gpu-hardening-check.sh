#!/usr/bin/env bash
# Issue 30's hostile values against the real programs on a GPU machine (tools/device-bundle.sh's
# binaries in build/), in one go: a harness and an optimize run on a full disk (a small tmpfs:
# root only, skipped with the reason otherwise), case names holding U+0000 or a lone surrogate,
# a 1 MiB entry name, huge durations for `check`, and `check` on the bundled example as it is.
# For each: its exit status, the bytes it wrote to stderr and what it said. Logs in OUT/logs.
#   tools/gpu-hardening-check.sh OUT
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${1:?usage: tools/gpu-hardening-check.sh OUT}
mkdir -p "$out"
log="$out/summary.txt"
opt=$PWD/build/cuda-optimizer
harness=$PWD/build/cuda-harness
export LD_LIBRARY_PATH=$PWD/build/lib:${LD_LIBRARY_PATH:-}
work=$(mktemp -d)
logs=$out/logs
mkdir -p "$logs"
trap 'umount "$work/full" 2>/dev/null; rm -rf "$work"' EXIT

# Runs a command, its output into LOGS/NAME.{out,err}; prints its exit status, the bytes it wrote
# to stderr and stderr's lines (stdout's last when stderr is empty), each cut at 420 characters.
attempt() {
  local name=$1
  shift
  "$@" >"$logs/$name.out" 2>"$logs/$name.err"
  local rc=$? said="$logs/$name.err"
  [[ -s $said ]] || said="$logs/$name.out"
  printf '%-22s exit %-3s stderr %s bytes\n' "$name" "$rc" "$(stat -c %s "$logs/$name.err")" | tee -a "$log"
  # check's table: its FAIL lines; otherwise the last lines.
  { grep -A1 --no-group-separator '^  FAIL' "$said" ||
    grep -v '^Run with --help' "$said" | tail -n 3; } | cut -c 1-420 | sed 's/^/    /' | tee -a "$log"
}
# Writes DEST: the JSON file SRC with PYTHON applied to it (as r; os and json imported).
json_with() {
  python3 - "$1" "$2" "$3" <<'EOF'
import json, os, sys
r = json.load(open(sys.argv[1]))
exec(sys.argv[3])
open(sys.argv[2], "w").write(json.dumps(r))
EOF
}
# Copies the harness example to DIR with PYTHON applied to its request.
example_with() {
  mkdir -p "$1" && cp examples/harness/matmul/matmul_f32.cu "$1/" &&
    json_with examples/harness/matmul/request.json "$1/request.json" "$2"
}

nvidia-smi --query-gpu=name,driver_version,temperature.gpu --format=csv,noheader >"$log" 2>&1
echo "== a full disk (tmpfs of 320 KiB: the request fits, the 256x256 case's dumps do not)" | tee -a "$log"
mkdir -p "$work/full"
if mount -t tmpfs -o size=320k tmpfs "$work/full" 2>"$logs/mount.err"; then
  example_with "$work/full/h" "pass"
  attempt harness-disk-full "$harness" "$work/full/h/request.json"
  echo "  response.json after it: $(stat -c '%s bytes' "$work/full/h/response.json" 2>&1)" | tee -a "$log"
  rm -rf "${work:?}/full/h"
  cp -r examples/matmul "$work/full/m"
  attempt optimize-disk-full "$opt" optimize --config "$work/full/m/config.json" --results-dir "$work/full/results" \
    --max-iterations 1
  grep -E "harness_error|No space|disk full" "$logs/optimize-disk-full.out" \
    "$work"/full/results/run-*/attempts/*/harness.stderr 2>/dev/null | cut -c 1-300 | head -5 | tee -a "$log"
  df -k "$work/full" | tail -1 | tee -a "$log"
  umount "$work/full"
else
  echo "skipped: cannot mount a tmpfs ($(cat "$logs/mount.err"))" | tee -a "$log"
fi

echo "== names the harness must refuse (exit 11, invalid_request: the field named, the value quoted short)" | tee -a "$log"
example_with "$work/nul" 'r["cases"][1]["name"] = "perf-\u0000x"'
attempt harness-nul-case "$harness" "$work/nul/request.json"
example_with "$work/surrogate" 'r["cases"][1]["name"] = "perf-\udfff"'  # json writes \udfff
attempt harness-lone-surrogate "$harness" "$work/surrogate/request.json"
example_with "$work/nul-output" 'r["cases"][0]["args"][2]["output_file"] = "outputs/c.bin\u0000.evil"'
attempt harness-nul-output "$harness" "$work/nul-output/request.json"
example_with "$work/long-entry" 'r["kernel"]["entry"] = "k" * (1 << 20)'
attempt harness-1mib-entry "$harness" "$work/long-entry/request.json"
echo "  response.json: $(stat -c '%s bytes' "$work/long-entry/response.json" 2>&1)" | tee -a "$log"
example_with "$work/nul-source" "pass"
printf 'extern "C" __global__ void matmul_f32() {}\n\0// after the NUL\n' >"$work/nul-source/matmul_f32.cu"
attempt harness-nul-source "$harness" "$work/nul-source/request.json"

echo "== check: huge durations, then the example as it is (real harness, real GPU)" | tee -a "$log"
attempt check-timeout-1e300 "$opt" check --config examples/matmul/config.json --timeout 1e300
attempt check-timeout-1e10 "$opt" check --config examples/matmul/config.json --timeout 1e10
json_with examples/matmul/config.json "$work/cfg.json" '
for k in ("reference", "initial_kernel", "input_cases", "holdout_cases"):
    r[k] = os.path.abspath("examples/matmul/" + r[k])
r["timeout"] = 1e300'
attempt check-config-timeout "$opt" check --config "$work/cfg.json"
json_with examples/matmul/input_cases.json "$work/cases.json" 'r["cases"][1]["name"] = "perf-\u0000x"'
attempt check-nul-case "$opt" check --config examples/matmul/config.json --input-cases "$work/cases.json"
attempt check-example "$opt" check --config examples/matmul/config.json
tail -n 12 "$logs/check-example.out" | tee -a "$log"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
