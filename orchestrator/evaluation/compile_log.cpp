#include "orchestrator/evaluation/compile_log.hpp"

#include <sstream>

namespace cuopt {

std::string trim_compile_log(const std::string& log, std::size_t budget) {
    if (log.size() <= budget) return log;
    std::string errors, line;
    std::istringstream in(log);
    while (std::getline(in, line) && errors.size() < budget / 2)
        if (line.find("error") != std::string::npos) errors += line + "\n";
    return errors + "[... " + std::to_string(log.size()) + " bytes in all; end of log:]\n" +
           log.substr(log.size() - budget / 2);
}

namespace {

constexpr std::size_t k_max_error_line = 240;

// NVRTC's error lines read "FILE(LINE): error: ..." (or catastrophic / fatal error); those of
// the entry's name expression come from the pseudo-file __nv_name_map.
bool is_error_line(const std::string& line) {
    if (line.rfind("__nv_name_map", 0) == 0) return false;
    for (const char* marker : {"): error", "): catastrophic error", "): fatal error"})
        if (line.find(marker) != std::string::npos) return true;
    return false;
}

}  // namespace

std::string first_compile_errors(const std::string& log, std::size_t max_lines) {
    std::string text, line;
    std::size_t errors = 0;
    std::istringstream in(log);
    while (std::getline(in, line)) {
        if (!is_error_line(line)) continue;
        if (++errors > max_lines) continue;
        if (line.size() > k_max_error_line) line = line.substr(0, k_max_error_line) + "...";
        text += (text.empty() ? "" : "; ") + line;
    }
    if (errors > max_lines) text += " (and " + std::to_string(errors - max_lines) + " more)";
    return text;
}

}  // namespace cuopt
