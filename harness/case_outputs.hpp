#pragma once
/// What a case's checked launch leaves behind. When later timed launches follow it, its
/// outputs are copied aside before the next launch's prepare and put back after the loop.
/// Then each output is written to its file with its sha256 and the count of elements still
/// holding the poison pattern, or checked against its expected values on the GPU (written
/// only when it fails); a reference run's generated inputs are dumped as that launch saw them;
/// and the input guard (case_buffers) gives its verdict.

#include <cstdint>
#include <vector>

#include "common/request.hpp"
#include "harness/case_buffers.hpp"
#include "harness/cuda_handles.hpp"
#include "harness/support_kernels.hpp"

namespace cuopt {

struct case_outcome;  // case_runner.hpp

/// Serves the cases of one case_buffers (its stream, support kernels and input guard), which
/// must outlive it.
class case_outputs {
  public:
    /// pageable_access: kernels can read host memory, so no expected values stay cached.
    case_outputs(case_buffers& buffers, const timing_config& timing, bool pageable_access);

    /// Where the checked launch's outputs wait while later launches run: one buffer per
    /// output (empty for the others), or none when the checked launch is the last.
    std::vector<device_buffer> make_kept(const run_case& c,
                                         const std::vector<live_buffer>& buffers) const;
    /// Enqueues copies of every output into `kept` (to_kept) or back into the working buffers.
    void copy_outputs(const std::vector<live_buffer>& buffers,
                      const std::vector<device_buffer>& kept, bool to_kept) const;
    /// The outputs of the checked launch, and the inputs it saw (reference runs), to disk.
    /// And the names of the inputs the checked launch wrote into (input_guard).
    void save_outputs(const run_case& c, const std::vector<live_buffer>& buffers,
                      std::uint64_t launch_index, case_outcome& out);

  private:
    /// Whether the checked launch may be followed by other timed launches (checked_launch).
    bool keeps_mid_loop(const run_case& c) const;
    /// Checks output `a` (at `actual`) against its expected values on the GPU: the tally, and
    /// the file written only when it fails.
    output_record check_output(const kernel_arg& a, CUdeviceptr actual) const;

    case_buffers& m_buffers;
    const support_kernels& m_support;
    const stream_handle& m_stream;  // m_buffers' (the case's)
    timing_config m_timing;
    bool m_pageable_access = false;  // kernels can read host memory: cache no oracle
};

}  // namespace cuopt
