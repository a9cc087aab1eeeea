#include "orchestrator/service/dashboard_pages.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

#include "common/html_text.hpp"

namespace cuopt {

namespace {

std::string esc(const std::string& s) {
    return html_escape(s);
}

// A path for a URL: unreserved characters and '/' kept, everything else %XX.
std::string url_path(const std::string& s) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string page(const std::string& kind, const std::string& title, const std::string& body,
                 const std::string& data = "") {
    return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
           esc(title) +
           " - cuda-optimizer</title>\n<link rel=\"icon\" href=\"data:,\">\n<link "
           "rel=\"stylesheet\" href=\"/static/dashboard.css\">\n"
           "<script src=\"/static/dashboard.js\" defer></script>\n</head>\n<body data-page=\"" +
           kind + "\"" + data +
           ">\n<header><span class=\"brand\">cuda-optimizer</span><nav><a href=\"/\">Queue</a>"
           "<a href=\"/submit\">Submit a job</a><button type=\"button\" id=\"sign-out\" "
           "class=\"link\">Sign out</button></nav></header>\n<main>\n" +
           body + "</main>\n</body>\n</html>\n";
}

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
    return out;
}

// "64 MiB", "1.5 MiB", "256 KiB", "900 bytes".
std::string size_text(std::size_t bytes) {
    char buf[32];
    if (bytes >= (1u << 20))
        std::snprintf(buf, sizeof buf, "%.4g MiB", static_cast<double>(bytes) / (1u << 20));
    else if (bytes >= 1024)
        std::snprintf(buf, sizeof buf, "%.4g KiB", static_cast<double>(bytes) / 1024);
    else
        std::snprintf(buf, sizeof buf, "%zu bytes", bytes);
    return buf;
}

// check's table, escaped, its FAIL lines (and their "fix:" lines) marked.
std::string check_table_html(const std::string& table) {
    std::string out;
    bool failing = false;
    for (std::size_t start = 0; start < table.size();) {
        const std::size_t end = std::min(table.find('\n', start), table.size());
        const std::string line = table.substr(start, end - start);
        start = end + 1;
        const std::size_t word = line.find_first_not_of(' ');
        const bool fail = word != std::string::npos && line.compare(word, 5, "FAIL ") == 0;
        const bool fix = word != std::string::npos && line.compare(word, 4, "fix:") == 0;
        failing = fail || (failing && fix);
        out += failing ? "<span class=\"fail\">" + esc(line) + "</span>\n" : esc(line) + "\n";
    }
    return out;
}

std::string state_badge(job_state s) {
    const std::string name = to_string(s);
    return "<span class=\"state state-" + name + "\">" + name + "</span>";
}

std::string job_row(const job_view& j) {
    const std::string id = esc(j.spec.id);
    std::ostringstream o;
    o << "<tr data-id=\"" << id << "\"><td><a href=\"/jobs/" << id << "\">" << id << "</a></td><td>"
      << esc(j.spec.kind) << "</td><td class=\"problem\">" << esc(j.problem) << "</td><td>"
      << state_badge(j.status.state) << "</td><td class=\"num\">" << j.spec.priority << "</td><td>"
      << esc(progress_text(j.status)) << "</td><td class=\"num\">" << esc(speedup_text(j.status))
      << "</td><td>" << esc(j.spec.submitted) << "</td><td>"
      << (j.has_report ? "<a href=\"/jobs/" + id + "/report\">report</a>" : "") << "</td></tr>\n";
    return o.str();
}

std::string job_facts(const job_view& j) {
    const job_status& s = j.status;
    std::ostringstream o;
    o << "<dl class=\"facts\">"
      << "<dt>Problem</dt><dd id=\"job-problem\">" << esc(j.problem) << "</dd>"
      << "<dt>State</dt><dd id=\"job-state\">" << state_badge(s.state) << "</dd>"
      << "<dt>Progress</dt><dd id=\"job-progress\">" << esc(progress_text(s)) << "</dd>"
      << "<dt>Best so far</dt><dd id=\"job-best\">" << esc(speedup_text(s)) << "</dd>"
      << "<dt>Kind</dt><dd>" << esc(j.spec.kind) << "</dd>"
      << "<dt>Priority</dt><dd>" << j.spec.priority << "</dd>"
      << "<dt>Config</dt><dd>" << esc(j.spec.config) << "</dd>"
      << "<dt>Flags</dt><dd>";
    for (const std::string& a : j.spec.args) o << "<code>" << esc(a) << "</code> ";
    o << "</dd><dt>Submitted</dt><dd>" << esc(j.spec.submitted) << " by "
      << esc(j.spec.submitted_by) << "</dd><dt>Started</dt><dd id=\"job-started\">"
      << esc(s.started.empty() ? "-" : s.started)
      << "</dd><dt>Finished</dt><dd id=\"job-finished\">"
      << esc(s.finished.empty() ? "-" : s.finished) << "</dd></dl>\n";
    o << "<p id=\"job-reason\" class=\"reason reason-" << to_string(s.state) << "\""
      << (s.reason.empty() ? " hidden" : "") << ">" << esc(s.reason) << "</p>\n";
    return o.str();
}

std::string job_links(const job_view& j) {
    const std::string base = "/jobs/" + esc(j.spec.id);
    std::ostringstream o;
    o << "<p id=\"job-report\"" << (j.has_report ? "" : " hidden") << "><a class=\"button\" href=\""
      << base << "/report\">Open the report</a></p>\n";
    o << "<form id=\"cancel-form\" method=\"post\" action=\"" << base << "/cancel\""
      << (is_final(j.status.state) ? " hidden" : "")
      << "><button type=\"submit\" class=\"danger\">Cancel this job</button></form>\n";
    if (!j.run_files.empty()) {
        o << "<h2>Run folder</h2><ul class=\"files\">";
        for (const std::string& f : j.run_files)
            o << "<li><a href=\"" << base << "/files/" << esc(url_path(f)) << "\">" << esc(f)
              << "</a></li>";
        o << "</ul>\n";
    }
    return o.str();
}

}  // namespace

