#pragma once
/// One reader for a candidate given as JSON, shared by the proposers: the model's
/// compile and submit_candidate arguments (schemas/candidate.schema.json) and the side
/// file beside a .cu for --proposer files (schemas/candidate-file.schema.json). Both
/// are schema-checked first; then each field present replaces the candidate's.

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "orchestrator/contract/candidate.hpp"

namespace cuopt {

/// Checks `v` against the named embedded schema (`what` names it in messages), then
/// applies its entry, rationale, defines, compile_options, launch and case_launch to
/// `c` (launches over the manifest's). "" on success, else the problem in one line.
std::string apply_candidate_json(candidate& c, const rapidjson::Value& v, const manifest& m,
                                 std::string_view schema, const std::string& what);

}  // namespace cuopt
