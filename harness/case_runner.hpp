#pragma once
/// Runs one case honestly: upload inputs, poison outputs, launch once, warm up, then
/// time each launch (launch_timer) while the stream is held until the whole batch is
/// enqueued. Before every launch, outside the timed region: fresh, rotated (perturbed file
/// inputs) or restored inputs, re-poisoned outputs, L2 flushed last. The outputs kept are
/// the checked launch's (the last timed one, or timing.checked_launch's), which sees file
/// inputs exactly. No JSON here: a case in, a case_outcome out. The launch sequence is here;
/// the buffers and their preparation are case_buffers', the checked launch's outputs case_outputs'.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/request.hpp"
#include "common/response_status.hpp"
#include "harness/case_buffers.hpp"
#include "harness/case_outputs.hpp"
#include "harness/cuda_handles.hpp"
#include "harness/device_info.hpp"
#include "harness/device_session.hpp"
#include "harness/gpu_state.hpp"
#include "harness/launch_timer.hpp"
#include "harness/sample_statistics.hpp"
#include "harness/support_kernels.hpp"

namespace cuopt {

struct case_outcome {
    std::string name;
    case_run_status status = case_run_status::skipped;
    std::string error;
    bool measured = false;
    int warmup = 0, iterations = 0;
    std::vector<double> samples_ms;  // the primary channel's (timer)
    sample_statistics stats_ms;
    std::string timer = "events";  // or "cupti": the clock samples_ms came from
    std::string timer_note;        // why events, where CUPTI was meant to time the case
    std::vector<double> event_samples_ms, cupti_samples_ms;  // both channels (cupti: may be empty)
    stop_rule rule = stop_rule::fixed;
    std::optional<double> relative_standard_error;       // of the primary median
    std::optional<gpu_state> state_before, state_after;  // around the timed loop (NVML)
    std::string entry;                       // a vendor call's "cublas:sgemm"; "" for a kernel
    std::uint64_t checked_launch_index = 0;  // launch whose inputs/outputs were kept
    bool stream_held = false;                // timed launches were queued behind a held stream
    bool stream_hold_timed_out = false;      // host enqueue outran the hold: samples may include it
    std::vector<output_record> outputs;
    /// The declared inputs (not inout) the checked launch changed, in argument order; nullopt
    /// when the case never got that far.
    std::optional<std::vector<std::string>> inputs_changed;
};

/// Checks a case's launch against the device and the kernel; "" when it can run,
/// else a message naming the field ("launch.block: ...").
std::string check_launch(const run_case& c, const device_fingerprint& device, CUfunction kernel,
                         std::size_t static_shared_bytes);

/// Compares the request's arguments with the kernel's parameter list (count and sizes).
/// param_count: from the cubin (count_kernel_params); without it the driver is probed past
/// the last parameter, which compute-sanitizer reports as an API error.
std::string check_arguments(const run_case& c, CUfunction kernel,
                            std::optional<std::size_t> param_count);

/// What one launch of a case is: a kernel launch (kernel_launcher) or a vendor library
/// call (cublas_launcher, cublaslt_launcher). The case runner does everything around it
/// (inputs, poison, L2 flush, the held stream and events, the outputs kept) the same way for
/// both.
class case_launcher {
  public:
    virtual ~case_launcher() = default;
    /// Called once per case, before its first launch: returns what enqueues one launch on
    /// `stream` (valid while `c` and `buffers` live). Throws cuda_error.
    virtual std::function<void()> bind(const run_case& c, const std::vector<live_buffer>& buffers,
                                       CUstream stream) = 0;
    /// What the response calls the case's entry ("" for a kernel: its compile block says).
    virtual std::string entry(const run_case& c) const = 0;
    /// Whether one launch is exactly one grid (a kernel); a library call may run several.
    virtual bool single_kernel() const { return true; }
};

/// Launches the compiled kernel with the case's grid, block, shared memory and arguments.
class kernel_launcher : public case_launcher {
  public:
    explicit kernel_launcher(CUfunction kernel) : m_kernel(kernel) {}
    std::function<void()> bind(const run_case& c, const std::vector<live_buffer>& buffers,
                               CUstream stream) override;
    std::string entry(const run_case&) const override { return ""; }

  private:
    CUfunction m_kernel;
};

/// The launch sequence of a case: the first launch, the warm-up, the timed loop (launch_timer)
/// and the checked launch, around what its case_buffers and case_outputs do.
class case_runner {
  public:
    /// How a case is timed and watched, beside its timing config.
    struct clocks {
        /// Queue each batch of timed launches behind a spinning kernel so host launch latency
        /// never lands in a sample. Off under profilers, which serialise launches.
        bool hold_stream = true;
        kernel_trace* trace = nullptr;         // CUPTI's kernel records; null: events only
        std::string trace_note;                // why there is no trace, where one was wanted
        const gpu_monitor* monitor = nullptr;  // NVML; null or unavailable: no GPU state
    };

    /// The session's support kernels and scratch serve this runner (its L2 scratch zeroed
    /// first: a worker's earlier request left its values there).
    case_runner(const device_fingerprint& device, device_session& session, case_launcher& launcher,
                const timing_config& timing, const clocks& clocks);
    case_runner(const case_runner&) = delete;  // m_outputs refers to m_buffers
    case_runner& operator=(const case_runner&) = delete;

    /// Runs the case (launch indices start at its launch_index_base). Throws cuda_error for a CUDA
    /// failure (the caller decides whether the context survived); throws file_write_error, its
    /// what() naming the file and the errno, when an output or input dump cannot be written (the
    /// stream is idle then: every launch of the case has finished).
    case_outcome run(const run_case& c);

  private:
    /// The timed loop's samples into `out`: the primary channel, both channels, the rule
    /// that ended it and the GPU's state around it. False: invalid_timing (out says why).
    bool record_samples(timed_samples t, case_outcome& out) const;

    case_launcher& m_launcher;
    timing_config m_timing;
    case_buffers m_buffers;  // the case's stream, buffers and input guard
    case_outputs m_outputs;  // the checked launch's outputs: kept, written or checked
    clocks m_clocks;
    launch_timer m_timer;
};

}  // namespace cuopt
