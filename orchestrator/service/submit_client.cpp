#include "orchestrator/service/submit_client.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <stdexcept>

#include "common/exit_codes.hpp"
#include "common/html_text.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "orchestrator/service/spool.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

// A file as the caller may read it: a regular file, its last component not a link.
std::string read_regular(const fs::path& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        throw intake_error("submit: " + file.string() + ": " + std::strerror(errno) +
                           (errno == ELOOP ? " (a link: give the file itself)" : ""));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw intake_error("submit: " + file.string() + " is not a regular file");
    }
    std::string data;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int e = errno;
            ::close(fd);
            throw intake_error("submit: " + file.string() + ": " + std::strerror(e));
        }
        if (n == 0) break;
        data.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return data;
}

// Every regular file of a gate's accepted run folder; links are refused, not followed.
std::vector<fs::path> run_folder_files(const fs::path& accepted) {
    std::vector<fs::path> files;
    std::error_code ec;
    if (!fs::is_regular_file(accepted / "run.json", ec))
        throw intake_error("submit --gate: --accepted " + accepted.string() +
                           ": not a run folder (no run.json)");
    for (fs::recursive_directory_iterator it(accepted, ec), end; !ec && it != end;
         it.increment(ec)) {
        if (it->is_symlink(ec))
            throw intake_error("submit --gate: " + it->path().string() +
                               " is a link; a job's files may not be links");
        if (it->is_regular_file(ec)) files.push_back(it->path());
    }
    if (ec) throw intake_error("submit --gate: " + accepted.string() + ": " + ec.message());
    return files;
}

// A folder's absolute path without a trailing '/' (so that its filename() is its name).
fs::path folder_path(const fs::path& p) {
    fs::path out = fs::absolute(p).lexically_normal();
    return out.filename().empty() ? out.parent_path() : out;
}

void write_all(int fd, const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw std::runtime_error(std::string("the daemon closed the connection: ") +
                                     std::strerror(errno));
        done += static_cast<std::size_t>(n);
    }
}

}  // namespace

std::optional<std::string> ask_daemon(const fs::path& spool_root, const std::string& request) {
    const std::string path = (spool_root / "submit.sock").string();
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) return std::nullopt;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return std::nullopt;  // no socket, nobody listening, or not ours to reach
    }
    std::string reply;
    try {
        write_all(fd, request.back() == '\n' ? request : request + "\n");
        char buf[65536];
        for (;;) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            reply.append(buf, static_cast<std::size_t>(n));
        }
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
    if (reply.empty()) throw std::runtime_error("the daemon closed the connection unanswered");
    return reply;
}

std::string submit_request(const submission& sub, const fs::path& optimizer) {
    std::vector<fs::path> files;
    fs::path config;
    if (sub.kind == "gate") {
        files = run_folder_files(folder_path(sub.accepted));
    } else {
        if (sub.config.empty()) throw intake_error("submit: --config is required");
        config = fs::absolute(sub.config).lexically_normal();
        files = files_named_by(optimizer, config, sub.args);
    }
    // A gate's files keep their run folder's name: "run-001/run.json", accepted "run-001".
    const fs::path root =
        sub.kind == "gate" ? folder_path(sub.accepted).parent_path() : common_folder(files);
    rapidjson::Document d(rapidjson::kObjectType);
    json_object o(d);
    o.add("op", "submit").add("kind", sub.kind).add("priority", sub.priority);
    if (!config.empty()) o.add("config", config.lexically_relative(root).generic_string());
    if (sub.kind == "gate") o.add("accepted", folder_path(sub.accepted).filename().string());
    json_array list(o.allocator());
    for (const fs::path& f : files) {
        json_object file(o.allocator());
        file.add("path", f.lexically_relative(root).generic_string())
            .add("base64", base64(read_regular(f)));
        list.push(file);
    }
    o.add("args", sub.args).add("files", list);
    return to_compact_json(d) + "\n";
}

std::string job_request(const std::string& op, const std::string& job) {
    rapidjson::Document d(rapidjson::kObjectType);
    json_object(d).add("op", op).add("job", job);
    return to_compact_json(d) + "\n";
}

bool owns_spool(const fs::path& root) {
    struct stat st {};
    if (::stat(root.c_str(), &st) != 0) return errno == ENOENT;  // a link to it: the spool
    return st.st_uid == ::geteuid();
}

