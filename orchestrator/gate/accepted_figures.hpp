#pragma once
/// What a gate holds a kernel to: the accepted kernel's source and, per performance case,
/// the per-launch samples of every run behind the accepted figures, with the machine they
/// were timed on. They come from RUN/gate-baseline.json where `gate --accept` recorded one;
/// else from the run itself: the winner's significance rounds
/// (evidence/I.A/significance/round-N/winner), else its search attempt, else the medians in
/// summary.json alone; the machine from run.json (device and gpu_state).

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/evaluation/replay_oracle.hpp"
#include "orchestrator/gate/environment_check.hpp"
#include "orchestrator/gate/gate_verdict.hpp"

namespace cuopt {

/// Where the gate cannot judge at all (exit 2): what() says why.
class cannot_judge_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// The baseline `--accept` writes into the accepted run folder, and its copy of the kernel.
inline constexpr const char* k_gate_baseline_file = "gate-baseline.json";
inline constexpr const char* k_gate_baseline_kernel = "gate-baseline.cu";

struct accepted_figures {
    std::string source;            // where the samples came from, relative to the run folder
    std::filesystem::path kernel;  // the gate's copy of gate-baseline.cu, else of best.cu
    case_samples cases;            // every performance case of `cases` below
    environment env;               // where they were timed
};

/// Throws cannot_judge_error when the run (or its baseline) gives no figure for a performance
/// case, or does not say which GPU they were timed on. Every file is read inside RUN without
/// following a link; the accepted kernel is copied into `gate_folder` (accepted-best.cu or
/// accepted-gate-baseline.cu), and `kernel` names that copy.
accepted_figures read_accepted_figures(const std::filesystem::path& run,
                                       const std::vector<replay_case>& cases,
                                       const std::filesystem::path& gate_folder);

}  // namespace cuopt
