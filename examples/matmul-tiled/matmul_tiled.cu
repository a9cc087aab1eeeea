// Tunable tiled fp32 matmul, row-major C[m x n] = A[m x k] * B[k x n], any m, n, k >= 1.
// Each block computes a BM x BN tile of C with (BM/TM) * (BN/TN) threads; each thread owns a
// TM x TN register tile, split into 4 x 4 pieces spread across the block tile (a warp's
// threads read neighbouring float4s of shared memory: no bank conflicts, and its stores of C
// are whole 256-byte rows). A and B tiles go through shared memory (A transposed, its rows
// padded by 4 floats so the transposing stores do not collide).
// STAGES 0: tiles are fetched into registers one k-step ahead (double buffering) so global
// latency overlaps the FMAs of the current step. Tiles wholly inside the matrices, with k and
// n multiples of 4, take 16-byte vector loads and stores; edge tiles (and the last, partial
// k-step) load element by element, zero-filled outside the matrices, and store only what lies
// inside C.
// STAGES 2..4: cp.async copies global memory straight into a ring of STAGES tiles in dynamic
// shared memory (STAGES * BK * (BM + 4 + BN) floats), STAGES - 1 k-steps ahead of the FMAs,
// with no registers in between: A element by element (4-byte copies transpose it), B in 16-byte
// copies where a row of 4 lies inside B and is aligned, else element by element; what lies
// outside the matrices is zero-filled by the copy itself (its source size 0).
// MMA 1: the products go to the tensor cores as 3xTF32 (mma.sync m16n8k8): each operand is
// split into two TF32 numbers, big + small, and three MMAs (small x big, big x small, big x
// big) come near fp32's accuracy: at 4096^3 on an H100 the largest relative error was 5.1e-5,
// against 6.0e-6 for fp32 FMAs (cuBLAS's sgemm too) and 5.4e-4 for one TF32 pass (cuBLAS's),
// beyond the manifest's rtol 1e-4. A warp owns an (8 TM) x (4 TN) tile of C; A stays row-major
// in shared memory and B as it is, both copied by the cp.async ring (STAGES 2 to 4), 16 bytes
// at a time where a chunk of 4 lies inside and is aligned, their 16-byte chunks XOR-swizzled so
// the fragment reads hit 32 distinct banks.
// Tunables: BM, BN in {64, 128}; BK in {8, 16}; TM, TN in {4, 8}; STAGES in {0, 2, 3, 4};
// MMA in {0, 1} (1 refuses STAGES 0).
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
#ifndef STAGES
#define STAGES 0
#endif
#ifndef MMA
#define MMA 0
#endif
#define TX (BN / TN)                 // threads across a block's columns
#define TY (BM / TM)                 // threads across its rows
#define THREADS (TX * TY)
#define APAD (BM + 4)                // a transposed A row: BM floats and 4 of padding
#define A_VECS ((BM * BK / 4 + THREADS - 1) / THREADS)  // float4s of A each thread fetches
#define B_VECS ((BK * BN / 4 + THREADS - 1) / THREADS)  // float4s of B

static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "TM, TN and BK are multiples of 4");
static_assert(BM % TM == 0 && BN % TN == 0 && THREADS <= 1024, "the tile splits into threads");
static_assert(STAGES == 0 || (STAGES >= 2 && STAGES <= 4), "STAGES is 0 (registers) or 2 to 4");
static_assert(MMA == 0 || (MMA == 1 && STAGES >= 2 && BK % 8 == 0),
              "MMA 1 (3xTF32 tensor cores) takes a cp.async ring (STAGES 2 to 4) and BK of 8 or 16");
#if MMA == 1
#define A_STAGE (BM * BK)  // A row-major (k contiguous), 16-byte chunks swizzled per row
#define WM (8 * TM)        // a warp's tile: WM x WN of C, (WM / 16) x (WN / 8) m16n8k8 MMAs
#define WN (4 * TN)
#else
#define A_STAGE (BK * APAD)
#endif

// One k-step of FMAs on a stage of shared memory: as[kk * APAD + row], bs[kk * BN + col].
// acc[i][j]: row (i / 4) * (4 * TY) + ty * 4 + i % 4, column (j / 4) * (4 * TX) + tx * 4
// + j % 4 of the block tile.
__device__ __forceinline__ void fma_step(const float* as, const float* bs, int tx, int ty,
                                         float (&acc)[TM][TN]) {
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
        float fa[TM], fb[TN];
#pragma unroll
        for (int i = 0; i < TM; i += 4) {
            const float4 v = *reinterpret_cast<const float4*>(&as[kk * APAD + (i / 4) * 4 * TY + ty * 4]);
            fa[i] = v.x, fa[i + 1] = v.y, fa[i + 2] = v.z, fa[i + 3] = v.w;
        }
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const float4 v = *reinterpret_cast<const float4*>(&bs[kk * BN + (j / 4) * 4 * TX + tx * 4]);
            fb[j] = v.x, fb[j + 1] = v.y, fb[j + 2] = v.z, fb[j + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
    }
}

