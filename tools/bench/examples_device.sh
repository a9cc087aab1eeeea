#!/usr/bin/env bash
# On the GPU machine (carry .bundle): the [worker] tests, then the matmul-tiled, softmax and
# reduction examples end to end (7 autotune iterations, evidence gates), logs under $OUT.
# The tiled example always; EXTRA="softmax reduction" runs those after it.
set -x
mkdir -p /work && ln -sfn "$PWD" /work/main && mkdir -p build/tests && cp .bundle/{cuda-harness,cuda-optimizer,event-floor,cublas-sgemm,libcuopt_cub.so} build/ && cp -r .bundle/lib build/ && cp .bundle/{cuopt_tests,cuopt_exploit_tests,fake-harness} build/tests/ && cd /work/main
export LD_LIBRARY_PATH=$PWD/build/lib
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
(timeout 60 build/tests/cuopt_tests "[worker]" 2>&1 | tail -5) > $OUT/worker-tests.txt
(time timeout 420 build/cuda-optimizer optimize --config examples/matmul-tiled/config.json --results-dir $OUT/res-tiled) > $OUT/tiled.txt 2>&1
echo rc=$? >> $OUT/tiled.txt
for e in ${EXTRA:-}; do (timeout 60 build/cuda-optimizer optimize --config examples/$e/config.json --results-dir $OUT/res-$e) > $OUT/$e.txt 2>&1; echo rc=$? >> $OUT/$e.txt; done
cp $OUT/res-tiled/run-001/summary.json $OUT/tiled-summary.json 2>/dev/null
rm -rf $OUT/res-*/run-*/candidates $OUT/res-*/run-*/evidence $OUT/res-*/run-*/inputs $OUT/res-*/run-*/reference $OUT/res-*/run-*/holdout-reference $OUT/res-*/run-*/vendor
tail -30 $OUT/tiled.txt