namespace {

// One request to the daemon, its refusal printed; 0 with the reply in `reply`, else the exit
// code. `build` runs first (it reads the caller's files), then the connection is made.
int ask(const fs::path& spool_root, const std::string& command,
        const std::function<std::string()>& build, rapidjson::Document& reply) {
    const fs::path root = fs::absolute(spool_root);
    std::optional<std::string> text;
    try {
        text = ask_daemon(root, build());
    } catch (const intake_error& e) {
        std::cerr << "cuda-optimizer " << e.what() << "\n";
        return to_int(exit_code::invalid_request);
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer " << command << ": " << e.what() << "\n";
        return to_int(exit_code::io_error);
    }
    if (!text) {
        std::cerr << "cuda-optimizer " << command << ": no daemon serves " << root.string() << " ("
                  << (root / "submit.sock").string() << "): ask its operator\n";
        return to_int(exit_code::io_error);
    }
    if (!try_parse_json(reply, *text).empty() || !member(reply, "ok")) {
        std::cerr << "cuda-optimizer " << command << ": the daemon's reply is not understood\n";
        return to_int(exit_code::io_error);
    }
    if (bool_of(reply, "ok").value_or(false)) return 0;
    std::cerr << text_of(reply, "table");
    std::string why = text_of(reply, "error");
    if (why.rfind(command + ": ", 0) == 0) why = why.substr(command.size() + 2);
    std::cerr << "cuda-optimizer " << command << ": " << why << "\n";
    const auto code = integer_of(reply, "exit");
    return code && *code >= std::numeric_limits<int>::min() &&
                   *code <= std::numeric_limits<int>::max()
               ? static_cast<int>(*code)
               : to_int(exit_code::io_error);
}

// A job's field from job_json (nested status and spec) or jobs_json (flat), read leniently.
struct job_fields {
    const Value& job;
    // The object holding `key`: the job itself, else its status, else its spec.
    const Value& holder(const char* key) const {
        if (member(job, key)) return job;
        const Value& status = object_or_empty(job, "status");
        return member(status, key) ? status : object_or_empty(job, "spec");
    }
    std::string text(const char* key) const { return text_of(holder(key), key); }
    double number(const char* key, double fallback = 0) const {
        return number_of(holder(key), key).value_or(fallback);
    }
    bool flag(const char* key) const { return bool_of(holder(key), key).value_or(false); }
};

// "it 3/7, 12 att" (the queue) or "iteration 3 of 7, 12 attempts" (one job); "-" before any.
std::string progress_of(const job_fields& j, bool brief) {
    const int attempts = static_cast<int>(j.number("attempts"));
    const int it = std::max(static_cast<int>(j.number("iteration", -1)), 0);
    const int of = static_cast<int>(j.number("max_iterations"));
    if (attempts <= 0) return "-";
    if (brief)
        return "it " + std::to_string(it) + (of > 0 ? "/" + std::to_string(of) : "") + ", " +
               std::to_string(attempts) + " att";
    return "iteration " + std::to_string(it) + (of > 0 ? " of " + std::to_string(of) : "") + ", " +
           std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts");
}

std::string best_of(const job_fields& j) {
    char best[32] = "-";
    if (j.number("best_speedup") > 0)
        std::snprintf(best, sizeof best, "%.2fx", j.number("best_speedup"));
    return best;
}

std::string queue_row(const job_fields& j) {
    char row[256];
    std::snprintf(row, sizeof row, "%-11s %-9s %-8s %4d  %-16s %-7s %-40s ", j.text("id").c_str(),
                  j.text("state").c_str(), j.text("kind").c_str(),
                  static_cast<int>(j.number("priority")), progress_of(j, true).c_str(),
                  best_of(j).c_str(), one_line(j.text("problem"), 40).c_str());
    std::string line = row + j.text("reason");
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
}

// The run folder's line and the report's: the report only where has_report says it exists.
std::string run_lines(const job_fields& j, const fs::path& job_dir) {
    const std::string state = j.text("state"), run_dir = j.text("run_dir");
    std::string out = "  run folder: ";
    if (!run_dir.empty())
        out += (job_dir / run_dir).string() + "\n";
    else if (state == "queued" || state == "running")
        out += "none yet\n";
    else
        out += j.number("starts") > 0 ? "none (the run made none)\n" : "none (it never started)\n";
    out += "  report:     ";
    if (j.flag("has_report"))
        out +=
            (job_dir / run_dir / (j.text("kind") == "gate" ? "gate.html" : "report.html")).string();
    else if (state == "queued" || state == "running")
        out += "not yet (written when the run ends)";
    else
        out += run_dir.empty() ? "none (it never ran)" : "none (the run wrote no report)";
    return out + "\n";
}

}  // namespace

