#pragma once
/// The phases of a request that run its cases, once request_runner has made the device's
/// context current: the compiled kernel loaded (or the vendor library), every case checked
/// against the device and the kernel, the clocks started (CUPTI, NVML), then the cases run and
/// timed. Each phase records its failure in the report and stops the rest.

#include <functional>

#include "harness/harness_options.hpp"
#include "harness/harness_report.hpp"

namespace cuopt {

/// Whether any case of the request is measured (timed).
bool any_measured(const request& req);

/// The request's busy time, once its kernels are done: every span CUPTI delivered since
/// start_busy_clock.
void stop_busy_clock(harness_report& report);

/// The compiled kernel in the primary context, its attributes read and every case checked
/// against it; then the cases run (none when one was rejected). `lap` closes each phase.
void run_kernel_phases(const request& req, const harness_options& o, harness_report& report,
                       const std::function<void(const char*)>& lap);

/// The vendor library (cuBLAS, cuBLASLt or the CUB launcher) loaded and a handle made in the
/// primary context; then the cases run. Without the library, every case says why it did not
/// run and the request fails as internal_error.
void run_vendor_phases(const request& req, const harness_options& o, harness_report& report,
                       const std::function<void(const char*)>& lap);

}  // namespace cuopt
