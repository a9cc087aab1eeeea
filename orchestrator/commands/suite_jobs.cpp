#include "orchestrator/commands/suite_jobs.hpp"

#include <ctime>
#include <regex>

#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"

namespace cuopt {

namespace {

namespace fs = std::filesystem;

constexpr std::chrono::milliseconds k_child_limit = std::chrono::minutes(10);

// The child's first line on stderr without the program's prefix, else how it ended.
std::string said_by(const process_result& p) {
    std::string line = p.stderr_text.substr(0, p.stderr_text.find('\n'));
    for (const char* prefix : {"cuda-optimizer submit: ", "cuda-optimizer status: ",
                               "cuda-optimizer: ", "cuda-optimizer "})
        if (line.rfind(prefix, 0) == 0) line.erase(0, std::string(prefix).size());
    if (line.size() > 300) line = line.substr(0, 300) + "...";
    return line.empty() ? p.describe() : line;
}

bool succeeded(const process_result& p) {
    return !p.failed_to_start && !p.timed_out && !p.signal && p.exit_code == 0;
}

// Seconds since the epoch of "2026-12-06T13:00:27Z"; nullopt for anything else.
std::optional<double> utc_seconds(const std::string& text) {
    std::tm tm{};
    const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!end || *end) return std::nullopt;
    return static_cast<double>(::timegm(&tm));
}

}  // namespace

std::string submit_problem(const fs::path& self, const std::string& spool, const fs::path& config,
                           const std::vector<std::string>& optimize_args, process_runner& runner) {
    std::vector<std::string> argv = {self.string(), "submit",        "--spool", spool,
                                     "--config",    config.string(), "--json"};
    argv.insert(argv.end(), optimize_args.begin(), optimize_args.end());
    const process_result p = runner.run(argv, k_child_limit);
    if (!succeeded(p)) throw suite_job_error("submit: " + said_by(p));
    rapidjson::Document d;
    const std::optional<std::string> id = try_parse_json(d, p.stdout_text).empty() && d.IsObject()
                                              ? string_of(d, "job")
                                              : std::nullopt;
    static const std::regex k_job("job-[0-9]{1,12}");
    if (!id || !std::regex_match(*id, k_job))
        throw suite_job_error("submit: its answer names no job: " + p.stdout_text.substr(0, 200));
    return *id;
}

std::optional<suite_record> ended_job(const fs::path& self, const std::string& spool,
                                      const std::string& id, process_runner& runner) {
    const process_result p =
        runner.run({self.string(), "status", "--spool", spool, id, "--json"}, k_child_limit);
    if (!succeeded(p)) throw suite_job_error("status " + id + ": " + said_by(p));
    std::optional<suite_record> r = record_from_status(p.stdout_text, spool);
    if (r && r->job != id)
        throw suite_job_error("status " + id + ": its answer is about " + quote_value(r->job));
    return r;
}

std::optional<suite_record> record_from_status(const std::string& status_json,
                                               const std::string& spool) {
    rapidjson::Document d;
    const rapidjson::Value* status = try_parse_json(d, status_json, true).empty() && d.IsObject()
                                         ? member(d, "status")
                                         : nullptr;
    if (!status || !status->IsObject())
        throw suite_job_error("status: its answer has no status object");
    const std::string state = text_of(*status, "state");
    if (state != "done" && state != "failed" && state != "cancelled") return std::nullopt;
    suite_record r;
    if (const rapidjson::Value* summary = member(d, "summary"))
        r = record_from_summary(to_compact_json(*summary));
    else
        r.verdict = "failed";
    r.job = text_of(*status, "id");
    if (const auto code = integer_of(*status, "exit_code"); code && *code >= 0)
        r.exit_code = static_cast<int>(*code);
    const std::string verdict = text_of(*status, "verdict");
    if (r.verdict == "failed" &&
        (verdict == "go" || verdict == "no_go" || verdict == "no_winner")) {
        r.verdict = verdict;  // no summary came back: the daemon's own reading of it
        if (const auto best = number_of(*status, "best_speedup"); best && *best > 0)
            r.speedup = best;
        if (const auto n = integer_of(*status, "attempts"); n && *n > 0) r.attempts = *n;
    }
    if (r.verdict == "failed" || (r.reason.empty() && r.verdict != "go"))
        r.reason =
            state + (text_of(*status, "reason").empty() ? "" : ": " + text_of(*status, "reason"));
    const auto started = utc_seconds(text_of(*status, "started"));
    const auto finished = utc_seconds(text_of(*status, "finished"));
    if (started && finished && *finished >= *started) r.wall_s = *finished - *started;
    static const std::regex k_job("job-[0-9]{1,12}");
    const std::string run = text_of(*status, "run_dir");
    if (!run.empty() && std::regex_match(r.job, k_job) && run.find("..") == std::string::npos &&
        run.front() != '/')
        r.run = (fs::path(spool) / "jobs" / r.job / run).string();
    return r;
}

}  // namespace cuopt
