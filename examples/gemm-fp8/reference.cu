// Reviewed reference for the FP8 GEMM: C[m x n] = scale_a * scale_b * A[m x k] * B[n x k]^T
// from the same e4m3 inputs the candidates read, each product exact in double (4-bit
// significands), summed in double and rounded once to bf16. One thread per output, slow on
// purpose and easy to read: its outputs are the oracle every candidate is checked against.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

extern "C" __global__ void gemm_e4m3(const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b, __nv_bfloat16* c,
                                     float scale_a, float scale_b, int m, int n, int k) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    double acc = 0.0;
    for (int p = 0; p < k; ++p)
        acc += static_cast<double>(static_cast<float>(a[static_cast<long long>(row) * k + p])) *
               static_cast<double>(static_cast<float>(b[static_cast<long long>(col) * k + p]));
    c[static_cast<long long>(row) * n + col] =
        __double2bfloat16(static_cast<double>(scale_a) * static_cast<double>(scale_b) * acc);
}
