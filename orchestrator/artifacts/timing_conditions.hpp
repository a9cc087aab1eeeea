#pragma once
/// How a run's launches were timed and what state the GPU was in while they were, summed
/// over the search's attempts from each response's timer block and each case's timing
/// details (issue 12): which clock (CUPTI, CUDA events, or a mix), the events' overhead
/// beside CUPTI, the range of clocks, temperatures and power, and every case timed while
/// the GPU throttled. run.json, summary.json, history.json and the closing lines read it.

#include <rapidjson/document.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json_fields.hpp"
#include "orchestrator/evaluation/attempt_evaluator.hpp"

namespace cuopt {

/// The clock a run timed with.
struct timer_use {
    std::string name;  // "cupti", "events", or "mixed" where cases were timed by both
    std::optional<std::string> note;     // why events: a response's note, else a case's
    std::optional<std::string> library;  // the CUPTI library that loaded
    std::map<std::string, int> cases;    // measured cases by their primary clock
    // Events median minus CUPTI's, the median over the cases whose clocks agree.
    std::optional<double> median_event_overhead_ms;
    int channels_disagree = 0;  // cases whose two clocks differed beyond the events' overhead
};

/// A measured case timed while a power, thermal or hardware slowdown held the clocks down.
struct throttled_case {
    int iteration = 0, attempt = 0;
    std::string label, case_name;
    std::vector<std::string> reasons;
};

/// The GPU's state over every measured case that reported one (before and after its loop).
struct gpu_state_summary {
    std::optional<std::string> source, note;  // the responses' gpu_monitor (nvml, or why none)
    int cases = 0;                            // measured cases with a GPU state
    std::optional<int> sm_clock_min_mhz, sm_clock_max_mhz, mem_clock_min_mhz, mem_clock_max_mhz;
    std::optional<int> max_temperature_c;
    std::optional<double> max_power_w, power_limit_w;
    std::vector<std::string> throttle_reasons;  // every slowing reason seen, sorted
    std::vector<throttled_case> throttled;      // in attempt order
};

/// Nothing when no response named a clock (a harness from before issue 12).
std::optional<timer_use> summarize_timer(const std::vector<attempt_result>& attempts);

/// Nothing when no response said anything about the GPU's state.
std::optional<gpu_state_summary> summarize_gpu_state(const std::vector<attempt_result>& attempts);

/// run.json's and summary.json's "timer": null or {name, note, library, cases, ...}.
rapidjson::Value timer_json(const std::optional<timer_use>& t,
                            rapidjson::Document::AllocatorType& a);

/// run.json's "gpu_state": null or {source, note, cases, clocks, ..., throttled}.
rapidjson::Value gpu_state_json(const std::optional<gpu_state_summary>& g,
                                rapidjson::Document::AllocatorType& a);

/// The inverse of gpu_state_json (run.json's "gpu_state", or a gate's): nothing for null or
/// anything that is not an object; a field absent or null reads as nothing (the schema has
/// been checked: one of another kind throws json_error).
std::optional<gpu_state_summary> gpu_state_from_json(const json_field& v);

/// history.json's per-case timing fields (iterations, timer, stop_rule, the noise, both
/// clocks' medians, the GPU state), added to the case's object.
void add_case_timing(rapidjson::Value& entry, const case_evaluation& ce,
                     rapidjson::Document::AllocatorType& a);

}  // namespace cuopt
