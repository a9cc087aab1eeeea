#pragma once
/// candidates/iter-NN/candidates.json: one iteration's candidates as the proposer gave them
/// (the batch, then each repair asked for), rewritten atomically before any of them is
/// evaluated, so that `optimize --resume` evaluates exactly what the killed run would have,
/// without asking the proposer (a model) again. Every field of a candidate is kept: source,
/// entry, defines, tunables, compile options, launch and per-case launches, label, proposer,
/// rationale, parent iteration and why a proposer gave up on it (schemas/candidates.schema.json).

#include <rapidjson/document.h>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "orchestrator/search/search_record.hpp"

namespace cuopt {

/// A candidates.json that cannot be read: what() names the file and the field.
class candidates_file_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// The file's text for one iteration.
std::string candidates_json(int iteration, const iteration_record& record);

/// The inverse of candidates_json (schema-checked first; launches over the manifest's).
/// Throws candidates_file_error naming `source`.
iteration_record iteration_record_from_json(const rapidjson::Value& doc, const manifest& m,
                                            const std::string& source);

/// RUN/candidates/iter-NN/candidates.json.
std::filesystem::path candidates_file(const std::filesystem::path& run, int iteration);

/// Writes it atomically.
void write_candidates_file(const std::filesystem::path& run, int iteration,
                           const iteration_record& record);

/// Every iteration's record in the run folder, by iteration number. Throws
/// candidates_file_error.
std::map<int, iteration_record> read_candidates_files(const std::filesystem::path& run,
                                                      const manifest& m);

}  // namespace cuopt
