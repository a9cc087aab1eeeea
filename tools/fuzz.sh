#!/usr/bin/env bash
# Fuzzes what the two programs read, with libFuzzer + ASan + UBSan (clang):
#   tools/fuzz.sh TARGET SECONDS     one target: request, manifest, expression, config,
#                                    candidate, model_reply, run_record
#   tools/fuzz.sh all SECONDS        every target, as many at once as there are cores
#                                    (tools/test.sh runs `all 40`: 7 targets, 2 cores: ~160 s)
# Seeds are tests/fuzz/corpus/TARGET (committed; the reproducers of past findings among them),
# the hostile tokens tests/fuzz/hostile.dict (expression.dict for expressions); what a run learns
# goes to build-asan/corpus/TARGET, a crashing input (or a broken invariant: "fuzz invariant
# broken: ...") to build-asan/crash-TARGET-*. Prints one line per target with its executions;
# exits 1 when any target found a crash.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(request manifest expression config candidate model_reply run_record)
which=${1:?usage: tools/fuzz.sh TARGET|all SECONDS}
seconds=${2:?usage: tools/fuzz.sh TARGET|all SECONDS}
[[ $which == all ]] || targets=("$which")
build=build-asan  # shared with tools/sanitize.sh
tools/sanitized-build.sh "${targets[@]/#/fuzz-}" >/dev/null
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1

# One target for `seconds`; its verdict line goes to stdout (a crash's also to stderr).
fuzz_one() {
  local t=$1 log="$build/fuzz-$1.log" dict=tests/fuzz/hostile.dict
  [[ $t == expression ]] && dict=tests/fuzz/expression.dict
  mkdir -p "$build/corpus/$t"
  if "$build/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
      -dict="$dict" -artifact_prefix="$build/crash-$t-" "$build/corpus/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    local runs
    runs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' || echo "?")
    echo "fuzz $t: $runs executions in ${seconds} s, no crash"
  else
    echo "fuzz $t: CRASH (see $log and $build/crash-$t-*)" >&2
    grep -E 'ERROR|SUMMARY|runtime error|terminate|invariant' "$log" | head -5 >&2 || true
    return 1
  fi
}

# Each fuzzer is one thread: run one per core, and collect every target's status.
slots=$(nproc)
failed=0
pids=()
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= slots)); do wait -n || true; done
  fuzz_one "$t" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
exit $failed
