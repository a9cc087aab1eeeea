// A hand-written fp32 SGEMM for the KernelBench level-1 matmuls on the device (issue 45): a
// 128x128 block tile, 8-deep k slices through shared memory, 8x8 outputs per thread, bounds
// checked for irregular shapes. TRANS_A 1 reads A as K x M (A.T), TRANS_B 1 reads B as N x K
// (B.T); a batched caller offsets the three pointers by blockIdx.z itself.
#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif
#define SG_BM 128
#define SG_BN 128
#define SG_BK 8
#define SG_TM 8
#define SG_TN 8

__device__ __forceinline__ void sgemm_tile(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[SG_BK][SG_BM];
    __shared__ float Bs[SG_BK][SG_BN];
    const int tid = threadIdx.x;
    const int bm = blockIdx.y * SG_BM, bn = blockIdx.x * SG_BN;
    const int tr = (tid / 16) * SG_TM, tc = (tid % 16) * SG_TN;
    float acc[SG_TM][SG_TN];
#pragma unroll
    for (int i = 0; i < SG_TM; ++i)
#pragma unroll
        for (int j = 0; j < SG_TN; ++j) acc[i][j] = 0.f;
    for (int k0 = 0; k0 < K; k0 += SG_BK) {
        for (int i = tid; i < SG_BM * SG_BK; i += 256) {
#if TRANS_A
            const int r = i % SG_BM, c = i / SG_BM;
#else
            const int r = i / SG_BK, c = i % SG_BK;
#endif
            const int gr = bm + r, gc = k0 + c;
            float v = 0.f;
            if (gr < M && gc < K) v = TRANS_A ? A[(size_t)gc * M + gr] : A[(size_t)gr * K + gc];
            As[c][r] = v;
        }
        for (int i = tid; i < SG_BK * SG_BN; i += 256) {
#if TRANS_B
            const int r = i % SG_BK, c = i / SG_BK;
#else
            const int r = i / SG_BN, c = i % SG_BN;
#endif
            const int gk = k0 + r, gn = bn + c;
            float v = 0.f;
            if (gk < K && gn < N) v = TRANS_B ? B[(size_t)gn * K + gk] : B[(size_t)gk * N + gn];
            Bs[r][c] = v;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < SG_BK; ++k) {
            float a[SG_TM], b[SG_TN];
#pragma unroll
            for (int i = 0; i < SG_TM; ++i) a[i] = As[k][tr + i];
#pragma unroll
            for (int j = 0; j < SG_TN; ++j) b[j] = Bs[k][tc + j];
#pragma unroll
            for (int i = 0; i < SG_TM; ++i)
#pragma unroll
                for (int j = 0; j < SG_TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < SG_TM; ++i) {
        const int r = bm + tr + i;
        if (r >= M) break;
        for (int j = 0; j < SG_TN; ++j) {
            const int c = bn + tc + j;
            if (c < N) C[(size_t)r * N + c] = acc[i][j];
        }
    }
}
