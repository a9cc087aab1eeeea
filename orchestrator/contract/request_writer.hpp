#pragma once
/// The orchestrator's side of the request contract, mirroring the harness's
/// request_reader: a `request` (common/request.hpp) built in memory becomes request
/// JSON, every path written relative to the request's folder. Attempt requests,
/// replay requests and the preflight's compile check all go through here.

#include <string>

#include "common/request.hpp"

namespace cuopt {

/// The request as JSON text (schemas/request.schema.json). The kernel is named by
/// `kernel.source_name`, a path relative to `folder`; its text is not written (its
/// `display_name`, when set, is written as `source_name`: what NVRTC's messages call it). A request
/// with `vendor` set is written with "vendor" instead of "kernel", and its cases with their
/// vendor_call instead of a launch. Throws std::invalid_argument for an absolute path
/// outside `folder`.
std::string write_request_json(const request& req);

}  // namespace cuopt
