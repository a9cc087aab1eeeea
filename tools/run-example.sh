#!/usr/bin/env bash
# Sets up, builds and runs the main job on the bundled example: cuda-optimizer on the
# pilot matmul (examples/matmul), 7 autotune iterations on GPU 0, no API key needed.
# Without a GPU it stops after the preflight with a one-line reason (exit 20).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
exec build/cuda-optimizer optimize --config examples/matmul/config.json --max-iterations 7 --device 0 "$@"
