// The machine the fake claims to be: its device fingerprint and measured numbers, the compile
// it pretends (cache markers, NVRTC's time), its trace and worker log, and its children.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "common/file_io.hpp"
#include "common/sha256.hpp"
#include "fake_harness.hpp"
#include "harness/cubin_cache.hpp"

namespace cuopt::fake {

namespace {

// A child that inherits stdout and stderr and sleeps; its pid goes to `pid_file` when given.
void start_sleeping_child(const std::filesystem::path& pid_file) {
    const pid_t pid = fork();
    if (pid == 0) {
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (!pid_file.empty()) write_file_atomic(pid_file, std::to_string(pid));
}

// Sleeps `ms` milliseconds (none for 0).
void sleep_ms(double ms) {
    if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

// CLOCK_MONOTONIC in microseconds: one clock for every process on the machine.
long long monotonic_us() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<long long>(t.tv_sec) * 1000000 + t.tv_nsec / 1000;
}

// The kernel as the cubin cache keys it (source, name, entry, options, defines), shortened.
std::string kernel_key(const request& req) {
    return cubin_cache::key_for(req.kernel, "sm_90").substr(0, 16);
}

// CUOPT_FAKE_COMPILE_MS=x: NVRTC's time, spent once per kernel: a compile that succeeds leaves a
// marker in the cubin cache folder ($CUDA_HARNESS_CACHE_DIR, ...), where a later request for
// the same kernel (a compile ahead, then its run) finds it: compile.cache_hit, no wait.
// Unset: no request waits, none is a hit, no marker is left.
bool fake_compile(const request& req, bool ok) {
    const double ms = env_ms("CUOPT_FAKE_COMPILE_MS");
    if (ms <= 0) return false;
    const std::filesystem::path marker =
        cubin_cache::default_folder() / ("fake-" + kernel_key(req) + ".compiled");
    if (std::filesystem::exists(marker)) return true;
    sleep_ms(ms);
    if (ok) {
        std::filesystem::create_directories(marker.parent_path());
        write_file_atomic(marker, std::string());
    }
    return false;
}

}  // namespace

// The GPU model and driver the fake claims to be (CUOPT_FAKE_DEVICE_NAME,
// CUOPT_FAKE_DRIVER_VERSION).
std::string fake_device_name() {
    const char* v = std::getenv("CUOPT_FAKE_DEVICE_NAME");
    return v && *v ? v : "fake CPU device";
}
int fake_driver_version() {
    const char* v = std::getenv("CUOPT_FAKE_DRIVER_VERSION");
    return v && *v ? std::atoi(v) : 0;
}

// The device block of every response: the model and driver it claims, sm_90 with one SM,
// simulated.
device_fingerprint fake_device_fingerprint() {
    device_fingerprint dev;
    dev.name = fake_device_name();
    dev.driver_version = fake_driver_version();
    dev.cc_major = 9;
    dev.sm_count = 1;
    dev.nvrtc_version = "fake";
    dev.simulated = true;
    return dev;
}

// What --device-info --measure adds for GPU `device`: fixed numbers over its slowdown, never
// cached.
std::string fake_measured(int device) {
    const double s = device_slowdown(device);
    char out[512];
    std::snprintf(
        out, sizeof out,
        ",\n  \"measured\": { \"copy_bandwidth_gbps\": %g, \"bytes\": 536870912, "
        "\"repetitions\": 20, \"method\": \"fake: fixed numbers\", \"cached\": false },\n"
        "  \"peak_tflops\": { \"f64\": %g, \"f32\": %g, \"tf32\": %g, \"f16\": %g, "
        "\"bf16\": %g, \"fp8\": %g, \"i8\": %g },\n  \"peak_note\": \"fake: fixed numbers\"",
        4000 / s, 30 / s, 60 / s, 400 / s, 800 / s, 800 / s, 1600 / s, 1600 / s);
    return out;
}

bool g_in_memory = false;
std::string g_stdout;

bool g_ended = false;

void end_process(const process_ended& how) {
    if (g_in_memory) {
        g_ended = true;
        throw how;
    }
    if (!how.error_line.empty()) std::fprintf(stderr, "%s\n", how.error_line.c_str());
    if (how.signal) {
        std::raise(how.signal);
        return;
    }
    while (how.hangs) std::this_thread::sleep_for(std::chrono::seconds(1));
    std::exit(how.exit_code);
}

void print_stdout(const std::string& text) {
    if (g_in_memory) {
        g_stdout += text;
        return;
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

std::string fake_device_info(const fake_options& o) {
    const int driver = fake_driver_version();
    return "{ \"index\": 0, \"name\": \"" + fake_device_name() + "\", \"simulated\": true" +
           ", \"arch\": \"sm_90\", \"sm_count\": 1, \"max_threads_per_block\": 1024" +
           (driver ? ", \"driver_version\": \"" + std::to_string(driver / 1000) + "." +
                         std::to_string(driver % 1000 / 10) + "\""
                   : std::string()) +
           (o.measure ? fake_measured(o.device) : "") + " }\n";
}

// Milliseconds from an environment variable (0 when unset).
double env_ms(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::atof(v) : 0;
}

// FAKE_PIDFILE writes harness.pid into the request's folder; FAKE_CHILD_HANG starts a sleeping
// child and hangs; FAKE_ORPHAN_PIPE leaves a sleeping child holding stdout and stderr
// (orphan.pid).
void act_on_process_markers(const std::filesystem::path& request_folder, const std::string& src) {
    if (src.find("FAKE_PIDFILE") != std::string::npos)
        write_file_atomic(request_folder / "harness.pid", std::to_string(getpid()));
    if (g_in_memory && (src.find("FAKE_CHILD_HANG") != std::string::npos ||
                        src.find("FAKE_ORPHAN_PIPE") != std::string::npos))
        throw needs_a_process(
            "FAKE_CHILD_HANG and FAKE_ORPHAN_PIPE need a process with children: run the "
            "fake-harness binary (make_child_process_runner), not in_memory_harness");
    if (src.find("FAKE_CHILD_HANG") != std::string::npos) {
        start_sleeping_child({});
        end_process({0, true, 0, ""});
    }
    if (src.find("FAKE_ORPHAN_PIPE") != std::string::npos)
        start_sleeping_child(request_folder / "orphan.pid");
}

// The compile block, as the real harness fills it for sm_90; FAKE_COMPILE_ERROR fails it.
compile_result fake_compile_result(const request& req) {
    const std::string& src = req.kernel.source;
    compile_result c;
    c.arch = "sm_90";
    c.nvrtc_version = "fake";  // as its --device-info says
    c.lowered_name = req.kernel.entry;
    c.ok = src.find("FAKE_COMPILE_ERROR") == std::string::npos;
    c.log = c.ok ? ""
                 : req.kernel.shown_name() +
                       "(1): error: identifier \"FAKE_COMPILE_ERROR\" is undefined\n";
    c.cubin_sha256 = sha256_hex(src);
    c.ptxas.registers = 32;
    c.ptxas.spill_store_bytes = 0;
    c.cache_hit = fake_compile(req, c.ok);
    return c;
}

fake_trace::fake_trace(const request& req, std::filesystem::path folder, bool compile_only)
    : m_req(req),
      m_folder(std::move(folder)),
      m_compile_only(compile_only),
      m_start(monotonic_us()) {
    if (!compile_only) sleep_ms(env_ms("CUOPT_FAKE_SLEEP_MS"));
}

fake_trace::~fake_trace() {
    const char* file = std::getenv("CUOPT_FAKE_TRACE");
    if (!file || !*file || g_ended) return;
    const std::string line =
        std::string(m_compile_only ? "compile" : "run") +
        " device=" + std::to_string(m_req.device) + " start_us=" + std::to_string(m_start) +
        " end_us=" + std::to_string(monotonic_us()) + " key=" + kernel_key(m_req) +
        " pid=" + std::to_string(getpid()) + " folder=" + m_folder.string() + "\n";
    const int fd = ::open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (::write(fd, line.data(), line.size()) < 0) {
    }
    ::close(fd);
}

// CUOPT_FAKE_WORKER_LOG=FILE: each request appends "PID worker|once REQUEST" (which process served
// which run, and whether it was a worker).
void log_worker_request(const std::string& request_arg) {
    const char* log = std::getenv("CUOPT_FAKE_WORKER_LOG");
    if (!log || !*log) return;
    std::ofstream(log, std::ios::app) << getpid() << (g_worker ? " worker " : " once ")
                                      << std::filesystem::absolute(request_arg).string() << "\n";
}

}  // namespace cuopt::fake
