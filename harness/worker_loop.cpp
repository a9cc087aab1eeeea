#include "harness/worker_loop.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ext/stdio_filebuf.h>
#include <filesystem>
#include <iostream>
#include <istream>
#include <ostream>

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "harness/cuda_handles.hpp"
#include "harness/harness_sandbox.hpp"
#include "harness/request_runner.hpp"

namespace cuopt {

namespace {

// The longest path a line may name (Linux's PATH_MAX), and the longest line: two such paths in
// a JSON object, every byte escaped.
constexpr std::size_t k_max_path = 4096, k_max_line = 6 * 2 * k_max_path + 64;

// The line's paths as the worker takes them: no NUL (the file opened would be the path cut at
// it, not the one checked against the root) and at most k_max_path bytes. "" or what is wrong.
std::string path_problem(const harness_options& o) {
    if (o.request.find('\0') != std::string::npos || o.response.find('\0') != std::string::npos)
        return "a path holds a NUL byte; expected a path without one";
    if (o.request.size() > k_max_path || o.response.size() > k_max_path)
        return "a path of " + std::to_string(std::max(o.request.size(), o.response.size())) +
               " bytes; expected at most " + std::to_string(k_max_path);
    return "";
}

// A request line: a bare path, or {"request": PATH, "response": PATH}. "" or what is wrong.
std::string parse_line(const std::string& line, harness_options& o) {
    if (line.front() != '{') {
        o.request = line;
        return path_problem(o);
    }
    rapidjson::Document doc;
    if (std::string bad = try_parse_json(doc, line); !bad.empty()) return "not JSON: " + bad;
    try {
        const json_field f(doc, "");  // the caller's message names the stdin line
        o.request = f.text("request");
        if (const auto response = f.optional_text("response")) o.response = *response;
    } catch (const json_error& e) {
        return std::string(e.what()) +
               "; expected {\"request\": PATH, \"response\": PATH} or a request path";
    }
    return path_problem(o);
}

std::string reply_line(const harness_options& o, const served_request& s, long long served) {
    rapidjson::Document doc(rapidjson::kObjectType);
    json_object(doc)
        .add("request", o.request)
        .add("response", o.request.empty() ? std::string() : response_path(o).string())
        .add("exit_code", to_int(s.code))
        .add("exit_name", exit_code_name(s.code))
        .add("status", s.status)
        .add("wall_ms", s.wall_ms)
        .add("served", served)
        .add("messages", s.messages)
        .add_if(!s.retire_reason.empty(), "retired", s.retire_reason);
    return to_compact_json(doc);
}

// serve(o), or an internal_error reply where it throws (it should not: serve_request records
// every failure, a full disk included, in its response): an exception escaping this loop would
// end the worker by std::terminate, a SIGABRT that says nothing about why.
served_request serve_guarded(const std::function<served_request(const harness_options&)>& serve,
                             const harness_options& o) {
    try {
        return serve(o);
    } catch (const std::exception& e) {
        served_request s;
        s.code = exit_code::internal_error;
        s.status = "internal_error";
        s.messages = std::string("cuda-harness: internal_error: ") + e.what() + "\n";
        return s;
    }
}

}  // namespace

bool worker_must_exit(exit_code code) {
    // A failed case may leave launches queued or the stream held: a fresh process is cheaper
    // than proving the next request cannot meet them.
    return code == exit_code::context_lost || code == exit_code::internal_error ||
           code == exit_code::no_driver || code == exit_code::case_failed;
}

int serve_worker(const harness_options& o, std::istream& in, std::ostream& out,
                 const std::function<served_request(const harness_options&)>& serve) {
    scrub_freed_memory() = true;
    long long served = 0, line_number = 0;
    std::string line;
    while (std::getline(in, line)) {
        ++line_number;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (line.empty()) continue;
        harness_options one = o;
        one.request.clear();
        one.response.clear();
        std::string bad = line.size() > k_max_line
                              ? std::to_string(line.size()) +
                                    " bytes; expected a request path "
                                    "or {\"request\": PATH, \"response\": PATH} of at most " +
                                    std::to_string(k_max_line) + " bytes"
                              : parse_line(line, one);
        if (bad.empty()) bad = outside_root_problem(one.request, "request");
        if (bad.empty()) bad = outside_root_problem(response_path(one), "response");
        if (bad.empty()) bad = path_arguments_problem(one, "response");
        if (!bad.empty()) {
            // Echoed in part only: the reply names the line, it does not hand it back. A path
            // the worker takes is echoed whole (the caller matches the reply to it by that).
            auto echoed = [](const std::string& text) {
                return text.size() > k_max_path ? shortened(text) : text;
            };
            one.request = echoed(line.size() > k_max_line ? line : one.request);
            one.response = echoed(one.response);
            served_request refused;
            refused.code = exit_code::usage;
            refused.status = "usage";
            refused.messages = "cuda-harness --worker: stdin line " + std::to_string(line_number) +
                               ": " + bad + "\n";
            out << reply_line(one, refused, served) << "\n" << std::flush;
            if (!out) return to_int(exit_code::internal_error);  // nobody reads the replies
            continue;
        }
        served_request s = serve_guarded(serve, one);
        if (!s.retire_reason.empty())
            s.messages += "cuda-harness --worker: retired after this request: " + s.retire_reason +
                          "; the next request gets a fresh process\n";
        out << reply_line(one, s, ++served) << "\n" << std::flush;
        if (!out) return to_int(exit_code::internal_error);  // nobody reads the replies
        if (worker_must_exit(s.code)) return to_int(s.code);
        if (!s.retire_reason.empty()) return 0;
    }
    return 0;
}

int serve_worker_on_stdio(const harness_options& o,
                          const std::function<served_request(const harness_options&)>& serve,
                          const std::function<bool()>& confine) {
    // Replies get stdout's pipe to themselves; fd 1 becomes stderr, so a kernel's printf or a
    // library's chatter can never be read as (or glued onto) a reply.
    std::cout.flush();
    const int replies_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (replies_fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        std::perror("cuda-harness --worker: cannot set up its reply channel");
        return to_int(exit_code::internal_error);
    }
    // The descriptor itself, never reopened by name: a reopen starts a new file description,
    // which truncated a `>> log` (and cannot open a socket). The buffer closes it.
    __gnu_cxx::stdio_filebuf<char> channel(replies_fd, std::ios::out);
    if (!channel.is_open()) {
        std::perror("cuda-harness --worker: cannot open its reply channel");
        ::close(replies_fd);
        return to_int(exit_code::internal_error);
    }
    std::ostream replies(&channel);
    // Confined before the first request is read.
    if (!(confine ? confine() : confine_harness_or_say(o)))
        return to_int(exit_code::internal_error);
    return serve_worker(o, std::cin, replies, serve);
}

}  // namespace cuopt
