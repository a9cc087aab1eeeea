#pragma once
/// Runs one case honestly: upload inputs, poison outputs, launch once, warm up, then
/// time each launch (launch_timer) while the stream is held until the whole batch is
/// enqueued. Before every launch, outside the timed region: fresh, rotated (perturbed file
/// inputs) or restored inputs, re-poisoned outputs, L2 flushed last. The outputs kept are
/// the checked launch's (the last timed one, or timing.checked_launch's), which sees file
/// inputs exactly. No JSON here: a case in, a case_outcome out. The launch sequence is in
/// case_runner.cpp; the buffers' part, the outputs included, in case_buffers.cpp.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/request.hpp"
#include "common/response_status.hpp"
#include "harness/case_buffers.hpp"
#include "harness/cuda_handles.hpp"
#include "harness/device_info.hpp"
#include "harness/device_session.hpp"
#include "harness/gpu_state.hpp"
#include "harness/input_guard.hpp"
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

    /// Runs the case (launch indices start at its launch_index_base). Throws cuda_error for a CUDA
    /// failure (the caller decides whether the context survived); throws file_write_error, its
    /// what() naming the file and the errno, when an output or input dump cannot be written (the
    /// stream is idle then: every launch of the case has finished).
    case_outcome run(const run_case& c);

  private:
    // The buffers (case_buffers.cpp).

    /// The case's buffers, inputs uploaded (or generated, when inputs are not fresh per launch).
    /// Arms the input guard: the inputs whose values are fixed for the case hashed as given.
    std::vector<live_buffer> make_buffers(const run_case& c);
    /// The launch index whose values a generated input that is not regenerated per launch
    /// holds: the checked launch's under fresh_inputs (an as_given generator), else the base.
    std::uint64_t held_values_launch(const run_case& c) const;
    /// A generator regenerated before every launch (fresh_inputs, unless it says as_given).
    bool regenerated(const kernel_arg& a) const;
    /// A file input rotated before every launch but the checked one (timing_inputs perturbed).
    static bool rotated(const kernel_arg& a);
    /// Everything a launch needs before it starts, enqueued outside any timed region:
    /// fresh, rotated or restored inputs, re-poisoned outputs, then the L2 flush.
    /// `checked`: the launch whose outputs are kept (file inputs exactly as given).
    /// First, right after a checked launch: the input guard hashes what it left in the inputs.
    void prepare(std::vector<live_buffer>& buffers, std::uint64_t launch_index, bool checked);
    int commands_per_launch(const std::vector<live_buffer>& buffers) const;

    // The outputs (case_buffers.cpp).

    /// Whether the checked launch may be followed by other timed launches (checked_launch).
    bool keeps_mid_loop(const run_case& c) const;
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
    /// Checks output `a` (at `actual`) against its expected values on the GPU: the tally, and
    /// the file written only when it fails.
    output_record check_output(const kernel_arg& a, CUdeviceptr actual) const;
    /// The guard's verdict on the inputs of the checked launch `launch_index` into `out`.
    void check_inputs(const std::vector<live_buffer>& buffers, std::uint64_t launch_index,
                      case_outcome& out);

    // The launch sequence (case_runner.cpp).

    /// The timed loop's samples into `out`: the primary channel, both channels, the rule
    /// that ended it and the GPU's state around it. False: invalid_timing (out says why).
    bool record_samples(timed_samples t, case_outcome& out) const;

    const support_kernels& m_support;
    case_launcher& m_launcher;
    timing_config m_timing;
    stream_handle m_stream;
    const device_buffer& m_l2_scratch;  // twice the L2 size, zeroed, read before every launch
    const device_buffer& m_flush_sink;
    clocks m_clocks;
    launch_timer m_timer;
    std::optional<input_guard> m_guard;  // the current case's inputs, hashed on the GPU
    bool m_pageable_access = false;      // kernels can read host memory: cache no oracle
};

}  // namespace cuopt