// The register tile into C: 16-byte stores for a tile inside C, else element by element.
__device__ __forceinline__ void store_tile(float* __restrict__ c, const float (&acc)[TM][TN], int row0,
                                           int col0, int tx, int ty, int m, int n, bool inside) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + (i / 4) * 4 * TY + ty * 4 + i % 4;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const int col = col0 + (j / 4) * 4 * TX + tx * 4;
            float* p = c + static_cast<long long>(row) * n + col;
            if (inside) {
                *reinterpret_cast<float4*>(p) = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
            } else if (row < m) {
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (col + e < n) p[e] = acc[i][j + e];
            }
        }
    }
}

#if STAGES > 0
// cp.async with a source size: bytes past it (all of them when it is 0) are zero-filled.
__device__ __forceinline__ void copy_async(float* dst, const float* src, int bytes, int src_bytes) {
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    if (bytes == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes));
}

#if MMA == 0
// Issues the copies of k-step k0's A and B tiles into one stage (as, bs); outside the
// matrices the source is the matrix's first element, read 0 bytes of.
__device__ __forceinline__ void copy_stage(const float* __restrict__ a, const float* __restrict__ b,
                                           float* as, float* bs, int row0, int col0, int k0, int m,
                                           int n, int k, int tid) {
#pragma unroll
    for (int i = tid; i < BM * BK; i += THREADS) {
        const int r = i / BK, kk = i % BK;
        const bool in = row0 + r < m && k0 + kk < k;
        const float* p = in ? a + static_cast<long long>(row0 + r) * k + k0 + kk : a;
        copy_async(&as[kk * APAD + r], p, 4, in ? 4 : 0);
    }
#pragma unroll
    for (int i = tid; i < BK * BN / 4; i += THREADS) {
        const int kk = i / (BN / 4), col = col0 + (i % (BN / 4)) * 4;
        const bool k_in = k0 + kk < k;
        const float* row = b + static_cast<long long>(k0 + kk) * n;
        float* dst = &bs[kk * BN + (i % (BN / 4)) * 4];
        if ((n % 4) == 0 && col + 4 <= n) {
            copy_async(dst, k_in ? row + col : b, 16, k_in ? 16 : 0);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const bool in = k_in && col + e < n;
                copy_async(dst + e, in ? row + col + e : b, 4, in ? 4 : 0);
            }
        }
    }
}
#endif  // MMA == 0
#endif  // STAGES > 0

#if MMA == 1
// 3xTF32: x = big + small, both TF32 (10-bit mantissas, rounded to nearest); a * b is taken as
// small_a big_b + big_a small_b + big_a big_b, the small products first, each on the tensor
// cores with an fp32 accumulator: what is dropped (small_a small_b) is some 2^-22 of a product,
// so the error is of fp32's order, not TF32's.
__device__ __forceinline__ void split_tf32(float x, unsigned& big, unsigned& small) {
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(big) : "f"(x));
    const float rest = x - __uint_as_float(big);
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(small) : "f"(rest));
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Shared layouts (no padding: XOR swizzles of 16-byte chunks keep the fragment reads free of
// bank conflicts). A: row r, k at r * BK + 4 * ((k / 4) ^ a_swz(r)) + k % 4. B: row k, column
// n at k * BN + 4 * ((n / 4) ^ (2 * (k % 4))) + n % 4.
__device__ __forceinline__ int a_at(int r, int kk) {
    return r * BK + 4 * ((kk / 4) ^ ((r / (32 / BK)) % (BK / 4))) + kk % 4;
}
__device__ __forceinline__ int b_at(int kk, int col) { return kk * BN + 4 * ((col / 4) ^ (2 * (kk % 4))) + col % 4; }

// Issues the copies of k-step k0's tiles into one stage: 16 bytes where a chunk of 4 lies
// inside the matrix and is aligned, else element by element, zero-filled outside.
__device__ __forceinline__ void copy_stage(const float* __restrict__ a, const float* __restrict__ b,
                                           float* as, float* bs, int row0, int col0, int k0, int m,
                                           int n, int k, int tid) {
#pragma unroll
    for (int i = tid; i < BM * BK / 4; i += THREADS) {
        const int r = i / (BK / 4), kk = (i % (BK / 4)) * 4;
        const bool row_in = row0 + r < m;
        const float* src = a + static_cast<long long>(row0 + r) * k + k0 + kk;
        float* dst = &as[a_at(r, kk)];
        if ((k % 4) == 0 && row_in && k0 + kk + 4 <= k) {
            copy_async(dst, src, 16, 16);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const bool in = row_in && k0 + kk + e < k;
                copy_async(dst + e, in ? src + e : a, 4, in ? 4 : 0);
            }
        }
    }
#pragma unroll
    for (int i = tid; i < BK * BN / 4; i += THREADS) {
        const int kk = i / (BN / 4), col = col0 + (i % (BN / 4)) * 4;
        const bool k_in = k0 + kk < k;
        const float* row = b + static_cast<long long>(k0 + kk) * n;
        float* dst = &bs[b_at(kk, col - col0)];
        if ((n % 4) == 0 && col + 4 <= n) {
            copy_async(dst, k_in ? row + col : b, 16, k_in ? 16 : 0);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const bool in = k_in && col + e < n;
                copy_async(dst + e, in ? row + col + e : b, 4, in ? 4 : 0);
            }
        }
    }
}

