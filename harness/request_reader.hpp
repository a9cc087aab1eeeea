#pragma once
/// Reads a request file into a `request`: JSON syntax, the schema, then what a
/// schema cannot say (exactly one source, buffer vs scalar, file sizes against
/// dtype x count, paths inside the request folder, unique outputs). Every problem
/// is a json_error whose text names the file, the field and what was expected.

#include <filesystem>

#include "common/request.hpp"

namespace cuopt {

request read_request(const std::filesystem::path& file);

/// Every output and dump path a request names, readable even when the rest of the
/// request is bad (best effort, never throws): they are removed before running so
/// a stale file is never mistaken for this run's result.
std::vector<std::filesystem::path> declared_output_paths(const std::filesystem::path& file);

}  // namespace cuopt
