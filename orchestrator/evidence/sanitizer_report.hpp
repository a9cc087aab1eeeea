#pragma once
/// compute-sanitizer's verdict on one run of the harness: how many errors (and, for
/// racecheck, warnings) a tool reported and its first report lines, read from the
/// tool's own summary lines ("========= ERROR SUMMARY: 3 errors", "========= RACECHECK
/// SUMMARY: 7 hazards displayed (3 errors, 4 warnings)"; racecheck, as measured on the
/// H200 with CUDA 13.0, prints only the latter).

#include <filesystem>
#include <string>
#include <vector>

namespace cuopt {

/// The four tools, in the order they run.
inline const std::vector<std::string> k_sanitizer_tools = {"memcheck", "racecheck", "initcheck",
                                                           "synccheck"};

struct sanitizer_result {
    std::string tool;
    bool completed = false;  // a summary line was found
    int errors = 0;
    int warnings = 0;                      // racecheck's hazards of warning severity
    std::vector<std::string> first_lines;  // the first report lines, prefix stripped
    std::string problem;                   // why it did not complete, when it did not

    bool clean() const { return completed && errors == 0 && warnings == 0; }
};

/// Reads a tool's log. `target_succeeded`: the program under the tool finished normally, so a
/// log with no summary and no report line means the tool found nothing.
sanitizer_result parse_sanitizer_output(const std::string& tool, const std::string& text,
                                        bool target_succeeded = false);

/// `configured` when given (it must exist), else compute-sanitizer on PATH, else in the
/// CUDA toolkit (CUDA_HOME, /usr/local/cuda); empty when there is none.
std::filesystem::path find_compute_sanitizer(const std::string& configured);

}  // namespace cuopt
