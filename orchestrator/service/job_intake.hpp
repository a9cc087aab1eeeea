#pragma once
/// Building a job: from a config on disk (`cuda-optimizer submit`) or from uploaded files (the
/// dashboard's intake form), into a staging folder of the spool; then `check` on the staged
/// copy; then spool::commit. What the job names and nothing else goes into its files/.

#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/service/spool.hpp"

namespace cuopt {

/// What a submission asks for.
struct submission {
    std::string kind = "optimize";   // optimize | gate
    std::filesystem::path config;    // optimize: the config (gate: optional, for the gate's flags)
    std::filesystem::path accepted;  // gate: the accepted run folder
    std::vector<std::string> args;   // extra flags for optimize (or gate)
    int priority = 0;
    std::string submitted_by = "cli";
    int submitter_uid = -1;  // who asked: the socket peer's uid, or the operator's own
    std::string submitter;   // that uid's user name, or "web"
    /// When set (the dashboard: the uploaded folder), every file the job names must lie inside
    /// it, symlinks resolved: an uploaded config naming "../../etc/x" is refused before any
    /// copy is made.
    std::filesystem::path confine_to;
    /// The cuda-optimizer asked which files the job names (`optimize --list-files`).
    std::filesystem::path optimizer;
    /// serve's --job-time-limit: a --timeout (flag or config) beyond it is refused (0: the
    /// default day, for the operator queueing with no daemon running).
    double job_time_limit_s = 0;
    /// serve's --max-spool-mb-per-user: what the submitter's jobs (queued, running and kept)
    /// and this one together may hold in the spool, in bytes (0: no limit).
    std::uintmax_t max_spool_bytes = 0;
};

/// Thrown for a submission that cannot be queued; what() is one line naming the file and
/// field, and `check_table` the check's table when check rejected it.
struct intake_error : std::runtime_error {
    intake_error(const std::string& what, std::string table = "")
        : std::runtime_error(what), check_table(std::move(table)) {}
    std::string check_table;
};

/// The outcome of `check` on a staged job.
struct check_outcome {
    int exit_code = 0;
    std::string table;  // check's stdout and stderr
    bool rejects()
        const;  // 11, 21, 22, 64: the job's own fault (20/26: the machine's, queued anyway)
};

/// Copies every file `sub` names into a new staging folder's files/ (relative layout kept),
/// refusing paths outside it, flags the daemon owns, and configs naming programs (harness,
/// sanitizer). Returns the staging folder; job spec fields filled in `spec`.
std::filesystem::path stage_submission(const spool& s, const submission& sub, job_spec& spec);

/// Runs `OPTIMIZER check --config STAGE/files/CONFIG --harness HARNESS` (as the daemon would run
/// the job) and returns its exit code and table.
check_outcome check_staged(const std::filesystem::path& optimizer,
                           const std::filesystem::path& harness, const std::filesystem::path& stage,
                           const job_spec& spec);

/// stage_submission + check_staged + spool::commit; throws intake_error (and removes the
/// staging folder) when anything refuses. Returns the job id.
std::string submit_job(const spool& s, const submission& sub,
                       const std::filesystem::path& optimizer, const std::filesystem::path& harness,
                       std::string* table = nullptr);

/// "" when a job's extra flags are all ones a job may give; else why not (the first flag the
/// daemon sets itself, or that names a file outside the job; any word holding a NUL). Checked
/// at submit and at every start.
std::string daemon_flag_problem(const std::vector<std::string>& args);

/// "" when the job's config (a JSON file) sets no option a job may not set (snake or kebab
/// case alike); else the line naming the file and field. Checked at submit and at every start.
std::string config_key_problem(const std::filesystem::path& config);

/// Every file a job's config (with its extra flags) names: the config, kernels, manifest,
/// holdout, file inputs, expected outputs and --proposer files' candidates; absolute and
/// lexically normal. Asked of the optimizer (`OPTIMIZER check --list-files`), run as the caller.
/// Throws intake_error with the optimizer's one line when the config cannot be read.
std::vector<std::filesystem::path> files_named_by(const std::filesystem::path& optimizer,
                                                  const std::filesystem::path& config,
                                                  const std::vector<std::string>& args);

/// The deepest folder holding every one of `files` (absolute, lexically normal; not empty):
/// what a job's files are named relative to, in its files/ and in a socket submission.
std::filesystem::path common_folder(const std::vector<std::filesystem::path>& files);

/// A file name an upload may use: relative, '/'-separated, no empty, "." or ".." component, no
/// backslash or control character, at most 200 bytes. "" when fine, else why not.
std::string upload_name_problem(const std::string& name);

}  // namespace cuopt
