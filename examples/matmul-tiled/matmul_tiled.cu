// Tunable tiled fp32 matmul, row-major C[m x n] = A[m x k] * B[k x n].
// Each block computes a BM x BN tile of C with (BM/TM) * (BN/TN) threads; each thread
// owns a TM x TN register tile. A and B tiles go through shared memory (A transposed),
// loaded with 16-byte vector loads into registers one k-step ahead (double buffering),
// so global latency overlaps the FMAs of the current step.
// Preconditions (the manifest's cases honour them): m % BM == 0, n % BN == 0,
// k % BK == 0, and TM, TN, BK multiples of 4.
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 4
#endif
#ifndef TN
#define TN 4
#endif
#define THREADS ((BM / TM) * (BN / TN))
#define A_VECS ((BM * BK / 4 + THREADS - 1) / THREADS)  // float4 loads of A per thread
#define B_VECS ((BK * BN / 4 + THREADS - 1) / THREADS)  // float4 loads of B per thread

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_f32(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n, int k) {
    __shared__ __align__(16) float as[2][BK][BM];  // A tile, transposed: as[kk][row]
    __shared__ __align__(16) float bs[2][BK][BN];
    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN), ty = tid / (BN / TN);
    a += static_cast<long long>(blockIdx.y) * BM * k;
    b += static_cast<long long>(blockIdx.x) * BN;
    c += static_cast<long long>(blockIdx.y) * BM * n + static_cast<long long>(blockIdx.x) * BN;

    float4 ra[A_VECS], rb[B_VECS];
    auto fetch = [&](int k0) {
#pragma unroll
        for (int v = 0; v < A_VECS; ++v) {
            const int i = tid + v * THREADS;
            if (i < BM * BK / 4) {
                const int row = i / (BK / 4), col = (i % (BK / 4)) * 4;
                ra[v] = *reinterpret_cast<const float4*>(a + static_cast<long long>(row) * k + k0 + col);
            }
        }
#pragma unroll
        for (int v = 0; v < B_VECS; ++v) {
            const int i = tid + v * THREADS;
            if (i < BK * BN / 4) {
                const int row = i / (BN / 4), col = (i % (BN / 4)) * 4;
                rb[v] = *reinterpret_cast<const float4*>(b + static_cast<long long>(k0 + row) * n + col);
            }
        }
    };
    auto stash = [&](int stage) {
#pragma unroll
        for (int v = 0; v < A_VECS; ++v) {
            const int i = tid + v * THREADS;
            if (i < BM * BK / 4) {
                const int row = i / (BK / 4), col = (i % (BK / 4)) * 4;
                as[stage][col + 0][row] = ra[v].x;
                as[stage][col + 1][row] = ra[v].y;
                as[stage][col + 2][row] = ra[v].z;
                as[stage][col + 3][row] = ra[v].w;
            }
        }
#pragma unroll
        for (int v = 0; v < B_VECS; ++v) {
            const int i = tid + v * THREADS;
            if (i < BK * BN / 4) {
                const int row = i / (BN / 4), col = (i % (BN / 4)) * 4;
                *reinterpret_cast<float4*>(&bs[stage][row][col]) = rb[v];
            }
        }
    };

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    fetch(0);
    stash(0);
    __syncthreads();
    int stage = 0;
    for (int k0 = 0; k0 < k; k0 += BK) {
        const bool more = k0 + BK < k;
        if (more) fetch(k0 + BK);  // in flight while this step computes
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float fa[TM], fb[TN];
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&as[stage][kk][ty * TM + i]);
                fa[i] = v.x, fa[i + 1] = v.y, fa[i + 2] = v.z, fa[i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&bs[stage][kk][tx * TN + j]);
                fb[j] = v.x, fb[j + 1] = v.y, fb[j + 2] = v.z, fb[j + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
        }
        if (more) stash(stage ^ 1);  // nobody reads stage ^ 1 until after the barrier
        __syncthreads();
        stage ^= 1;
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
            *reinterpret_cast<float4*>(c + static_cast<long long>(ty * TM + i) * n + tx * TN + j) =
                make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
}
