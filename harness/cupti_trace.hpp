#pragma once
/// CUPTI, loaded at run time like the driver: the kernel activity records whose GPU
/// start and end timestamps time each launch without the ~1.3 us that a pair of CUDA events
/// adds, and the API callbacks that tie each record to the launch that made it; every record
/// also counts toward the request's GPU busy time (take_busy). Absent or
/// held by another tool (ncu, Nsight Systems), the harness times with CUDA events alone and
/// says why.

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "harness/kernel_records.hpp"

namespace cuopt {

class kernel_trace {
  public:
    /// Loads libcupti, subscribes to the driver and runtime API callbacks and enables
    /// concurrent-kernel records. Null, with *why set, where CUPTI is missing or busy.
    /// Call with a current context. At most one trace per process (CUPTI has one subscriber).
    static kernel_trace* start(std::string* why);

    /// The library file that loaded (e.g. ".../libcupti.so.13").
    const std::string& library() const { return m_library; }

    /// Forgets every record and call so far: a case's timed loop starts.
    void reset();
    /// API calls from now until end_launch() belong to timed launch `index`.
    void begin_launch(std::size_t index);
    void end_launch();
    /// Every record delivered so far, after forcing CUPTI to flush what the GPU finished
    /// (synchronise the stream first), and the calls made inside timed launches.
    void collect(std::vector<kernel_record>* records, std::vector<launch_call>* calls);
    /// Records CUPTI dropped (its buffers overflowed) since reset().
    std::size_t dropped() const;

    /// The trace start() made in this process, or null (never started, or it failed).
    static kernel_trace* running();
    /// The GPU busy time of every kernel record delivered since the last take_busy() (after
    /// forcing CUPTI to flush what the GPU finished), and forgets them; reset() leaves them
    /// alone, so a request's busy time holds its untimed launches and support kernels too.
    /// *dropped: the records CUPTI dropped in that time.
    busy_time take_busy(std::size_t* dropped);

    // CUPTI's callbacks (C functions) reach the one trace through these.
    void on_api_enter(std::uint32_t correlation_id);
    void on_records(const std::vector<kernel_record>& records, std::size_t dropped);

  private:
    kernel_trace() = default;
    std::string m_library;
    mutable std::mutex m_mutex;
    std::vector<kernel_record> m_records;
    std::vector<launch_call> m_calls;
    std::size_t m_dropped = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> m_spans;  // since take_busy()
    std::size_t m_spans_dropped = 0;
    std::atomic<long long> m_current_launch{-1};  // the timed launch being enqueued, or -1
};

}  // namespace cuopt
