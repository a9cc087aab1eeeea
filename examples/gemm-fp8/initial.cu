// Scaled FP8 GEMM: C[m x n] = scale_a * scale_b * A[m x k] * B[n x k]^T, A and B e4m3 and
// row-major (B stored n x k, like a linear layer's weight: the form cuBLASLt's FP8 GEMM takes),
// C bf16, sums in fp32, any m, n, k >= 1. Naive on purpose: with each tunable's first value
// every thread computes one element of C straight from global memory.
//
// Tunables, passed as -DNAME=VALUE:
//   TILE_K           FMA path: > 0 stages a (BLOCK_Y * ROWS_PER_THREAD) x TILE_K tile of A and
//                    a BLOCK_X x TILE_K tile of B in shared memory, converted to float once
//   ROWS_PER_THREAD  FMA path: rows of C each thread accumulates, BLOCK_Y apart
//   BLOCK_X, BLOCK_Y FMA path: the thread block (the FMA paths sum over k in one order)
//   MMA              0: the FMA path; 1, 2: tensor cores (gemm_fp8_mma below), a 128 x 128
//                    tile of C a block, 3 cp.async stages of 128 k, ldmatrix fragments of
//                    m16n8k32 e4m3 products summed in f32; MMA 1 has 8 warps of 64 x 32, MMA 2
//                    4 warps of 64 x 64. sm_89 or newer (older targets are refused)
//                    3, 4: Hopper's warpgroup MMA (gemm_fp8_wgmma below), wgmma m64nNk32 e4m3
//                    from 128-byte swizzled shared memory, two warpgroups, each 128 k added
//                    into f32 sums; MMA 3 a 128 x 256 tile, 4 stages; MMA 4 128 x 128, 3
//                    stages, two blocks an SM. sm_90a only (any other target is refused)
//
// MMA > 0 ignores the FMA path's tunables, so it refuses (static_assert) any but their first
// values: the autotuner reaches it in one step from the initial kernel and never times a
// duplicate. input_cases.json gives each path its launch (MMA 1, 2: 256 or 128 threads,
// ceil(n/128) x ceil(m/128) blocks, 96 KiB of dynamic shared memory; MMA 3: 256 threads,
// ceil(n/256) x ceil(m/128) blocks, 197632 bytes; MMA 4: 256 threads, ceil(n/128) x ceil(m/128)
// blocks, 99328 bytes).
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

#ifndef MMA
#define MMA 0
#endif

#if MMA == 0

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

#else  // MMA > 0: tensor cores

static_assert(BLOCK_X == 16 && BLOCK_Y == 16 && TILE_K == 0 && ROWS_PER_THREAD == 1,
              "MMA > 0 ignores BLOCK_X, BLOCK_Y, TILE_K and ROWS_PER_THREAD: only their first "
              "values (16, 16, 0, 1), so that no configuration repeats another");
static_assert(MMA >= 1 && MMA <= 4, "MMA is 0, 1, 2, 3 or 4");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 890
static_assert(__CUDA_ARCH__ >= 890, "MMA > 0 needs mma.sync with e4m3 inputs: sm_89 or newer");
#endif
#if MMA >= 3  // gemm_fp8_wgmma takes gemm_fp8_mma's loads, not its k_route ("never referenced")
#pragma nv_diag_suppress 177
#endif