std::string progress_text(const job_status& s) {
    if (s.iteration < 0 && s.attempts == 0) return "-";
    return "iteration " + std::to_string(std::max(s.iteration, 0)) +
           (s.max_iterations > 0 ? " of " + std::to_string(s.max_iterations) : "") + ", " +
           std::to_string(s.attempts) + (s.attempts == 1 ? " attempt" : " attempts");
}

std::string speedup_text(const job_status& s) {
    if (!(s.best_speedup > 0)) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", s.best_speedup);
    return buf;
}

std::string queue_page(const std::vector<job_view>& jobs) {
    std::ostringstream o;
    o << "<h1>Queue</h1>\n<p class=\"muted\" id=\"queue-count\">" << jobs.size()
      << (jobs.size() == 1 ? " job" : " jobs") << "</p>\n<table class=\"jobs\"><thead><tr>"
      << "<th>Job</th><th>Kind</th><th>Problem</th><th>State</th><th>Priority</th>"
      << "<th>Progress</th>"
      << "<th>Best</th><th>Submitted</th><th></th></tr></thead>\n<tbody id=\"jobs\">\n";
    for (const job_view& j : jobs) o << job_row(j);
    o << "</tbody></table>\n";
    if (jobs.empty())
        o << "<p id=\"no-jobs\">No jobs yet: <a href=\"/submit\">submit one</a>.</p>\n";
    return page("queue", "Queue", o.str());
}

std::string job_page(const job_view& j) {
    std::ostringstream o;
    o << "<h1>" << esc(j.spec.id) << "</h1>\n"
      << job_facts(j) << job_links(j)
      << "<h2>Log <span class=\"muted\">(the end of job.log)</span></h2>\n<pre id=\"job-log\" "
         "class=\"log\">"
      << esc(j.log_tail) << "</pre>\n";
    return page("job", j.spec.id, o.str(), " data-job=\"" + esc(j.spec.id) + "\"");
}

