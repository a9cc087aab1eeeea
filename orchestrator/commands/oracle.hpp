#pragma once
/// The oracle phase of a run: the run's inputs (the manifest's input files, then the
/// values the reference was launched with) copied into RUN/inputs with their sha256,
/// the reference kernel run once per case and its outputs checked to be usable (no
/// NaN/Inf, nothing unwritten), the manifest's expected files copied beside them, and
/// every (case, output) pair proven to have an oracle before the search starts.

#include <filesystem>
#include <map>
#include <string>

#include "orchestrator/contract/candidate.hpp"
#include "orchestrator/evaluation/attempt_evaluator.hpp"
#include "orchestrator/evaluation/torch_oracle.hpp"

namespace cuopt {

struct oracle_setup {
    const manifest& contract;
    const attempt_evaluator& evaluator;
    std::optional<candidate> reference;  // absent: expected files only
    std::filesystem::path run;           // the run folder
    std::string folder = "reference";    // where in the run the reference runs
    bool record_inputs = true;           // copy the inputs into RUN/inputs (the main oracle only)
    /// Use a case's expected files only where its inputs are all files (other seeds or launch
    /// counts make another case's expected values stale: the reference serves there).
    bool expected_for_fixed_inputs_only = false;
    /// An imported problem's PyTorch oracle: `reference` is then a kernel that only receives
    /// the inputs (the harness dumps what its launch saw) and forward's outputs are the oracle.
    const torch_reference* torch = nullptr;
};

/// Builds the oracle; adds the sha256 of every input (and the reference) to `sha256`.
/// Throws run_failure (reference_failed, invalid_request) when there can be none.
oracle_files prepare_oracle(const oracle_setup& setup, std::map<std::string, std::string>& sha256);

/// "" when the reference's outputs can serve as an oracle, else which case and output fail.
std::string check_reference_outputs(const attempt_result& ref, const manifest& m);

}  // namespace cuopt
