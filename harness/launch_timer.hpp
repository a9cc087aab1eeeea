#pragma once
/// The timed loop, with two clocks. Each timed launch sits between two CUDA events, and,
/// where CUPTI is on, its kernel's own GPU start and end timestamps are the primary sample
/// (the events add ~1.3 us of their own; they stay as the second channel). Launches are
/// enqueued in batches behind a held stream (a spinning support kernel) so the host's launch
/// latency never lands in a sample; batches are sized to the GPU's command prefetch window.
/// What happens before each launch (fresh inputs, re-poison, L2 flush) is the caller's
/// `prepare`, enqueued outside the events. The loop ends by the timing config's rule: a fixed
/// count, or (adaptive) once the median's noise reaches its target.

#include <functional>
#include <string>
#include <vector>

#include "common/request.hpp"
#include "harness/cuda_handles.hpp"
#include "harness/cupti_trace.hpp"
#include "harness/sample_statistics.hpp"
#include "harness/support_kernels.hpp"

namespace cuopt {

struct timed_samples {
    std::vector<double> event_ms;  // CUDA events: one per timed launch
    std::vector<double> cupti_ms;  // CUPTI: one per timed launch; empty when not complete
    std::string cupti_note;        // why the CUPTI channel is absent or incomplete
    std::string problem;           // a sample held more than the case's work (invalid_timing)
    stop_rule rule = stop_rule::fixed;
    bool stream_held = false;            // launches were queued behind a held stream
    bool stream_hold_timed_out = false;  // host enqueue outran the hold: samples may include it

    /// The samples the case reports: CUPTI's where complete, else the events'.
    const std::vector<double>& primary() const { return cupti_ms.empty() ? event_ms : cupti_ms; }
};

class launch_timer {
  public:
    /// hold: queue each batch behind a spinning kernel (off under profilers, which serialise
    /// launches). trace: CUPTI's kernel records, or null to time with events alone.
    launch_timer(const support_kernels& support, CUstream stream, bool hold, kernel_trace* trace);

    /// Times launches until the timing config's rule stops: for each, prepare() then the start
    /// event, launch(), the stop event. commands_per_launch (its prepare operations, two events
    /// and the launch) sizes the batches. single_kernel: a launch runs exactly one grid (a
    /// kernel; a vendor call may run several). Throws cuda_error as the driver reports it.
    timed_samples time(const timing_config& timing, int commands_per_launch, bool single_kernel,
                       const std::function<void()>& prepare, const std::function<void()>& launch);

  private:
    /// The CUPTI samples of the first `launches` timed launches, into `out`.
    void collect_cupti(std::size_t launches, bool single_kernel, timed_samples& out) const;

    const support_kernels& m_support;
    CUstream m_stream;
    bool m_hold;
    kernel_trace* m_trace;
    mapped_host_buffer m_hold_flags;  // [0]: release, [1]: the hold timed out
};

}  // namespace cuopt
