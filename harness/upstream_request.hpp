#pragma once
/// The single-case request layout of the agentic-cuda-optimizer v0.0 runner
/// (top-level source, kernel, grid, block, shared_memory_bytes, warmup, iterations,
/// arguments with kind/direction/bytes/input_file/type/value), converted into this
/// project's layout so its users can replay the requests they already have.

#include <rapidjson/document.h>

#include <filesystem>
#include <string>

namespace cuopt {

/// True when the document looks like a v0.0 request (no schema_version, has arguments).
bool is_upstream_layout(const rapidjson::Value& doc);

/// Validates against schemas/request-v0.schema.json and returns the equivalent
/// native request document. Output buffers without output_file go to outputs/argN.bin.
rapidjson::Document convert_upstream_request(const rapidjson::Value& doc,
                                             const std::filesystem::path& folder,
                                             const std::string& source_name);

}  // namespace cuopt