namespace gemm_fp8_mma {

// How an m16n8k32 e4m3 product reaches the tensor cores. 0: mma.sync with e4m3 inputs (sm_89's
// QMMA). Hopper has no FP8 mma.sync (only wgmma, which needs sm_90a): ptxas emulates it (cvt to
// f16, two HMMA into zeros, FADD into the accumulators), so on sm_90 the kernel converts the
// fragments itself and issues two m16n8k16 f16 mma.sync (1: 0.0572 ms at 2048^3 on an H100,
// against 0.0658 ms for the emulation and 0.0730 ms for f16 made by shifting bits).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
constexpr int k_route = 1;
#else
constexpr int k_route = 0;
#endif

constexpr int k_stage_k = 128;                // e4m3 elements (bytes) of k in one stage
constexpr int k_row_chunks = k_stage_k / 16;  // 16-byte chunks in a row of a stage

// A stage holds a tile's rows of k_stage_k bytes, each row's 16-byte chunks permuted by XOR with
// the row's low 3 bits: the 8 rows an ldmatrix reads for one 8 x 8 matrix (one logical chunk)
// then sit in 8 different bank groups, as do the 8 chunks of a row a quarter-warp copies in.
__device__ __forceinline__ int swizzled(int row, int chunk) {
    return row * k_stage_k + ((chunk ^ (row & 7)) << 4);
}

__device__ __forceinline__ unsigned shared_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, bypassing L1; the bytes past src_bytes (all 16 when 0) are zeros.
__device__ __forceinline__ void copy_async_16(unsigned dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void commit_copies() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int PENDING>
__device__ __forceinline__ void wait_copies() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// Four 8 x 8 matrices of b16 (here: 8 rows x 16 bytes of e4m3); lanes 8q..8q+7 address matrix
// q's rows, and register q of lane l gets bytes 4(l%4)..4(l%4)+3 of matrix q's row l/4.
__device__ __forceinline__ void load_matrices(unsigned (&r)[4], unsigned address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// d += A(16 x 32, row) * B(32 x 8, col), e4m3 products summed in f32.
__device__ __forceinline__ void mma_e4m3(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
    asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// d += A(16 x 16, row) * B(16 x 8, col), f16 products summed in f32.
__device__ __forceinline__ void mma_f16(float (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                        unsigned a3, unsigned b0, unsigned b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// The four e4m3 of x (k 4t .. 4t + 3 of a fragment register) as two f16x2, exactly (every e4m3
// value is an f16 value): `first` (k 4t, 4t + 1) for k slots 2t, 2t + 1 of an m16n8k16 fragment,
// `second` (4t + 2, 4t + 3) for slots 2t + 8, 2t + 9. A and B alike, so the sum is the same.
__device__ __forceinline__ void to_f16x2(unsigned x, unsigned& first, unsigned& second) {
    const __half2_raw lo =
        __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(x), __NV_E4M3);
    const __half2_raw hi =
        __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(x >> 16), __NV_E4M3);
    first = static_cast<unsigned>(lo.x) | static_cast<unsigned>(lo.y) << 16;
    second = static_cast<unsigned>(hi.x) | static_cast<unsigned>(hi.y) << 16;
}

// Rows [row0, row0 + ROWS) x bytes [k0, k0 + k_stage_k) of a row-major rows x k e4m3 matrix into
// a stage tile, zeros outside the matrix. `whole_chunks` (k % 16 == 0 and the matrix 16-byte
// aligned: every chunk lies wholly inside or outside it) copies 16 bytes at a time with
// cp.async; otherwise byte by byte, through registers.
template <int ROWS, int THREADS>
__device__ __forceinline__ void load_tile(unsigned char* tile, const unsigned char* g, int rows,
                                          int k, int row0, int k0, bool whole_chunks) {
    // A pass copies THREADS chunks: rows_per_pass whole rows, each thread the same chunk of
    // rows r, r + rows_per_pass, ... (all alike mod 8, so swizzled alike).
    constexpr int rows_per_pass = THREADS / k_row_chunks;
    static_assert(ROWS % rows_per_pass == 0 && rows_per_pass % 8 == 0, "whole passes of rows");
    const int r = static_cast<int>(threadIdx.x) / k_row_chunks;
    const int chunk = static_cast<int>(threadIdx.x) % k_row_chunks, col = k0 + chunk * 16;
    unsigned char* dst = tile + swizzled(r, chunk);
    if (whole_chunks) {
        const unsigned char* src = g + static_cast<long long>(row0 + r) * k + col;
#pragma unroll
        for (int pass = 0; pass < ROWS / rows_per_pass; ++pass) {
            const bool inside = row0 + r + pass * rows_per_pass < rows && col < k;
            copy_async_16(shared_address(dst + pass * rows_per_pass * k_stage_k),
                          inside ? src + static_cast<long long>(pass) * rows_per_pass * k : g,
                          inside ? 16 : 0);
        }
    } else {
#pragma unroll 1
        for (int pass = 0; pass < ROWS / rows_per_pass; ++pass) {
            const int row = row0 + r + pass * rows_per_pass;
            const unsigned char* src = g + static_cast<long long>(row) * k + col;
            unsigned word[4] = {0u, 0u, 0u, 0u};
#pragma unroll
            for (int j = 0; j < 16; ++j)
                if (row < rows && col + j < k)
                    word[j / 4] |= static_cast<unsigned>(src[j]) << (8 * (j % 4));
            *reinterpret_cast<uint4*>(dst + pass * rows_per_pass * k_stage_k) =
                make_uint4(word[0], word[1], word[2], word[3]);
        }
    }
}

// The block tile of C at (blockIdx.y * BM, blockIdx.x * BN): STAGES stages of A (BM x
// k_stage_k) and B (BN x k_stage_k) in dynamic shared memory, filled STAGES - 1 k-steps ahead;
// warps of WM x WN tiles of m16 n8 f32 accumulators, fragments read with ldmatrix; ROUTE as
// k_route.
template <int BM, int BN, int WM, int WN, int STAGES, int ROUTE>
__device__ __forceinline__ void gemm(const __nv_fp8_e4m3* a_in, const __nv_fp8_e4m3* b_in,
                                     __nv_bfloat16* c, float scale_a, float scale_b, int m,
                                     int n, int k) {
    constexpr int warps_n = BN / WN, threads = BM / WM * warps_n * 32;
    constexpr int tiles_m = WM / 16, tiles_n = WN / 8;  // m16 and n8 tiles of a warp
    constexpr int a_bytes = BM * k_stage_k, stage_bytes = (BM + BN) * k_stage_k;
    static_assert(ROUTE == 0 || ROUTE == 1, "ROUTE is 0 (e4m3 mma.sync) or 1 (cvt to f16)");
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && STAGES >= 2,
                  "warp tiles split the block tile; B fragments come two n8 tiles at a time");
    extern __shared__ __align__(128) unsigned char stages[];
    const auto* a = reinterpret_cast<const unsigned char*>(a_in);
    const auto* b = reinterpret_cast<const unsigned char*>(b_in);
    const int block_m = blockIdx.y * BM, block_n = blockIdx.x * BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_m = warp / warps_n * WM, warp_n = warp % warps_n * WN;
    const bool whole_chunks =
        k % 16 == 0 && ((reinterpret_cast<unsigned long long>(a) |
                         reinterpret_cast<unsigned long long>(b)) & 15) == 0;
    const int k_steps = (k + k_stage_k - 1) / k_stage_k;
    auto load_stage = [&](int step) {
        unsigned char* s = stages + step % STAGES * stage_bytes;
        load_tile<BM, threads>(s, a, m, k, block_m, step * k_stage_k, whole_chunks);
        load_tile<BN, threads>(s + a_bytes, b, n, k, block_n, step * k_stage_k, whole_chunks);
    };

    float acc[tiles_m][tiles_n][4];
#pragma unroll
    for (int i = 0; i < tiles_m; ++i)
#pragma unroll
        for (int j = 0; j < tiles_n; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

    // One commit group per k-step, empty past the end, so that wait_copies<STAGES - 2> always
    // means "step t has landed".
#pragma unroll
    for (int step = 0; step < STAGES - 1; ++step) {
        if (step < k_steps) load_stage(step);
        commit_copies();
    }
    const int quad = lane / 8, quad_row = lane % 8;
    for (int t = 0; t < k_steps; ++t) {
        wait_copies<STAGES - 2>();
        __syncthreads();  // step t is visible to all; everyone is done with step t - 1's stage
        if (t + STAGES - 1 < k_steps) load_stage(t + STAGES - 1);
        commit_copies();
        const unsigned a_stage = shared_address(stages + t % STAGES * stage_bytes);
        const unsigned b_stage = a_stage + a_bytes;
#pragma unroll
        for (int kk = 0; kk < k_stage_k / 32; ++kk) {
            // A m16 x k32: matrices (rows 0-7, bytes 0-15), (8-15, 0-15), (0-7, 16-31), (8-15,
            // 16-31) are a0..a3. B n8 x k32 pairs: (n 0-7, bytes 0-15), (0-7, 16-31) are b0, b1
            // of the first n8 tile, (8-15, ...) of the second.
            unsigned fa[tiles_m][4], fb[tiles_n][2];
#pragma unroll
            for (int i = 0; i < tiles_m; ++i)
                load_matrices(fa[i], a_stage + swizzled(warp_m + i * 16 + quad % 2 * 8 + quad_row,
                                                        kk * 2 + quad / 2));
#pragma unroll
            for (int j = 0; j < tiles_n; j += 2) {
                unsigned r[4];
                load_matrices(r, b_stage + swizzled(warp_n + j * 8 + quad / 2 * 8 + quad_row,
                                                    kk * 2 + quad % 2));
                fb[j][0] = r[0];
                fb[j][1] = r[1];
                fb[j + 1][0] = r[2];
                fb[j + 1][1] = r[3];
            }
            if constexpr (ROUTE == 1) {
                // The m16n8k32 fragments as two m16n8k16 f16 ones.
                unsigned ha[tiles_m][8];
#pragma unroll
                for (int i = 0; i < tiles_m; ++i) {
                    to_f16x2(fa[i][0], ha[i][0], ha[i][2]);
                    to_f16x2(fa[i][1], ha[i][1], ha[i][3]);
                    to_f16x2(fa[i][2], ha[i][4], ha[i][6]);
                    to_f16x2(fa[i][3], ha[i][5], ha[i][7]);
                }
#pragma unroll
                for (int j = 0; j < tiles_n; ++j) {
                    unsigned hb[4];
                    to_f16x2(fb[j][0], hb[0], hb[1]);
                    to_f16x2(fb[j][1], hb[2], hb[3]);
#pragma unroll
                    for (int i = 0; i < tiles_m; ++i) {
                        mma_f16(acc[i][j], ha[i][0], ha[i][1], ha[i][2], ha[i][3], hb[0], hb[1]);
                        mma_f16(acc[i][j], ha[i][4], ha[i][5], ha[i][6], ha[i][7], hb[2], hb[3]);
                    }
                }
            } else {
#pragma unroll
                for (int i = 0; i < tiles_m; ++i)
#pragma unroll
                    for (int j = 0; j < tiles_n; ++j)
                        mma_e4m3(acc[i][j], fa[i], fb[j][0], fb[j][1]);
            }
        }
    }

    // Accumulator e of an m16 n8 tile: row lane/4 (+8 for e >= 2), columns 2(lane%4) + e%2.
    const float scale = scale_a * scale_b;
    const bool pairs = n % 2 == 0 && (reinterpret_cast<unsigned long long>(c) & 3) == 0;
#pragma unroll
    for (int i = 0; i < tiles_m; ++i)
#pragma unroll
        for (int j = 0; j < tiles_n; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = block_m + warp_m + i * 16 + lane / 4 + h * 8;
                const int col = block_n + warp_n + j * 8 + lane % 4 * 2;
                if (row >= m || col >= n) continue;
                const float v0 = acc[i][j][2 * h] * scale, v1 = acc[i][j][2 * h + 1] * scale;
                __nv_bfloat16* out = c + static_cast<long long>(row) * n + col;
                if (pairs) {  // n even, so col + 1 < n too
                    *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(v0, v1);
                } else {
                    out[0] = __float2bfloat16(v0);
                    if (col + 1 < n) out[1] = __float2bfloat16(v1);
                }
            }
}

// Each MMA value's block: a 128 x 128 tile of C, 3 stages of 128 k (96 KiB of shared memory),
// two blocks a multiprocessor. MMA 1: 8 warps of 64 x 32; MMA 2: 4 warps of 64 x 64 (half the
// conversions and fragment loads per mma, fewer warps to hide latency). input_cases.json
// launches `threads` threads, ceil(n / 128) x ceil(m / 128) blocks and 98304 bytes of dynamic
// shared memory.
template <int VALUE>
struct tile_config;
template <>
struct tile_config<1> {
    static constexpr int bm = 128, bn = 128, wm = 64, wn = 32, stages = 3, threads = 256;
};
template <>
struct tile_config<2> {
    static constexpr int bm = 128, bn = 128, wm = 64, wn = 64, stages = 3, threads = 128;
};

}  // namespace gemm_fp8_mma

#if MMA <= 2

using gemm_fp8_tile = gemm_fp8_mma::tile_config<MMA>;
extern "C" __global__ void __launch_bounds__(gemm_fp8_tile::threads, 2)
    gemm_e4m3(const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b, __nv_bfloat16* c, float scale_a,
              float scale_b, int m, int n, int k) {
    gemm_fp8_mma::gemm<gemm_fp8_tile::bm, gemm_fp8_tile::bn, gemm_fp8_tile::wm, gemm_fp8_tile::wn,
                       gemm_fp8_tile::stages, gemm_fp8_mma::k_route>(a, b, c, scale_a, scale_b, m,
                                                                     n, k);
}

#else  // MMA 3, 4: Hopper's warpgroup MMA
#pragma nv_diag_default 177

// wgmma exists only in sm_90a code. CUDA 13's nvcc -arch=sm_90a also makes compute_90 PTX (a
// device pass without __CUDA_ARCH_FEAT_SM90_ALL): a program that includes this file and builds so
// defines GEMM_FP8_WGMMA_STUB_OTHER_ARCHS, and that PTX's kernels trap (a Hopper GPU loads the
// sm_90a code instead). Alone (NVRTC, as the harness compiles it) any other arch is refused.
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL) && \
    !defined(GEMM_FP8_WGMMA_STUB_OTHER_ARCHS)
static_assert(MMA < 3, "MMA 3 and 4 need wgmma (Hopper's warpgroup MMA): compile for sm_90a");
#endif

namespace gemm_fp8_wgmma {

using gemm_fp8_mma::k_stage_k;

// The shared memory descriptor of a K-major tile in the stage layout above: rows of 128 bytes
// whose 16-byte chunks are permuted by XOR with the row's low 3 bits, which is the 128-byte
// swizzle wgmma applies to the address bits (4-6 XOR 7-9) of a 1024-byte aligned atom of 8 rows.
// Bits 0-13 start address >> 4; 16-29 leading byte offset >> 4 (unused by swizzled K-major
// tiles: 1); 32-45 stride byte offset >> 4 (8 rows x 128 bytes to the next 8 rows); 49-51 base
// offset (0: the tile is 1024-byte aligned); 62-63 swizzle (1: 128 bytes). The next 32 bytes of k
// in the same rows: the start address plus 32 (+2 in the descriptor), the swizzle still applied
// to the full address.
__device__ __forceinline__ unsigned long long descriptor(unsigned address) {
    return static_cast<unsigned long long>((address & 0x3ffffu) >> 4) | 1ull << 16 |
           static_cast<unsigned long long>(1024 >> 4) << 32 | 1ull << 62;
}

__device__ __forceinline__ void fence_async_proxy() {  // generic-proxy writes -> wgmma's reads
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void mma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void mma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int PENDING>
__device__ __forceinline__ void mma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}
// Keeps the compiler from moving other accesses to an accumulator across a wgmma fence or wait.
template <int N>
__device__ __forceinline__ void fence_operands(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

#define GEMM_FP8_D8(i)                                                                          \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
        "+f"(d[i + 6]), "+f"(d[i + 7])
#define GEMM_FP8_REGS_0_31                                                                  \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, " \
    "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define GEMM_FP8_REGS_32_63                                                                 \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, " \
    "%49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define GEMM_FP8_REGS_64_127                                                                \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, " \
    "%81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, " \
    "%98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "    \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, "  \
    "%126, %127"

// d = A(64 x 32) * B(N x 32)^T + (accumulate ? d : 0): e4m3 from shared memory through
// descriptors, operand scales 1, no transpose (e4m3 takes none: both K-major). d[4j + 2h + e] is
// row 16 (warp in the warpgroup) + lane / 4 + 8h, column 8j + 2 (lane % 4) + e. The tensor cores
// keep such a sum in less than f32 (about 14 significant bits), so gemm below adds each 128 k
// into f32 registers itself.
template <int N>
__device__ __forceinline__ void mma(float (&d)[N / 2], unsigned long long a, unsigned long long b,
                                    int accumulate) {
    static_assert(N == 64 || N == 128 || N == 256, "m64n64k32, m64n128k32 or m64n256k32");
    if constexpr (N == 64) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {" GEMM_FP8_REGS_0_31
            "}, %32, %33, p, 1, 1;\n}\n"
            : GEMM_FP8_D8(0), GEMM_FP8_D8(8), GEMM_FP8_D8(16), GEMM_FP8_D8(24)
            : "l"(a), "l"(b), "r"(accumulate)
            : "memory");
    } else if constexpr (N == 128) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {" GEMM_FP8_REGS_0_31
            ", " GEMM_FP8_REGS_32_63 "}, %64, %65, p, 1, 1;\n}\n"
            : GEMM_FP8_D8(0), GEMM_FP8_D8(8), GEMM_FP8_D8(16), GEMM_FP8_D8(24), GEMM_FP8_D8(32),
              GEMM_FP8_D8(40), GEMM_FP8_D8(48), GEMM_FP8_D8(56)
            : "l"(a), "l"(b), "r"(accumulate)
            : "memory");
    } else {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {" GEMM_FP8_REGS_0_31
            ", " GEMM_FP8_REGS_32_63 ", " GEMM_FP8_REGS_64_127 "}, %128, %129, p, 1, 1;\n}\n"
            : GEMM_FP8_D8(0), GEMM_FP8_D8(8), GEMM_FP8_D8(16), GEMM_FP8_D8(24), GEMM_FP8_D8(32),
              GEMM_FP8_D8(40), GEMM_FP8_D8(48), GEMM_FP8_D8(56), GEMM_FP8_D8(64), GEMM_FP8_D8(72),
              GEMM_FP8_D8(80), GEMM_FP8_D8(88), GEMM_FP8_D8(96), GEMM_FP8_D8(104), GEMM_FP8_D8(112),
              GEMM_FP8_D8(120)
            : "l"(a), "l"(b), "r"(accumulate)
            : "memory");
    }
}
#undef GEMM_FP8_D8
#undef GEMM_FP8_REGS_0_31
#undef GEMM_FP8_REGS_32_63
#undef GEMM_FP8_REGS_64_127

constexpr int k_bm = 128, k_threads = 256;  // two warpgroups of 64 rows of C each

// Rows [row0, row0 + ROWS) x bytes [k0, k0 + 128) of a row-major rows x k e4m3 matrix into the
// stage tile at shared address `tile`, laid out as gemm_fp8_mma::load_tile lays it, by 16-byte
// cp.async (k % 16 == 0 and the matrix 16-byte aligned), zeros outside the matrix. Each thread
// copies one chunk of rows r, r + 32, ...; the passes are not unrolled, so that no pointer a pass
// stays live across the main loop (registers go to the accumulators).
template <int ROWS>
__device__ __forceinline__ void copy_tile(unsigned tile, const unsigned char* g, int rows, int k,
                                          int row0, int k0) {
    constexpr int rows_per_pass = k_threads / (k_stage_k / 16);
    static_assert(ROWS % rows_per_pass == 0 && rows_per_pass % 8 == 0, "whole passes of rows");
    const int r = static_cast<int>(threadIdx.x) / (k_stage_k / 16);
    const int chunk = static_cast<int>(threadIdx.x) % (k_stage_k / 16), col = k0 + chunk * 16;
    const unsigned dst = tile + gemm_fp8_mma::swizzled(r, chunk);
#pragma unroll 1
    for (int pass = 0; pass < ROWS / rows_per_pass; ++pass) {
        const int row = row0 + r + pass * rows_per_pass;
        const bool inside = row < rows && col < k;
        gemm_fp8_mma::copy_async_16(dst + pass * rows_per_pass * k_stage_k,
                                    inside ? g + static_cast<long long>(row) * k + col : g,
                                    inside ? 16 : 0);
    }
}

// C's tile from the accumulators, scaled and rounded to bf16. STAGED: through shared memory
// (`tile`, SPACE bytes free once the main loop is done), then 16-byte stores along rows; else
// straight from the registers, 4 bytes at a time as in gemm_fp8_mma.
template <int BN, int SPACE, bool STAGED>
__device__ __forceinline__ void store_tile(const float (&acc)[BN / 2], unsigned char* tile,
                                           __nv_bfloat16* c, float scale, int m, int n, int block_m,
                                           int block_n) {
    const int lane = threadIdx.x % 32;
    const int row0 = threadIdx.x / 32 * 16 + lane / 4;  // warp w: rows 16w..16w+15 of the tile
    const int col0 = lane % 4 * 2;
    if constexpr (STAGED) {
        constexpr int pitch = BN * 2 + 16;  // bytes a staged row; the 16 spreads rows over banks
        constexpr int row_chunks = BN / 8;  // 16-byte chunks (8 bf16) a row
        static_assert(k_bm * pitch <= SPACE, "the staged tile fits the stages");
        __syncthreads();  // both warpgroups' last wgmma done (each waited for its own)
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                *reinterpret_cast<__nv_bfloat162*>(tile + (row0 + 8 * h) * pitch +
                                                   (8 * j + col0) * 2) =
                    __floats2bfloat162_rn(acc[4 * j + 2 * h] * scale,
                                          acc[4 * j + 2 * h + 1] * scale);
        __syncthreads();
        const bool whole = n % 8 == 0 && (reinterpret_cast<unsigned long long>(c) & 15) == 0;
#pragma unroll 4
        for (int i = threadIdx.x; i < k_bm * row_chunks; i += k_threads) {
            const int r = i / row_chunks, q = i % row_chunks;
            const int row = block_m + r, col = block_n + q * 8;
            if (row >= m || col >= n) continue;
            const uint4 v = *reinterpret_cast<const uint4*>(tile + r * pitch + q * 16);
            __nv_bfloat16* out = c + static_cast<long long>(row) * n + col;
            if (whole) {  // n % 8 == 0, so col + 8 <= n
                *reinterpret_cast<uint4*>(out) = v;
            } else {
                const auto* e = reinterpret_cast<const __nv_bfloat16*>(&v);
#pragma unroll
                for (int x = 0; x < 8; ++x)
                    if (col + x < n) out[x] = e[x];
            }
        }
    } else {
        const bool pairs = n % 2 == 0 && (reinterpret_cast<unsigned long long>(c) & 3) == 0;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = block_m + row0 + 8 * h, col = block_n + 8 * j + col0;
                if (row >= m || col >= n) continue;
                const float v0 = acc[4 * j + 2 * h] * scale, v1 = acc[4 * j + 2 * h + 1] * scale;
                __nv_bfloat16* out = c + static_cast<long long>(row) * n + col;
                if (pairs) {  // n even, so col + 1 < n too
                    *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(v0, v1);
                } else {
                    out[0] = __float2bfloat16(v0);
                    if (col + 1 < n) out[1] = __float2bfloat16(v1);
                }
            }
    }
}

// The block tile of C at (blockIdx.y * 128, blockIdx.x * BN): warpgroup g computes rows 64g..
// 64g+63 with wgmma m64nNk32, four per 128-k stage. STAGES stages of A (128 x 128 bytes) and B
// (BN x 128 bytes), each 1024-byte aligned, filled by all 256 threads with gemm_fp8_mma's
// load_tile (cp.async, zeros outside the matrix; byte loads when k % 16 != 0) `ahead` k-steps
// before they are used. PART > 0: each stage's product goes in PART-column parts into a scratch
// accumulator (the first wgmma of a part overwrites it), which is waited for and added into the
// f32 sums (the tensor cores' own sums keep about 14 bits: cuBLASLt without FAST_ACCUM promotes
// so too). PART == 0: every wgmma adds into the sums, PENDING groups in flight across a k-step
// (faster, less exact). A stage is refilled only after the barrier that follows every
// warpgroup's wait for the groups that read it.
template <int BN, int STAGES, int PART, int PENDING, bool STAGED>
__device__ __forceinline__ void gemm(const __nv_fp8_e4m3* a_in, const __nv_fp8_e4m3* b_in,
                                     __nv_bfloat16* c, float scale_a, float scale_b, int m, int n,
                                     int k) {
    constexpr int a_bytes = k_bm * k_stage_k, stage_bytes = (k_bm + BN) * k_stage_k;
    constexpr int ahead = STAGES - 1 - PENDING;
    static_assert(BN == 128 || BN == 256, "128 or 256 columns a block");
    constexpr int part_n = PART > 0 ? PART : BN;  // columns of C one wgmma group sums
    static_assert(BN % part_n == 0 && (PART == 0 || PENDING == 0), "parts are waited for");
    static_assert((PENDING == 0 || PENDING == 1) && ahead >= 1 && STAGES >= 3,
                  "stages for the k-steps in flight, the one computed and the loads ahead");
    static_assert(a_bytes % 1024 == 0 && stage_bytes % 1024 == 0, "1024-byte aligned tiles");
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __trap();  // GEMM_FP8_WGMMA_STUB_OTHER_ARCHS: no wgmma in this arch's code
#else
    extern __shared__ __align__(16) unsigned char wgmma_shared[];
    // Aligned by hand (1024 bytes of slack in the launch's dynamic shared memory): the swizzle
    // is a function of the address.
    const unsigned raw = gemm_fp8_mma::shared_address(wgmma_shared);
    const unsigned pad = (1024u - (raw & 1023u)) & 1023u;
    unsigned char* stages = wgmma_shared + pad;
    const unsigned stages_address = raw + pad;
    const auto* a = reinterpret_cast<const unsigned char*>(a_in);
    const auto* b = reinterpret_cast<const unsigned char*>(b_in);
    const int block_m = blockIdx.y * k_bm, block_n = blockIdx.x * BN;
    const int warpgroup = threadIdx.x / 128;
    const bool whole_chunks =
        k % 16 == 0 &&
        ((reinterpret_cast<unsigned long long>(a) | reinterpret_cast<unsigned long long>(b)) &
         15) == 0;
    const int k_steps = (k + k_stage_k - 1) / k_stage_k;
    auto load_stage = [&](int step) {
        const int slot = step % STAGES * stage_bytes, k0 = step * k_stage_k;
        if (whole_chunks) {
            copy_tile<k_bm>(stages_address + slot, a, m, k, block_m, k0);
            copy_tile<BN>(stages_address + slot + a_bytes, b, n, k, block_n, k0);
        } else {  // byte by byte through registers (st.shared)
            gemm_fp8_mma::load_tile<k_bm, k_threads>(stages + slot, a, m, k, block_m, k0, false);
            gemm_fp8_mma::load_tile<BN, k_threads>(stages + slot + a_bytes, b, n, k, block_n, k0,
                                                   false);
        }
    };

    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
    fence_operands(acc);
    float part[PART > 0 ? PART / 2 : 1];
#pragma unroll
    for (int i = 0; i < (PART > 0 ? PART / 2 : 1); ++i) part[i] = 0.0f;
    fence_operands(part);

    // One cp.async group per k-step, empty past the end: wait_copies<ahead - 1> at step t
    // means "step t has landed" (this thread's copies).
#pragma unroll
    for (int step = 0; step < ahead; ++step) {
        if (step < k_steps) load_stage(step);
        gemm_fp8_mma::commit_copies();
    }
    for (int t = 0; t < k_steps; ++t) {
        gemm_fp8_mma::wait_copies<ahead - 1>();
        fence_async_proxy();  // this thread's writes of step t (cp.async or st.shared), then ...
        __syncthreads();      // ... everyone's; and every warpgroup's groups t - 1 - PENDING done
        const unsigned s = stages_address + t % STAGES * stage_bytes;
        const unsigned long long da = descriptor(s + warpgroup * 64 * k_stage_k);
        const unsigned long long db = descriptor(s + a_bytes);
#pragma unroll
        for (int p = 0; p < BN / part_n; ++p) {
            // B rows p * part_n.. start p * part_n * 128 bytes on (>> 4 in the descriptor).
            const unsigned long long dbp = db + p * part_n * (k_stage_k >> 4);
            mma_fence();
#pragma unroll
            for (int kk = 0; kk < k_stage_k / 32; ++kk) {
                if constexpr (PART > 0)
                    mma<PART>(part, da + 2 * kk, dbp + 2 * kk, kk);  // kk == 0: part = A B
                else
                    mma<BN>(acc, da + 2 * kk, dbp + 2 * kk, 1);
            }
            mma_commit();
            if (p == 0) {  // into the stage of step t - 1 - PENDING, whose wgmma groups are done
                if (t + ahead < k_steps) load_stage(t + ahead);
                gemm_fp8_mma::commit_copies();
            }
            if constexpr (PART > 0) {
                mma_wait<0>();
                fence_operands(part);
#pragma unroll
                for (int i = 0; i < PART / 2; ++i) acc[p * (PART / 2) + i] += part[i];
            }
        }
        if constexpr (PART == 0) mma_wait<PENDING>();
    }
    mma_wait<0>();
    fence_operands(acc);
    gemm_fp8_mma::wait_copies<0>();  // only empty groups are left; the stages are free after
    store_tile<BN, STAGES * stage_bytes, STAGED>(acc, stages, c, scale_a * scale_b, m, n, block_m,
                                                 block_n);
#endif
}

// Each MMA value's block: 256 threads (two warpgroups), a 128 x bn tile of C, each 128 k summed
// in `part`-column parts and added into f32; input_cases.json launches ceil(n / bn) x
// ceil(m / 128) blocks with shared_bytes(bn, stages) of dynamic shared memory (the stages and
// 1024 bytes of alignment slack). MMA 3: 128 x 256, parts of 128 columns, 4 stages (192 KiB +
// 1 KiB), one block a multiprocessor, 228 registers; MMA 4: 128 x 128, parts of 64 columns, 3
// stages (96 KiB + 1 KiB), two blocks a multiprocessor, 127 registers.
template <int VALUE>
struct tile_config;
template <>
struct tile_config<3> {
    static constexpr int bn = 256, stages = 4, part = 128, pending = 0, blocks = 1;
};
template <>
struct tile_config<4> {
    static constexpr int bn = 128, stages = 3, part = 64, pending = 0, blocks = 2;
};
__host__ __device__ constexpr int shared_bytes(int bn, int stages) {
    return stages * (k_bm + bn) * k_stage_k + 1024;
}

}  // namespace gemm_fp8_wgmma

using gemm_fp8_tile = gemm_fp8_wgmma::tile_config<MMA>;
extern "C" __global__ void __launch_bounds__(gemm_fp8_wgmma::k_threads, gemm_fp8_tile::blocks)
    gemm_e4m3(const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b, __nv_bfloat16* c, float scale_a,
              float scale_b, int m, int n, int k) {
    gemm_fp8_wgmma::gemm<gemm_fp8_tile::bn, gemm_fp8_tile::stages, gemm_fp8_tile::part,
                         gemm_fp8_tile::pending, true>(a, b, c, scale_a, scale_b, m, n, k);
}

#endif

#endif
