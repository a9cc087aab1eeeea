#pragma once
/// The orchestrator's side of the response contract, mirroring the harness's
/// response_writer: response.json, checked against schemas/response.schema.json, as
/// typed data. Nothing else in the orchestrator reads a response's JSON.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/dtype.hpp"
#include "common/response_status.hpp"

namespace cuopt {

/// The compile block: what NVRTC and the driver said about the kernel.
struct compile_summary {
    bool ok = false;
    bool cache_hit = false;
    double wall_ms = 0;
    std::string log;
    std::optional<int> registers, static_shared_bytes, local_bytes, spill_store_bytes;
};

struct response_timing {
    int warmup = 0, iterations = 0;
    double median_ms = 0, mean_ms = 0, min_ms = 0, max_ms = 0, stdev_ms = 0;
    std::vector<double> samples_ms;
};

struct response_output {
    std::string arg;
    bool is_input_dump = false;  // role "input_dump": the inputs a reference launch saw
    std::filesystem::path file;  // resolved against the response's folder
    dtype type = dtype::f32;
    std::uint64_t count = 0;
    std::string sha256;
    std::uint64_t unwritten = 0;
};

struct response_case {
    std::string name;
    std::string entry;  // vendor requests: the routine called ("cublas:sgemm"); else ""
    case_run_status status = case_run_status::skipped;
    std::string error;
    bool measured = false;
    std::optional<response_timing> timing;
    std::vector<response_output> outputs;
};

/// The vendor block: the library a vendor request called instead of a kernel.
struct vendor_summary {
    std::string library;  // "cublas"
    std::string file;     // the soname that loaded
    std::string version;
    std::string math_mode;  // "CUBLAS_DEFAULT_MATH": no TF32
    std::string notes;
};

struct harness_response {
    response_status status = response_status::internal_error;
    std::string error;
    int exit_code = 0;
    std::optional<compile_summary> compile;  // none for a vendor request
    std::optional<vendor_summary> vendor;    // vendor requests whose library loaded
    std::vector<response_case> cases;
};

/// Reads and schema-checks a response; throws json_error naming the file and field.
harness_response read_response(const std::filesystem::path& file);

}  // namespace cuopt
