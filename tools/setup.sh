#!/usr/bin/env bash
# Installs the Debian packages the build needs (when missing), checks for the CUDA
# toolkit, then configures and builds into build/ (every target, or only the targets
# named: tools/setup.sh cuda-optimizer cuda-harness). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# libtorch-dev: the headers the exported PyTorch op (export --torch) is compiled against in CI; libdtl-dev: report.html's line diff (header-only); chromium: the test that renders report.html headless; slurm-wlm, munge: the [slurm] tests' one-node cluster (tools/slurm-cluster.sh)
# Named targets need only the build's packages; a whole build (the tests) needs them all.
packages=(cmake ninja-build g++ pkg-config rapidjson-dev libssl-dev catch2 libcli11-dev libboost-dev libboost-filesystem-dev libcairo2-dev libcurl4-openssl-dev libgumbo-dev libdtl-dev)
if (($# == 0)); then
  packages+=(clang-format universal-ctags clang libclang-rt-14-dev chromium slurm-wlm munge python3 python3-torch libtorch-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing Debian packages: ${missing[*]}; fix: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The SDK and OpenAPI checker of the model request bodies (tools/api-check, CTest
# model_requests_match_sdk_types_and_openapi): the lock file's exact packages, from the npm
# registry, installed again only when the lock file is newer than the installed tree. Without
# node and npm, or when the install fails, that test reports itself skipped.
if (($# == 0)) && command -v node >/dev/null && command -v npm >/dev/null &&
  [[ ! tools/api-check/package-lock.json -ot tools/api-check/node_modules/.package-lock.json ]]; then
  (cd tools/api-check && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
    echo "setup: npm ci in tools/api-check failed; the request-body SDK check will be skipped" >&2
fi

cuda_root=${CUDAToolkit_ROOT:-/usr/local/cuda}
if [[ ! -x $cuda_root/bin/nvcc || ! -f $cuda_root/include/nvrtc.h ]]; then
  echo "setup: no CUDA toolkit (nvcc, nvrtc.h) under $cuda_root; fix: install CUDA 12.4+ there or export CUDAToolkit_ROOT=/path/to/cuda" >&2
  exit 1
fi

cmake -S . -B build -G Ninja -DCUDAToolkit_ROOT="$cuda_root" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
if (($#)); then
  cmake --build build -j "$(nproc)" --target "$@"
else
  cmake --build build -j "$(nproc)"
fi
