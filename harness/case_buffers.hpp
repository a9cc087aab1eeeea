#pragma once
/// A case's buffer arguments on the device, on the case's own stream, and what is done to them
/// before every launch, outside any timed region: inputs uploaded or generated, then before each
/// launch fresh (regenerated), rotated (perturbed file inputs) or restored values, outputs
/// re-poisoned and L2 flushed last; the input guard's hashes armed around the checked launch and
/// its verdict on which declared inputs that launch wrote into. Also how one buffer becomes a
/// file (save_buffer); what the checked launch leaves is case_outputs'.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "common/element_check.h"
#include "common/request.hpp"
#include "harness/cuda_handles.hpp"
#include "harness/device_info.hpp"
#include "harness/device_session.hpp"
#include "harness/input_guard.hpp"
#include "harness/support_kernels.hpp"

namespace cuopt {

struct case_outcome;  // case_runner.hpp

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

/// Owns the case's stream and input guard; borrows the session's support kernels, L2 scratch
/// and flush sink. One case at a time: make_buffers, then prepare before every launch.
class case_buffers {
  public:
    /// The L2 scratch is twice the device's L2 when timing.flush_l2 (else a token 16 bytes).
    case_buffers(const device_fingerprint& device, device_session& session,
                 const timing_config& timing);
    case_buffers(const case_buffers&) = delete;  // case_outputs holds references into it
    case_buffers& operator=(const case_buffers&) = delete;

    /// Zeroes the L2 scratch on the stream when timing.flush_l2 (a worker's earlier request
    /// left its values there); once, before the first case.
    void zero_l2_scratch();

    const stream_handle& stream() const { return m_stream; }
    const support_kernels& support() const { return m_support; }

    /// The case's buffers, inputs uploaded (or generated, when inputs are not fresh per launch).
    /// Arms the input guard: the inputs whose values are fixed for the case hashed as given.
    std::vector<live_buffer> make_buffers(const run_case& c);
    /// Everything a launch needs before it starts, enqueued outside any timed region:
    /// fresh, rotated or restored inputs, re-poisoned outputs, then the L2 flush.
    /// `checked`: the launch whose outputs are kept (file inputs exactly as given).
    /// First, right after a checked launch: the input guard hashes what it left in the inputs.
    void prepare(std::vector<live_buffer>& buffers, std::uint64_t launch_index, bool checked);
    int commands_per_launch(const std::vector<live_buffer>& buffers) const;
    /// The guard's verdict on the inputs of the checked launch `launch_index` into `out`.
    void check_inputs(const std::vector<live_buffer>& buffers, std::uint64_t launch_index,
                      case_outcome& out);

    /// The launch index whose values a generated input that is not regenerated per launch
    /// holds: the checked launch's under fresh_inputs (an as_given generator), else the base.
    std::uint64_t held_values_launch(const run_case& c) const;
    /// A generator regenerated before every launch (fresh_inputs, unless it says as_given).
    bool regenerated(const kernel_arg& a) const;
    /// A file input rotated before every launch but the checked one (timing_inputs perturbed).
    static bool rotated(const kernel_arg& a);

  private:
    const support_kernels& m_support;
    timing_config m_timing;
    stream_handle m_stream;
    const device_buffer& m_l2_scratch;  // twice the L2 size, zeroed, read before every launch
    const device_buffer& m_flush_sink;
    std::optional<input_guard> m_guard;  // the current case's inputs, hashed on the GPU
};

}  // namespace cuopt
