#pragma once
/// cuda-harness as a worker: one process serves many requests, so the driver, the context,
/// CUPTI, NVML and the support kernels start once instead of once per candidate. Each stdin
/// line names a request (a path, or {"request": PATH, "response": PATH}); the worker writes
/// the response file exactly as a one-shot harness would and answers with one JSON line on
/// stdout. Freed device memory is zeroed. After a reply whose exit code leaves the process
/// untrustworthy (a sticky CUDA error, a failed case, an internal error) the worker exits with
/// that code, and after a request whose kernel could leave state the context keeps (device
/// heap, module globals) it retires with 0, its reply saying why ("retired"): either way the
/// next request starts in a fresh process. End of input ends it with 0.

#include <functional>
#include <iosfwd>
#include <string>

#include "common/exit_codes.hpp"
#include "harness/harness_options.hpp"
#include "harness/request_runner.hpp"

namespace cuopt {

/// A worker's loop: requests from `in` until its end, each served by `serve` (the real
/// harness; the fake harness of the tests passes its own), one reply line each on `out`.
/// Returns the process's exit code.
int serve_worker(
    const harness_options& o, std::istream& in, std::ostream& out,
    const std::function<served_request(const harness_options&)>& serve = serve_request);

/// serve_worker on stdin, its replies on what was stdout, with fd 1 pointed at stderr first:
/// a kernel's printf (flushed to fd 1) can never be taken for a reply. `confine` runs once the
/// reply channel is set up and before the first request is read (false: exit 70); by default
/// the harness's own Landlock confinement.
int serve_worker_on_stdio(
    const harness_options& o,
    const std::function<served_request(const harness_options&)>& serve = serve_request,
    const std::function<bool()>& confine = {});

/// Whether a worker must exit after answering a request that ended with `code`.
bool worker_must_exit(exit_code code);

}  // namespace cuopt
