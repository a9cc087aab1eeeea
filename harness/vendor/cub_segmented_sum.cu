// The bundled CUB launcher: cub::DeviceSegmentedReduce::Sum over the rows of a row-major f32
// matrix behind the C ABI of cuopt_cub.h, so that the harness, which never links the CUDA
// runtime, can dlopen it as it does cuBLAS. nvcc builds it into libcuopt_cub.so with the runtime
// linked statically (CMakeLists.txt): a machine needs only its driver to run it. The segment
// offsets are computed, not stored: row r spans [r * cols, (r + 1) * cols), so the end offsets
// are the begin offsets shifted by one.
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cub/device/device_segmented_reduce.cuh>
#include <cub/version.cuh>

#include "harness/vendor/cuopt_cub.h"

#define CUOPT_CUB_EXPORT __attribute__((visibility("default")))

namespace {

// Row r's first element; row r ends where row r + 1 begins.
struct row_start {
    long long cols;
    __host__ __device__ long long operator()(long long r) const { return r * cols; }
};

}  // namespace

extern "C" {

CUOPT_CUB_EXPORT int cuopt_cub_row_sum_f32(const float* x, float* y, long long rows, long long cols,
                                           void* temp, size_t* temp_bytes,
                                           struct CUstream_st* stream) {
    if (rows < 1 || cols < 1 || !temp_bytes) return cudaErrorInvalidValue;
    const auto begin =
        thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), row_start{cols});
    return cub::DeviceSegmentedReduce::Sum(temp, *temp_bytes, x, y, rows, begin, begin + 1, stream);
}

CUOPT_CUB_EXPORT int cuopt_cub_version(void) {
    return CUB_VERSION;
}

CUOPT_CUB_EXPORT const char* cuopt_cub_error_name(int status) {
    return cudaGetErrorName(static_cast<cudaError_t>(status));
}

CUOPT_CUB_EXPORT const char* cuopt_cub_error_string(int status) {
    return cudaGetErrorString(static_cast<cudaError_t>(status));
}

}  // extern "C"
