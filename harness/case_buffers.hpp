#pragma once
/// A case's buffer arguments on the device, and what is done to them before every launch,
/// outside any timed region: inputs uploaded or generated, then before each launch fresh
/// (regenerated), rotated (perturbed file inputs) or restored values, outputs re-poisoned and
/// L2 flushed last; the input guard's hashes armed around the checked launch. The case
/// runner's members for this are defined in case_buffers.cpp.

#include <cstdint>

#include "common/request.hpp"
#include "harness/cuda_handles.hpp"

namespace cuopt {

/// A buffer argument on the device for one case.
struct live_buffer {
    const kernel_arg* arg = nullptr;
    device_buffer working;   // what the kernel sees
    device_buffer pristine;  // in-place and perturbed inputs: the values to restore or rotate
    CUdeviceptr param{};
};

/// How far a perturbed file input is rotated (in elements, left) before launch `launch_index`
/// when it is not the checked launch: in [1, count - 1], different for successive launches;
/// 0 when count < 2 (nothing to rotate).
std::uint64_t rotation_shift(std::uint64_t launch_index, std::uint64_t count);

}  // namespace cuopt
