#pragma once
/// Where a job's process runs: on this machine (one per GPU) or as a Slurm job. The daemon asks
/// an executor to start a command for a job, polls it, cancels it, and after its own restart
/// asks whether a handle it recorded is still running.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cuopt {

struct job_launch {
    std::string job_id;
    std::filesystem::path job_dir;  // JOB: the command runs with this as working folder
    std::vector<std::string> argv;  // argv[0] is the program (an absolute path)
    std::filesystem::path log;      // stdout and stderr appended here
    int device = -1;                // local: the GPU index the job was given
};

/// A finished job's process.
struct job_exit {
    int exit_code = -1;       // the command's exit code; -1 when it never ran or was killed
    int signal = 0;           // the signal that ended it (local), 0 if none
    std::string slurm_state;  // slurm: COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...
    std::string reason;       // one line for the job's record when not a plain exit
};

class job_executor {
  public:
    virtual ~job_executor() = default;
    virtual std::string name() const = 0;  // local | slurm: recorded and logged, never branched on
    /// Whether jobs run here, as this daemon's children on this host's GPUs (one per slot,
    /// its index passed to the job): they die with the daemon, their pids mean something here
    /// and the daemon enforces their time limit. False for a scheduler's jobs (Slurm), which
    /// outlive the daemon, get their GPU from it and are re-attached by handle.
    virtual bool runs_jobs_here() const = 0;
    /// The shortest wait between two polls of a job's state (a scheduler's queue is asked
    /// at most once a second).
    virtual double min_poll_s() const = 0;
    /// How many jobs may run at once.
    virtual std::size_t slots() const = 0;
    /// Starts the command; returns the handle to record (pid, Slurm job id). Throws
    /// std::runtime_error with one line when it cannot.
    virtual std::string start(const job_launch& launch) = 0;
    /// nullopt while running (or pending in Slurm); the exit once it ended.
    virtual std::optional<job_exit> poll(const std::string& handle) = 0;
    /// Ends the job (SIGTERM to its group then SIGKILL after a grace; scancel).
    virtual void cancel(const std::string& handle) = 0;
    /// After a daemon restart: true when the recorded handle still runs and can be polled
    /// (slurm: re-attached by id); false when it is gone (a local child dies with the daemon).
    virtual bool attach(const std::string& handle, const job_launch& launch) = 0;
    /// Slurm only: a job the daemon may have submitted but not recorded (killed between sbatch
    /// and writing state.json), found by its job name; "" if none.
    virtual std::string find_by_name(const job_launch&) { return ""; }
};

/// One slot per GPU index in `devices`; children lead their own process group and die with
/// the daemon (PR_SET_PDEATHSIG).
std::unique_ptr<job_executor> make_local_executor(const std::vector<int>& devices);

struct slurm_settings {
    std::string partition, time_limit, account;  // sbatch --partition/--time/--account ("" none)
    std::string gres = "gpu:1";                  // sbatch --gres ("" none)
    std::size_t max_jobs = 8;                    // jobs in Slurm at once
    std::string job_name_prefix = "cuopt";       // job name: PREFIX-JOBID
    std::vector<std::string> extra;              // more sbatch arguments, verbatim
};
std::unique_ptr<job_executor> make_slurm_executor(const slurm_settings& settings);

}  // namespace cuopt
