#pragma once
/// The dashboard's HTML, rendered on the server from the spool: the queue, a job page, the
/// intake form, the check page and short message pages. Every string from the spool or a
/// request goes through html_escape; the pages load only /static/dashboard.{css,js} (the CSP
/// allows nothing else), whose script refreshes them from the JSON API.

#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/service/daemon.hpp"
#include "orchestrator/service/dashboard_intake.hpp"
#include "orchestrator/service/spool.hpp"

namespace cuopt {

/// One job as the pages show it.
struct job_view {
    job_spec spec;
    job_status status;
    std::string problem;                 // problem_of: submitted text, escaped where shown
    bool has_report = false;             // the run folder holds report.html (or gate.html)
    std::vector<std::string> run_files;  // the run folder's top-level files
    std::string log_tail;                // the end of JOB/job.log
};

std::string queue_page(const std::vector<job_view>& jobs);
std::string job_page(const job_view& job);
std::string submit_page(const dashboard_settings& settings);
/// After an upload: check's table and either "rejected" or the Queue button.
std::string check_page(const intake_result& r);
/// A page with a title and one paragraph (errors, "not found", ...).
std::string message_page(const std::string& title, const std::string& text);
/// What a browser gets for a page's address without a credential: no data, only the header and
/// the script, which signs in (or uses the session it keeps) and fetches the page itself.
std::string shell_page();
/// The 401 page: where the token comes from.
std::string unauthorized_page();

/// "iteration 3 of 7, 34 attempts" or "-"; "2.31x" or "-".
std::string progress_text(const job_status& s);
std::string speedup_text(const job_status& s);

/// The stylesheet and script every page loads (assets/dashboard.css and dashboard.js,
/// embedded by dashboard_assets.cpp).
std::string_view dashboard_css();
std::string_view dashboard_js();

}  // namespace cuopt
