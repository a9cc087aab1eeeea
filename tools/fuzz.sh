#!/usr/bin/env bash
# Fuzzes what the two programs read, with libFuzzer + ASan + UBSan (clang):
#   tools/fuzz.sh TARGET SECONDS     one target: request, manifest, expression, config,
#                                    candidate, model_reply, run_record
#   tools/fuzz.sh all SECONDS        each target in turn (tools/test.sh runs `all 40`)
# Seeds are tests/fuzz/corpus/TARGET (committed); what a run learns goes to
# build-asan/corpus/TARGET, a crashing input to build-asan/crash-TARGET-*. Prints one line
# per target with its executions; exits 1 when any target found a crash.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(request manifest expression config candidate model_reply run_record)
which=${1:?usage: tools/fuzz.sh TARGET|all SECONDS}
seconds=${2:?usage: tools/fuzz.sh TARGET|all SECONDS}
[[ $which == all ]] || targets=("$which")
build=build-asan  # shared with tools/sanitize.sh
tools/sanitized-build.sh "${targets[@]/#/fuzz-}" >/dev/null
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
failed=0
for t in "${targets[@]}"; do
  mkdir -p "$build/corpus/$t"
  log="$build/fuzz-$t.log"
  if "$build/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
      -artifact_prefix="$build/crash-$t-" "$build/corpus/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    runs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' || echo "?")
    echo "fuzz $t: $runs executions in ${seconds} s, no crash"
  else
    echo "fuzz $t: CRASH (see $log and $build/crash-$t-*)" >&2
    grep -E 'ERROR|SUMMARY|runtime error|terminate' "$log" | head -5 >&2 || true
    failed=1
  fi
done
exit $failed
