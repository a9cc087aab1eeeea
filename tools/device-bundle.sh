#!/usr/bin/env bash
# Packs what the GPU machine needs into .bundle/ (git-ignored; carry it): the stripped
# binaries, built here where the Debian dependencies are, the CUB launcher libcuopt_cub.so
# (which cuda-harness loads from its own folder), and the shared libraries the GPU image lacks
# (cairo and its dependencies) in .bundle/lib. On the device:
#   mkdir -p build/tests && cp .bundle/{cuda-harness,cuda-optimizer,event-floor,cublas-sgemm,libcuopt_cub.so} build/ \
#     && cp -r .bundle/lib build/ && cp .bundle/{cuopt_tests,cuopt_exploit_tests,fake-harness} build/tests/
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x build/cuda-optimizer ]] || tools/setup.sh
rm -rf .bundle && mkdir -p .bundle/lib
for b in cuda-harness cuda-optimizer event-floor cublas-sgemm; do strip -o ".bundle/$b" "build/$b"; done
# --strip-unneeded keeps the dynamic symbols the harness looks up (dlsym).
strip --strip-unneeded -o .bundle/libcuopt_cub.so build/libcuopt_cub.so
strip -o .bundle/cuopt_tests build/tests/cuopt_tests
strip -o .bundle/cuopt_exploit_tests build/tests/cuopt_exploit_tests
strip -o .bundle/fake-harness build/tests/fake-harness
# Everything cuda-optimizer loads from outside glibc, libstdc++, OpenSSL, zlib and libpng.
ldd build/cuda-optimizer | awk '/=> \// {print $3}' | grep -vE '/(libc|libm|libpthread|libdl|librt|libgcc_s|libstdc\+\+|libz|libpng16|libcrypto|libssl)\.so' |
  while read -r lib; do cp -L "$lib" .bundle/lib/; done
du -sh .bundle
