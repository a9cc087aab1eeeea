#pragma once
/// The C ABI of libcuopt_cub.so, the bundled CUB launcher (cub_segmented_sum.cu): the entry
/// points the harness finds in it with dlsym (harness/cub_library). Plain C types only, so the
/// harness calls it without the CUDA runtime's headers or library; the stream is the driver's
/// CUstream, which is the runtime's cudaStream_t (both struct CUstream_st*).

#include <stddef.h>

struct CUstream_st;

#ifdef __cplusplus
extern "C" {
#endif

/// Per-row sums y[r] = sum_j x[r * cols + j] for r < rows, by cub::DeviceSegmentedReduce::Sum
/// on `stream` in the context current on the calling thread. With `temp` null it only writes
/// the temporary storage it needs into *temp_bytes and launches nothing. Returns a cudaError_t
/// (0: enqueued; cudaErrorInvalidValue for rows or cols below 1 or a null temp_bytes).
int cuopt_cub_row_sum_f32(const float* x, float* y, long long rows, long long cols, void* temp,
                          size_t* temp_bytes, struct CUstream_st* stream);

/// CUB_VERSION of the CUB it was built with: major * 100000 + minor * 100 + patch.
int cuopt_cub_version(void);

/// The CUDA runtime's name and description of a status the launcher returned.
const char* cuopt_cub_error_name(int status);
const char* cuopt_cub_error_string(int status);

#ifdef __cplusplus
}
#endif
