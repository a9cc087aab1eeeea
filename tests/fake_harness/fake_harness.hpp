#pragma once
/// fake-harness's parts, shared between its files: the CPU stand-in for cuda-harness that the
/// integration tests start as a real process. main.cpp's opening comment lists every FAKE_*
/// marker and CUOPT_FAKE_* variable it honours; each file here holds one concern (inputs,
/// kernels, vendor calls, timing, the machine it claims to be, confinement, one request).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/harness_report.hpp"
#include "harness/request_reader.hpp"

namespace cuopt::fake {

// --- process state (fake_confinement.cpp) ---

extern bool g_worker;  // serving as --worker
// FAKE_DEVICE_HEAP: why the worker retires after this request (as the real one does after a
// kernel that can malloc); "" otherwise.
extern std::string g_retire_reason;
// --cubin-out FILE of a --compile-only run: the fake has no machine code, so the kernel's source
// stands in, after a FAKE-CUBIN line (a real cuobjdump refuses it; tests/fake-cuobjdump.sh
// prints the fixture its FAKE_SASS=NAME marker names).
extern std::string g_cubin_out;
extern confinement g_confinement;  // how this process is confined, for every response
extern std::filesystem::path
    g_read_root;  // its --root (else the request's folder): expected files lie in it

// The command line, as the real harness reads it (what the fake needs of it).
struct fake_options {
    std::string request, response, root;
    bool worker = false, device_info = false, measure = false, compile_only = false;
    bool unconfined = false, version = false;
    int device = 0;  // --device
};

fake_options parse_fake_options(int argc, char** argv);
// The tree the fake reads in: --root, else the request's folder (else, --worker, the current one).
std::filesystem::path fake_root(const fake_options& o);
// Confines this process before any request is read; false when the kernel refused it.
bool confine_fake(const fake_options& o);
// --worker: the real harness's loop, each request served by serve_one.
int serve_as_worker(const fake_options& fo);

// --- how a marker ends the process (fake_machine.cpp) ---

// What a crash, hang or early exit looks like from outside: the fake-harness binary really
// raises the signal, sleeps for ever or exits; served in memory (g_in_memory: the tests'
// in_memory_harness, a process_runner without a process) end_process throws it instead, and
// what a kernel would print on stdout goes to g_stdout.
struct process_ended {
    int signal = 0;          // the signal that ends it; 0 for none
    bool hangs = false;      // it never ends (the runner's timeout kills it)
    int exit_code = 0;       // without a signal or a hang
    std::string error_line;  // what it prints on stderr first
};
extern bool g_in_memory;
extern std::string g_stdout;
extern bool g_ended;  // in memory: end_process was called (no trace line: the binary writes none)
// Returns only where a raised signal did not end the process (blocked or ignored), as raise does.
void end_process(const process_ended& how);
// What only the binary can do (children, --worker), asked of the in-memory runner: not a
// fake-harness failure (exit 70) but the test's mistake, so it reaches the test.
struct needs_a_process : std::logic_error {
    using std::logic_error::logic_error;
};
// Text on stdout: the process's, or g_stdout in memory.
void print_stdout(const std::string& text);
// --device-info's answer (--measure: with the measured block), one line.
std::string fake_device_info(const fake_options& o);

// --- one request (serve_request.cpp) ---

// One request, as a one-shot fake harness or a fake worker serves it: the response written,
// the exit code returned (or the process crashes or hangs, as the markers ask).
int serve_one(const std::string& request_arg, const std::string& response_path, bool compile_only);

// --- inputs and outputs (fake_inputs.cpp) ---

// An i32 scalar argument's value.
std::int64_t scalar(const kernel_arg& a);
// The launch index whose values a generated input holds at the checked launch.
std::uint64_t values_launch(const kernel_arg& a, const request& req, const run_case& rc,
                            std::uint64_t checked);
// A buffer's values at launch `launch` as doubles, rounded to its dtype.
std::vector<double> values_of(const kernel_arg& a, std::uint64_t launch);
// Writes values in the buffer's dtype; the output record says what was written.
output_record write_values(const kernel_arg& a, const std::filesystem::path& file,
                           const std::vector<double>& v, const char* role);
// An output with a check, done on the CPU with the real harness's rule and expected files.
output_record checked_output(const kernel_arg& a, const std::vector<unsigned char>& bytes,
                             bool write);
// Values stored in `type`, element by element.
std::vector<unsigned char> stored_bytes(dtype type, const std::vector<float>& v);

// --- the simulated kernels (fake_kernels.cpp) ---

// What the fake kernel computed for one case, before C is stored in its dtype.
struct fake_gemm {
    std::int64_t m = 0, n = 0, k = 0;
    std::vector<double> a, b;  // the inputs' values, rounded to their dtypes
    std::vector<float> c;
};

// The name after "MARKER=" up to the next space, "" for a bare MARKER; nullopt without it.
std::optional<std::string> marker_value(const std::string& source, const std::string& marker);
// Why the fake cannot run case `rc` of its kernel as asked ("" when it can).
std::string fake_kernel_problem(const request& req, const run_case& rc);
// matmul_f32's or gemm_e4m3's C on the CPU, from the inputs of launch `launch`.
fake_gemm fake_kernel(const request& req, const run_case& rc, std::uint64_t launch);
// The markers that make C wrong (FAKE_WRONG, FAKE_OVERFIT, ...), applied to g.c.
void miscompute_c(fake_gemm& g, const request& req, const run_case& rc);
// C stored in its dtype, poisoned where the markers leave it unwritten, written or checked.
output_record store_c(const fake_gemm& g, const request& req, const run_case& rc);
// FAKE_WRITES_INPUT[=ARG]: what the real harness's input guard reports.
std::vector<std::string> inputs_changed(const run_case& rc, const std::string& source);

// --- vendor calls (fake_vendor.cpp) ---

// A vendor request's vendor block, clocks and cases, computed on the CPU.
void run_vendor_request(harness_report& report, const request& req);

// --- timing (fake_timing.cpp) ---

// CUOPT_FAKE_DEVICE_SLOWDOWN's factor for GPU `device`; 1 for a GPU it does not name.
double device_slowdown(int device);
// The response's timer and gpu_monitor blocks.
void describe_clocks(harness_report& report, const request& req, const std::string& source);
// Whether the checked launch is the last timed one.
bool checks_last_timed_launch(const timing_config& t);
// 1 plus, over the numeric defines, |value - 32| / 64: autotuning has a best.
double define_factor(const request& req);
// The median a measured case of the fake kernel reports, in ms per launch.
double fake_case_ms(const request& req, const run_case& rc, const fake_gemm& g,
                    const std::filesystem::path& request_file, double defines_factor);
// A measured case's samples and everything issue 12 reports beside them.
void time_case(case_outcome& out, const request& req, const std::string& source, double ms);
// The response's gpu_busy: the invented timed samples, capped at the request's wall time.
void simulate_busy(harness_report& report, std::chrono::steady_clock::time_point start);

// --- the machine it claims to be (fake_machine.cpp) ---

std::string fake_device_name();
int fake_driver_version();
// The device block of every response.
device_fingerprint fake_device_fingerprint();
// What --device-info --measure adds for GPU `device`.
std::string fake_measured(int device);
// Milliseconds from an environment variable (0 when unset).
double env_ms(const char* name);
// FAKE_PIDFILE, FAKE_CHILD_HANG and FAKE_ORPHAN_PIPE: the process's own misbehaviour.
void act_on_process_markers(const std::filesystem::path& request_folder, const std::string& src);
// The compile block: FAKE_COMPILE_ERROR's log, CUOPT_FAKE_COMPILE_MS's wait and cache marker.
compile_result fake_compile_result(const request& req);
// CUOPT_FAKE_WORKER_LOG=FILE: each request appends "PID worker|once REQUEST".
void log_worker_request(const std::string& request_arg);

// CUOPT_FAKE_TRACE=FILE: every request appends one line when it ends, in one write() (lines of
// concurrent requests never interleave): "compile|run device=N start_us=T end_us=T key=K pid=P
// folder=DIR" (times on CLOCK_MONOTONIC, key: the kernel's cubin cache key, shortened).
// CUOPT_FAKE_SLEEP_MS=x: a run request takes x ms more (the GPU busy measuring), so a test sees
// what ran in parallel.
class fake_trace {
  public:
    fake_trace(const request& req, std::filesystem::path folder, bool compile_only);
    ~fake_trace();
    fake_trace(const fake_trace&) = delete;
    fake_trace& operator=(const fake_trace&) = delete;

  private:
    const request& m_req;
    std::filesystem::path m_folder;
    bool m_compile_only;
    long long m_start;
};

}  // namespace cuopt::fake
