#!/usr/bin/env bash
# The daemon on a GPU machine (tools/device-bundle.sh's binaries in build/): the pilot submitted
# JOBS times into a spool, run by `serve --devices 0` and then by `serve --devices 0,1` (two
# GPUs: one job each at a time), the second daemon SIGKILLed once mid-run and started again.
# Prints and writes under OUT: each phase's wall time, the jobs' states, starts and GPUs, whether
# two jobs ever shared a GPU (from the jobs' run.json devices and their state times), and that
# every run folder is complete.
#   tools/gpu-daemon-check.sh OUT [JOBS]
# DEVICES (default 0,1) are the second daemon's GPUs; ONLY_SECOND=1 skips the first phase.
# (CUOPT_HARNESS and CUOPT_SANITIZER name other programs: the fake ones, to try it without a GPU.)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-daemon-check.sh OUT [JOBS]}
jobs=${2:-6}
mkdir -p "$out"
root=$(mktemp -d)
opt=$PWD/build/cuda-optimizer
progs=(${CUOPT_HARNESS:+--harness "$CUOPT_HARNESS"})
serve_progs=("${progs[@]}" ${CUOPT_SANITIZER:+--sanitizer "$CUOPT_SANITIZER"})
export LD_LIBRARY_PATH=$PWD/build/lib:${LD_LIBRARY_PATH:-}
log="$out/daemon-check.txt"
say() { echo "$*" | tee -a "$log"; }

submit_all() {  # SPOOL
  for i in $(seq 1 "$jobs"); do
    "$opt" submit --spool "$1" --config examples/matmul/config.json --seed "$i" "${progs[@]}" >/dev/null ||
      say "submit $i failed"
  done
}

summarise() {  # SPOOL
  "$opt" status --spool "$1" | tee -a "$log"
  for j in "$1"/jobs/job-*; do
    python3 - "$j" <<'EOF' | tee -a "$log"
import json, sys, os, glob
j = sys.argv[1]
st = json.load(open(j + "/state.json"))
runs = glob.glob(j + "/results/run-*")
complete = len(runs) == 1 and all(os.path.isfile(os.path.join(runs[0], f)) for f in
    ("run.json", "history.json", "summary.json", "report.html"))
run = json.load(open(runs[0] + "/run.json")) if runs else {}
dev = [d.get("index") for d in run.get("devices", [])]
print(f"{os.path.basename(j)} state={st['state']} starts={st['starts']} gpu={st['device']} "
      f"run_devices={dev} attempts={st['attempts']} complete_run_folder={complete} "
      f"started={st['started']} finished={st['finished']} resumes={len(run.get('resumes', []))}")
EOF
  done
}

overlap_check() {  # SPOOL: per GPU, no two jobs' [started, finished] intervals overlap
  python3 - "$1" <<'EOF' | tee -a "$log"
import json, sys, glob, datetime
spans = {}
for j in sorted(glob.glob(sys.argv[1] + "/jobs/job-*")):
    st = json.load(open(j + "/state.json"))
    f = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
    spans.setdefault(st["device"], []).append((f(st["started"]), f(st["finished"]), j[-10:]))
bad = 0
for dev, s in spans.items():
    s.sort()
    for a, b in zip(s, s[1:]):
        # a resumed job's started is its first start: only a real overlap of whole jobs counts
        if b[0] < a[1] and b[2] != a[2]:
            bad += 1
print(f"jobs per GPU: { {d: len(s) for d, s in spans.items()} }; overlapping jobs on one GPU: {bad}")
EOF
}

say "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -2 | tr '\n' ';')"

devices=${DEVICES:-0,1}
if [[ ${ONLY_SECOND:-0} != 1 ]]; then
say "== phase 1: $jobs pilot jobs, serve --devices 0"
submit_all "$root/one"
t0=$(date +%s.%N)
"$opt" serve "${serve_progs[@]}" --spool "$root/one" --devices 0 --stop-when-idle 1 >"$out/serve-one.log" 2>&1
t1=$(date +%s.%N)
say "wall: $(python3 -c "print(round($t1 - $t0, 1))") s"
summarise "$root/one"
fi

say "== phase 2: $jobs pilot jobs, serve --devices $devices, SIGKILLed once when a job has 15 attempts"
submit_all "$root/two"
t0=$(date +%s.%N)
"$opt" serve "${serve_progs[@]}" --spool "$root/two" --devices "$devices" >"$out/serve-two-a.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  sleep 0.1
  n=$(python3 -c "import json,glob; print(max([json.load(open(f))['attempts'] for f in glob.glob('$root/two/jobs/*/state.json')] + [0]))")
  [[ $n -ge 15 ]] && break
done
kill -9 "$pid"; wait "$pid" 2>/dev/null
say "SIGKILLed serve at $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s; states then:"
"$opt" status --spool "$root/two" | tee -a "$log"
"$opt" serve "${serve_progs[@]}" --spool "$root/two" --devices "$devices" --stop-when-idle 1 >"$out/serve-two-b.log" 2>&1
t1=$(date +%s.%N)
say "wall (both daemons): $(python3 -c "print(round($t1 - $t0, 1))") s"
summarise "$root/two"
overlap_check "$root/two"
cp "$out/serve-two-b.log" "$out/serve-two-b.txt" 2>/dev/null
tail -3 "$root"/two/jobs/job-000001/job.log >>"$log" 2>/dev/null
rm -rf "$root"
