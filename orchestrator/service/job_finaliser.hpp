#pragma once
/// From a job's end to its final state: the process's exit (code, signal, Slurm state), the
/// cancel request, serve's time limit and the run folder's records become done, failed or
/// cancelled with a one-line reason, or a resume (stopped by serve's own signal, or killed
/// before its first attempt was recorded). Also a run or gate that ended while no daemon
/// watched: finalised from its folder, never run again.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/pid_lock.hpp"
#include "orchestrator/service/job_executor.hpp"
#include "orchestrator/service/job_queue.hpp"

namespace cuopt {

/// The run folders a job's optimizer made (JOB/results/run-NNN, real folders only), oldest
/// first; the newest, or "" if none yet.
std::vector<std::filesystem::path> run_folders_of(const std::filesystem::path& job);
std::filesystem::path run_folder_of(const std::filesystem::path& job);

/// A process of an earlier start of a job that still holds the lock of a folder it wrote
/// (RUN/.lock, the gate's .lock): the pid written in it, the lock file, and whether that pid
/// still runs (false: it has ended, and a harness it started has not yet).
struct earlier_start {
    std::string holder;
    std::filesystem::path lock;
    bool running = false;
};
/// Takes every `folders`' lock (FOLDER/.lock) without waiting, into `held`, so that the folders
/// can be removed while no process of an earlier start writes them; nullopt when all were
/// taken, else the first that is held. `local_pids`: the pids in the locks are this machine's
/// (false under Slurm, where a job ran on another node: `running` is then always false, and
/// the caller waits a bounded time). Throws std::runtime_error when a lock cannot be opened.
std::optional<earlier_start> take_earlier_locks(const std::vector<std::filesystem::path>& folders,
                                                bool local_pids, std::vector<pid_lock>& held);
/// "pid N still holds results/run-001/.lock": `e` as a job's reason names it, from `job`.
std::string holds_text(const earlier_start& e, const std::filesystem::path& job);

/// What run.json says of a run that ended; nullopt while under way or interrupted (resumable).
struct run_end {
    std::string stop_reason, error;
};
std::optional<run_end> finished_run(const std::filesystem::path& run);

/// A finished optimize run's outcome as summary.json states it: `verdict` is go, no_go or
/// no_winner, `line` the job's one-line reason ("go: winner 1.48x (LABEL)", "no_go: REASONS",
/// "no_winner"). nullopt for a summary without a verdict (a run of an older version) or none.
struct run_verdict {
    std::string verdict, line;
};
std::optional<run_verdict> verdict_of(const std::filesystem::path& job, const std::string& run_dir);

/// The reason of a job cancelled while no process of it ran: "cancelled while queued; it never
/// started", or, for one that had started before serve stopped, "cancelled while waiting to
/// resume".
std::string cancelled_unstarted_reason(const job_status& st);

class job_finaliser {
  public:
    /// `write_report(run)` makes RUN/report.html where a run ended before writing it.
    /// `local_pids`: jobs run on this machine (not under Slurm): see take_earlier_locks.
    job_finaliser(job_queue& queue, double job_time_limit_s,
                  std::function<void(const std::filesystem::path&)> write_report,
                  bool local_pids = true);
    bool local_pids() const { return m_local_pids; }

    /// The process of active job `a` ended with `ex`; `stopping`: serve is stopping, so a run
    /// it interrupted stays running for the next daemon to resume.
    void ended(const std::string& id, const active_job& a, const job_exit& ex, bool stopping);
    /// A run that had finished (run.json says so): done or failed from its record.
    void from_run(job_status st, const std::filesystem::path& run, const run_end& end);
    /// A gate that had finished: its verdict from gate.json.
    void from_gate(job_status st, const std::filesystem::path& gate_json);

  private:
    void classify(job_status& st, const job_exit& ex, bool resumed);
    void start_over(job_status& st, const std::string& refusal, int code);
    /// An optimize run that ended with a result (exit 0, no_winner or no_go): done, with
    /// summary.json's verdict where it has one.
    void finalise_result(job_status& st, int code);

    job_queue& m_queue;
    double m_job_time_limit_s;
    std::function<void(const std::filesystem::path&)> m_write_report;
    bool m_local_pids = true;
};

}  // namespace cuopt
