// Scaled FP8 GEMM: C[m x n] = scale_a * scale_b * A[m x k] * B[n x k]^T, A and B e4m3 and
// row-major (B stored n x k, like a linear layer's weight: the form cuBLASLt's FP8 GEMM takes),
// C bf16, sums in fp32. Naive on purpose: with each tunable's first value (TILE_K 0,
// ROWS_PER_THREAD 1) every thread computes one element of C straight from global memory.
// TILE_K > 0 stages a (BLOCK_Y * ROWS_PER_THREAD) x TILE_K tile of A and a BLOCK_X x TILE_K
// tile of B in shared memory, converted to float once, and each thread keeps ROWS_PER_THREAD
// accumulators. Both paths sum over k in the same order, for any shape.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#ifndef BLOCK_X
#define BLOCK_X 16
#endif
#ifndef BLOCK_Y
#define BLOCK_Y 16
#endif
#ifndef TILE_K
#define TILE_K 0
#endif
#ifndef ROWS_PER_THREAD
#define ROWS_PER_THREAD 1
#endif
#define TILE_ROWS (BLOCK_Y * ROWS_PER_THREAD)

extern "C" __global__ void gemm_e4m3(const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b, __nv_bfloat16* c,
                                     float scale_a, float scale_b, int m, int n, int k) {
    const int col = blockIdx.x * BLOCK_X + threadIdx.x;
    const int row0 = blockIdx.y * TILE_ROWS + threadIdx.y;  // rows row0, row0 + BLOCK_Y, ...
    float acc[ROWS_PER_THREAD];
#pragma unroll
    for (int j = 0; j < ROWS_PER_THREAD; ++j) acc[j] = 0.0f;
#if TILE_K == 0
    if (col >= n) return;
    for (int p = 0; p < k; ++p) {
        const float bv = static_cast<float>(b[static_cast<long long>(col) * k + p]);
#pragma unroll
        for (int j = 0; j < ROWS_PER_THREAD; ++j)
            if (row0 + j * BLOCK_Y < m)
                acc[j] += static_cast<float>(a[static_cast<long long>(row0 + j * BLOCK_Y) * k + p]) * bv;
    }
#else
    __shared__ float as[TILE_K][TILE_ROWS + 1];  // +1 spreads the banks
    __shared__ float bs[TILE_K][BLOCK_X + 1];
    const int tid = threadIdx.y * BLOCK_X + threadIdx.x;
    const int first_row = blockIdx.y * TILE_ROWS, first_col = blockIdx.x * BLOCK_X;
    for (int k0 = 0; k0 < k; k0 += TILE_K) {
        // Every thread loads and reaches both barriers, in range or not (zeros outside).
        for (int i = tid; i < TILE_ROWS * TILE_K; i += BLOCK_X * BLOCK_Y) {
            const int r = i / TILE_K, p = i % TILE_K;
            const bool in = first_row + r < m && k0 + p < k;
            as[p][r] = in ? static_cast<float>(a[static_cast<long long>(first_row + r) * k + k0 + p]) : 0.0f;
        }
        for (int i = tid; i < BLOCK_X * TILE_K; i += BLOCK_X * BLOCK_Y) {
            const int x = i / TILE_K, p = i % TILE_K;
            const bool in = first_col + x < n && k0 + p < k;
            bs[p][x] = in ? static_cast<float>(b[static_cast<long long>(first_col + x) * k + k0 + p]) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < TILE_K; ++p) {
            const float bv = bs[p][threadIdx.x];
#pragma unroll
            for (int j = 0; j < ROWS_PER_THREAD; ++j) acc[j] += as[p][threadIdx.y + j * BLOCK_Y] * bv;
        }
        __syncthreads();
    }
    if (col >= n) return;
#endif
    const float scale = scale_a * scale_b;
#pragma unroll
    for (int j = 0; j < ROWS_PER_THREAD; ++j)
        if (row0 + j * BLOCK_Y < m)
            c[static_cast<long long>(row0 + j * BLOCK_Y) * n + col] = __float2bfloat16(acc[j] * scale);
}
