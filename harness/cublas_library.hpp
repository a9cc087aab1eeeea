#pragma once
/// cuBLAS, loaded at run time for vendor-baseline requests: dlopen of libcublas.so.13,
/// then .so.12, then .so (never linked, so the harness still starts where there is no
/// cuBLAS), one table of the entry points the harness calls, and the message that names
/// every soname tried when none loads (library_loader). Only cuBLAS's headers are used, for
/// its types.

#include <cublas_api.h>

#include <string>
#include <vector>

#include "harness/library_loader.hpp"

namespace cuopt {

struct cublas_api {
    std::string file;     // the soname that loaded, e.g. "libcublas.so.13"
    std::string version;  // "13.0.2", from cublasGetProperty
    cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
    cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
    cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t) = nullptr;
    cublasStatus_t (*set_math_mode)(cublasHandle_t, cublasMath_t) = nullptr;
    cublasStatus_t (*sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const float*, const float*, int, const float*, int, const float*,
                            float*, int) = nullptr;
    cublasStatus_t (*dgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const double*, const double*, int, const double*, int, const double*,
                            double*, int) = nullptr;
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                              const void*, const void*, cudaDataType, int, const void*,
                              cudaDataType, int, const void*, void*, cudaDataType, int,
                              cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
    cublasStatus_t (*get_property)(libraryPropertyType, int*) = nullptr;
    const char* (*status_name)(cublasStatus_t) = nullptr;
    const char* (*status_string)(cublasStatus_t) = nullptr;
};

/// The sonames tried, in order.
const std::vector<std::string>& cublas_sonames();

/// Loads the first of `sonames` that opens and has every entry point. Throws
/// vendor_library_error("cuBLAS not found: tried libcublas.so.13 (why), ...").
cublas_api load_cublas(const std::vector<std::string>& sonames = cublas_sonames());

/// "CUBLAS_STATUS_INVALID_VALUE (the string cuBLAS gives)", or the number.
std::string describe_cublas_status(const cublas_api& api, cublasStatus_t status);

}  // namespace cuopt
