#!/usr/bin/env bash
# Orchestrator time per model iteration (CPU): a 7-iteration --proposer llm run against the
# loopback model server answering instantly, with fake-harness, five times; each run's
# (wall time - time inside harness runs) / 7. Target: <= 50 ms. Includes the compile-only
# check of every submission, which is a harness process of its own.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ -x build/tests/cuopt_tests ]] || tools/setup.sh
for i in 1 2 3 4 5; do build/tests/cuopt_tests "[.bench]" | grep "model loop:"; done
