#pragma once
/// The suite's results: suite.json (one record a problem, fast_p, the geomean speedup and the
/// jobs still pending) read back and rewritten with suite.html after each problem.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/commands/suite_command.hpp"

namespace cuopt::suite {

/// What an earlier run of the suite left: its records by name, and the jobs it submitted that
/// had not ended (by name). Throws json_error naming the file when it is not a suite.json.
struct suite_state {
    std::map<std::string, suite_record> finished;
    std::map<std::string, std::string> pending;
    std::string spool;  // the spool `pending` lies in
};

suite_state read_state(const std::filesystem::path& file);

/// The figures over all `problems`: one not finished yet counts as not fast.
suite_figures figures_over(const std::vector<suite_record>& records, int problems);

/// RESULTS/suite.json and RESULTS/suite.html, rewritten.
void write_suite_files(const suite_options& o, const std::vector<suite_record>& records,
                       int problems, const std::map<std::string, std::string>& pending = {});

/// "42.0%".
std::string percent(double share);

/// "1.112x", or "-".
std::string times(std::optional<double> ratio);

}  // namespace cuopt::suite
