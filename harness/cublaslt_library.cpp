#include "harness/cublaslt_library.hpp"

namespace cuopt {

namespace {

void resolve(symbol_resolver& lib, cublaslt_api& api) {
    lib.get(api.create, "cublasLtCreate");
    lib.get(api.destroy, "cublasLtDestroy");
    lib.get(api.matmul_desc_create, "cublasLtMatmulDescCreate");
    lib.get(api.matmul_desc_destroy, "cublasLtMatmulDescDestroy");
    lib.get(api.matmul_desc_set_attribute, "cublasLtMatmulDescSetAttribute");
    lib.get(api.matrix_layout_create, "cublasLtMatrixLayoutCreate");
    lib.get(api.matrix_layout_destroy, "cublasLtMatrixLayoutDestroy");
    lib.get(api.preference_create, "cublasLtMatmulPreferenceCreate");
    lib.get(api.preference_set_attribute, "cublasLtMatmulPreferenceSetAttribute");
    lib.get(api.preference_destroy, "cublasLtMatmulPreferenceDestroy");
    lib.get(api.algo_get_heuristic, "cublasLtMatmulAlgoGetHeuristic");
    lib.get(api.matmul, "cublasLtMatmul");
    lib.get(api.get_version, "cublasLtGetVersion");
    lib.get_optional(api.status_name, "cublasLtGetStatusName");
    lib.get_optional(api.status_string, "cublasLtGetStatusString");
}

// cublasLtGetVersion gives major * 10000 + minor * 100 + patch (CUBLAS_VERSION's encoding).
std::string version_of(const cublaslt_api& api) {
    const std::size_t v = api.get_version();
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
           std::to_string(v % 100);
}

}  // namespace

const std::vector<std::string>& cublaslt_sonames() {
    static const std::vector<std::string> names = {"libcublasLt.so.13", "libcublasLt.so.12",
                                                   "libcublasLt.so"};
    return names;
}

cublaslt_api load_cublaslt(const std::vector<std::string>& sonames) {
    cublaslt_api api;
    api.file = load_first_library("cuBLASLt", sonames,
                                  [&api](symbol_resolver& lib) { resolve(lib, api); });
    api.version = version_of(api);
    return api;
}

std::string describe_cublaslt_status(const cublaslt_api& api, cublasStatus_t status) {
    return describe_library_status(api.status_name ? api.status_name(status) : nullptr,
                                   api.status_string ? api.status_string(status) : nullptr,
                                   "cuBLASLt", static_cast<int>(status));
}

}  // namespace cuopt
