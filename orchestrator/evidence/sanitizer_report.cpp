#include "orchestrator/evidence/sanitizer_report.hpp"

#include <cstdlib>
#include <regex>
#include <sstream>

namespace cuopt {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_first_lines = 8;
const std::string k_prefix = "========= ";

bool is_report_line(const std::string& body) {
    return !body.empty() && body.rfind("COMPUTE-SANITIZER", 0) != 0 &&
           body.find("ERROR SUMMARY") == std::string::npos &&
           body.find("RACECHECK SUMMARY") == std::string::npos &&
           body.find("LEAK SUMMARY") == std::string::npos;
}

}  // namespace

sanitizer_result parse_sanitizer_output(const std::string& tool, const std::string& text,
                                        bool target_succeeded) {
    static const std::regex error_summary(R"(ERROR SUMMARY:\s*(\d+) errors?)");
    static const std::regex race_summary(
        R"(RACECHECK SUMMARY:\s*\d+ hazards? displayed \((\d+) errors?, (\d+) warnings?\))");
    sanitizer_result r;
    r.tool = tool;
    std::istringstream in(text);
    std::string line;
    int race_errors = 0;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.rfind("=========", 0) != 0) continue;
        const std::string body = line.size() > k_prefix.size() ? line.substr(k_prefix.size()) : "";
        std::smatch m;
        if (std::regex_search(body, m, error_summary)) {
            r.completed = true;
            r.errors = std::max(r.errors, std::stoi(m[1]));
        } else if (std::regex_search(body, m, race_summary)) {
            r.completed = true;  // racecheck's own summary; it may print no ERROR SUMMARY
            race_errors = std::stoi(m[1]);
            r.warnings = std::stoi(m[2]);
        } else if (is_report_line(body) && r.first_lines.size() < k_first_lines) {
            r.first_lines.push_back(body);
        }
    }
    r.errors = std::max(r.errors, race_errors);
    // A tool that found nothing may print no summary at all (racecheck on CUDA 13.0 does):
    // a run that finished normally with no report line is clean.
    if (!r.completed && target_succeeded && r.first_lines.empty()) r.completed = true;
    if (!r.completed)
        r.problem = "compute-sanitizer printed no ERROR SUMMARY (or RACECHECK SUMMARY) line";
    return r;
}

fs::path find_compute_sanitizer(const std::string& configured) {
    if (!configured.empty()) return fs::exists(configured) ? fs::path(configured) : fs::path();
    std::vector<fs::path> candidates;
    if (const char* path = std::getenv("PATH")) {
        std::istringstream dirs(path);
        std::string dir;
        while (std::getline(dirs, dir, ':'))
            if (!dir.empty()) candidates.push_back(fs::path(dir) / "compute-sanitizer");
    }
    if (const char* home = std::getenv("CUDA_HOME"))
        candidates.push_back(fs::path(home) / "bin" / "compute-sanitizer");
    candidates.push_back("/usr/local/cuda/bin/compute-sanitizer");
    candidates.push_back("/usr/local/cuda/compute-sanitizer/compute-sanitizer");
    for (const fs::path& p : candidates) {
        std::error_code ec;
        if (fs::is_regular_file(p, ec)) return p;
    }
    return {};
}

}  // namespace cuopt
