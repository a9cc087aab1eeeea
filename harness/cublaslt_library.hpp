#pragma once
/// cuBLASLt, loaded at run time for FP8 vendor-baseline requests (e4m3_gemm): dlopen of
/// libcublasLt.so.13, then .so.12, then .so (never linked, as cuBLAS), one table of the entry
/// points the harness calls, and the message that names every soname tried when none loads
/// (library_loader). Only cuBLASLt's header is used, for its types and declarations.

#include <cublasLt.h>

#include <string>
#include <utility>
#include <vector>

#include "harness/library_loader.hpp"

namespace cuopt {

struct cublaslt_api {
    std::string file;     // the soname that loaded, e.g. "libcublasLt.so.13"
    std::string version;  // "13.1.0", from cublasLtGetVersion
    decltype(&::cublasLtCreate) create = nullptr;
    decltype(&::cublasLtDestroy) destroy = nullptr;
    decltype(&::cublasLtMatmulDescCreate) matmul_desc_create = nullptr;
    decltype(&::cublasLtMatmulDescDestroy) matmul_desc_destroy = nullptr;
    decltype(&::cublasLtMatmulDescSetAttribute) matmul_desc_set_attribute = nullptr;
    decltype(&::cublasLtMatrixLayoutCreate) matrix_layout_create = nullptr;
    decltype(&::cublasLtMatrixLayoutDestroy) matrix_layout_destroy = nullptr;
    decltype(&::cublasLtMatmulPreferenceCreate) preference_create = nullptr;
    decltype(&::cublasLtMatmulPreferenceSetAttribute) preference_set_attribute = nullptr;
    decltype(&::cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
    decltype(&::cublasLtMatmulAlgoGetHeuristic) algo_get_heuristic = nullptr;
    decltype(&::cublasLtMatmul) matmul = nullptr;
    decltype(&::cublasLtGetVersion) get_version = nullptr;
    // Optional: null where the library has none (the status is then given as a number).
    decltype(&::cublasLtGetStatusName) status_name = nullptr;
    decltype(&::cublasLtGetStatusString) status_string = nullptr;
};

/// The sonames tried, in order.
const std::vector<std::string>& cublaslt_sonames();

/// Loads the first of `sonames` that opens and has every required entry point. Throws
/// vendor_library_error("cuBLASLt not found: tried libcublasLt.so.13 (why), ...").
cublaslt_api load_cublaslt(const std::vector<std::string>& sonames = cublaslt_sonames());

/// A move-only owner of one cuBLASLt object (the handle, a matmul descriptor, a matrix layout,
/// a preference) with the entry point that destroys it; released without throwing.
template <typename Handle>
class cublaslt_object {
  public:
    using destroy_fn = cublasStatus_t (*)(Handle);
    cublaslt_object() = default;
    cublaslt_object(Handle h, destroy_fn destroy) : m_handle(h), m_destroy(destroy) {}
    cublaslt_object(cublaslt_object&& o) noexcept
        : m_handle(std::exchange(o.m_handle, Handle{})), m_destroy(o.m_destroy) {}
    cublaslt_object& operator=(cublaslt_object&& o) noexcept {
        if (this != &o) {
            reset();
            m_handle = std::exchange(o.m_handle, Handle{});
            m_destroy = o.m_destroy;
        }
        return *this;
    }
    cublaslt_object(const cublaslt_object&) = delete;
    cublaslt_object& operator=(const cublaslt_object&) = delete;
    ~cublaslt_object() { reset(); }
    Handle get() const { return m_handle; }
    void reset() noexcept {
        if (m_handle && m_destroy) m_destroy(m_handle);  // a status nobody could act on
        m_handle = Handle{};
    }

  private:
    Handle m_handle{};
    destroy_fn m_destroy = nullptr;
};

using cublaslt_handle = cublaslt_object<cublasLtHandle_t>;
using cublaslt_matmul_desc = cublaslt_object<cublasLtMatmulDesc_t>;
using cublaslt_layout = cublaslt_object<cublasLtMatrixLayout_t>;
using cublaslt_preference = cublaslt_object<cublasLtMatmulPreference_t>;

/// "CUBLAS_STATUS_NOT_SUPPORTED (the string cuBLASLt gives)", or the number.
std::string describe_cublaslt_status(const cublaslt_api& api, cublasStatus_t status);

}  // namespace cuopt
