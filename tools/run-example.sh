#!/usr/bin/env bash
# Sets up, builds and runs the main job on the bundled example: cuda-harness on the
# pilot matmul request (three cases), then prints each case's median.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
example=examples/harness/matmul
set +e
build/cuda-harness "$example/request.json"
code=$?
set -e
echo "response: $example/response.json (exit $code)"
exit $code
