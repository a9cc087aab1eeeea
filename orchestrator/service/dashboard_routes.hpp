#pragma once
/// What the dashboard answers each (authenticated) request with, apart from HTTP itself: the
/// routes from a method and target to a page, JSON, a file of a run folder or a redirect. Work
/// that takes seconds (an intake's check, a commit's hashing) comes back as `later`, for a
/// thread, whose result is turned into the reply on the event loop.

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/service/daemon.hpp"
#include "orchestrator/service/spool.hpp"

namespace cuopt {

/// Which headers a reply gets: its Content-Security-Policy and caching.
enum class reply_kind {
    page,    // dashboard HTML: own scripts and styles only; not cached
    api,     // JSON and text from the spool: not cached
    asset,   // /static/*
    report,  // a run folder's HTML report: its inline styles and scripts, sandboxed
    file     // any other run folder file: sandboxed, nothing runs
};

struct dashboard_reply {
    int status = 200;
    std::string content_type = "text/html; charset=utf-8";
    std::string body;
    std::filesystem::path file;  // when set, the reply streams this file instead of `body`
    std::vector<std::pair<std::string, std::string>> headers;  // Location, Allow, ...
    reply_kind kind = reply_kind::page;
};

/// A job checked by the intake and waiting for "Queue this job"; only the event loop touches it.
struct staged_job {
    job_spec spec;
    std::chrono::steady_clock::time_point when;
};

/// What the routes work on.
struct dashboard_context {
    spool jobs;
    dashboard_settings settings;
    std::filesystem::path optimizer, harness;
    std::map<std::string, staged_job> staged;  // by staging folder name
};

/// The answer to one request: a reply now, or work to run off the event loop that returns
/// what makes the reply back on it.
struct routed {
    std::optional<dashboard_reply> now;
    std::function<std::function<dashboard_reply()>()> later;
};

routed route_request(const std::shared_ptr<dashboard_context>& c, const std::string& method,
                     const std::string& target, const std::string& content_type, std::string body);

/// A reply with a message page.
dashboard_reply message_reply(int status, const std::string& title, const std::string& text);

/// A 303 See Other to `location`.
dashboard_reply redirect_reply(const std::string& location);

/// A name safe as one path component of a job or staging folder: 1 to 100 of [A-Za-z0-9._-],
/// not starting with '.'.
bool valid_folder_name(const std::string& name);

}  // namespace cuopt
