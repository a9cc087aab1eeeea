// Row softmax in fp32: y[r][c] = exp(x[r][c] - m) / sum_j exp(x[r][j] - m) over a row-major
// rows x cols matrix, m being row r's maximum (subtracting it keeps exp() finite for any
// finite input and changes nothing in exact arithmetic). With the manifest's first tunable
// values (the defaults below) each thread walks one row alone, three times: the naive
// starting point to optimise.
//
// Tunables, passed as -DNAME=VALUE:
//   ROW_THREADS    threads that share a row: 1, or whole warps (a multiple of 32) that stride
//                  the row together and combine their partial results with warp shuffles
//                  and, across the row's warps, shared memory
//   BLOCK_THREADS  threads per block, a multiple of ROW_THREADS: the block holds
//                  BLOCK_THREADS / ROW_THREADS rows, one per threadIdx.y
//   ONLINE         0: three passes over a row (max, sum, write); 1: two, the max and the sum
//                  found in one pass (the sum rescaled whenever the max grows)
// input_cases.json launches block (ROW_THREADS, BLOCK_THREADS / ROW_THREADS) and grid
// ceil(rows / (BLOCK_THREADS / ROW_THREADS)), so a configuration whose ROW_THREADS does not
// divide BLOCK_THREADS has no launch and is never proposed.
#ifndef ROW_THREADS
#define ROW_THREADS 1
#endif
#ifndef BLOCK_THREADS
#define BLOCK_THREADS 128
#endif
#ifndef ONLINE
#define ONLINE 0
#endif

static_assert(ROW_THREADS == 1 || ROW_THREADS % 32 == 0, "ROW_THREADS is 1 or whole warps");
static_assert(BLOCK_THREADS % ROW_THREADS == 0 && BLOCK_THREADS <= 1024,
              "BLOCK_THREADS is a multiple of ROW_THREADS, at most 1024");

#define WARPS_PER_ROW (ROW_THREADS / 32)

// NVRTC ships no <cmath> or <cfloat>, so no INFINITY: -inf by its bit pattern.
__device__ __forceinline__ float negative_infinity() { return __int_as_float(0xff800000); }

// The max of some of a row's elements and the sum of exp(element - max) over them.
struct max_sum {
    float max;
    float sum;
};

// Merges two partial results, each sum rescaled to the larger max. A side that saw no
// element (-inf, 0) has max == m or contributes 0: never exp(-inf - -inf) = NaN.
__device__ __forceinline__ max_sum combine(max_sum a, max_sum b) {
    const float m = fmaxf(a.max, b.max);
    const float sa = a.max == m ? a.sum : a.sum * expf(a.max - m);
    const float sb = b.max == m ? b.sum : b.sum * expf(b.max - m);
    return {m, sa + sb};
}

struct max_op {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct sum_op {
    __device__ float operator()(float a, float b) const { return a + b; }
};
struct combine_op {
    __device__ max_sum operator()(max_sum a, max_sum b) const { return combine(a, b); }
};

__device__ __forceinline__ float shuffle_xor(float v, int lane_mask) {
    return __shfl_xor_sync(0xffffffffu, v, lane_mask);
}
__device__ __forceinline__ max_sum shuffle_xor(max_sum v, int lane_mask) {
    return {shuffle_xor(v.max, lane_mask), shuffle_xor(v.sum, lane_mask)};
}

// Combines the ROW_THREADS partial values of one row; every thread of the row gets the same
// result. Called by every thread of the block (rows past the end too): it holds barriers.
template <typename T, typename Op>
__device__ T reduce_row(T v, Op op) {
#if ROW_THREADS > 1
    // A butterfly: after it every lane of the warp holds the warp's result (all 32 lanes
    // are here, as ROW_THREADS and so blockDim.x is a multiple of 32).
    for (int lane_mask = 16; lane_mask > 0; lane_mask /= 2) v = op(v, shuffle_xor(v, lane_mask));
#if WARPS_PER_ROW > 1
    __shared__ T partial[BLOCK_THREADS / 32];  // one per warp of the block
    T* row_partial = partial + threadIdx.y * WARPS_PER_ROW;
    __syncthreads();  // the previous reduce_row's readers are done with `partial`
    if (threadIdx.x % 32 == 0) row_partial[threadIdx.x / 32] = v;
    __syncthreads();
    v = row_partial[0];
    for (int w = 1; w < WARPS_PER_ROW; ++w) v = op(v, row_partial[w]);
#endif
#endif
    return v;
}

extern "C" __global__ void softmax_f32(const float* x, float* y, int rows, int cols) {
    const int row = blockIdx.x * blockDim.y + threadIdx.y;
    // Threads past the last row take part in every barrier but touch no element.
    const int n = row < rows ? cols : 0;
    const float* in = x + static_cast<long long>(row < rows ? row : 0) * cols;
    float* out = y + static_cast<long long>(row < rows ? row : 0) * cols;
    const int first = threadIdx.x;  // this thread's columns: first, first + ROW_THREADS, ...
#if ONLINE
    max_sum part = {negative_infinity(), 0.0f};
    for (int c = first; c < n; c += ROW_THREADS) part = combine(part, max_sum{in[c], 1.0f});
    const max_sum whole = reduce_row(part, combine_op{});
    const float m = whole.max;
    const float sum = whole.sum;
#else
    float part_max = negative_infinity();
    for (int c = first; c < n; c += ROW_THREADS) part_max = fmaxf(part_max, in[c]);
    const float m = reduce_row(part_max, max_op{});
    float part_sum = 0.0f;
    for (int c = first; c < n; c += ROW_THREADS) part_sum += expf(in[c] - m);
    const float sum = reduce_row(part_sum, sum_op{});
#endif
    const float inverse = 1.0f / sum;
    for (int c = first; c < n; c += ROW_THREADS) out[c] = expf(in[c] - m) * inverse;
}
