#!/usr/bin/env bash
# Sets up, builds and runs the main job on the bundled example: cuda-optimizer on the
# pilot matmul (examples/matmul), 7 autotune iterations on GPU 0, no API key needed.
# Without a GPU it stops after the preflight with a one-line reason (exit 20). With --json,
# stdout is summary.json and nothing else (the build's output goes to stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
# The driver first (seconds), before any package or build: without one nothing here can run
# (unless another harness was named, e.g. the tests' fake one).
other_harness=no
for a in "$@"; do [[ $a == --harness || $a == --harness=* ]] && other_harness=yes; done
# ldconfig is in /sbin for most users; read whole (grep -q would end the pipe early: SIGPIPE).
libs=$({ ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null || true)
driver=no
grep -q 'libcuda\.so\.1 ' <<<"$libs" && driver=yes
# Device nodes (made at the first CUDA call on some hosts), the kernel module, WSL2's GPU.
for f in /dev/nvidiactl /proc/driver/nvidia/version /dev/dxg; do [[ -e $f ]] && driver=yes; done
if [[ $other_harness == no && $driver == no ]]; then
  echo "cuda-optimizer: preflight failed: no NVIDIA driver (no libcuda.so.1, no /dev/nvidiactl, /proc/driver/nvidia or /dev/dxg): nothing can run on a GPU here; try it without one: README.md, \"Try it without a GPU\" (tools/setup.sh cuda-optimizer fake-harness, then --harness build/tests/fake-harness)" >&2
  exit 20
fi
tools/setup.sh cuda-optimizer cuda-harness >&2  # only what runs; stdout stays the tool's (--json)
exec build/cuda-optimizer optimize --config examples/matmul/config.json --max-iterations 7 --device 0 "$@"
