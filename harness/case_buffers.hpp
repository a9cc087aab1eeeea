#pragma once
/// A case's buffer arguments on the device, and what is done to them before every launch,
/// outside any timed region: inputs uploaded or generated, then before each launch fresh
/// (regenerated), rotated (perturbed file inputs) or restored values, outputs re-poisoned and
/// L2 flushed last; the input guard's hashes armed around the checked launch. After the
/// checked launch, its outputs (copied aside when later timed launches follow it, put back
/// after the loop) written to their files with their sha256 and the count of elements still
/// holding the poison pattern, a reference run's generated inputs dumped as that launch saw
/// them, and the input guard's verdict on which declared inputs it wrote into. The case
/// runner's members for all this are defined in case_buffers.cpp.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "common/element_check.h"
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

/// The buffer of the arg called `name` (a vendor_call's operand; the request reader checked that
/// it exists, so a missing one is a logic_error).
const live_buffer& buffer_named(const std::vector<live_buffer>& buffers, const std::string& name);

/// How far a perturbed file input is rotated (in elements, left) before launch `launch_index`
/// when it is not the checked launch: in [1, count - 1], different for successive launches;
/// 0 when count < 2 (nothing to rotate).
std::uint64_t rotation_shift(std::uint64_t launch_index, std::uint64_t count);
/// The same under a request's inputs_key (kernel_arg::rotation_key): 1 + a keyed draw below
/// count - 1, which nobody can predict without the key; without one, the public sequence above.
std::uint64_t rotation_shift(std::uint64_t launch_index, std::uint64_t count,
                             const std::optional<std::array<std::uint32_t, 8>>& key);

/// One file a case wrote: an output, or an input dump.
/// An output checked against the oracle on the GPU (the request's check).
struct output_check_result {
    cuopt_check::tally tally;
    cuopt_check::rule rule;
    bool rms_scaled = false;  // rule.allowed_atol holds the RMS term
    std::filesystem::path expected_file;
    std::string expected_sha256;
};

struct output_record {
    std::string arg;
    std::string role;            // "output" or "input_dump"
    std::filesystem::path file;  // empty: not written (checked on the GPU, and passed)
    dtype type = dtype::f32;
    std::uint64_t count = 0;
    std::string sha256;           // of the file; "" when none was written
    std::uint64_t unwritten = 0;  // elements still holding the poison pattern
    std::optional<output_check_result> check;
};

/// Copies `a`'s bytes from the device at `from` into `file` (atomically) and describes them.
/// Throws file_write_error whose what() is the whole story: "cannot write FILE: No space left
/// on device (errno 28)".
output_record save_buffer(const kernel_arg& a, CUdeviceptr from, const std::filesystem::path& file,
                          const char* role);

}  // namespace cuopt
