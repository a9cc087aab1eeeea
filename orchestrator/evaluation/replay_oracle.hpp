#pragma once
/// A run folder's replay side, shared by `replay` and `gate`: the cases summary.json records
/// (each with its best-case-N.json and, per output, the dtype, tolerance and oracle file the
/// run checked it with), a harness run's outputs held against that oracle with the run's own
/// validator and tolerances, and why a harness run did not happen at all.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/dtype.hpp"
#include "common/runner_process.hpp"
#include "orchestrator/contract/response_reader.hpp"
#include "orchestrator/evaluation/output_validator.hpp"

namespace cuopt {

struct replay_output {
    std::string arg;
    std::optional<dtype> type;
    tolerance tol;
    std::optional<std::filesystem::path> oracle;  // absolute; none: the run had no oracle
};

struct replay_case {
    std::size_t index = 0;  // N of best-case-N.json
    std::string name;
    bool performance = false;
    std::optional<double> best_median_ms;  // the search's median for the winner
    std::filesystem::path request;         // absolute path of its replay request
    std::vector<replay_output> outputs;
};

/// The cases of RUN/summary.json (schema-checked), in order; throws json_error (or the
/// file's own error) when there is no usable summary.
std::vector<replay_case> read_replay_cases(const std::filesystem::path& run);

/// One output of a replayed case against the run's oracle.
struct replay_output_check {
    std::string arg;
    bool passed = false;
    std::string summary;  // the validator's line, or why it could not be compared
};

/// Every output of `c` that has an oracle, read from `outputs`/CASE.ARG.bin (where replay
/// requests have the harness write them).
std::vector<replay_output_check> check_replay_outputs(const replay_case& c,
                                                      const std::filesystem::path& outputs);

/// Why the harness did not answer a request.
struct harness_failure {
    bool no_machine = false;  // it did not start, or found no driver or device: nothing ran
    std::string message;
};

/// Said once: the response's error (else the harness's stderr) and its exit; where there is no
/// machine to run on, that `command` needs one (or how to point at the harness).
harness_failure describe_harness_failure(const process_result& p,
                                         const std::filesystem::path& response,
                                         const std::string& command);

}  // namespace cuopt
