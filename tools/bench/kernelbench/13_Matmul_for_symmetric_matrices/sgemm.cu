// KernelBench level-1 #13 (C = A B, N x N; the generated inputs are not symmetric, so the
// kernel may not assume it), hand-written for issue 45's device run.
#include "sgemm.cuh"  // inlined by kernelbench_device.sh (a candidate is one file)
extern "C" __global__ void __launch_bounds__(256)
    Matmul_for_symmetric_matrices(const float* A, const float* B, float* out, int N) {
    sgemm_tile(A, B, out, N, N, N);
}
