#pragma once
/// The dashboard's view of the spool's jobs: a job's spec, status, progress and log tail for
/// its pages, its report and run folder files (never anything outside the run folder: every
/// path is canonicalised, symlinks included, and held against the folder), and cancellation.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/service/dashboard_pages.hpp"
#include "orchestrator/service/dashboard_routes.hpp"
#include "orchestrator/service/spool.hpp"

namespace cuopt {

/// JOB/job.json exists.
bool job_exists(const spool& s, const std::string& id);

/// A job's spec and status (progress read from its run folder while it runs); with `details`,
/// its log tail and run folder listing too. Throws std::runtime_error for an unreadable job.
job_view read_job_view(const spool& s, const std::string& id, bool details);
/// Every readable job, in id order.
std::vector<job_view> read_job_views(const spool& s);

/// The job's run folder (status.run_dir inside JOB), when it exists.
std::optional<std::filesystem::path> run_folder(const spool& s, const std::string& id,
                                                const job_status& status);

/// The last `max_bytes` of a log, from a line start ("" when there is no log).
std::string log_tail(const std::filesystem::path& log, std::size_t max_bytes = 16 * 1024);

/// The run folder's report.html (gate.html for gate jobs), or a 404 page.
dashboard_reply report_reply(const spool& s, const std::string& id);
/// A file below the run folder; 403 for a path leaving it, 404 for none.
dashboard_reply run_file_reply(const spool& s, const std::string& id, const std::string& relative);
/// Asks for the job's cancellation and goes back to its page (409 when already final).
dashboard_reply cancel_reply(const spool& s, const std::string& id);

}  // namespace cuopt
