#pragma once
/// What optimize reads from cuda-harness --device-info's JSON: the arch the kernels compile for,
/// the name the lines print, whether the GPU is simulated (fake-harness) and the largest block.
/// Each is a default ("", "unknown", false, 0) when the JSON does not say.

#include <string>

namespace cuopt {

/// "sm_90", or "" when unknown.
std::string device_arch(const std::string& device_json);

/// "NVIDIA H200", or "unknown".
std::string device_name(const std::string& device_json);

/// The harness's --device-info says "simulated": true (fake-harness).
bool device_simulated(const std::string& device_json);

/// max_threads_per_block; 0 when unknown.
int max_threads_per_block(const std::string& device_json);

}  // namespace cuopt
