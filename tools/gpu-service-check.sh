#!/usr/bin/env bash
# The daemon's trust boundary on a GPU machine (issue 23), as root: serve runs as root (the
# operator) on GPU 0; two local users made here (cuopt-alice, cuopt-bob; removed at the end)
# submit pilot jobs (examples/matmul, ITERATIONS autotune iterations, default 2) through
# SPOOL/submit.sock as themselves; each lists its jobs (only its own), bob tries to cancel
# and to read one of alice's (refused), and every job must complete. Logs go to $1.
# (CUOPT_HARNESS names another harness for serve: the fake one, to try it without a GPU.)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/gpu-service-check}
iterations=${ITERATIONS:-2}
mkdir -p "$out"
log="$out/service.txt"
: >"$log"
say() { echo "$*" | tee -a "$log"; }

work=$(mktemp -d /tmp/cuopt-service.XXXXXX)
chmod 755 "$work"
mkdir -p "$work/bin"
cp build/cuda-optimizer build/cuda-harness "$work/bin/"
[[ -d build/lib ]] && cp -r build/lib "$work/bin/lib"
chmod -R a+rX "$work/bin"
users=(cuopt-alice cuopt-bob)
for u in "${users[@]}"; do
    id "$u" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin "$u"
    mkdir -p "$work/$u"
    cp -r examples/matmul "$work/$u/matmul"
    chown -R "$u:$u" "$work/$u"
    chmod 700 "$work/$u"
done
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups -- "$@"; }
opt="$work/bin/cuda-optimizer"
spool="$work/spool"

"$opt" serve ${CUOPT_HARNESS:+--harness "$CUOPT_HARNESS"} --spool "$spool" --devices 0 --stop-when-idle 15 >"$out/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do [[ -S $spool/submit.sock ]] && break; sleep 0.1; done
say "spool: $(stat -c '%a %U' "$spool")  jobs/: $(stat -c '%a %U' "$spool/jobs" 2>/dev/null)  submit.sock: $(stat -c '%a %U' "$spool/submit.sock")"

submit() {  # USER: submits one pilot job as USER, prints the job id
    as "$1" "$opt" submit --spool "$spool" --config "$work/$1/matmul/config.json" \
        --max-iterations "$iterations" 2>>"$out/submit.log" | tail -1
}
a1=$(submit cuopt-alice); a2=$(submit cuopt-alice); b1=$(submit cuopt-bob)
say "submitted: alice $a1 $a2, bob $b1"
say "alice sees: $(as cuopt-alice "$opt" status --spool "$spool" --json | tr -d '\n' | grep -o '"id":"job-[0-9]*"' | tr '\n' ' ')"
say "bob sees:   $(as cuopt-bob "$opt" status --spool "$spool" --json | tr -d '\n' | grep -o '"id":"job-[0-9]*"' | tr '\n' ' ')"
refusal=$(as cuopt-bob "$opt" cancel --spool "$spool" "$a1" 2>&1)
say "bob cancels alice's $a1: exit $? ($refusal)"
say "bob reads alice's log: $(as cuopt-bob cat "$spool/jobs/$a1/job.log" 2>&1 | head -1)"
say "bob flocks .daemon.lock: $(as cuopt-bob flock -n "$spool/.daemon.lock" true 2>&1 | head -1)"
wait "$serve_pid"
say "serve exit $?"
"$opt" status --spool "$spool" | tee -a "$log"
for j in "$spool"/jobs/*/; do
    say "$(basename "$j"): owner $(stat -c '%U %a' "$j"), submitter $(grep -o '"submitter": *"[^"]*"' "$j/job.json")"
    grep -h "^best:" "$j/job.log" | tail -1 | tee -a "$log"
done
cp "$spool"/jobs/*/job.log "$out/" 2>/dev/null
for u in "${users[@]}"; do userdel "$u" 2>/dev/null; done
