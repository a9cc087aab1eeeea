#pragma once
/// The machine a gate measures on against the one the accepted figures came from: the GPU
/// model (another model cannot be judged at all), its UUID, the driver, NVRTC (the toolkit),
/// the device's maximum clocks, and the state NVML saw around the timed loops (clock ranges,
/// throttling). Each difference is named, so a failing gate says what else changed.

#include <optional>
#include <string>
#include <vector>

#include "orchestrator/artifacts/timing_conditions.hpp"
#include "orchestrator/contract/response_reader.hpp"

namespace cuopt {

/// Where a kernel was timed: the device and NVML's readings over its measured cases.
struct environment {
    device_summary device;
    std::optional<gpu_state_summary> gpu_state;
};

struct environment_change {
    std::string what;  // "driver", "NVRTC (toolkit)", "GPU UUID", "SM clock max", ...
    std::string recorded, now;
};

struct environment_comparison {
    bool same_model = true;  // false: another GPU model, nothing can be judged
    std::vector<environment_change> changes;
    std::vector<std::string> conditions;  // throttling then or now, in words
};

environment_comparison compare_environment(const environment& recorded, const environment& now);

/// "driver changed: 570.86 -> 575.51".
std::string describe(const environment_change& c);

/// The comparison as the verdict names it: every change, then every condition.
std::vector<std::string> environment_lines(const environment_comparison& c);

}  // namespace cuopt
