#!/usr/bin/env bash
# Sets up, builds and runs the main job on the bundled example: cuda-optimizer on the
# pilot matmul (examples/matmul), 7 autotune iterations on GPU 0, no API key needed.
# Without a GPU it stops after the preflight with a one-line reason (exit 20). With --json,
# stdout is summary.json and nothing else (the build's output goes to stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh cuda-optimizer cuda-harness >&2  # only what runs; stdout stays the tool's (--json)
exec build/cuda-optimizer optimize --config examples/matmul/config.json --max-iterations 7 --device 0 "$@"
