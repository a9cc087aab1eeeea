#pragma once
/// The gate's harness runs. The accepted run's replay requests (best-case-N.json) become one
/// request per kernel and round in the gate's folder (GATE/round-R/ROLE/: kernel.cu,
/// request.json, its input files linked, outputs/), timed as the replay requests say (so each
/// checked launch is the one the run's oracle was made for); every output is held against
/// that oracle. With two kernels their order is reversed every other round.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/evaluation/attempt_evaluator.hpp"
#include "orchestrator/evaluation/replay_oracle.hpp"
#include "orchestrator/gate/gate_verdict.hpp"

namespace cuopt {

/// A kernel the gate times: "accepted" (the accepted kernel again) or "kernel" (--kernel).
struct gate_kernel {
    std::string role;
    std::filesystem::path source;
};

struct gate_plan {
    std::filesystem::path run, folder;  // the accepted run; the gate's own folder
    std::vector<replay_case> cases;
    std::vector<gate_kernel> kernels;  // each timed once per round
    int runs = 5;                      // rounds
    std::string harness;
    double timeout_s = 60;      // per harness run
    std::optional<int> device;  // else the replay requests' own
};

struct kernel_run {
    int round = 0;
    std::string role;
    attempt_result result;           // its cases (samples, GPU state); verdict valid or why not
    std::vector<std::string> wrong;  // every output that differs: "case 'x': c: ..."
    bool no_machine = false;         // nothing ran: no harness, driver or device
    std::optional<device_summary> device;
};

/// Per performance case, the samples of every valid run of `role`.
case_samples samples_of(const std::vector<kernel_run>& runs, const std::string& role);

/// One request holding every replay case; they must agree on the kernel and the timing.
/// Throws cannot_judge_error naming a request that is missing, unreadable or disagrees.
rapidjson::Document merged_replay_request(const std::vector<replay_case>& cases);

/// Every round; stops after a run that found no machine to run on.
std::vector<kernel_run> run_rounds(const gate_plan& plan,
                                   const std::function<void(const std::string&)>& progress);

}  // namespace cuopt