// One k-step on a stage: the warp's (WM / 16) x (WN / 8) tiles, acc[mi][ni] their m16n8
// accumulators (rows g and g + 8, columns 2 t and 2 t + 1 of the tile; g = lane / 4, t = lane % 4).
__device__ __forceinline__ void mma_step(const float* as, const float* bs, int wr, int wc, int lane,
                                         float (&acc)[WM / 16][WN / 8][4]) {
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int ks = 0; ks < BK; ks += 8) {
        unsigned bb[WN / 8][2], bsm[WN / 8][2];
#pragma unroll
        for (int ni = 0; ni < WN / 8; ++ni)
#pragma unroll
            for (int h = 0; h < 2; ++h) split_tf32(bs[b_at(ks + t + 4 * h, wc + ni * 8 + g)], bb[ni][h], bsm[ni][h]);
#pragma unroll
        for (int mi = 0; mi < WM / 16; ++mi) {
            unsigned ab[4], asm_[4];
#pragma unroll
            for (int h = 0; h < 4; ++h)  // a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)
                split_tf32(as[a_at(wr + mi * 16 + g + 8 * (h % 2), ks + t + 4 * (h / 2))], ab[h], asm_[h]);
#pragma unroll
            for (int ni = 0; ni < WN / 8; ++ni) {
                mma_tf32(acc[mi][ni], asm_, bb[ni]);
                mma_tf32(acc[mi][ni], ab, bsm[ni]);
                mma_tf32(acc[mi][ni], ab, bb[ni]);
            }
        }
    }
}