std::string queue_text(const std::string& jobs_json) {
    rapidjson::Document d;
    const Value* jobs = try_parse_json(d, jobs_json).empty() ? member(d, "jobs") : nullptr;
    if (!jobs || !jobs->IsArray()) throw std::runtime_error("the job list is not understood");
    char head[256];
    std::snprintf(head, sizeof head, "%-11s %-9s %-8s %4s  %-16s %-7s %-40s %s\n", "JOB", "STATE",
                  "KIND", "PRIO", "PROGRESS", "BEST", "PROBLEM", "REASON");
    std::string out = head;
    for (const Value& j : jobs->GetArray())
        if (j.IsObject()) out += queue_row(job_fields{j});
    return out;
}

std::string job_text(const std::string& job_json, const fs::path& spool_root) {
    rapidjson::Document d;
    if (!try_parse_json(d, job_json).empty() || !d.IsObject())
        throw std::runtime_error("the job's status is not understood");
    const job_fields j{d};
    const std::string id = j.text("id"), state = j.text("state"), reason = j.text("reason");
    std::string out = id + ": " + state + "\n";
    const std::string problem = one_line(j.text("problem"), 200);
    out += "  problem:    " + (problem.empty() ? std::string("-") : problem) + "\n";
    out += "  kind:       " + j.text("kind") + ", priority " +
           std::to_string(static_cast<int>(j.number("priority"))) + ", submitted " +
           j.text("submitted") + (j.text("submitter").empty() ? "" : " by " + j.text("submitter")) +
           "\n";
    out += "  progress:   " + progress_of(j, false) + ", best " + best_of(j) + "\n";
    if (!j.text("started").empty()) out += "  started:    " + j.text("started") + "\n";
    if (!j.text("finished").empty()) out += "  finished:   " + j.text("finished") + "\n";
    if (!reason.empty())
        out += std::string(state == "done" ? "  outcome:    " : "  reason:     ") + reason + "\n";
    if (j.flag("cancel_requested") && state != "cancelled") out += "  cancel requested\n";
    return out + run_lines(j, fs::absolute(spool_root) / "jobs" / id);
}

int submit_through_daemon(const fs::path& spool_root, const submission& sub,
                          const fs::path& optimizer, bool json) {
    rapidjson::Document reply;
    if (const int code = ask(
            spool_root, "submit", [&] { return submit_request(sub, optimizer); }, reply);
        code != 0)
        return code;
    const std::string id = text_of(reply, "job");
    if (json)
        std::cout << one_member_json("job", id) << "\n";
    else
        std::cout << id << "\n";
    return 0;
}

int status_through_daemon(const fs::path& spool_root, const std::string& job, bool json) {
    rapidjson::Document reply;
    if (const int code = ask(
            spool_root, "status", [&] { return job_request("status", job); }, reply);
        code != 0)
        return code;
    const Value* answer = member(reply, "result");
    if (!answer || !answer->IsObject()) {
        std::cerr << "cuda-optimizer status: the daemon's reply is not understood\n";
        return to_int(exit_code::io_error);
    }
    const std::string result = to_compact_json(*answer);
    if (json) {
        std::cout << result << "\n";
        return 0;
    }
    try {
        std::cout << (job.empty() ? queue_text(result) : job_text(result, spool_root));
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer status: the daemon's reply: " << e.what() << "\n";
        return to_int(exit_code::io_error);
    }
    return 0;
}

int cancel_through_daemon(const fs::path& spool_root, const std::string& job) {
    rapidjson::Document reply;
    if (const int code = ask(
            spool_root, "cancel", [&] { return job_request("cancel", job); }, reply);
        code != 0)
        return code;
    std::cout << job << ": cancel requested\n";
    return 0;
}

}  // namespace cuopt
