#include "orchestrator/service/dashboard_jobs.hpp"

#include <algorithm>
#include <fstream>
#include <map>

#include "common/file_io.hpp"
#include "common/message_text.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_max_listed_files = 60;

std::vector<std::string> top_level_files(const fs::path& folder) {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec) && it->path().filename().string()[0] != '.')
            out.push_back(it->path().filename().string());
    std::sort(out.begin(), out.end());
    if (out.size() > k_max_listed_files) out.resize(k_max_listed_files);
    return out;
}

// report.html (gate.html for a gate job), a file inside the run folder even through links.
fs::path report_in(const fs::path& run) {
    for (const char* name : {"report.html", "gate.html"}) {
        try {
            const fs::path file = resolve_inside(run, name);
            if (fs::is_regular_file(file)) return file;
        } catch (const std::exception&) {  // a link leading out of the run folder: no report
        }
    }
    return {};
}

// Content types by extension; text the browser shows, anything else as a download.
std::pair<std::string, reply_kind> content_type_of(const fs::path& file) {
    static const std::map<std::string, std::pair<std::string, reply_kind>> types = {
        {".html", {"text/html; charset=utf-8", reply_kind::report}},
        {".json", {"application/json", reply_kind::file}},
        {".svg", {"image/svg+xml", reply_kind::file}},
        {".png", {"image/png", reply_kind::file}},
        {".csv", {"text/csv; charset=utf-8", reply_kind::file}}};
    static const char* const text[] = {".cu", ".cuh", ".txt", ".log", ".md", ".ptx", ".c", ".h"};
    const std::string ext = file.extension().string();
    if (auto it = types.find(ext); it != types.end()) return it->second;
    if (std::find(std::begin(text), std::end(text), ext) != std::end(text))
        return {"text/plain; charset=utf-8", reply_kind::file};
    return {"application/octet-stream", reply_kind::file};
}

dashboard_reply file_reply(const fs::path& file) {
    dashboard_reply r;
    r.file = file;
    std::tie(r.content_type, r.kind) = content_type_of(file);
    return r;
}

}  // namespace

bool job_exists(const spool& s, const std::string& id) {
    std::error_code ec;
    return fs::is_regular_file(s.job_dir(id) / "job.json", ec);
}

std::optional<fs::path> run_folder(const spool& s, const std::string& id, const job_status& st) {
    if (st.run_dir.empty()) return std::nullopt;
    try {
        const fs::path run = resolve_inside(s.job_dir(id), st.run_dir);
        if (fs::is_directory(run)) return run;
    } catch (const std::exception&) {  // a run_dir leaving the job's folder is no run folder
    }
    return std::nullopt;
}

job_view read_job_view(const spool& s, const std::string& id, bool details) {
    job_view v;
    v.spec = s.read_spec(id);
    v.status = s.read_status(id);
    v.problem = problem_of(s, v.spec);
    const auto run = run_folder(s, id, v.status);
    if (!run) return v;
    if (v.status.state == job_state::running) read_progress(s.job_dir(id), v.status);
    v.has_report = job_has_report(s.job_dir(id), v.status) && !report_in(*run).empty();
    if (!details) return v;
    v.run_files = top_level_files(*run);
    v.log_tail = log_tail(s.job_dir(id) / "job.log");
    return v;
}

std::vector<job_view> read_job_views(const spool& s) {
    std::vector<job_view> out;
    for (const std::string& id : s.job_ids()) {
        try {
            out.push_back(read_job_view(s, id, false));
        } catch (const std::exception&) {  // a job being written or broken: not listed
        }
    }
    return out;
}

std::string log_tail(const fs::path& log, std::size_t max_bytes) {
    std::ifstream in(log, std::ios::binary);
    if (!in) return "";
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    const std::streamoff start =
        std::max<std::streamoff>(0, size - static_cast<std::streamoff>(max_bytes));
    in.seekg(start);
    std::string text(static_cast<std::size_t>(size - start), '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (start > 0) {  // begin at a whole line
        const std::size_t nl = text.find('\n');
        text.erase(0, nl == std::string::npos ? 0 : nl + 1);
    }
    return text;
}

dashboard_reply report_reply(const spool& s, const std::string& id) {
    const job_status st = s.read_status(id);
    const auto run = run_folder(s, id, st);
    const fs::path report = run ? report_in(*run) : fs::path();
    if (report.empty())
        return message_reply(404, "No report yet",
                             "Job " + id + " has no report (" + to_string(st.state) +
                                 "); it is written when the run ends.");
    dashboard_reply r = file_reply(report);
    r.kind = reply_kind::report;
    return r;
}

dashboard_reply run_file_reply(const spool& s, const std::string& id, const std::string& relative) {
    const auto run = run_folder(s, id, s.read_status(id));
    if (!run || relative.empty())
        return message_reply(404, "Not found", "Job " + id + " has no such file.");
    fs::path file;
    try {
        file = resolve_inside(*run, relative);
    } catch (const std::exception&) {
        return message_reply(403, "Refused", "Only files inside the job's run folder are served.");
    }
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
        return message_reply(404, "Not found",
                             "Job " + id + " has no file " + quote_value(relative) + ".");
    return file_reply(file);
}

dashboard_reply cancel_reply(const spool& s, const std::string& id) {
    if (!valid_folder_name(id) || !job_exists(s, id))
        return message_reply(404, "No such job",
                             "There is no job " + quote_value(id) + " in this spool.");
    if (!s.request_cancel(id))
        return message_reply(409, "Not cancelled", "Job " + id + " has already ended.");
    return redirect_reply("/jobs/" + id);
}

}  // namespace cuopt
