#pragma once
/// The device's peak dense arithmetic rates, from a small table of operations per SM per
/// clock by compute capability times the SM count and the maximum SM clock. Each rate is
/// the highest the hardware can deliver for that element type (tensor cores where they
/// are faster, the full-rate parts of a family): the orchestrator's speed-of-light floor
/// uses them, and a floor must never reject a legitimate kernel.

#include <optional>
#include <string>

#include "harness/device_info.hpp"

namespace cuopt {

/// Tera-operations per second (FMA = 2), dense; i8 in tera integer operations.
struct peak_tflops {
    double f64 = 0, f32 = 0, tf32 = 0, f16 = 0, bf16 = 0, fp8 = 0, i8 = 0;
};

/// The peaks for the device's arch, or nullopt for an arch the table does not know.
std::optional<peak_tflops> peak_tflops_for(const device_fingerprint& device);

/// One sentence on where the peaks came from, or why there are none.
std::string peak_note(const device_fingerprint& device);

}  // namespace cuopt
