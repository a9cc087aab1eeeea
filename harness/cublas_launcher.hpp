#pragma once
/// A vendor-baseline case's launch: its vendor_call as one cuBLAS call on the case's
/// stream, C = A x B with alpha 1 and beta 0, timed exactly like a kernel by the case
/// runner. TF32 stays off (the math mode is set to CUBLAS_DEFAULT_MATH explicitly); hgemm
/// is cublasGemmEx with f16 A, B and C and f32 accumulation; a row-major product is
/// computed as the column-major C^T = B^T A^T (row_major_bt, B stored n x k: transa = T).
/// cuBLAS runs through the runtime API in the primary context the harness made current.

#include <string>

#include "harness/case_runner.hpp"
#include "harness/cublas_library.hpp"

namespace cuopt {

class cublas_launcher : public case_launcher {
  public:
    /// Makes the handle (the primary context must be current) and sets the math mode.
    /// Throws vendor_library_error when cuBLAS refuses.
    explicit cublas_launcher(cublas_api api);
    ~cublas_launcher() override;
    cublas_launcher(const cublas_launcher&) = delete;
    cublas_launcher& operator=(const cublas_launcher&) = delete;

    std::function<void()> bind(const run_case& c, const std::vector<live_buffer>& buffers,
                               CUstream stream) override;
    /// "cublas:sgemm".
    std::string entry(const run_case& c) const override;
    bool single_kernel() const override { return false; }  // cuBLAS may run several grids

    const cublas_api& api() const { return m_api; }
    static constexpr const char* k_math_mode = "CUBLAS_DEFAULT_MATH";
    /// How the calls are made, for the response's vendor block.
    static std::string notes();

  private:
    cublas_api m_api;
    cublasHandle_t m_handle{};
};

}  // namespace cuopt
