#include "orchestrator/gate/environment_check.hpp"

#include <cstdlib>

namespace cuopt {

namespace {

// Compared only where both sides say something: a stand-in harness tells less.
void compare_text(environment_comparison& out, const char* what, const std::string& recorded,
                  const std::string& now) {
    if (!recorded.empty() && !now.empty() && recorded != now)
        out.changes.push_back({what, recorded, now});
}

template <class T>
void compare_number(environment_comparison& out, const char* what, const std::optional<T>& recorded,
                    const std::optional<T>& now, const char* unit) {
    if (recorded && now && *recorded != *now)
        out.changes.push_back(
            {what, std::to_string(*recorded) + unit, std::to_string(*now) + unit});
}

// A clock NVML saw while the loops ran: boost clocks wander a little from run to run, so only a
// difference beyond k_clock_tolerance is a change worth naming.
constexpr double k_clock_tolerance = 0.05;
void compare_seen(environment_comparison& out, const char* what, const std::optional<int>& recorded,
                  const std::optional<int>& now) {
    if (recorded && now && std::abs(*now - *recorded) > k_clock_tolerance * *recorded)
        compare_number(out, what, recorded, now, " MHz");
}

std::string throttling(const gpu_state_summary& g, const char* when) {
    std::string reasons;
    for (const std::string& r : g.throttle_reasons) reasons += (reasons.empty() ? "" : ", ") + r;
    return std::to_string(g.throttled.size()) + " of " + std::to_string(g.cases) +
           " measured cases timed while throttled " + when +
           (reasons.empty() ? "" : " (" + reasons + ")");
}

void compare_state(environment_comparison& out, const std::optional<gpu_state_summary>& recorded,
                   const std::optional<gpu_state_summary>& now) {
    if (recorded && now) {
        compare_seen(out, "SM clock (max seen)", recorded->sm_clock_max_mhz, now->sm_clock_max_mhz);
        compare_seen(out, "memory clock (max seen)", recorded->mem_clock_max_mhz,
                     now->mem_clock_max_mhz);
    }
    if (now && !now->throttled.empty()) out.conditions.push_back(throttling(*now, "now"));
    if (recorded && !recorded->throttled.empty())
        out.conditions.push_back(throttling(*recorded, "when the figures were recorded"));
}

}  // namespace

environment_comparison compare_environment(const environment& recorded, const environment& now) {
    environment_comparison out;
    const device_summary &r = recorded.device, &n = now.device;
    if (!r.name.empty() && !n.name.empty() && r.name != n.name) {
        out.same_model = false;
        out.changes.push_back({"GPU model", r.name, n.name});
    }
    compare_text(out, "GPU UUID", r.uuid, n.uuid);
    compare_text(out, "compute capability", r.compute_capability, n.compute_capability);
    compare_text(out, "driver", r.driver_version, n.driver_version);
    compare_text(out, "NVRTC (toolkit)", r.nvrtc_version, n.nvrtc_version);
    compare_number(out, "SM clock max", r.sm_clock_max_khz, n.sm_clock_max_khz, " kHz");
    compare_number(out, "memory clock max", r.memory_clock_max_khz, n.memory_clock_max_khz, " kHz");
    compare_state(out, recorded.gpu_state, now.gpu_state);
    return out;
}

std::string describe(const environment_change& c) {
    return c.what + " changed: " + c.recorded + " -> " + c.now;
}

std::vector<std::string> environment_lines(const environment_comparison& c) {
    std::vector<std::string> out;
    for (const environment_change& x : c.changes) out.push_back(describe(x));
    out.insert(out.end(), c.conditions.begin(), c.conditions.end());
    return out;
}

}  // namespace cuopt
