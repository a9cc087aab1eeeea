#pragma once
/// The job spool of `cuda-optimizer serve`: a folder that submit, status, cancel, the daemon and
/// its web dashboard share, and that a Slurm cluster sees on its shared filesystem.
///
///   SPOOL/spool.json        {"format": "cuda-optimizer-spool", "version": 1}
///   SPOOL/.daemon.lock      flock held by the one daemon serving the spool (pid written)
///   SPOOL/.seq              the last job number (flock'ed while taken)
///   SPOOL/submit.sock       the daemon's submission socket (0666; every peer's uid checked)
///   SPOOL/staging/          a job being built (submit, the web intake); never read by the daemon
///   SPOOL/jobs/JOB/         a queued job: it arrives here by one rename, complete
///     job.json              what was submitted (never changes): kind, priority, args, files+sha256
///     files/...             the locked manifest: read-only copies of every file the job names
///     state.json            the job's state (written atomically, by the daemon only once queued)
///     cancel                present once `cancel JOB` asked for it
///     job.log               the optimizer's (or gate's) stdout and stderr, every start appended
///     results/run-001/      the run folder (optimize); results/gate/ (gate jobs)

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cuopt {

enum class job_state { queued, running, done, failed, cancelled };
std::string to_string(job_state s);
std::optional<job_state> job_state_from(const std::string& s);
inline bool is_final(job_state s) {
    return s == job_state::done || s == job_state::failed || s == job_state::cancelled;
}

/// One file of the locked manifest: its path under files/, its sha256 and size.
struct locked_file {
    std::string path;  // relative to JOB/files, '/'-separated
    std::string sha256;
    std::uintmax_t bytes = 0;
};

/// job.json: what was submitted.
struct job_spec {
    std::string id;                 // job-000001
    std::string kind = "optimize";  // optimize | gate
    int priority = 0;               // higher runs first; FIFO (by id) within a priority
    std::string submitted;          // UTC, ISO 8601
    std::string submitted_by;       // cli | web
    int submitter_uid = -1;         // who submitted it: the socket peer's uid (SO_PEERCRED)
    std::string submitter;          // that uid's user name, or "web" (the dashboard)
    std::string config;             // relative to JOB/files: the config optimize reads
    std::string accepted;           // gate: the accepted run folder, relative to JOB/files
    std::vector<std::string> args;  // extra optimize (or gate) flags, checked at submit
    std::vector<locked_file> files;
};

/// state.json: where the job stands.
struct job_status {
    std::string id;
    job_state state = job_state::queued;
    std::string reason;       // failed/cancelled: why, in one line; done: the outcome
    std::string updated;      // UTC of the last write
    std::string started;      // UTC of the first start ("" while queued)
    std::string finished;     // UTC ("" until final)
    int starts = 0;           // how many times it was started (a resume after a restart counts)
    int exit_code = -1;       // the optimizer's (or gate's) exit code, once final
    int device = -1;          // local executor: the GPU index it runs on
    std::string executor;     // local | slurm
    std::string handle;       // local: the pid; slurm: the Slurm job id
    std::string slurm_state;  // slurm: the last state Slurm reported (RUNNING, TIMEOUT, ...)
    // progress, from the run folder (running and final)
    int iteration = -1;
    int max_iterations = 0;  // the run's --max-iterations, from run.json (0: not known yet)
    int attempts = 0;
    double best_speedup = 0;  // best speedup over the initial kernel so far (0: none yet)
    std::string run_dir;      // relative to JOB: results/run-001 (or results/gate)
    std::string verdict;      // done optimize jobs: summary.json's go | no_go | no_winner
};

/// A spool folder. Every call reads the files afresh: several processes share the spool.
class spool {
  public:
    /// Opens (creating when `create`) a spool; throws std::runtime_error naming the folder.
    explicit spool(std::filesystem::path root, bool create = true);
    const std::filesystem::path& root() const { return m_root; }
    std::filesystem::path job_dir(const std::string& id) const;
    std::filesystem::path staging_dir() const { return m_root / "staging"; }

    /// Every job in the spool, in id order. Unreadable jobs are skipped (named on `problems`).
    std::vector<std::string> job_ids() const;
    job_spec read_spec(const std::string& id) const;
    job_status read_status(const std::string& id) const;
    /// Writes state.json atomically (temporary file, fsync, rename).
    void write_status(const job_status& s) const;

    /// A new, empty staging folder for building a job (removed by commit or by the caller).
    std::filesystem::path new_staging() const;
    /// Locks a staged job: hashes every file under STAGE/files, makes them read-only, writes
    /// job.json (id assigned here) and state.json (queued), and renames STAGE to jobs/ID.
    /// Returns the id.
    std::string commit(const std::filesystem::path& stage, job_spec spec) const;

    /// Asks for a job's cancellation (creates JOB/cancel); false when there is no such job or
    /// it is already final.
    bool request_cancel(const std::string& id) const;
    bool cancel_requested(const std::string& id) const;

    /// Checks every locked file's sha256 against job.json; "" or the first difference.
    std::string verify_locked(const std::string& id) const;

  private:
    std::filesystem::path m_root;
};

/// Permissions: the spool is the daemon user's. The root is 0711 (others may only reach
/// submit.sock), every folder inside 0700 and every file 0600 or read-only for the owner, so
/// that no other user can read a job, change it after submit, or flock the lock files.

/// "" when `root` (or, when it does not exist yet, its parent) is owned by this euid; else one
/// line saying whose it is.
std::string spool_owner_problem(const std::filesystem::path& root);
/// Takes group and other permissions off everything in the spool (links are not followed) and
/// sets the root to 0711: what serve does at start to a spool made with an older version.
void secure_spool_modes(const spool& s);
/// Removes everything under staging/ (uploads a crashed daemon or submit left there); returns
/// how many entries were removed.
std::size_t empty_staging(const spool& s);
/// How many of the jobs `uid` submitted are queued or running.
int active_jobs_of(const spool& s, int uid);
/// The bytes the jobs `uid` submitted hold in the spool (queued, running and kept; every file
/// under each JOB folder, links not followed): what serve's --max-spool-mb-per-user limits.
std::uintmax_t spool_bytes_of(const spool& s, int uid);
/// A cancelled job's upload and run given back: JOB/files and JOB/results removed (read-only
/// folders made writable first, links not followed); job.json, state.json and job.log stay.
/// Returns the bytes freed.
std::uintmax_t free_job_bytes(const spool& s, const std::string& id);
/// Every ended job whose state.json was last written more than `keep` ago, removed: renamed
/// into staging/ first (the queue never sees half a job), then deleted. Returns their ids.
std::vector<std::string> remove_ended_jobs(const spool& s, std::chrono::seconds keep);
/// The bytes under `folder`, regular files only, links not followed.
std::uintmax_t folder_bytes(const std::filesystem::path& folder);

/// The jobs' status as JSON ({"jobs": [...]}) and one job's (spec and status together): what
/// `status --json` prints and the dashboard's /api/jobs serves. Each job also carries
/// "problem" (problem_of) and "has_report" (job_has_report).
std::string jobs_json(const spool& s);
/// jobs_json with only the jobs `visible` accepts (status through the socket: one's own).
std::string jobs_json(const spool& s, const std::function<bool(const job_spec&)>& visible);
std::string job_json(const spool& s, const std::string& id);

/// Progress of the run folder st.run_dir inside `job` (iteration, attempts, best speedup from
/// history.json; max_iterations from run.json), filled into `st`. The files are the job's own
/// (untrusted): read with read_job_file; missing, partial or odd files leave fields as they were.
void read_progress(const std::filesystem::path& job, job_status& st);

/// A file below JOB that the job's own process may have written, read only when every
/// component of `relative` is a real folder or, the last, a regular file (no link is
/// followed, no "..") of at most `max_bytes`; nullopt otherwise.
std::optional<std::string> read_job_file(const std::filesystem::path& job,
                                         const std::string& relative, std::size_t max_bytes);
/// The same test without reading: a regular file reached without links.
bool job_file_exists(const std::filesystem::path& job, const std::string& relative);
/// Whether the job's run folder holds report.html (gate.html for a gate): what a report link
/// may point at. False for a job that never started (no run folder).
bool job_has_report(const std::filesystem::path& job, const job_status& st);

/// One line naming what a job works on: its config's description, else its kernel's name (from
/// the signature), else the config's file name; a gate names its accepted run. Submitted text
/// (untrusted): control characters become spaces, at most `max_chars` bytes (cut at a UTF-8
/// boundary, "..." added). "" when nothing can be read.
std::string problem_of(const spool& s, const job_spec& spec, std::size_t max_chars = 100);
/// `text` on one line: control characters and runs of white space become one space, trimmed,
/// cut as problem_of cuts.
std::string one_line(const std::string& text, std::size_t max_chars);

}  // namespace cuopt
