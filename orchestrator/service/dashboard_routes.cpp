#include "orchestrator/service/dashboard_routes.hpp"

#include "common/json_document.hpp"
#include "common/message_text.hpp"
#include "orchestrator/service/dashboard_auth.hpp"
#include "orchestrator/service/dashboard_jobs.hpp"
#include "orchestrator/service/dashboard_pages.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

constexpr auto k_staged_lifetime = std::chrono::hours(1);
// Checked uploads waiting for Queue or Discard at once (each up to --max-upload-mb on disk).
constexpr std::size_t k_max_staged = 16;

std::vector<std::string> split_path(const std::string& path) {
    std::vector<std::string> out;
    for (std::size_t start = 1; start <= path.size();) {
        const std::size_t end = std::min(path.find('/', start), path.size());
        out.push_back(path.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

bool has_control_character(const std::string& s) {
    for (unsigned char c : s)
        if (c < 0x20 || c == 0x7f) return true;
    return false;
}

dashboard_reply text_reply(std::string body, std::string type, reply_kind kind) {
    dashboard_reply r;
    r.body = std::move(body);
    r.content_type = std::move(type);
    r.kind = kind;
    return r;
}

dashboard_reply page_reply(int status, std::string html) {
    dashboard_reply r;
    r.status = status;
    r.body = std::move(html);
    return r;
}

// Staged jobs nobody queued within the hour are dropped with their folders.
void drop_stale_staged(dashboard_context& c) {
    const auto now = std::chrono::steady_clock::now();
    for (auto it = c.staged.begin(); it != c.staged.end();) {
        if (now - it->second.when < k_staged_lifetime) {
            ++it;
            continue;
        }
        std::error_code ec;
        fs::remove_all(c.jobs.staging_dir() / it->first, ec);
        it = c.staged.erase(it);
    }
}

routed intake_route(const std::shared_ptr<dashboard_context>& c, const std::string& content_type,
                    std::string body) {
    routed r;
    r.later = [c, content_type, body = std::move(body)]() -> std::function<dashboard_reply()> {
        auto result = std::make_shared<intake_result>(
            run_intake(c->jobs, content_type, body, c->settings, c->optimizer, c->harness));
        return [c, result]() {
            drop_stale_staged(*c);
            if (!result->stage.empty())
                c->staged[result->stage] = {result->spec, std::chrono::steady_clock::now()};
            const int status = result->http_status != 200 ? result->http_status
                               : result->stage.empty()    ? 422
                                                          : 200;
            return page_reply(status, check_page(*result));
        };
    };
    return r;
}

routed staged_route(const std::shared_ptr<dashboard_context>& c, const std::string& stage,
                    const std::string& action) {
    routed r;
    const auto it = valid_folder_name(stage) ? c->staged.find(stage) : c->staged.end();
    if (it == c->staged.end()) {
        r.now = message_reply(404, "No such staged job",
                              "Nothing waits under '" + stage +
                                  "': it was queued or discarded already, or is over an hour old.");
        return r;
    }
    const job_spec spec = it->second.spec;
    c->staged.erase(it);  // taken now: a second click cannot queue it twice
    const fs::path folder = c->jobs.staging_dir() / stage;
    // Counted again: checked uploads may wait in numbers while others' jobs were queued.
    const std::string over = action == "queue" ? web_jobs_problem(c->jobs, c->settings) : "";
    if (action == "discard" || !over.empty()) {
        std::error_code ec;
        fs::remove_all(folder, ec);
        r.now = over.empty() ? redirect_reply("/submit")
                             : message_reply(429, "Not queued", over + "; nothing was kept.");
        return r;
    }
    r.later = [c, folder, spec]() -> std::function<dashboard_reply()> {
        try {
            const std::string id = c->jobs.commit(folder, spec);
            return [id]() { return redirect_reply("/jobs/" + id); };
        } catch (const std::exception& e) {
            const std::string why = e.what();
            return [why]() { return message_reply(500, "The job could not be queued", why); };
        }
    };
    return r;
}

dashboard_reply no_such_job_json() {
    dashboard_reply r = text_reply(one_member_json("error", "no such job") + "\n",
                                   "application/json", reply_kind::api);
    r.status = 404;
    return r;
}

dashboard_reply static_reply(const std::string& name) {
    if (name == "dashboard.css")
        return text_reply(std::string(dashboard_css()), "text/css; charset=utf-8",
                          reply_kind::asset);
    if (name == "dashboard.js")
        return text_reply(std::string(dashboard_js()), "text/javascript; charset=utf-8",
                          reply_kind::asset);
    return message_reply(404, "Not found", "No such file.");
}

std::optional<dashboard_reply> get_job_route(const dashboard_context& c,
                                             const std::vector<std::string>& parts,
                                             const std::string& path) {
    const std::string& id = parts[1];
    if (!valid_folder_name(id) || !job_exists(c.jobs, id))
        return message_reply(404, "No such job",
                             "There is no job " + quote_value(id) + " in this spool.");
    if (parts.size() == 2) return page_reply(200, job_page(read_job_view(c.jobs, id, true)));
    if (parts.size() == 3 && parts[2] == "report") return report_reply(c.jobs, id);
    if (parts.size() >= 4 && parts[2] == "files") {
        const std::string prefix = "/jobs/" + id + "/files/";
        return run_file_reply(c.jobs, id, path.substr(prefix.size()));
    }
    return std::nullopt;
}

std::optional<dashboard_reply> api_route(const dashboard_context& c,
                                         const std::vector<std::string>& parts) {
    if (parts.size() == 2 && parts[1] == "jobs")
        return text_reply(jobs_json(c.jobs), "application/json", reply_kind::api);
    if (parts.size() < 3 || parts[1] != "jobs" || parts.size() > 4) return std::nullopt;
    const std::string& id = parts[2];
    if (!valid_folder_name(id) || !job_exists(c.jobs, id)) return no_such_job_json();
    if (parts.size() == 3)
        return text_reply(job_json(c.jobs, id), "application/json", reply_kind::api);
    if (parts[3] == "log")
        return text_reply(log_tail(c.jobs.job_dir(id) / "job.log"), "text/plain; charset=utf-8",
                          reply_kind::api);
    return std::nullopt;
}

std::optional<dashboard_reply> get_route(const dashboard_context& c, const std::string& path) {
    const std::vector<std::string> parts = split_path(path);
    if (path == "/") return page_reply(200, queue_page(read_job_views(c.jobs)));
    if (path == "/submit") return page_reply(200, submit_page(c.settings));
    if (parts.size() == 2 && parts[0] == "static") return static_reply(parts[1]);
    if (parts[0] == "api") return api_route(c, parts);
    if (parts[0] == "jobs" && parts.size() >= 2) return get_job_route(c, parts, path);
    return std::nullopt;
}

std::optional<routed> post_route(const std::shared_ptr<dashboard_context>& c,
                                 const std::string& path, const std::string& content_type,
                                 std::string& body) {
    const std::vector<std::string> parts = split_path(path);
    if (path == "/submit") {
        drop_stale_staged(*c);
        if (c->staged.size() < k_max_staged) return intake_route(c, content_type, std::move(body));
        routed r;
        r.now = message_reply(429, "Too many checked jobs waiting",
                              std::to_string(c->staged.size()) +
                                  " checked jobs wait to be queued or discarded; queue or "
                                  "discard one first (each waits an hour at most).");
        return r;
    }
    if (parts.size() == 3 && parts[0] == "submit" && (parts[2] == "queue" || parts[2] == "discard"))
        return staged_route(c, parts[1], parts[2]);
    if (parts.size() == 3 && parts[0] == "jobs" && parts[2] == "cancel") {
        routed r;
        r.now = cancel_reply(c->jobs, parts[1]);
        return r;
    }
    return std::nullopt;
}

}  // namespace

bool valid_folder_name(const std::string& name) {
    if (name.empty() || name.size() > 100 || name[0] == '.') return false;
    for (unsigned char ch : name)
        if (!std::isalnum(ch) && ch != '.' && ch != '_' && ch != '-') return false;
    return true;
}

dashboard_reply message_reply(int status, const std::string& title, const std::string& text) {
    return page_reply(status, message_page(title, text));
}

dashboard_reply redirect_reply(const std::string& location) {
    dashboard_reply r = page_reply(303, "");
    r.headers.emplace_back("Location", location);
    return r;
}

routed route_request(const std::shared_ptr<dashboard_context>& c, const std::string& method,
                     const std::string& target, const std::string& content_type, std::string body) {
    routed r;
    const std::string path = target_path(target);
    if (path.empty() || path[0] != '/' || has_control_character(path)) {
        r.now = message_reply(400, "Bad request", "The address is not a plain path.");
        return r;
    }
    if (method == "GET") {
        if (auto reply = get_route(*c, path)) r.now = std::move(*reply);
    } else if (method == "POST") {
        if (auto posted = post_route(c, path, content_type, body)) return std::move(*posted);
    } else {
        r.now = message_reply(405, "Method not allowed", "Only GET and POST are served.");
        r.now->headers.emplace_back("Allow", "GET, POST");
        return r;
    }
    if (!r.now) r.now = message_reply(404, "Not found", "There is no page at this address.");
    return r;
}

}  // namespace cuopt
