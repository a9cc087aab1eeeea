#pragma once
/// The timed loop: each timed launch sits between two CUDA events, and launches are
/// enqueued in batches behind a held stream (a spinning support kernel) so the host's
/// launch latency never lands in a sample. Batches are sized to the GPU's command
/// prefetch window. What happens before each launch (fresh inputs, re-poison, L2
/// flush) is the caller's `prepare`, enqueued outside the events.

#include <functional>
#include <vector>

#include "harness/cuda_handles.hpp"
#include "harness/support_kernels.hpp"

namespace cuopt {

struct timed_samples {
    std::vector<double> samples_ms;
    bool stream_held = false;            // launches were queued behind a held stream
    bool stream_hold_timed_out = false;  // host enqueue outran the hold: samples may include it
};

class event_timer {
  public:
    /// hold: queue each batch behind a spinning kernel (off under profilers, which
    /// serialise launches).
    event_timer(const support_kernels& support, CUstream stream, bool hold);

    /// Times `iterations` launches: for each, prepare() then the start event, launch(),
    /// the stop event. commands_per_launch (its prepare operations, two events and the
    /// kernel) sizes the batches. Throws cuda_error as the driver reports it.
    timed_samples time(int iterations, int commands_per_launch,
                       const std::function<void()>& prepare, const std::function<void()>& launch);

  private:
    const support_kernels& m_support;
    CUstream m_stream;
    bool m_hold;
    mapped_host_buffer m_hold_flags;  // [0]: release, [1]: the hold timed out
};

}  // namespace cuopt
