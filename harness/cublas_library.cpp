#include "harness/cublas_library.hpp"

namespace cuopt {

namespace {

void resolve(symbol_resolver& lib, cublas_api& api) {
    lib.get(api.create, "cublasCreate_v2");
    lib.get(api.destroy, "cublasDestroy_v2");
    lib.get(api.set_stream, "cublasSetStream_v2");
    lib.get(api.set_math_mode, "cublasSetMathMode");
    lib.get(api.sgemm, "cublasSgemm_v2");
    lib.get(api.dgemm, "cublasDgemm_v2");
    lib.get(api.gemm_ex, "cublasGemmEx");
    lib.get(api.get_property, "cublasGetProperty");
    lib.get(api.status_name, "cublasGetStatusName");
    lib.get(api.status_string, "cublasGetStatusString");
}

std::string version_of(const cublas_api& api) {
    int major = 0, minor = 0, patch = 0;
    api.get_property(MAJOR_VERSION, &major);
    api.get_property(MINOR_VERSION, &minor);
    api.get_property(PATCH_LEVEL, &patch);
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace

const std::vector<std::string>& cublas_sonames() {
    static const std::vector<std::string> names = {"libcublas.so.13", "libcublas.so.12",
                                                   "libcublas.so"};
    return names;
}

cublas_api load_cublas(const std::vector<std::string>& sonames) {
    cublas_api api;
    api.file =
        load_first_library("cuBLAS", sonames, [&api](symbol_resolver& lib) { resolve(lib, api); });
    api.version = version_of(api);
    return api;
}

std::string describe_cublas_status(const cublas_api& api, cublasStatus_t status) {
    return describe_library_status(api.status_name ? api.status_name(status) : nullptr,
                                   api.status_string ? api.status_string(status) : nullptr,
                                   "cuBLAS", static_cast<int>(status));
}

}  // namespace cuopt
