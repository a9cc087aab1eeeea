#pragma once
/// The harness's phases in order: read the request, compile, load, check every
/// case against the device and kernel, run and time each case. Each phase records
/// its failure in the report and stops the rest; nothing here exits the process.

#include "harness/harness_options.hpp"
#include "harness/harness_report.hpp"

namespace cuopt {

harness_report run_request(const harness_options& options);

}  // namespace cuopt
