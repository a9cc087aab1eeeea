#pragma once
/// One request, from its file to its response file: the harness's phases in order (read the
/// request, compile, load, check every case against the device and kernel, run and time each
/// case), then the response written and the lines a one-shot harness prints. Each phase records
/// its failure in the report and stops the rest; nothing here exits the process. A one-shot
/// cuda-harness serves one request this way, a worker (worker_loop) one per stdin line. The
/// phases that run the cases, once the context is current, are in run_phases.

#include <string>

#include "common/exit_codes.hpp"
#include "harness/harness_options.hpp"
#include "harness/harness_report.hpp"

namespace cuopt {

/// One request served: the response file written, and what a one-shot harness would have
/// printed on stderr (the error line, and the summary unless --quiet).
struct served_request {
    exit_code code = exit_code::ok;
    std::string status;    // the response's status ("ok", "cuda_error", ...)
    std::string messages;  // stderr text
    // Why the worker exits after this reply although the request went well: its kernel may
    // have left device-heap blocks or global memory behind in the context; "" to go on.
    std::string retire_reason;
    double wall_ms = 0;
};

/// Runs o.request and writes its response (o.response or beside the request).
served_request serve_request(const harness_options& o);

/// The phases alone: everything the run learned, nothing written.
harness_report run_request(const harness_options& options);

/// Why the request and response paths cannot be served (one line; "" when they can): either is
/// a directory, the request resolves (through a link) outside the folder the harness reads, or
/// the response would replace a file that is not an earlier cuda-harness response (the request
/// itself, its kernel source, a user's data: the harness writes over only its own responses).
/// `response_flag` names the response in the line ("--response" or a worker line's "response").
std::string path_arguments_problem(const harness_options& o, const char* response_flag);

}  // namespace cuopt
