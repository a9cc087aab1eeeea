// KernelBench level-1 #18 (C = A.T B.T, A is K x M, B is N x K), hand-written for issue 45's
// device run.
#define TRANS_A 1
#define TRANS_B 1
#include "sgemm.cuh"  // inlined by kernelbench_device.sh (a candidate is one file)
extern "C" __global__ void __launch_bounds__(256)
    Matmul_with_transposed_both(const float* A, const float* B, float* out, int M, int K, int N) {
    sgemm_tile(A, B, out, M, N, K);
}
