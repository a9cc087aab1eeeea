#pragma once
/// The per-device figures of a search on several GPUs, as run.json and summary.json give
/// them: for each device, the initial kernel's measurement there (iteration 0 on the first,
/// an extra baseline on the others), against which that device's attempts were scored.

#include <rapidjson/document.h>

#include <map>
#include <string>

#include "common/device_facts.hpp"
#include "orchestrator/evidence/winner_evidence.hpp"
#include "orchestrator/search/search_loop.hpp"

namespace cuopt {

/// [{"index", "initial": {...}}, ...]: the device of iteration 0, then every other one the
/// search measured on; with `infos` (--device-info JSON by index, for run.json) each also has
/// "device" and "attempts" (the attempts it measured, "ITERATION.ATTEMPT"); with `references`
/// (summary.json) each it names also has "name", "vendor" (that GPU's vendor run) and "sol"
/// (its floors from its own peaks, and the initial kernel's fraction of them there).
rapidjson::Value devices_json(const search_outcome& o, const std::map<int, device_facts>* infos,
                              rapidjson::Document::AllocatorType& a,
                              const std::vector<device_reference>* references = nullptr);

/// {"verdict", "reason", "geomean_ms", "median_ms": {case: ms}} of the initial kernel's run on
/// a device (null for none).
rapidjson::Value initial_figures_json(const attempt_result* r,
                                      rapidjson::Document::AllocatorType& a);

}  // namespace cuopt
