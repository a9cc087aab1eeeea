// The pilot kernel: row-major C[m x n] = A[m x k] * B[k x n] in fp32. Naive on purpose: with
// each tunable's first value (TILE_K 0, ROWS_PER_THREAD 1) every thread computes one element
// of C straight from global memory; that is the starting point to optimise.
// TILE_K > 0 selects a shared-memory tiled path: a block stages a (BLOCK_Y * ROWS_PER_THREAD)
// x TILE_K tile of A and a TILE_K x BLOCK_X tile of B, and each thread keeps ROWS_PER_THREAD
// accumulators in registers. Both paths sum over k in the same order, for any shape.
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

extern "C" __global__ void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k) {
    const int col = blockIdx.x * BLOCK_X + threadIdx.x;
    const int row0 = blockIdx.y * TILE_ROWS + threadIdx.y;  // rows row0, row0 + BLOCK_Y, ...
    float acc[ROWS_PER_THREAD];
#pragma unroll
    for (int j = 0; j < ROWS_PER_THREAD; ++j) acc[j] = 0.0f;
#if TILE_K == 0
    if (col >= n) return;
    for (int p = 0; p < k; ++p) {
        const float bv = b[p * n + col];
#pragma unroll
        for (int j = 0; j < ROWS_PER_THREAD; ++j)
            if (row0 + j * BLOCK_Y < m) acc[j] += a[(row0 + j * BLOCK_Y) * k + p] * bv;
    }
#else
    __shared__ float as[TILE_K][TILE_ROWS + 1];  // A tile, transposed; +1 spreads the banks
    __shared__ float bs[TILE_K][BLOCK_X];
    const int tid = threadIdx.y * BLOCK_X + threadIdx.x;
    const int first_row = blockIdx.y * TILE_ROWS;
    for (int k0 = 0; k0 < k; k0 += TILE_K) {
        // Every thread loads and reaches both barriers, in range or not (zeros outside).
        for (int i = tid; i < TILE_ROWS * TILE_K; i += BLOCK_X * BLOCK_Y) {
            const int r = i / TILE_K, p = i % TILE_K;
            const bool in = first_row + r < m && k0 + p < k;
            as[p][r] = in ? a[(first_row + r) * k + k0 + p] : 0.0f;
        }
        for (int i = tid; i < TILE_K * BLOCK_X; i += BLOCK_X * BLOCK_Y) {
            const int p = i / BLOCK_X, x = i % BLOCK_X;
            const bool in = k0 + p < k && blockIdx.x * BLOCK_X + x < n;
            bs[p][x] = in ? b[(k0 + p) * n + blockIdx.x * BLOCK_X + x] : 0.0f;
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
#pragma unroll
    for (int j = 0; j < ROWS_PER_THREAD; ++j)
        if (row0 + j * BLOCK_Y < m) c[(row0 + j * BLOCK_Y) * n + col] = acc[j];
}
