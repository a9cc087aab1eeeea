#pragma once
/// The speed-of-light floor of a performance case: the least time any kernel could
/// take on this device. Memory: every input read once from DRAM (L2 is flushed before
/// each launch) and the output bytes that cannot stay in the write-back L2 written once
/// (an inout both), from the manifest's counts and dtypes, over the device's copy
/// bandwidth as the harness measured it (--device-info --measure). Compute, where the
/// case gives a `flops` expression: the flops over the device's highest dense peak for
/// any of its buffers' dtypes (tensor cores included: a floor must never reject a
/// legitimate kernel). The floor is the larger of the two. A median below 0.9x the floor is not a
/// fast kernel but a broken measurement or a trick: the attempt is `impossible_time`.

#include <map>
#include <optional>
#include <string>

#include "common/device_facts.hpp"
#include "orchestrator/contract/manifest.hpp"

namespace cuopt {

/// What the floor needs to know about the device (from --device-info --measure).
struct device_peaks {
    double copy_bandwidth_gbps = 0;             // 0: not measured
    double l2_bytes = 0;                        // writes up to this may end in L2
    std::map<std::string, double> peak_tflops;  // by dtype name, plus "tf32"
};

/// The measured bandwidth, L2 size and peaks of a device's facts (absent: zero/empty).
device_peaks peaks_of(const device_facts& device);

struct sol_floor {
    double bytes = 0;  // that must cross DRAM
    double memory_ms = 0;
    /// The memory SOL: every input read and every output written once (an inout both) at the
    /// measured bandwidth, with no L2 credit: "bytes moved / measured DRAM bandwidth". A kernel
    /// whose outputs stay in L2 at its end can beat it; the floor above is the guard.
    double traffic_bytes = 0;
    double traffic_ms = 0;
    std::optional<double> flops;
    std::optional<double> compute_ms;
    double floor_ms = 0;
    std::string bound;  // "memory" or "compute"
};

/// The floor of one case (nullopt when the bandwidth was not measured).
std::optional<sol_floor> floor_for_case(const manifest& m, const manifest_case& c,
                                        const device_peaks& d);

/// Every performance case's floor, by case name.
std::map<std::string, sol_floor> floors_for(const manifest& m, const device_peaks& d);

/// T_SOL / T: 1 at the speed of light.
inline double sol_fraction(double floor_ms, double median_ms) {
    return median_ms > 0 ? floor_ms / median_ms : 0;
}

/// SOL-ExecBench's score: 1 / (1 + (T_k - T_sol) / (T_b - T_sol)): 0.5 for the baseline
/// itself, 1 at the speed of light. nullopt when the baseline is at or below the floor.
std::optional<double> sol_score(double kernel_ms, double baseline_ms, double floor_ms);

}  // namespace cuopt
