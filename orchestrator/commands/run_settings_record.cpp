// The settings of record, as run.json keeps them.
#include "orchestrator/commands/run_settings_record.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/commands/device_list.hpp"
#include "orchestrator/evaluation/harness_workers.hpp"

namespace cuopt {

namespace {

// "0,1".
std::string device_list_text(const std::vector<int>& devices) {
    std::string out;
    for (const int d : devices) out += (out.empty() ? "" : ",") + std::to_string(d);
    return out;
}

// The cost sheet's economics, where given, among the settings of record: `report RUN_DIR` then
// shows the same figures without the flags.
void record_economics(const report_economics& e, run_info& info) {
    const std::pair<const char*, std::optional<double>> economics[] = {
        {"invocations_per_month", e.invocations_per_month},
        {"gpu_hour_cost_usd", e.gpu_hour_cost_usd},
        {"engineer_hours", e.engineer_hours},
        {"engineer_rate_usd", e.engineer_rate_usd}};
    for (const auto& [key, value] : economics)
        if (value) info.settings[key] = *value;
}

}  // namespace

void record_settings(const optimizer_options& o, int device, run_info& info) {
    info.settings = {{"max_iterations", std::int64_t{o.search.max_iterations}},
                     {"min_gain", o.search.min_gain},
                     {"max_repairs", std::int64_t{o.search.max_repairs}},
                     {"timeout_s", o.timeout_s},
                     {"isolation", std::string(k_harness_isolations.name(o.isolation))},
                     {"seed", o.seed},
                     {"batch", std::int64_t{o.batch}},
                     {"device", std::int64_t{device}},
                     {"devices", device_list_text(devices_of(o))},
                     {"compile_threads", std::int64_t{compile_threads_of(o)}},
                     {"warmup", std::int64_t{o.timing.warmup}},
                     {"iterations", std::int64_t{o.timing.iterations}},
                     {"timing_mode", std::string(k_timing_modes.name(o.timing.mode))},
                     {"timer", std::string(k_timer_choices.name(o.timing.timer))},
                     {"min_samples", std::int64_t{o.timing.min_samples}},
                     {"min_time_ms", o.timing.min_time_ms},
                     {"target_rse", o.timing.target_rse},
                     {"profile_timeout_s", o.profile_timeout_s},
                     {"use_nsight", o.use_nsight},
                     {"nvidia_research", o.nvidia_research},
                     {"description", o.description},
                     {"signature", o.signature},
                     {"holdout_cases", o.holdout_cases},
                     {"evidence", !o.no_evidence},
                     {"significance_runs", std::int64_t{o.significance_runs}},
                     {"rerank", std::int64_t{o.rerank}},
                     {"stop_at_sol", o.search.stop_at_sol}};
    record_economics(o.economics, info);
}

}  // namespace cuopt
