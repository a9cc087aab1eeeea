#include "orchestrator/service/job_limits.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "orchestrator/service/job_intake.hpp"

namespace cuopt {

namespace {

std::string seconds_text(double s) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", s);
    return buf;
}

// The number a whole word spells, or NaN when it is not one (trailing text included).
double number_spelled_by(const std::string& word) {
    if (word.empty()) return std::nan("");
    char* end = nullptr;
    const double x = std::strtod(word.c_str(), &end);
    return end && *end == '\0' ? x : std::nan("");
}

}  // namespace

std::string job_time_limit_problem(double seconds) {
    if (!std::isfinite(seconds) || seconds <= 0 || seconds > k_max_job_time_limit_s)
        return "expected seconds above 0 and at most " + seconds_text(k_max_job_time_limit_s) +
               " (30 days), got " + seconds_text(seconds);
    return "";
}

std::string job_args_problem(const std::vector<std::string>& args, double job_time_limit_s) {
    if (std::string why = daemon_flag_problem(args); !why.empty()) return why;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string value;
        if (args[i] == "--timeout")
            value = i + 1 < args.size() ? args[i + 1] : "";
        else if (args[i].rfind("--timeout=", 0) == 0)
            value = args[i].substr(10);
        else
            continue;
        const double x = number_spelled_by(value);
        // Each harness run is bounded by --timeout; one longer than the whole job's limit
        // could never finish, and a NaN or infinite one would never be bounded at all.
        if (!std::isfinite(x) || x <= 0 || x > job_time_limit_s)
            return "--timeout " + value + ": expected seconds above 0 and at most serve's " +
                   "--job-time-limit (" + seconds_text(job_time_limit_s) + " s)";
    }
    return "";
}

std::string config_timeout_problem(const std::string& config_name, const std::string& json_text,
                                   double job_time_limit_s) {
    rapidjson::Document d;
    // Another kind of timeout is the config reader's to refuse; only the number is checked here.
    const auto timeout =
        try_parse_json(d, json_text).empty() ? number_of(d, "timeout") : std::nullopt;
    if (!timeout) return "";
    const double x = *timeout;
    if (std::isfinite(x) && x > 0 && x <= job_time_limit_s) return "";
    return config_name + ": field timeout: expected seconds above 0 and at most serve's " +
           "--job-time-limit (" + seconds_text(job_time_limit_s) + " s), got " + seconds_text(x);
}

std::string slurm_time_of(double seconds) {
    const long long s = static_cast<long long>(std::ceil(seconds));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", s / 86400, s / 3600 % 24,
                  s / 60 % 60, s % 60);
    return buf;
}

}  // namespace cuopt