std::string submit_page(const dashboard_settings& settings) {
    std::ostringstream o;
    o << "<h1>Submit a job</h1>\n<p>Upload the job's files: the config and everything it names "
         "(kernels, input_cases.json, holdout, input and expected files). <code>check</code> runs "
         "on them before anything is queued.</p>\n"
      << "<form id=\"intake\" method=\"post\" action=\"/submit\" "
         "enctype=\"multipart/form-data\">\n"
      << "<label>Files <input type=\"file\" id=\"files\" name=\"files\" multiple></label>\n"
      << "<label>or a whole folder <input type=\"file\" id=\"folder\" name=\"folder\" "
         "webkitdirectory multiple></label>\n"
      << "<label>Config file (relative name) <input type=\"text\" id=\"config\" name=\"config\" "
         "value=\"config.json\" required></label>\n"
      << "<label>Priority (higher runs first) <input type=\"number\" id=\"priority\" "
         "name=\"priority\" value=\"0\" min=\"-1000\" max=\""
      << settings.max_priority << "\"></label>\n"
      << "<label>Extra optimize flags: one a line, its value after a space <textarea id=\"args\" "
         "name=\"args\" rows=\"3\" "
         "placeholder=\"--max-iterations 3\"></textarea></label>\n"
      << "<button type=\"submit\" id=\"upload\">Upload and check</button>\n</form>\n"
      << "<p class=\"muted\">Limits: " << size_text(settings.max_upload_bytes) << " per upload, "
      << size_text(settings.max_file_bytes) << " per file. Names must be relative, without "
      << "<code>..</code> or backslashes.</p>\n";
    return page("submit", "Submit a job", o.str());
}

std::string check_page(const intake_result& r) {
    std::ostringstream o;
    const bool queueable = !r.stage.empty();
    o << "<h1>" << (queueable ? "Checked: ready to queue" : "Rejected") << "</h1>\n";
    if (!r.error.empty())
        o << "<p class=\"reason\" id=\"intake-error\">" << esc(r.error) << "</p>\n";
    if (r.checked)
        o << "<p id=\"check-verdict\" class=\"" << (queueable ? "ok" : "bad") << "\">check exited "
          << r.outcome.exit_code << (queueable ? "" : ": rejected; nothing was queued") << "</p>\n";
    if (!r.outcome.table.empty())
        o << "<pre id=\"check-table\" class=\"check\">" << check_table_html(r.outcome.table)
          << "</pre>\n";
    if (!r.files.empty()) {
        o << "<h2>Files</h2><ul class=\"files\">";
        for (const std::string& f : r.files) o << "<li>" << esc(f) << "</li>";
        o << "</ul>\n";
    }
    if (queueable)
        o << "<p>Config <code>" << esc(r.spec.config) << "</code>, priority " << r.spec.priority
          << ", flags <code>"
          << esc(r.spec.args.empty() ? std::string("(none)") : joined(r.spec.args))
          << "</code>.</p>\n<form id=\"queue-form\" method=\"post\" action=\"/submit/"
          << esc(r.stage)
          << "/queue\"><button type=\"submit\" id=\"queue\">Queue this job</button></form>\n"
          << "<form id=\"discard-form\" method=\"post\" action=\"/submit/" << esc(r.stage)
          << "/discard\"><button type=\"submit\" class=\"secondary\">Discard</button></form>\n";
    else
        o << "<p><a href=\"/submit\">Back to the form</a></p>\n";
    return page("check", queueable ? "Checked" : "Rejected", o.str());
}

std::string message_page(const std::string& title, const std::string& text) {
    return page("message", title, "<h1>" + esc(title) + "</h1>\n<p>" + esc(text) + "</p>\n");
}

std::string shell_page() {
    return page("shell", "Dashboard",
                "<p id=\"shell-status\" class=\"muted\">Loading...</p>\n<noscript><p>The "
                "dashboard needs JavaScript: it keeps its session in this page, never in a "
                "cookie.</p></noscript>\n");
}

std::string unauthorized_page() {
    return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>401 - "
           "cuda-optimizer</title></head>\n<body><h1>401: the dashboard needs its token</h1>\n"
           "<p>The token is in the file <code>cuda-optimizer serve</code> named when it started "
           "(<code>--token-file</code>, or <code>SPOOL/dashboard.token</code>). A browser signs "
           "in on the dashboard's own page: its session lasts until it is idle too long, grows "
           "too old, or signs out. Scripts send the token as <code>Authorization: Bearer "
           "TOKEN</code>.</p></body></html>\n";
}

}  // namespace cuopt
