#pragma once
/// The request reader's parts and what they share: request_reader.cpp reads the request,
/// kernel_arg_reader.cpp one argument of a case, vendor_call_reader.cpp a case's vendor_call.
/// A check the schema cannot make fails at its field; a path a field names is resolved in the
/// request's folder or the harness's root.

#include <filesystem>
#include <string>

#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/request.hpp"

namespace cuopt::request_fields {

/// "<file>: field cases[0].args[1].count: <what>": the checks the schema cannot make.
[[noreturn]] void fail(const json_field& f, const std::string& what);

/// `f`'s member `key` for messages, present or not.
json_field member_at(const json_field& f, const std::string& key);

/// A path the request reads or writes as a file: inside its folder, and not a directory.
std::filesystem::path resolve_file(const request& req, const json_field& f);

/// A file relative to the request's folder, anywhere in the harness's root (what a candidate's
/// compile must not read stays out of its folder: the oracle, the inputs key).
std::filesystem::path resolve_in_root(const request& req, const json_field& f);

/// One argument of a case: a scalar (its exact value) or a buffer (its count, input, output,
/// input dump, timing_inputs and check).
kernel_arg read_arg(const request& req, const json_field& a);

/// A vendor request's case's vendor_call: the op paired with `library`, its dimensions, and
/// each operand a buffer (or f32 scalar, for a scale) of the case with the dtype and count the
/// op needs.
vendor_call read_vendor_call(const json_field& v, const run_case& rc, vendor_library library);

}  // namespace cuopt::request_fields
