// Per-row sums in fp32: y[r] = x[r][0] + ... + x[r][cols - 1] over a row-major rows x cols
// matrix. No atomics: each row is summed by the threads that own it, so a configuration
// always adds in the same order. With the manifest's first tunable values (the defaults
// below) each thread walks one row alone, one load at a time: the naive starting point.
//
// Tunables, passed as -DNAME=VALUE:
//   ROW_THREADS    threads that share a row: 1, or whole warps (a multiple of 32) that stride
//                  the row together (coalesced loads), then add their partial sums in a tree:
//                  warp shuffles, and shared memory across the row's warps
//   BLOCK_THREADS  threads per block, a multiple of ROW_THREADS: the block holds
//                  BLOCK_THREADS / ROW_THREADS rows, one per threadIdx.y
//   ACCUMULATORS   independent partial sums per thread: that many loads in flight per step
// input_cases.json launches block (ROW_THREADS, BLOCK_THREADS / ROW_THREADS) and grid
// ceil(rows / (BLOCK_THREADS / ROW_THREADS)), so a configuration whose ROW_THREADS does not
// divide BLOCK_THREADS has no launch and is never proposed.
#ifndef ROW_THREADS
#define ROW_THREADS 1
#endif
#ifndef BLOCK_THREADS
#define BLOCK_THREADS 128
#endif
#ifndef ACCUMULATORS
#define ACCUMULATORS 1
#endif

static_assert(ROW_THREADS == 1 || ROW_THREADS % 32 == 0, "ROW_THREADS is 1 or whole warps");
static_assert(BLOCK_THREADS % ROW_THREADS == 0 && BLOCK_THREADS <= 1024,
              "BLOCK_THREADS is a multiple of ROW_THREADS, at most 1024");
static_assert(ACCUMULATORS >= 1, "at least one accumulator");

#define WARPS_PER_ROW (ROW_THREADS / 32)

// Adds the ROW_THREADS partial sums of one row; every thread of the row gets the same total.
// Called by every thread of the block (rows past the end too): it holds barriers.
__device__ float sum_row(float v) {
#if ROW_THREADS > 1
    // A butterfly: after it every lane of the warp holds the warp's sum (all 32 lanes are
    // here, as ROW_THREADS and so blockDim.x is a multiple of 32).
    for (int lane_mask = 16; lane_mask > 0; lane_mask /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, lane_mask);
#if WARPS_PER_ROW > 1
    __shared__ float partial[BLOCK_THREADS / 32];  // one per warp of the block
    float* row_partial = partial + threadIdx.y * WARPS_PER_ROW;
    if (threadIdx.x % 32 == 0) row_partial[threadIdx.x / 32] = v;
    __syncthreads();
    v = row_partial[0];
    for (int w = 1; w < WARPS_PER_ROW; ++w) v += row_partial[w];
#endif
#endif
    return v;
}

extern "C" __global__ void row_sum_f32(const float* x, float* y, int rows, int cols) {
    const int row = blockIdx.x * blockDim.y + threadIdx.y;
    // Threads past the last row take part in the barrier but read and write nothing.
    const int n = row < rows ? cols : 0;
    const float* in = x + static_cast<long long>(row < rows ? row : 0) * cols;
    float acc[ACCUMULATORS];
#pragma unroll
    for (int a = 0; a < ACCUMULATORS; ++a) acc[a] = 0.0f;
    int c = threadIdx.x;  // this thread's columns: c, c + ROW_THREADS, ...
    for (; c + (ACCUMULATORS - 1) * ROW_THREADS < n; c += ACCUMULATORS * ROW_THREADS)
#pragma unroll
        for (int a = 0; a < ACCUMULATORS; ++a) acc[a] += in[c + a * ROW_THREADS];
    for (; c < n; c += ROW_THREADS) acc[0] += in[c];  // the last few, fewer than ACCUMULATORS
    float sum = acc[0];
#pragma unroll
    for (int a = 1; a < ACCUMULATORS; ++a) sum += acc[a];
    sum = sum_row(sum);
    if (threadIdx.x == 0 && row < rows) y[row] = sum;
}
