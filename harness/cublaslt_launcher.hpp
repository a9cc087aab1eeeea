#pragma once
/// A vendor-baseline case's launch through cuBLASLt: e4m3_gemm as one cublasLtMatmul on the
/// case's stream, D = scale_a * scale_b * (A x B) with A and B f8e4m3 and C (= D) bf16 or f32,
/// f32 compute, alpha 1, beta 0, FAST_ACCUM off, timed exactly like a kernel by the case
/// runner. The row_major_bt product is computed as the column-major C^T = op_T(B) x A^T, the
/// "TN" form cuBLASLt's FP8 needs. The descriptors and the algorithm are made once per case
/// (bind), outside the timed launches; the handle and workspace once per launcher.

#include <cstddef>
#include <string>

#include "harness/case_runner.hpp"
#include "harness/cublaslt_library.hpp"

namespace cuopt {

class cublaslt_launcher : public case_launcher {
  public:
    /// Makes the handle, the workspace and the two device scales (the primary context must
    /// be current). Throws vendor_library_error when cuBLASLt refuses.
    explicit cublaslt_launcher(cublaslt_api api);

    /// The case's scales copied to the device, its descriptors made and the algorithm chosen
    /// (cublasLtMatmulAlgoGetHeuristic); throws cuda_error when cuBLASLt has none.
    std::function<void()> bind(const run_case& c, const std::vector<live_buffer>& buffers,
                               CUstream stream) override;
    /// "cublaslt:e4m3_gemm".
    std::string entry(const run_case& c) const override;
    bool single_kernel() const override { return false; }  // cuBLASLt may run several grids

    const cublaslt_api& api() const { return m_api; }
    static constexpr const char* k_math_mode = "CUBLAS_COMPUTE_32F, FAST_ACCUM off";
    static constexpr std::size_t k_workspace_bytes = std::size_t{32} << 20;
    /// Where the second scale sits after the first: each device float 256-byte aligned. With
    /// the B scale 4 bytes after the A scale, cublasLtMatmul answered
    /// CUBLAS_STATUS_NOT_SUPPORTED on an H200 (cuBLASLt 13.1) though the heuristic had an
    /// algorithm.
    static constexpr std::size_t k_scale_stride_bytes = 256;
    /// How the calls are made, for the response's vendor block.
    static std::string notes();

  private:
    cublaslt_api m_api;
    cublaslt_handle m_handle;
    device_buffer m_workspace;
    device_buffer m_scales;  // cuBLASLt's A scale (scale_b), then its B scale (scale_a)
};

}  // namespace cuopt
