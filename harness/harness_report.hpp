#pragma once
/// Everything one request's run learned, as plain data: request_runner's phases fill it
/// in, response_writer turns it into response.json. Kept apart so the timing loop never
/// touches JSON and the writer never touches the GPU.

#include <rapidjson/document.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/exit_codes.hpp"
#include "common/landlock.hpp"
#include "common/request.hpp"
#include "common/response_status.hpp"
#include "harness/case_runner.hpp"
#include "harness/device_info.hpp"
#include "harness/nvrtc_compiler.hpp"

namespace cuopt {

/// What the driver says about the loaded kernel (authoritative over ptxas's report).
struct kernel_attributes {
    int registers = 0;
    int static_shared_bytes = 0;
    int local_bytes = 0;  // per thread: stack frame plus spills
    int const_bytes = 0;
    int max_threads_per_block = 0;
};

/// The vendor library a vendor request called (the response's "vendor" block).
struct vendor_report {
    std::string library;    // "cublas", "cublaslt"
    std::string file;       // the soname that loaded
    std::string version;    // "13.0.2"
    std::string math_mode;  // "CUBLAS_DEFAULT_MATH"
    std::string notes;      // how the calls are made
};

/// The GPU time of every kernel one request ran (the response's "gpu_busy"): the candidate's
/// timed and untimed launches and the harness's own support kernels (input generation, L2
/// flush, stream hold, hashes), as the union of their CUPTI spans.
struct gpu_busy_report {
    std::string source = "none";     // "cupti"; "simulated" (the fake harness); "none"
    std::optional<double> ms = 0.0;  // nullopt: kernels ran but nothing measured them
    std::size_t kernels = 0;
    std::string note = "no kernel ran";  // why there is no figure, or what it leaves out
};

struct harness_report {
    exit_code code = exit_code::ok;
    response_status status = response_status::ok;
    std::string error;
    std::string mode = "run";        // run | compile_only
    cuopt::confinement confinement;  // how this process was confined (Landlock) when it ran
    std::filesystem::path request_file;
    std::filesystem::path request_folder;
    bool upstream_layout = false;
    std::string entry;
    std::optional<device_fingerprint> device;
    std::optional<compile_result> compile;  // none for a vendor request
    std::optional<vendor_report> vendor;    // vendor requests, once the library loaded
    std::optional<kernel_attributes> attributes;
    std::optional<timing_config> timing;
    // The clock that times launches (the response's "timer" block): CUPTI where it loaded
    // and is free, else CUDA events with the reason.
    std::string timer = "events";
    std::string timer_note;
    std::string timer_library;
    bool gpu_monitor = false;  // NVML read the GPU's state around each timed loop
    std::string gpu_monitor_note;
    gpu_busy_report gpu_busy;
    std::vector<case_outcome> cases;
    // Why a worker must not serve another request in this context once this one is answered
    // (its kernel was loaded and can malloc, or its module had writable globals); "" if none.
    std::string retire_reason;
    // The response path is one of the request's own files: the report is not written there.
    bool response_withheld = false;
    double wall_ms = 0;
    std::vector<std::pair<std::string, double>> phases_ms;  // where the wall time went, in order

    /// Records a failure; the first failure decides status and exit code.
    void fail(exit_code c, const std::string& message) {
        if (code != exit_code::ok) return;
        code = c;
        status = status_for(c);
        error = message;
    }
};

/// The response's `confinement` block: {mode: landlock, abi, read, write} or {mode: none, reason}.
rapidjson::Value confinement_json(const confinement& c, rapidjson::Document::AllocatorType& a);

/// The response document (schemas/response.schema.json) as pretty JSON text.
std::string write_response_json(const harness_report& report);

struct device_measurement;

/// The device block alone (the same object the response carries), for --device-info; with
/// `measured` (--measure) it also carries "measured", "peak_tflops" and "peak_note".
std::string write_device_json(const device_fingerprint& device,
                              const device_measurement* measured = nullptr);

}  // namespace cuopt
