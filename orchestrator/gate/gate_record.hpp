#pragma once
/// Everything one gate found, as data: what was compared with what, on which machine, every
/// harness run, the latency comparisons and the verdict. gate.json and gate.html only read it.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/gate/environment_check.hpp"
#include "orchestrator/gate/gate_rounds.hpp"
#include "orchestrator/gate/gate_verdict.hpp"

namespace cuopt {

/// The gate's own options (`cuda-optimizer gate --help` shows the defaults).
struct gate_options {
    std::string accepted;     // the accepted run folder
    std::string kernel;       // a new version of the accepted kernel; "" = the accepted one
    double threshold = 0.05;  // a slowdown beyond 1 + threshold fails
    int runs = 5;             // harness runs (rounds) per kernel
    bool accept = false;      // record the kernel's figures as the new baseline
    std::string out;          // the gate's folder; "" = RUN/gate-NNN
    std::string harness;      // "" = cuda-harness beside cuda-optimizer
    double timeout_s = 60;    // per harness run
    std::optional<int> device;
};

struct gate_record {
    gate_options options;
    std::filesystem::path run, folder;              // the accepted run; this gate's folder
    std::filesystem::path accepted_kernel, kernel;  // their sources (the same without --kernel)
    std::string figures_source;                     // where the accepted figures came from
    std::string started, finished;
    double wall_s = 0;
    environment recorded, now;
    std::optional<environment_comparison> comparison;  // once a run answered
    std::vector<kernel_run> runs;
    std::optional<latency_report> latency;
    gate_verdict verdict;
    int exit_code = 0;
    bool baseline_written = false;  // --accept recorded RUN/gate-baseline.json
    std::string baseline_note;      // why --accept did not, or what it replaced
};

}  // namespace cuopt
