#pragma once
/// The evidence block of summary.json (schemas/summary.schema.json, "evidence") and the
/// closing lines that say the same to a person: which candidates were checked and why
/// any was disqualified, the re-measured speedup with its interval and the A/A control,
/// the speed-of-light fractions and the vendor library's times.

#include <rapidjson/document.h>

#include <string>

#include "orchestrator/evidence/winner_evidence.hpp"

namespace cuopt {

rapidjson::Value evidence_json(const evidence_report& ev, const search_outcome& o,
                               const manifest& m, rapidjson::Document::AllocatorType& a);

/// Lines for the end of a run (each ends in a newline); "" when the evidence did not run.
/// `simulated`: a fake harness's run, whose clocks and GPU state are invented.
std::string evidence_lines(const search_outcome& o, const evidence_report& ev, bool simulated);

}  // namespace cuopt
