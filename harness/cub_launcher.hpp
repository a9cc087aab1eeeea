#pragma once
/// A vendor-baseline case's launch through CUB: segmented_sum as one
/// cub::DeviceSegmentedReduce::Sum on the case's stream (y[r] = sum_j x[r][j], x row-major
/// rows x cols f32, y f32), timed exactly like a kernel by the case runner. The call goes
/// through the bundled launcher (cub_library), whose CUDA runtime works in the primary context
/// the harness made current. CUB's temporary storage is sized and allocated (driver API) once
/// per case in bind, outside the timed launches, and kept for the next case when large enough.

#include <string>
#include <vector>

#include "harness/case_runner.hpp"
#include "harness/cub_library.hpp"

namespace cuopt {

/// Why a segmented_sum call's buffers do not suit it, in one line naming the buffer and what it
/// needs; "" when they do: x an f32 input of rows * cols elements, y an f32 output of rows.
std::string row_sum_buffer_problem(const vendor_call& v, const std::vector<live_buffer>& buffers);

class cub_launcher : public case_launcher {
  public:
    explicit cub_launcher(cub_api api) : m_api(std::move(api)) {}

    /// Checks the buffers (cuda_error CUDA_ERROR_INVALID_VALUE naming the problem), asks CUB
    /// for its temporary storage and allocates it; throws cuda_error when CUB refuses.
    std::function<void()> bind(const run_case& c, const std::vector<live_buffer>& buffers,
                               CUstream stream) override;
    /// "cub:segmented_sum".
    std::string entry(const run_case& c) const override;
    /// One DeviceSegmentedReduceKernel grid of `rows` blocks a call: CUB splits the rows over
    /// several grids only past 2^31 - 1 of them, more than a request's rows (an int) can be.
    bool single_kernel() const override { return true; }

    const cub_api& api() const { return m_api; }
    static constexpr const char* k_math_mode = "f32 sums in CUB's own order";
    /// How the calls are made, for the response's vendor block.
    static std::string notes();

  private:
    cub_api m_api;
    device_buffer m_temp;  // CUB's temporary storage
};

}  // namespace cuopt
