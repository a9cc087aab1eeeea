#pragma once
/// Runs a child program (the harness) with a wall-clock limit, killing it when the
/// limit passes, and hands back its exit status, the signal that ended it and its
/// captured stdout and stderr. Behind an interface so the search loop can be tested
/// with a fake; the real one starts the child through child_process (Boost.Process) and
/// reads its pipes with Boost.Asio.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace cuopt {

struct process_result {
    int exit_code = -1;      // valid when signal == 0 and !timed_out
    int signal = 0;          // the signal that ended it (SIGKILL after a timeout)
    bool timed_out = false;  // killed by us when the wall-clock limit passed
    bool failed_to_start = false;
    std::string stdout_text;
    std::string stderr_text;
    double wall_ms = 0;
    /// "exit 13", "killed by signal 11 (Segmentation fault)", "timed out after 60000 ms", ...
    std::string describe() const;
};

/// What a run is for, beside its command line: which GPU it measures on, and whether it is
/// trusted (the reference kernel, a vendor library) rather than a candidate. A runner that
/// keeps harness processes alive (harness_workers) never lets the two kinds share one.
struct run_purpose {
    int device = 0;
    bool trusted = false;
    /// A fresh process even where workers serve the rest (the winner's evidence: run-to-run
    /// differences such as a race's must come from separate processes, as they would in use).
    bool own_process = false;
};

class process_runner {
  public:
    virtual ~process_runner() = default;
    /// argv[0] is the program. Never throws for the child's failures: they are data.
    virtual process_result run(const std::vector<std::string>& argv,
                               std::chrono::milliseconds timeout) = 0;
    /// The same, knowing what the run is for; a plain runner ignores the context.
    virtual process_result run(const std::vector<std::string>& argv,
                               std::chrono::milliseconds timeout, const run_purpose&) {
        return run(argv, timeout);
    }
};

/// What a child's environment holds: the allow-list of child_environment.hpp for the harness
/// and the tools in front of it (compute-sanitizer, ncu); the optimizer's whole environment for
/// Slurm's commands, whose sbatch hands it to a job that runs cuda-optimizer (model key and all).
enum class child_environment_kind { scrubbed, inherited };

/// The real runner: a child process, its pipes read asynchronously, SIGKILL on timeout.
std::unique_ptr<process_runner> make_child_process_runner(
    child_environment_kind environment = child_environment_kind::scrubbed);

}  // namespace cuopt
