#pragma once
/// How long a daemon job may run: serve's --job-time-limit, the check that a job's own
/// --timeout fits inside it, and the sbatch --time it becomes. Asked at submit and again at
/// every start, so a job can never outlast what the operator allowed.

#include <string>
#include <vector>

namespace cuopt {

constexpr double k_default_job_time_limit_s = 86400;     // a day
constexpr double k_max_job_time_limit_s = 30 * 86400.0;  // thirty days

/// "" when `seconds` is a valid --job-time-limit (finite, positive, at most thirty days); else
/// why not, in one line ("expected ...": the caller names the flag).
std::string job_time_limit_problem(double seconds);

/// "" when a job's extra flags may run under this limit: none is one the daemon sets itself
/// (daemon_flag_problem) and a --timeout X (or --timeout=X) is a finite positive number of
/// seconds no larger than `job_time_limit_s`; else why not, in one line.
std::string job_args_problem(const std::vector<std::string>& args, double job_time_limit_s);

/// The same for a job's config (its JSON text): a top-level "timeout" beyond the limit is
/// refused ("config.json: field timeout: ..."); text that does not parse is optimize's to refuse.
std::string config_timeout_problem(const std::string& config_name, const std::string& json_text,
                                   double job_time_limit_s);

/// The limit as sbatch --time reads it, D-HH:MM:SS (rounded up to the second).
std::string slurm_time_of(double seconds);

}  // namespace cuopt