__device__ __forceinline__ void store_mma(float* __restrict__ c, const float (&acc)[WM / 16][WN / 8][4],
                                          int row0, int col0, int lane, int m, int n) {
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int mi = 0; mi < WM / 16; ++mi)
#pragma unroll
        for (int ni = 0; ni < WN / 8; ++ni)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = row0 + mi * 16 + g + 8 * h, col = col0 + ni * 8 + 2 * t;
                if (row >= m) continue;
                float* p = c + static_cast<long long>(row) * n + col;
                if ((n % 2) == 0 && col + 2 <= n) {
                    *reinterpret_cast<float2*>(p) = make_float2(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
                } else {
                    if (col < n) p[0] = acc[mi][ni][2 * h];
                    if (col + 1 < n) p[1] = acc[mi][ni][2 * h + 1];
                }
            }
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_f32(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n, int k) {
    const int tid = threadIdx.x;
    const int tx = tid % TX, ty = tid / TX;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    // Block-uniform: every element of this block's tiles lies inside A, B and C, and rows of
    // A and B start on 16-byte boundaries.
    const bool inside = row0 + BM <= m && col0 + BN <= n && (k % 4) == 0 && (n % 4) == 0;
#if MMA == 1
    const int mma_lane = threadIdx.x % 32, wid = threadIdx.x / 32;
    const int wr = (wid / (BN / WN)) * WM, wc = (wid % (BN / WN)) * WN;  // the warp's tile
    float acc[WM / 16][WN / 8][4] = {};
#define STEP(st) mma_step(st, st + A_STAGE, wr, wc, mma_lane, acc)
#else
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
#define STEP(st) fma_step(st, st + A_STAGE, tx, ty, acc)
#endif

#if STAGES > 0
    extern __shared__ __align__(16) float ring[];  // STAGES x (A tile BK x APAD, B tile BK x BN)
    constexpr int stage_floats = BK * (APAD + BN);  // MMA 1 uses A_STAGE + BK * BN of it
    const int steps = (k + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        float* st = ring + s * stage_floats;
        if (s < steps) copy_stage(a, b, st, st + A_STAGE, row0, col0, s * BK, m, n, k, tid);
        asm volatile("cp.async.commit_group;\n" ::);
    }
    for (int t = 0; t < steps; ++t) {
        // Step t's copies are done (at most STAGES - 2 newer groups pending) and seen by all;
        // every thread is past step t - 1, so its stage may be refilled.
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
        __syncthreads();
        const int next = t + STAGES - 1;
        if (next < steps) {
            float* st = ring + (next % STAGES) * stage_floats;
            copy_stage(a, b, st, st + A_STAGE, row0, col0, next * BK, m, n, k, tid);
        }
        asm volatile("cp.async.commit_group;\n" ::);  // empty near the end: the count stays right
        const float* st = ring + (t % STAGES) * stage_floats;
        STEP(st);
    }
#else
    __shared__ __align__(16) float as[2][BK][APAD];  // A tile, transposed: as[kk][row]
    __shared__ __align__(16) float bs[2][BK][BN];
    float4 ra[A_VECS], rb[B_VECS];
    auto fetch = [&](int k0) {
        const bool fast = inside && k0 + BK <= k;
#pragma unroll
        for (int v = 0; v < A_VECS; ++v) {
            const int i = tid + v * THREADS;
            if (i < BM * BK / 4) {
                const int r = i / (BK / 4), kk = k0 + (i % (BK / 4)) * 4;
                const float* p = a + static_cast<long long>(row0 + r) * k + kk;
                if (fast) {
                    ra[v] = *reinterpret_cast<const float4*>(p);
                } else {
                    const bool row_in = row0 + r < m;
                    ra[v].x = row_in && kk + 0 < k ? p[0] : 0.0f;
                    ra[v].y = row_in && kk + 1 < k ? p[1] : 0.0f;
                    ra[v].z = row_in && kk + 2 < k ? p[2] : 0.0f;
                    ra[v].w = row_in && kk + 3 < k ? p[3] : 0.0f;
                }
            }
        }
#pragma unroll
        for (int v = 0; v < B_VECS; ++v) {
            const int i = tid + v * THREADS;
            if (i < BK * BN / 4) {
                const int kk = k0 + i / (BN / 4), col = col0 + (i % (BN / 4)) * 4;
                const float* p = b + static_cast<long long>(kk) * n + col;
                if (fast) {
                    rb[v] = *reinterpret_cast<const float4*>(p);
                } else {
                    const bool k_in = kk < k;
                    rb[v].x = k_in && col + 0 < n ? p[0] : 0.0f;
                    rb[v].y = k_in && col + 1 < n ? p[1] : 0.0f;
                    rb[v].z = k_in && col + 2 < n ? p[2] : 0.0f;
                    rb[v].w = k_in && col + 3 < n ? p[3] : 0.0f;
                }
            }
        }
    };
    auto stash = [&](int stage) {
#pragma unroll
        for (int v = 0; v < A_VECS; ++v) {
            const int i = tid + v * THREADS;
            if (i < BM * BK / 4) {
                const int r = i / (BK / 4), kk = (i % (BK / 4)) * 4;
                as[stage][kk + 0][r] = ra[v].x;
                as[stage][kk + 1][r] = ra[v].y;
                as[stage][kk + 2][r] = ra[v].z;
                as[stage][kk + 3][r] = ra[v].w;
            }
        }
#pragma unroll
        for (int v = 0; v < B_VECS; ++v) {
            const int i = tid + v * THREADS;
            if (i < BK * BN / 4) {
                const int kk = i / (BN / 4), col = (i % (BN / 4)) * 4;
                *reinterpret_cast<float4*>(&bs[stage][kk][col]) = rb[v];
            }
        }
    };

    fetch(0);
    stash(0);
    __syncthreads();
    int stage = 0;
    for (int k0 = 0; k0 < k; k0 += BK) {
        const bool more = k0 + BK < k;
        if (more) fetch(k0 + BK);  // in flight while this step computes
        fma_step(&as[stage][0][0], &bs[stage][0][0], tx, ty, acc);
        if (more) stash(stage ^ 1);  // nobody reads stage ^ 1 until after the barrier
        __syncthreads();
        stage ^= 1;
    }
#endif
#if MMA == 1
    store_mma(c, acc, row0 + wr, col0 + wc, mma_lane, m, n);
#else
    store_tile(c, acc, row0, col0, tx, ty, m, n, inside);
#endif
}
