#pragma once
/// The daemon's book of its spool's jobs: which are queued (by priority, FIFO within), which
/// run where, which wait to be resumed or re-attached, and which GPUs are free. It writes every
/// state change (save, finalise) and takes one job's trouble (a folder gone, renamed or
/// unreadable) as that job's alone: failed with the reason where it can be written, else
/// dropped with one line, and the queue goes on.

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/service/spool.hpp"

namespace cuopt {

using daemon_clock = std::chrono::steady_clock;

/// A job whose process this daemon started (or re-attached to) and polls.
struct active_job {
    std::string handle;
    int device = -1;
    bool cancel_sent = false;
    bool resumed = false;
    daemon_clock::time_point since = daemon_clock::now();  // this start (or re-attach)
    bool timed_out = false;                                // cancelled for serve's --job-time-limit
};

class job_queue {
  public:
    job_queue(const spool& s, std::vector<int> devices, bool quiet);

    const spool& jobs() const { return m_spool; }
    /// Reads the jobs that appeared since the last scan; false when that was under 200 ms ago.
    bool scan(bool force);
    /// Every job known, with the state this daemon last saw or wrote.
    std::vector<std::pair<std::string, job_state>> known() const;
    /// Queued jobs in the order they start: highest priority first, FIFO (by id) within.
    std::vector<std::string> queued_in_order() const;
    std::vector<int> free_devices() const;
    bool busy() const;  // anything queued, running or waiting to resume

    /// Starts `id` on `device` (0 under Slurm); false: start nothing more this tick.
    using job_start = std::function<bool(const std::string& id, int device)>;
    /// What fits in `slots`: jobs that were running first (each on its own GPU: a run resumes
    /// where it began), then the queue by priority.
    void start_what_fits(std::size_t slots, bool slurm, const job_start& start);

    std::map<std::string, active_job>& active() { return m_active; }
    std::vector<std::string>& to_resume() { return m_to_resume; }
    std::vector<std::string>& to_reattach() { return m_reattach; }

    /// Writes state.json and remembers its state.
    void save(const job_status& st);
    /// A final state with its one-line reason and exit code (-1 when none), written and logged.
    void finalise(job_status st, job_state state, const std::string& reason, int code);
    /// Runs `f`; anything it throws fails job `id` alone (fail_alone), never the caller's loop.
    void for_job(const std::string& id, const std::function<void()>& f);
    /// Fails the job with `why` (said once on stderr); when its folder or job.json is gone and
    /// nothing can be written, drops it from the queue until serve starts again.
    void fail_alone(const std::string& id, const std::string& why);
    /// "TIME ID WHAT" on stdout unless quiet.
    void log(const std::string& id, const std::string& what) const;

    /// Drops a job from what this daemon knows (its folder was removed).
    void forget(const std::string& id);

  private:
    const spool& m_spool;
    std::vector<int> m_devices;
    bool m_quiet = false;
    struct known_job {
        job_state state = job_state::queued;
        int priority = 0;
    };
    std::map<std::string, known_job> m_jobs;  // every job of the spool, as this daemon knows it
    std::map<std::string, active_job> m_active;
    std::vector<std::string> m_to_resume;
    std::vector<std::string> m_reattach;  // Slurm jobs to find again (Slurm did not answer)
    std::set<std::string> m_dropped;      // jobs nothing could be written for (said once)
    daemon_clock::time_point m_last_scan{};
};

}  // namespace cuopt
