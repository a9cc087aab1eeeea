#pragma once
/// Harness runs served by persistent `cuda-harness --worker` processes instead of one process
/// per run: the driver, the context, CUPTI and NVML start once per worker, not per candidate.
/// One worker per (device, trusted or not, harness flags): the reference kernel and the vendor
/// library run in a worker of their own, so a candidate never shares a process (or device
/// memory) with the oracle's outputs; the harness zeroes every buffer it frees besides.
/// Isolation holds where it matters: a worker that crashes, hangs past the timeout (killed)
/// or exits after a sticky CUDA error is gone, the run's result is what a one-shot harness
/// would have given (signal, timeout, exit 13 with its response), and the next run on that
/// key starts a fresh worker. A worker also retires (exits cleanly, its reply saying why) after
/// a kernel that can leave device-heap blocks or globals in its context; the run counts as
/// answered, and the next one starts a fresh worker. Anything else (--compile-only, a wrapper such
/// as compute-sanitizer, --device-info, other programs, a request outside the run folder the
/// workers are confined to) runs one-shot through the fallback.

#include <filesystem>
#include <memory>
#include <string>

#include "common/name_table.hpp"
#include "common/runner_process.hpp"

namespace cuopt {

/// How the optimizer runs the harness: a persistent worker (default) or a process per run.
enum class harness_isolation { worker, process };
inline constexpr auto k_harness_isolations = make_name_table<harness_isolation>(
    {{harness_isolation::worker, "worker"}, {harness_isolation::process, "process"}});

/// What the workers did, for run.json.
struct worker_stats {
    int started = 0;   // worker processes started
    int requests = 0;  // runs they answered or died on
    int replaced = 0;  // workers gone after a crash, a timeout or a sticky error
    int retired = 0;   // workers that exited cleanly after a kernel that used the device heap
                       // or had writable globals (the next request gets a fresh one)
    int one_shot = 0;  // runs passed to the fallback runner
};

class harness_workers : public process_runner {
  public:
    /// Runs of `harness` (argv[0] equal to it) go to workers; the rest to `fallback`.
    static std::unique_ptr<harness_workers> make(std::string harness,
                                                 std::unique_ptr<process_runner> fallback);
    virtual worker_stats stats() const = 0;
    /// The folder tree every worker is confined to (cuda-harness --worker --root): the run
    /// folder, which holds every request the run makes. Only runs whose request and response
    /// lie inside it go to a worker, any other one-shot; until it is set, every run is one-shot.
    virtual void serve_under(const std::filesystem::path& root) = 0;
};

}  // namespace cuopt
