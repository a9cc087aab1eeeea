#pragma once
/// The orchestrator's side of the response contract, mirroring the harness's
/// response_writer: response.json, checked against schemas/response.schema.json, as
/// typed data. Nothing else in the orchestrator reads a response's JSON.

#include <rapidjson/document.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/dtype.hpp"
#include "common/element_check.h"
#include "common/json_fields.hpp"
#include "common/landlock.hpp"
#include "common/name_table.hpp"
#include "common/response_status.hpp"

namespace cuopt {

/// The compile block: what NVRTC and the driver said about the kernel.
struct compile_summary {
    bool ok = false;
    bool cache_hit = false;
    double wall_ms = 0;
    std::string log;
    std::optional<int> registers, static_shared_bytes, local_bytes, spill_store_bytes;
    std::string lowered_name;  // the entry's name in the cubin (mangled unless extern "C")
    std::string arch;          // what it was compiled for: "sm_90"
};

/// The clock that timed a case's launches: CUPTI's kernel records (GPU time of the kernel
/// alone) or CUDA events around each launch (which add about a microsecond of their own).
enum class response_timer_kind { cupti, events };
inline constexpr auto k_response_timer_kinds = make_name_table<response_timer_kind>(
    {{response_timer_kind::cupti, "cupti"}, {response_timer_kind::events, "events"}});

/// What ended a case's timed loop: the fixed count, the noise target (adaptive) or the cap.
enum class response_stop_rule { fixed, target_noise, cap };
inline constexpr auto k_response_stop_rules =
    make_name_table<response_stop_rule>({{response_stop_rule::fixed, "fixed"},
                                         {response_stop_rule::target_noise, "target_noise"},
                                         {response_stop_rule::cap, "cap"}});

/// The response's top-level timer block: the clock the harness timed with, and why events
/// where CUPTI was not used ("CUPTI not found: ...", "timing.timer is events").
struct response_timer {
    response_timer_kind name = response_timer_kind::events;
    std::optional<std::string> note, library;
};

/// The response's gpu_monitor block: where the GPU's state came from (nvml), or why nowhere.
struct response_gpu_monitor {
    std::optional<std::string> source, note;
};

/// Where a response's gpu_busy figure comes from: CUPTI's kernel records, a stand-in harness's
/// invention, or nowhere.
enum class gpu_busy_source { cupti, simulated, none };
inline constexpr auto k_gpu_busy_sources =
    make_name_table<gpu_busy_source>({{gpu_busy_source::cupti, "cupti"},
                                      {gpu_busy_source::simulated, "simulated"},
                                      {gpu_busy_source::none, "none"}});

/// The response's gpu_busy block: how long the GPU was busy with every kernel the request ran
/// (support kernels included). ms absent: kernels ran but nothing measured them (the note
/// says why); 0 with source none: no kernel ran.
struct response_gpu_busy {
    std::optional<double> ms;
    std::optional<std::int64_t> kernels;
    gpu_busy_source source = gpu_busy_source::none;
    std::optional<std::string> note;
};

/// One clock's figures for a case (the old median_ms etc. are the primary channel's).
struct response_channel {
    double median_ms = 0, min_ms = 0, max_ms = 0;
    std::vector<double> samples_ms;
};

/// NVML's reading of the GPU at one moment; a figure NVML could not give is absent.
struct response_gpu_reading {
    std::optional<int> sm_clock_mhz, mem_clock_mhz, temperature_c;
    std::optional<double> power_w, power_limit_w;
    std::vector<std::string> throttle_reasons;  // every reason set, benign ones included
    std::optional<std::uint64_t> throttle_mask;
};

/// The GPU around a case's timed loop. throttled: a power, thermal or hardware slowdown was
/// active before or after; throttle_reasons: the union of those (never the benign ones).
struct response_gpu_state {
    std::optional<response_gpu_reading> before, after;
    bool throttled = false;
    std::vector<std::string> throttle_reasons;
};

/// How a case's samples were taken (issue 12): every field absent in a response from a
/// harness that predates them.
struct response_timing_details {
    std::optional<response_timer_kind> timer;  // the primary channel
    std::optional<std::string> timer_note;     // why this case's primary is not the run's
    std::optional<response_channel> cupti, events;
    std::optional<double> event_overhead_ms;  // events median minus CUPTI median
    std::optional<bool> channels_agree;       // false: beyond the known event overhead
    std::optional<response_stop_rule> stop_rule;
    std::optional<double> relative_standard_error;  // of the primary median
    std::optional<double> gpu_time_ms;              // sum of the primary samples
    std::optional<response_gpu_state> gpu_state;
};

struct response_timing {
    int warmup = 0, iterations = 0;  // iterations: the timed launches taken (adaptive: <= cap)
    double median_ms = 0, mean_ms = 0, min_ms = 0, max_ms = 0, stdev_ms = 0;
    std::vector<double> samples_ms;
    response_timing_details details;
};

/// An output the harness checked against the oracle on the GPU (the request's check): the
/// tally of element_check.h's rule and the rule's numbers, as the CPU comparison would give.
struct response_check {
    std::string expected_sha256;
    std::uint64_t count = 0;
    cuopt_check::tally tally = cuopt_check::empty_tally();
    double allowed_atol = 0, rtol = 0;
    bool rms_scaled = false;
    dtype type = dtype::u8;    // the rule's element type, as the harness applied it
    std::uint64_t poison = 0;  // and its poison bits
};

struct response_output {
    std::string arg;
    bool is_input_dump = false;  // role "input_dump": the inputs a reference launch saw
    std::filesystem::path file;  // resolved against the response's folder; empty: not written
    dtype type = dtype::f32;
    std::uint64_t count = 0;
    std::string sha256;  // "" when no file was written
    std::uint64_t unwritten = 0;
    std::optional<response_check> check;
};

struct response_case {
    std::string name;
    std::string entry;  // vendor requests: the routine called ("cublas:sgemm"); else ""
    case_run_status status = case_run_status::skipped;
    std::string error;
    bool measured = false;
    std::optional<response_timing> timing;
    std::vector<response_output> outputs;
    std::vector<std::string> inputs_changed;  // declared inputs the checked launch wrote into
};

/// The vendor block: the library a vendor request called instead of a kernel.
struct vendor_summary {
    std::string library;  // "cublas", "cublaslt", "cub"
    std::string file;     // the soname that loaded
    std::string version;
    std::string math_mode;  // "CUBLAS_DEFAULT_MATH": no TF32
    std::string notes;
};

/// The device block: the GPU that ran the request, under which driver and NVRTC (the
/// toolkit's). run.json's device (cuda-harness --device-info) has the same fields. A field a
/// device does not tell (a stand-in harness) is empty or absent.
struct device_summary {
    std::string name, uuid, compute_capability, driver_version, nvrtc_version;
    std::optional<std::int64_t> sm_clock_max_khz, memory_clock_max_khz;
    bool simulated = false;  // "simulated": true: a stand-in harness, no GPU measured anything
};

/// A device object, a response's or --device-info's: a field absent or of another kind reads
/// as empty.
device_summary read_device_summary(const rapidjson::Value& device);

/// One GPU reading (clocks, temperature, power, throttling), as a response's gpu_state and
/// history.json hold it: every field optional, one of another kind refused naming it.
response_gpu_reading read_gpu_reading(const json_field& reading);

/// Mode "none", reason "the harness did not report its confinement": what a response from a
/// harness that predates the confinement block says.
cuopt::confinement unreported_confinement();

struct harness_response {
    response_status status = response_status::internal_error;
    std::string error;
    int exit_code = 0;
    std::optional<compile_summary> compile;  // none for a vendor request
    std::optional<vendor_summary> vendor;    // vendor requests whose library loaded
    std::optional<device_summary> device;    // absent where the harness reached no device
    std::vector<response_case> cases;
    std::optional<response_timer> timer;              // absent from an older harness
    std::optional<response_gpu_monitor> gpu_monitor;  // likewise
    std::optional<response_gpu_busy> gpu_busy;        // likewise
    /// How the harness confined itself (Landlock) before it read the request; a response
    /// without the block (a harness that predates it) reads as mode "none".
    cuopt::confinement confinement = unreported_confinement();
};

/// Reads and schema-checks a response; throws json_error naming the file and field. The
/// timer, gpu_monitor, gpu_busy and per-case timing details are optional (older responses lack
/// them), but where present each is type-checked here too.
harness_response read_response(const std::filesystem::path& file);

}  // namespace cuopt
