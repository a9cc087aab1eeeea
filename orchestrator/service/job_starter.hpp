#pragma once
/// Starting a job: the checks made again at every start (cancelled, ended while no daemon
/// watched, the locked manifest, the job's flags against the deny-list and serve's time limit,
/// how often it was started, whether a run folder is the one this daemon started), then the
/// command line (`optimize --config ...`, `optimize --resume RUN` or `gate ...`), recorded in
/// launch.json before the child starts. A job's own fault fails that job; the machine's (the
/// optimizer cannot be started, sbatch refused) keeps its place and pauses starting for 30 s.

#include <map>
#include <string>
#include <vector>

#include "orchestrator/service/daemon.hpp"
#include "orchestrator/service/job_executor.hpp"
#include "orchestrator/service/job_finaliser.hpp"
#include "orchestrator/service/job_queue.hpp"

namespace cuopt {

/// A job's launch without its command line: what re-attaching and find_by_name need.
job_launch launch_of(const spool& s, const std::string& id, const job_status& st);

class job_starter {
  public:
    job_starter(const daemon_settings& settings, job_queue& queue, job_executor& executor,
                job_finaliser& finaliser);

    /// Starts (or resumes) job `id` on `device`; anything wrong with the job fails it alone.
    /// False when starting failed for the machine's reasons: nothing more starts for 30 s.
    bool start(const std::string& id, int device);
    /// False during the 30 s after a start failed for the machine's reasons.
    bool may_start() const;

  private:
    void start_job(job_status st, int device);
    bool clear_gate_folder(job_status& st);
    std::string refusal(const job_status& st, const job_spec& spec) const;
    std::vector<std::string> command_of(const job_spec& spec, const job_status& st, bool& resumed);
    void start_failed(job_status st, job_state before, const std::string& why);
    /// The job (as it was before this start) waits: the machine's problem (Slurm does not
    /// answer); nothing starts for 30 s, and the fifth time fails it.
    void not_started(job_status st, const std::string& why);

    const daemon_settings& m_settings;
    job_queue& m_queue;
    job_executor& m_executor;
    job_finaliser& m_finaliser;
    std::map<std::string, int> m_start_failures;
    std::map<std::string, daemon_clock::time_point> m_gate_waits;  // since when each gate waits
    daemon_clock::time_point m_retry_after{};
};

}  // namespace cuopt
