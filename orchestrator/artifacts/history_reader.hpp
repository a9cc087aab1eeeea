#pragma once
/// history.json read back into the search's own records: the inverse of history_json, so that
/// `optimize --resume` keeps every completed attempt exactly as it was recorded (history_json
/// of what this reads is the text it read). What the file does not hold (a candidate's source
/// and launch, the per-launch samples, the response's timer and gpu_monitor blocks, the full
/// compile log) the caller adds from the attempt's folder (resume_state).

#include <rapidjson/document.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/evaluation/attempt_evaluator.hpp"

namespace cuopt {

/// history.json is missing, malformed or breaks its schema: what() names the file and field.
class history_read_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// One attempt as history.json has it, with the sha256 of its source (the source itself is not
/// in the file).
struct recorded_attempt {
    attempt_result result;
    std::string source_sha256;
};

/// The attempts of history.json's document (schema-checked first), paths resolved against the
/// run folder `run`. Throws history_read_error.
std::vector<recorded_attempt> history_from_json(const rapidjson::Value& doc,
                                                const std::filesystem::path& run);

/// RUN/history.json. Throws history_read_error.
std::vector<recorded_attempt> read_history(const std::filesystem::path& run);

}  // namespace cuopt
