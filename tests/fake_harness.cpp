// fake-harness: a stand-in for cuda-harness on machines without a GPU, honouring the
// same file contract (request in, outputs + response out, same exit codes). It "runs"
// matmul_f32(a, b, c, m, n, k) and the FP8 example's gemm_e4m3(a, b, c, scale_a, scale_b, m, n,
// k) on the CPU, inputs and outputs in their declared dtypes (fp8, bf16, f16 included: the same
// conversions as the GPU's) (a request for any other kernel is refused, exit 11,
// naming it; the preflight's empty probe kernel compiles), and markers in the kernel source make it
// misbehave the ways real candidates do:
//   FAKE_COMPILE_ERROR   NVRTC-style compile error (exit 10)
//   FAKE_ILLEGAL_ADDRESS cuda_error on the first case, the rest skipped (exit 13)
//   FAKE_CRASH           dies by SIGSEGV          FAKE_HANG  sleeps forever
//   FAKE_WRONG           c[0] is off by one       FAKE_SKIP_LAST_ROW  last row unwritten
//   FAKE_NO_CASES        says ok but answers no case     FAKE_MISSING_OUTPUT  lists c, never writes
//   FAKE_WRITES_INPUT[=ARG]  the kernel writes into ARG (default a): every case reports it in
//                        inputs_changed where ARG is a declared input (an inout one is exempt)
//   it FAKE_MS=<x>          median = x ms per 256^3 of work (default 1), times
//                        (1 + sum over defines of |value - 32| / 64): autotuning has a best.
//   FAKE_MEMOISE         a kernel that caches its first launch's result: its median is 4x
//                        smaller when every launch sees the same inputs (timing.fresh_inputs
//                        false and no input arg perturbed for timing: a float input_file is
//                        perturbed unless it says "timing_inputs": "as_given"); its outputs stay
//                        right (the fake computes them from the checked launch's inputs).
//   FAKE_OVERFIT         right only when k is 29 or a multiple of 32 (the provided shapes)
//   FAKE_NONDETERMINISTIC  c[0] moves by a few 1e-6 from one process to the next (within
//                        tolerance); FAKE_NONDETERMINISTIC_BIG by 1e-2 and more, but only in
//                        untimed runs from launch index 0 (a race only the determinism runs hit)
// A vendor request ("vendor": {"library": "cublas"} or "cublaslt") computes each case's
// vendor_call on the CPU in double, median 0.5 ms per 256^3: sgemm, dgemm, hgemm (row_major,
// col_major or row_major_bt) and cublaslt's e4m3_gemm (row_major_bt: B stored n x k) from the
// fp8-decoded inputs times scale_a * scale_b, rounded once to C's dtype (bf16 or f32); the
// entry is "cublaslt:e4m3_gemm".
//   FAKE_COUNTS_LAUNCHES right only with the default 10 warm-up + 100 timed launches (it
//                        computes only on the launch the search checks)
//   FAKE_FAILS_REMEASURE wrong when only the warm-up count differs from 10 (a significance
//                        round), right otherwise
//   FAKE_PREDICTS_INPUTS the kernel of issue 44 that predicts its generated inputs: its C is
//                        computed from the public (unkeyed) generator's values, 19x faster
//                        (its work done ahead); right only where a request has no inputs_key
//   FAKE_AMORTISES=N     one launch in N does the work of N (N x the time), the others copy
//                        (0.02x): the median sees only copies, the sum every launch's work
//   FAKE_LAST_LAUNCH_ONLY computes only on a shape's first launch and on the last timed one:
//                        a measured case whose timing.checked_launch is another timed launch
//                        leaves C poisoned (the harness re-poisons before every launch)
// Timing as issue 12's harness reports it: CUPTI the primary clock, CUDA events beside it
// 1.3 us slower, NVML's GPU state at full clocks around every timed loop; adaptive requests
// take max(min_samples, min_time_ms / median) samples up to the cap (the fake's samples never
// vary, so the noise target is met as soon as those are), stop_rule cap where that is more.
//   FAKE_SEARCH_LUCK=x   times x with the search's default 10 warm-up launches only (a lucky
//                        search draw that the evidence stage's re-measures do not repeat)
//   FAKE_PROCESS_JITTER=x  each request's times scaled by one factor drawn in [1-x, 1+x] (also
//                        CUOPT_FAKE_PROCESS_JITTER for every kernel; CUOPT_FAKE_JITTER_SEED=S
//                        makes the draws repeatable: they then depend on S and the request path)
//   FAKE_THROTTLED[=CASE] the GPU held down by its power cap (sw_power_cap) around CASE's loop
//                        (every measured case without =CASE)
//   FAKE_CHANNELS_DISAGREE  CUDA events 50% slower than CUPTI: the clocks disagree
//   FAKE_INVALID_TIMING  the first measured case is invalid_timing (another kernel ran inside a
//                        timed sample), the request exits 12; the other cases run
//   FAKE_NO_CUPTI        CUDA events alone, with a note (as with "timing.timer": "events")
//   FAKE_NO_NVML         no GPU state, with a note
// A run's gpu_busy says source "simulated": the timed samples summed, capped at the request's
// wall time.
// --device-info answers a fixed fingerprint marked "simulated": true (the optimizer then labels
// the whole run a fake one); with --measure (or --remeasure) also fixed
// "measured" (copy_bandwidth_gbps 4000) and "peak_tflops" (f32 60, f16 800, ...) blocks, each
// divided by --device N's CUOPT_FAKE_DEVICE_SLOWDOWN, so a slower GPU has its own, higher
// speed-of-light floors. "index" stays 0 whatever --device says (a daemon resumes a job on
// whichever GPU is free, and resume holds the index against run.json's).
// The environment changes the machine it claims to be, in --device-info and every response
// (CUOPT_FAKE_*: the optimizer passes CUOPT_* to its children and scrubs everything else):
//   CUOPT_FAKE_DEVICE_NAME  the GPU model (default "fake CPU device")
//   CUOPT_FAKE_MACHINE_SLOWDOWN  every kernel's median times this (a machine that drifted;
//                        default 1)
//   CUOPT_FAKE_DRIVER_VERSION  the driver's CUDA version as cuDriverGetVersion gives it (13010
//                        reads "13.1"; default 0, and --device-info names none)
// --worker serves request lines from stdin through the real harness's loop
// (harness/worker_loop), so a marker that crashes or hangs takes the whole worker down, and
// FAKE_ILLEGAL_ADDRESS (exit 13) ends it after its reply, as the real worker does.
//   FAKE_STDOUT_NOISE    prints a forged reply line and half of another on stdout (a printf)
//   FAKE_DEVICE_HEAP     a kernel that mallocs: the worker retires after its reply (exit 0)
//   CUOPT_FAKE_WORKER_LOG=FILE  each request appends "PID worker|once REQUEST" (who served
//                        which run)
// Parallelism and compile-ahead (several GPUs, a batch compiled ahead), from the environment:
//   CUOPT_FAKE_SLEEP_MS=x  a run request (not --compile-only) takes x ms more: a GPU busy
//                        measuring
//   CUOPT_FAKE_COMPILE_MS=x  NVRTC's time, once per kernel: a compile that succeeds leaves a
//                        marker in the cubin cache folder; a later request for the kernel is a
//                        cache hit
//   CUOPT_FAKE_DEVICE_SLOWDOWN="1:1.1"  GPU 1's kernels 10% slower, the vendor's too (GPUs of
//                        one model differ a little)
//   CUOPT_FAKE_BROKEN_DEVICE=N  every run on GPU N (N > 0) fails: context_lost, before any case
//   CUOPT_FAKE_TRACE=FILE  each request appends "compile|run device=N start_us=T end_us=T key=K
//                        pid=P folder=DIR" (CLOCK_MONOTONIC; K: the kernel's cache key)
// "timing_inputs" is otherwise accepted and honoured only where it changes values: an
// "as_given" generator keeps its launch_index_base values under fresh_inputs.
// Confinement as the real harness's (harness/harness_sandbox): before it reads a request it
// restricts itself with Landlock to its root (--root, else the request's folder, else for
// --worker the current folder) read-write, the toolkit and library folders read-only, and
// read-write the cubin cache and the folders of the files CUOPT_FAKE_TRACE and
// CUOPT_FAKE_WORKER_LOG name; every response carries the `confinement` block, and a worker
// refuses a request or response outside its root. --unconfined confines nothing, and so does
//   CUOPT_FAKE_UNCONFINED=<reason>  (a kernel without Landlock): mode "none" with that reason
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>

#include "common/counter_rng.h"
#include "common/element_check.h"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/landlock.hpp"
#include "common/process_life.hpp"
#include "common/sha256.hpp"
#include "harness/cubin_cache.hpp"
#include "harness/expected_values.hpp"
#include "harness/harness_report.hpp"
#include "harness/harness_sandbox.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "harness/request_reader.hpp"
#include "harness/worker_loop.hpp"

using namespace cuopt;

namespace {

double generated(const generator_spec& g, std::uint64_t launch, std::uint64_t i) {
    std::uint64_t bits = cuopt_rng::random_bits(g.seed, launch, i);
    if (g.stream_key) {  // keyed by the request's inputs_key, as the harness's GPU generator
        cuopt_rng::stream_key k{};
        std::copy(g.stream_key->begin(), g.stream_key->end(), k.words);
        bits = cuopt_rng::keyed_bits(k, launch, i);
    }
    switch (g.kind) {
        case generator_kind::uniform:
            return cuopt_rng::uniform(bits, g.low, g.high);
        case generator_kind::normal: {
            const double u1 = ((bits >> 32) + 1.0) * (1.0 / 4294967296.0);
            const double u2 = (bits & 0xFFFFFFFFull) * (1.0 / 4294967296.0);
            return g.mean + g.stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
        }
        case generator_kind::int_range:
            return static_cast<double>(cuopt_rng::int_range(bits, static_cast<std::int64_t>(g.low),
                                                            static_cast<std::int64_t>(g.high)));
        case generator_kind::sequence:
            return g.start + g.step * static_cast<double>(i);
        case generator_kind::constant:
            return g.value;
    }
    return 0;
}

std::int64_t scalar(const kernel_arg& a) {
    std::int32_t v = 0;
    std::memcpy(&v, a.scalar_bytes.data(), 4);
    return v;
}

// The launch index whose values a generated input holds at the checked launch.
std::uint64_t values_launch(const kernel_arg& a, const request& req, const run_case& rc,
                            std::uint64_t checked) {
    (void)a;  // regenerated or held (as_given), a generator shows the checked launch's values
    return req.timing.fresh_inputs ? checked : rc.launch_index_base;
}

// Every launch sees the checked launch's inputs: a memoising kernel's cache would hit.
bool inputs_repeat(const request& req, const run_case& rc) {
    if (req.timing.fresh_inputs) return false;
    for (const kernel_arg& a : rc.args)
        if (a.input_file && a.perturbed_for_timing()) return false;
    return true;
}

double fake_ms_per_unit(const std::string& source) {
    const auto pos = source.find("FAKE_MS=");
    const char* drift = std::getenv("CUOPT_FAKE_MACHINE_SLOWDOWN");
    const double ahead = source.find("FAKE_PREDICTS_INPUTS") != std::string::npos ? 19.0 : 1.0;
    return (pos == std::string::npos ? 1.0 : std::stod(source.substr(pos + 8))) *
           (drift && *drift ? std::atof(drift) : 1.0) / ahead;
}

// FAKE_PROCESS_JITTER=x in the source, or CUOPT_FAKE_PROCESS_JITTER=x for every kernel: each
// request scales its times by one factor drawn in [1-x, 1+x], the spread between processes that
// the A/A control must tell from a real difference. The draw is seeded by the request's last
// three path components and a per-process random number, or CUOPT_FAKE_JITTER_SEED instead of
// that number so that a test's run draws the same factors every time.
double process_jitter(const std::string& source, const std::filesystem::path& request_file) {
    const auto pos = source.find("FAKE_PROCESS_JITTER=");
    const char* env = std::getenv("CUOPT_FAKE_PROCESS_JITTER");
    const double x = pos != std::string::npos ? std::stod(source.substr(pos + 20))
                     : env && *env            ? std::atof(env)
                                              : 0.0;
    if (x <= 0) return 1.0;
    const char* seed = std::getenv("CUOPT_FAKE_JITTER_SEED");
    static const std::uint64_t per_process = std::random_device{}();
    std::string key = seed && *seed ? seed : std::to_string(per_process);
    std::vector<std::string> parts;
    for (const auto& p : request_file) parts.push_back(p.string());
    for (std::size_t i = parts.size() > 3 ? parts.size() - 3 : 0; i < parts.size(); ++i)
        key += "/" + parts[i];
    std::mt19937_64 rng(std::hash<std::string>{}(key));
    return std::uniform_real_distribution<double>(1 - x, 1 + x)(rng);
}

// FAKE_SEARCH_LUCK=x: times x (0.8: 20% faster) under the search's default 10 warm-up launches
// only: a lucky draw in the search that a re-measure with other warm-up counts does not repeat.
double search_luck(const std::string& source, const request& req) {
    const auto pos = source.find("FAKE_SEARCH_LUCK=");
    if (pos == std::string::npos || req.timing.warmup != 10) return 1.0;
    return std::stod(source.substr(pos + 17));
}

// CUOPT_FAKE_DEVICE_SLOWDOWN="1:1.1,2:0.95": GPU 1 times every kernel 10% slower, GPU 2 5% faster
// (GPUs of one model differ by a few percent); 1 for a GPU it does not name.
double device_slowdown(int device) {
    const char* v = std::getenv("CUOPT_FAKE_DEVICE_SLOWDOWN");
    const std::string text = v ? v : "";
    const std::string key = std::to_string(device) + ":";
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find(',', at), text.size());
        if (text.compare(at, key.size(), key) == 0)
            return std::atof(text.substr(at + key.size(), end - at - key.size()).c_str());
        at = end + 1;
    }
    return 1.0;
}

// A buffer's values at launch `launch` as doubles, rounded to its dtype.
std::vector<double> values_of(const kernel_arg& a, std::uint64_t launch) {
    std::vector<double> v(a.count);
    if (a.input_file) {
        const auto bytes = read_binary_file(*a.input_file);
        for (std::uint64_t i = 0; i < a.count; ++i)
            v[i] = element_as_double(a.type, bytes.data(), i);
    } else if (a.generator) {
        for (std::uint64_t i = 0; i < a.count; ++i) {
            const auto bits = encode_scalar(a.type, generated(*a.generator, launch, i));
            v[i] = element_as_double(a.type, bits.data(), 0);
        }
    }
    return v;
}

// Writes values in the buffer's dtype; the output record says what was written.
output_record write_values(const kernel_arg& a, const std::filesystem::path& file,
                           const std::vector<double>& v, const char* role) {
    std::vector<unsigned char> bytes;
    for (double x : v) {
        const auto e = encode_scalar(a.type, x);
        bytes.insert(bytes.end(), e.begin(), e.end());
    }
    write_file_atomic(file, bytes.data(), bytes.size());
    return {a.name,
            role,
            file,
            a.type,
            a.count,
            sha256_hex(bytes.data(), bytes.size()),
            count_poisoned(a.type, bytes.data(), a.count),
            std::nullopt};
}

// An output with a check (the real harness's GPU comparison), done here on the CPU with the same
// rule and the real harness's cache of expected files: the tally, and the file written only when
// the check fails.
output_record checked_output(const kernel_arg& a, const std::vector<unsigned char>& bytes,
                             bool write) {
    const expected_values& values = expected_values_for(a);
    output_check_result check;
    check.rule =
        cuopt_check::make_rule(static_cast<int>(a.type), poison_bits(a.type), a.check->atol,
                               a.check->rtol, a.check->rms_atol, values.finite_rms);
    check.rms_scaled = is_float(a.type) && a.check->rms_atol > 0;
    check.expected_file = a.check->expected_file;
    check.expected_sha256 = values.sha256;
    check.tally = cuopt_check::empty_tally();
    for (std::uint64_t i = 0; i < a.count; ++i)
        cuopt_check::check_element(
            check.tally, check.rule, cuopt_check::load_bits(bytes.data(), check.rule.kind, i),
            cuopt_check::load_bits(values.bytes.data(), check.rule.kind, i), i);
    output_record r{a.name, "output", {}, a.type, a.count, "", check.tally.unwritten, std::nullopt};
    if (check.tally.mismatches && write) {
        write_file_atomic(*a.output_file, bytes.data(), bytes.size());
        r.file = *a.output_file;
        r.sha256 = sha256_hex(bytes.data(), bytes.size());
    }
    r.check = std::move(check);
    return r;
}

// The name after "MARKER=" up to the next space, "" for a bare MARKER; nullopt without it.
// What the fake kernel computed for one case, before C is stored in its dtype.
struct fake_gemm {
    std::int64_t m = 0, n = 0, k = 0;
    std::vector<double> a, b;  // the inputs' values, rounded to their dtypes
    std::vector<float> c;
};

float scalar_f32(const kernel_arg& a) {
    float v = 0;
    std::memcpy(&v, a.scalar_bytes.data(), 4);
    return v;
}

// The kernel's C on the CPU, summed as one thread per element would (in float, in order of p
// from 0). matmul_f32(a, b, c, m, n, k): c[i][j] = sum a[i][p] b[p][j], the loop over j
// innermost so that it vectorises without reordering any sum. gemm_e4m3(a, b, c, scale_a,
// scale_b, m, n, k): c[i][j] = scale_a scale_b sum a[i][p] b[j][p] (B stored n x k), each
// product of two e4m3 values exact in float.
// The values a kernel that predicts its inputs (FAKE_PREDICTS_INPUTS) believes `a` holds: the
// public generator's, whatever the request's key.
kernel_arg as_predicted(kernel_arg a, const request& req) {
    if (a.generator && req.kernel.source.find("FAKE_PREDICTS_INPUTS") != std::string::npos)
        a.generator->stream_key.reset();
    return a;
}

fake_gemm fake_kernel(const request& req, const run_case& rc, std::uint64_t launch) {
    const bool fp8 = req.kernel.entry == "gemm_e4m3";
    const std::size_t dims = fp8 ? 5 : 3;  // where m, n, k start
    fake_gemm g;
    g.a =
        values_of(as_predicted(rc.args.at(0), req), values_launch(rc.args.at(0), req, rc, launch));
    g.b =
        values_of(as_predicted(rc.args.at(1), req), values_launch(rc.args.at(1), req, rc, launch));
    g.m = scalar(rc.args.at(dims)), g.n = scalar(rc.args.at(dims + 1));
    g.k = scalar(rc.args.at(dims + 2));
    const std::int64_t m = g.m, n = g.n, k = g.k;
    const std::vector<float> a(g.a.begin(), g.a.end()), b(g.b.begin(), g.b.end());
    g.c.assign(static_cast<std::size_t>(m * n), 0.0f);
    if (!fp8) {
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t p = 0; p < k; ++p) {
                const float ai = a[i * k + p];
                float* c_row = &g.c[i * n];
                const float* b_row = &b[p * n];
                for (std::int64_t j = 0; j < n; ++j) c_row[j] += ai * b_row[j];
            }
        return g;
    }
    const float scale = scalar_f32(rc.args.at(3)) * scalar_f32(rc.args.at(4));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            float acc = 0;
            for (std::int64_t p = 0; p < k; ++p) acc += a[i * k + p] * b[j * k + p];
            g.c[i * n + j] = acc * scale;
        }
    return g;
}

// Why the fake cannot run case `rc` of its kernel as asked ("" when it can): the arguments
// the computation reads must be there, of the right kinds and sizes (a request the real harness
// would launch into an out-of-bounds read is refused here, never read past the end).
std::string fake_kernel_problem(const request& req, const run_case& rc) {
    const bool fp8 = req.kernel.entry == "gemm_e4m3";
    const std::size_t dims = fp8 ? 5 : 3;
    const std::string what = "fake-harness: case '" + rc.name + "' of " + req.kernel.entry + ": ";
    if (rc.args.size() < dims + 3)
        return what + "expected " + std::to_string(dims + 3) + " arguments, found " +
               std::to_string(rc.args.size());
    for (std::size_t i = 0; i < 3; ++i)
        if (!rc.args[i].is_buffer) return what + "argument " + std::to_string(i) + " is a scalar";
    for (std::size_t i = 3; i < dims + 3; ++i) {
        const bool want_f32 = i < dims;
        const dtype want = want_f32 ? dtype::f32 : dtype::i32;
        if (rc.args[i].is_buffer || rc.args[i].type != want)
            return what + "argument " + std::to_string(i) + " must be an " +
                   std::string(dtype_name(want)) + " scalar";
    }
    const std::int64_t m = scalar(rc.args[dims]), n = scalar(rc.args[dims + 1]),
                       k = scalar(rc.args[dims + 2]);
    if (m < 0 || n < 0 || k < 0) return what + "m, n and k must not be negative";
    const auto short_of = [](const kernel_arg& a, std::int64_t need) {
        return a.count < static_cast<std::uint64_t>(need);
    };
    if (short_of(rc.args[0], m * k) || short_of(rc.args[1], k * n) || short_of(rc.args[2], m * n))
        return what + "a, b or c holds fewer elements than m, n and k need";
    return "";
}

// Values stored in `type`, element by element.
std::vector<unsigned char> stored_bytes(dtype type, const std::vector<float>& v) {
    std::vector<unsigned char> bytes;
    bytes.reserve(v.size() * dtype_size(type));
    for (float x : v) {
        const auto e = encode_scalar(type, x);
        bytes.insert(bytes.end(), e.begin(), e.end());
    }
    return bytes;
}

std::optional<std::string> marker_value(const std::string& source, const std::string& marker) {
    const auto pos = source.find(marker);
    if (pos == std::string::npos) return std::nullopt;
    const auto start = pos + marker.size();
    if (start >= source.size() || source[start] != '=') return std::string();
    const auto end = source.find_first_of(" \t\n", start + 1);
    return source.substr(start + 1, end == std::string::npos ? end : end - start - 1);
}

// FAKE_WRITES_INPUT[=ARG]: what the real harness's input guard reports of a kernel that writes
// into ARG (default a): its name where it is a declared input, nothing for an inout argument.
std::vector<std::string> inputs_changed(const run_case& rc, const std::string& source) {
    const auto written = marker_value(source, "FAKE_WRITES_INPUT");
    if (!written) return {};
    const std::string name = written->empty() ? "a" : *written;
    for (const kernel_arg& a : rc.args)
        if (a.name == name && a.is_buffer && a.has_input() && !a.is_output()) return {name};
    return {};
}

bool cupti_times(const request& req, const std::string& source) {
    return req.timing.timer != timer_choice::events &&
           source.find("FAKE_NO_CUPTI") == std::string::npos;
}

// The timer and gpu_monitor blocks of the response.
void describe_clocks(harness_report& report, const request& req, const std::string& source) {
    report.timer = cupti_times(req, source) ? "cupti" : "events";
    if (!cupti_times(req, source))
        report.timer_note = req.timing.timer == timer_choice::events
                                ? "timing.timer is events"
                                : "CUPTI not found: libcupti.so.13 (fake)";
    else
        report.timer_library = "libcupti.so.13 (fake)";
    report.gpu_monitor = source.find("FAKE_NO_NVML") == std::string::npos;
    if (!report.gpu_monitor) report.gpu_monitor_note = "NVML not found: libnvidia-ml.so.1 (fake)";
}

// How many timed launches a case takes at `ms` per launch, and why it stops there.
int timed_launches(const timing_config& t, double ms, stop_rule& rule) {
    rule = stop_rule::fixed;
    if (t.mode != timing_mode::adaptive) return t.iterations;
    const int for_time = ms > 0 ? static_cast<int>(std::ceil(t.min_time_ms / ms)) : t.min_samples;
    const int needed = std::max(t.min_samples, for_time);
    rule = needed > t.iterations ? stop_rule::cap : stop_rule::target_noise;
    return std::min(needed, t.iterations);
}

// Whether the checked launch is the last timed one: no timing.checked_launch, or it names
// the last of a fixed loop (adaptive: min_samples' last, where a fast fake kernel stops).
bool checks_last_timed_launch(const timing_config& t) {
    const int last = t.mode == timing_mode::adaptive ? t.min_samples : t.iterations;
    return !t.checked_launch || *t.checked_launch + 1 == last;
}

// NVML's reading of a GPU at full clocks, or held down by its power cap.
gpu_state fake_gpu_state(bool throttled, bool after) {
    gpu_state s;
    s.sm_clock_mhz = throttled ? 1410 : 1980;
    s.mem_clock_mhz = 3201;
    s.temperature_c = after ? 52 : 45;
    s.power_w = throttled ? 699.0 : (after ? 310.5 : 120.25);
    s.power_limit_w = 700;
    s.throttle_mask = throttled ? 0x4 : 0;  // sw_power_cap
    return s;
}

// A measured case's samples and everything issue 12 reports beside them.
void time_case(case_outcome& out, const request& req, const std::string& source, double ms) {
    out.warmup = req.timing.warmup;
    out.iterations = timed_launches(req.timing, ms, out.rule);
    out.samples_ms.assign(static_cast<std::size_t>(out.iterations), ms);
    if (const auto every = marker_value(source, "FAKE_AMORTISES"); every && !every->empty()) {
        const std::size_t n = std::max(1, std::atoi(every->c_str()));
        for (std::size_t i = 0; i < out.samples_ms.size(); ++i)
            out.samples_ms[i] = i % n == 0 ? ms * static_cast<double>(n) : ms * 0.02;
    }
    out.stats_ms = summarize(out.samples_ms);
    out.relative_standard_error = out.iterations >= 5 ? std::optional<double>(0.0) : std::nullopt;
    const bool disagree = source.find("FAKE_CHANNELS_DISAGREE") != std::string::npos;
    out.event_samples_ms.assign(out.samples_ms.size(), disagree ? ms * 1.5 : ms + 0.0013);
    out.timer = cupti_times(req, source) ? "cupti" : "events";
    if (cupti_times(req, source)) {
        out.cupti_samples_ms = out.samples_ms;
    } else {
        out.samples_ms = out.event_samples_ms;
        out.stats_ms = summarize(out.samples_ms);
    }
    if (source.find("FAKE_NO_NVML") != std::string::npos) return;
    const auto throttled_case = marker_value(source, "FAKE_THROTTLED");
    const bool throttled =
        throttled_case && (throttled_case->empty() || *throttled_case == out.name);
    out.state_before = fake_gpu_state(false, false);
    out.state_after = fake_gpu_state(throttled, true);
}

// A vendor call's C on the CPU in double: sum over p from 0 upwards, the innermost loop
// walking memory in order. row_major_bt: B stored n x k, C[i][j] = sum a[i][p] b[j][p].
std::vector<double> vendor_product(const vendor_call& v, const std::vector<double>& a,
                                   const std::vector<double>& b) {
    const std::int64_t m = v.m, n = v.n, k = v.k;
    std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
    if (v.layout == matrix_layout::row_major) {
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t p = 0; p < k; ++p)
                for (std::int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
    } else if (v.layout == matrix_layout::row_major_bt) {
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j)
                for (std::int64_t p = 0; p < k; ++p) c[i * n + j] += a[i * k + p] * b[j * k + p];
    } else {
        for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t p = 0; p < k; ++p)
                for (std::int64_t i = 0; i < m; ++i) c[i + j * m] += a[i + p * m] * b[p + j * k];
    }
    return c;
}

// An e4m3_gemm scale as cuBLASLt sees it (the f32 scalar arg's value); 1 for none.
double vendor_scale(const run_case& rc, const std::string& name) {
    if (name.empty()) return 1.0;
    const auto it = std::find_if(rc.args.begin(), rc.args.end(),
                                 [&](const kernel_arg& a) { return a.name == name; });
    return static_cast<float>(
        std::visit([](auto x) { return static_cast<double>(x); }, it->scalar));
}

// One vendor case on the CPU: C = A x B in double from the inputs as stored (fp8 decoded),
// times e4m3_gemm's two scales, rounded once to C's dtype; 0.5 ms per 256^3.
case_outcome run_vendor_case(const request& req, const run_case& rc) {
    const vendor_call& v = *rc.vendor;
    auto arg = [&rc](const std::string& name) -> const kernel_arg& {
        return *std::find_if(rc.args.begin(), rc.args.end(),
                             [&](const kernel_arg& a) { return a.name == name; });
    };
    const kernel_arg &A = arg(v.a), &B = arg(v.b), &C = arg(v.c);
    const std::uint64_t checked =
        rc.launch_index_base + (rc.measure ? req.timing.checked_offset() : 0);
    const auto a = values_of(A, values_launch(A, req, rc, checked));
    const auto b = values_of(B, values_launch(B, req, rc, checked));
    const std::int64_t m = v.m, n = v.n, k = v.k;
    std::vector<double> c = vendor_product(v, a, b);
    const double scale = vendor_scale(rc, v.scale_a) * vendor_scale(rc, v.scale_b);
    for (double& x : c) x *= scale;
    case_outcome out;
    out.name = rc.name;
    out.measured = rc.measure;
    out.entry = std::string(k_vendor_libraries.name(*req.vendor)) + ":" + k_vendor_ops.name(v.op);
    out.checked_launch_index = checked;
    out.inputs_changed.emplace();  // a vendor library never writes into its inputs
    out.outputs.push_back(write_values(C, *C.output_file, c, "output"));
    for (const kernel_arg* in : {&A, &B})
        if (in->input_dump_file)
            out.outputs.push_back(
                write_values(*in, *in->input_dump_file, in == &A ? a : b, "input_dump"));
    if (rc.measure)
        time_case(out, req, "",
                  0.5 * device_slowdown(req.device) * static_cast<double>(m * n * k) /
                      (256.0 * 256.0 * 256.0));
    out.status = case_run_status::ok;
    return out;
}

}  // namespace

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

// A child that inherits stdout and stderr and sleeps; its pid goes to `pid_file` when given.
void start_sleeping_child(const std::filesystem::path& pid_file) {
    const pid_t pid = fork();
    if (pid == 0) {
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (!pid_file.empty()) write_file_atomic(pid_file, std::to_string(pid));
}

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

// Milliseconds from an environment variable (0 when unset).
double env_ms(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::atof(v) : 0;
}

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

// CUOPT_FAKE_TRACE=FILE: every request appends one line when it ends, in one write() (lines of
// concurrent requests never interleave): "compile|run device=N start_us=T end_us=T key=K pid=P
// folder=DIR" (times on CLOCK_MONOTONIC, key: kernel_key). CUOPT_FAKE_SLEEP_MS=x: a run request
// takes x ms more (the GPU busy measuring), so a test sees what ran in parallel.
class fake_trace {
  public:
    fake_trace(const request& req, std::filesystem::path folder, bool compile_only)
        : m_req(req), m_folder(std::move(folder)), m_compile_only(compile_only) {
        if (!compile_only) sleep_ms(env_ms("CUOPT_FAKE_SLEEP_MS"));
    }
    ~fake_trace() {
        const char* file = std::getenv("CUOPT_FAKE_TRACE");
        if (!file || !*file) return;
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
    fake_trace(const fake_trace&) = delete;
    fake_trace& operator=(const fake_trace&) = delete;

  private:
    const request& m_req;
    std::filesystem::path m_folder;
    bool m_compile_only;
    long long m_start = monotonic_us();
};

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

int serve_one(const std::string& request_arg, const std::string& response_path, bool compile_only);

bool g_worker = false;  // serving as --worker
// FAKE_DEVICE_HEAP: why the worker retires after this request (as the real one does after a
// kernel that can malloc); "" otherwise.
std::string g_retire_reason;

// --cubin-out FILE of a --compile-only run: the fake has no machine code, so the kernel's source
// stands in, after a FAKE-CUBIN line (a real cuobjdump refuses it; tests/fake-cuobjdump.sh
// prints the fixture its FAKE_SASS=NAME marker names).
std::string g_cubin_out;

// The command line, as the real harness reads it (what the fake needs of it).
struct fake_options {
    std::string request, response, root;
    bool worker = false, device_info = false, measure = false, compile_only = false;
    bool unconfined = false, version = false;
    int device = 0;  // --device
};

fake_options parse_fake_options(int argc, char** argv) {
    fake_options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--response" && has_value)
            o.response = argv[++i];
        else if (a == "--root" && has_value)
            o.root = argv[++i];
        else if (a == "--device" && has_value)
            o.device = std::atoi(argv[++i]);
        else if ((a == "--arch" || a == "--cache-dir") && has_value)
            ++i;
        else if (a == "--cubin-out" && has_value)
            g_cubin_out = argv[++i];
        else if (a.rfind("--", 0) != 0 && o.request.empty())
            o.request = a;
        o.worker |= a == "--worker";
        o.device_info |= a == "--device-info";
        o.measure |= a == "--measure" || a == "--remeasure";
        o.compile_only |= a == "--compile-only";
        o.unconfined |= a == "--unconfined";
        o.version |= a == "--version";
    }
    if (o.response.empty() && !o.request.empty())
        o.response =
            (std::filesystem::absolute(o.request).parent_path() / "response.json").string();
    return o;
}

confinement g_confinement;     // how this process is confined, for every response
std::filesystem::path g_root;  // the tree it is confined to; empty when it is not
std::filesystem::path
    g_read_root;  // its --root (else the request's folder): expected files lie in it

// What the fake may touch once confined: its root, the response's folder where that lies
// outside it, the cubin cache (compile markers), the folders of the files CUOPT_FAKE_TRACE and
// CUOPT_FAKE_WORKER_LOG name (read-write); the toolkit and the library folders (read-only).
std::vector<landlock_rule> fake_rules(const fake_options& o, const std::filesystem::path& root) {
    std::vector<landlock_rule> rules{{root, landlock_access::read_write}};
    if (!o.worker && !lies_within(o.response, root))
        rules.push_back({resolved_path(o.response).parent_path(), landlock_access::read_write});
    for (const char* file : {"CUOPT_FAKE_TRACE", "CUOPT_FAKE_WORKER_LOG"})
        if (const char* v = std::getenv(file); v && *v)
            rules.push_back({resolved_path(v).parent_path(), landlock_access::read_write});
    std::error_code ec;
    const std::filesystem::path cache = cubin_cache::default_folder();
    std::filesystem::create_directories(cache, ec);
    rules.push_back({cache, landlock_access::read_write});
    for (const auto& more : {toolkit_rules(), library_rules()})
        rules.insert(rules.end(), more.begin(), more.end());
    return rules;
}

// Confines this process before any request is read, as the real harness does; --unconfined
// and CUOPT_FAKE_UNCONFINED=<reason> (a kernel without Landlock) leave it unconfined, said in
// one line. False when the kernel refused the confinement itself.
bool confine_fake(const fake_options& o) {
    const char* pretend = std::getenv("CUOPT_FAKE_UNCONFINED");
    const std::filesystem::path root =
        resolved_path(!o.root.empty() ? std::filesystem::path(o.root)
                      : o.worker      ? std::filesystem::current_path()
                                      : std::filesystem::absolute(o.request).parent_path());
    g_read_root = root;  // where a check's expected file may lie, confined or not
    if (o.unconfined || (pretend && *pretend)) {
        g_confinement.reason = o.unconfined ? "--unconfined was given" : pretend;
    } else {
        try {
            g_confinement = restrict_self(fake_rules(o, root), true);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "fake-harness: cannot confine this process: %s\n", e.what());
            return false;
        }
        if (g_confinement.confined()) g_root = root;
    }
    if (!g_confinement.confined())
        std::fprintf(stderr,
                     "fake-harness: warning: not confined (%s): a kernel's #include can read any "
                     "file this user can\n",
                     g_confinement.reason.c_str());
    return true;
}

// A worker's request or response outside its root, in the real worker's words; "" when inside
// (or the process is not confined).
std::string outside_root(const std::string& path, const char* what) {
    if (g_root.empty() || lies_within(path, g_root)) return "";
    return std::string(what) + " " + path + " is outside " + g_root.string() +
           ", the folder this harness is confined to (--root)";
}

// CUOPT_FAKE_WORKER_LOG=FILE: each request appends "PID worker|once REQUEST" (which process served
// which run, and whether it was a worker).
void log_worker_request(const std::string& request_arg) {
    const char* log = std::getenv("CUOPT_FAKE_WORKER_LOG");
    if (!log || !*log) return;
    std::ofstream(log, std::ios::app) << getpid() << (g_worker ? " worker " : " once ")
                                      << std::filesystem::absolute(request_arg).string() << "\n";
}

// --worker: the real harness's loop (harness/worker_loop), each request served by the fake;
// its replies on what was stdout (fd 1 pointed at stderr), confined as the real worker is.
int serve_as_worker(const fake_options& fo) {
    g_worker = true;
    harness_options o;
    o.quiet = true;
    const auto serve = [](const harness_options& one) {
        served_request s;
        std::string bad = outside_root(one.request, "request");
        if (bad.empty()) bad = outside_root(response_path(one).string(), "response");
        if (!bad.empty()) {
            s.code = exit_code::usage;
            s.status = "usage";
            s.messages = "fake-harness --worker: " + bad + "\n";
            return s;
        }
        s.code = static_cast<exit_code>(serve_one(one.request, response_path(one).string(), false));
        s.status = "fake";
        s.retire_reason = std::exchange(g_retire_reason, "");
        return s;
    };
    return serve_worker_on_stdio(o, serve, [&fo] { return confine_fake(fo); });
}

int main(int argc, char** argv) {
    die_with_parent_if_asked();
    if (argc < 2) return to_int(exit_code::usage);
    const fake_options o = parse_fake_options(argc, argv);
    if (o.worker) return serve_as_worker(o);
    if (o.version) {
        std::cout << "fake\n";
        return 0;
    }
    if (o.device_info) {
        const bool measure = o.measure;
        const int driver = fake_driver_version();
        std::cout << "{ \"index\": 0, \"name\": \"" << fake_device_name()
                  << "\", \"simulated\": true"
                  << ", \"arch\": \"sm_90\", \"sm_count\": 1, \"max_threads_per_block\": 1024"
                  << (driver ? ", \"driver_version\": \"" + std::to_string(driver / 1000) + "." +
                                   std::to_string(driver % 1000 / 10) + "\""
                             : std::string())
                  << (measure ? fake_measured(o.device) : "") << " }\n";
        return 0;
    }
    if (o.request.empty()) return to_int(exit_code::usage);
    if (!confine_fake(o)) return to_int(exit_code::internal_error);
    // As the real harness: a response it cannot write (a full disk) is one line and exit 70,
    // never an uncaught exception's SIGABRT.
    try {
        return serve_one(o.request, o.response, o.compile_only);
    } catch (const std::exception& e) {
        std::cerr << "fake-harness: internal_error: " << e.what() << "\n";
        return to_int(exit_code::internal_error);
    }
}

// The response's gpu_busy: the invented timed samples summed, one kernel each, but never more
// than the request's own wall time so far (a GPU is not busy longer than its request ran; the
// fake computes in microseconds what it says took milliseconds).
void simulate_busy(harness_report& report, std::chrono::steady_clock::time_point start) {
    double ms = 0;
    std::size_t kernels = 0;
    for (const case_outcome& c : report.cases) {
        for (const double sample : c.samples_ms) ms += sample;
        kernels += c.samples_ms.size();
    }
    const double wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    report.gpu_busy = {"simulated", std::min(ms, wall_ms), kernels,
                       "fake-harness: invented timings, capped at the request's wall time"};
}

// One request, as a one-shot fake harness or a fake worker serves it: the response written,
// the exit code returned (or the process crashes or hangs, as the markers ask).
int serve_one(const std::string& request_arg, const std::string& response_path, bool compile_only) {
    const auto start = std::chrono::steady_clock::now();
    log_worker_request(request_arg);
    harness_report report;
    report.confinement = g_confinement;
    report.request_file = std::filesystem::absolute(request_arg);
    report.request_folder = report.request_file.parent_path();
    auto finish = [&] {
        if (report.mode == "run") simulate_busy(report, start);
        write_file_atomic(response_path, write_response_json(report));
        return to_int(report.code);
    };
    request req;
    try {
        req = read_request(request_arg, {}, g_read_root);
    } catch (const std::exception& e) {
        report.fail(exit_code::invalid_request, e.what());
        return finish();
    }
    const fake_trace trace(req, report.request_folder, compile_only);
    report.entry = req.kernel.entry;
    report.timing = req.timing;
    device_fingerprint dev;
    dev.name = fake_device_name();
    dev.driver_version = fake_driver_version();
    dev.cc_major = 9;
    dev.sm_count = 1;
    dev.nvrtc_version = "fake";
    dev.simulated = true;
    report.device = dev;
    if (!compile_only && env_ms("CUOPT_FAKE_BROKEN_DEVICE") == req.device &&
        env_ms("CUOPT_FAKE_BROKEN_DEVICE")) {
        report.fail(exit_code::context_lost, "fake: GPU " + std::to_string(req.device) +
                                                 " is broken (CUDA_ERROR_ECC_UNCORRECTABLE)");
        return finish();
    }
    if (req.vendor) {  // no kernel: every case is a vendor_call, computed on the CPU
        if (compile_only) {
            report.mode = "compile_only";
            return finish();
        }
        const bool lt = *req.vendor == vendor_library::cublaslt;
        report.vendor = vendor_report{
            k_vendor_libraries.name(*req.vendor), "fake", "0.0.0",
            lt ? "CUBLAS_COMPUTE_32F, FAST_ACCUM off" : "CUBLAS_DEFAULT_MATH",
            lt ? "fake: D = scale_a * scale_b * (A x B) on the CPU in double, 0.5 ms per 256^3"
               : "fake: C = A x B on the CPU, 0.5 ms per 256^3"};
        describe_clocks(report, req, "");
        for (const run_case& rc : req.cases) report.cases.push_back(run_vendor_case(req, rc));
        return finish();
    }
    // Any other kernel is refused before it "compiles" (the preflight's own empty probe kernel
    // aside): a fake run cannot evaluate it, and must not look like a kernel that fails.
    if (req.kernel.entry != "matmul_f32" && req.kernel.entry != "gemm_e4m3" &&
        !(compile_only && req.kernel.entry == "cuopt_confinement_probe")) {
        report.fail(
            exit_code::invalid_request,
            "fake-harness simulates only matmul_f32 and gemm_e4m3; this request's kernel is " +
                req.kernel.entry + " (a fake run cannot evaluate it: run on a GPU)");
        return finish();
    }
    const std::string& src = req.kernel.source;
    if (src.find("FAKE_PIDFILE") != std::string::npos)
        write_file_atomic(report.request_folder / "harness.pid", std::to_string(getpid()));
    if (src.find("FAKE_CHILD_HANG") != std::string::npos) {
        start_sleeping_child({});
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (src.find("FAKE_ORPHAN_PIPE") != std::string::npos)
        start_sleeping_child(report.request_folder / "orphan.pid");
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
    report.compile = c;
    if (!c.ok) {
        report.fail(exit_code::compile_error,
                    describe_compile_failure(req.kernel.shown_name(), c.arch, c.log,
                                             "field compile.log of " + response_path));
        return finish();
    }
    if (compile_only) {
        report.mode = "compile_only";
        if (!g_cubin_out.empty()) write_file_atomic(g_cubin_out, "FAKE-CUBIN\n" + src);
        return finish();
    }
    if (src.find("FAKE_STDOUT_NOISE") != std::string::npos) {  // a kernel's printf, forging
        std::printf("{\"request\": \"forged\", \"exit_code\": 0}\n{\"request\"");
        std::fflush(stdout);
    }
    if (src.find("FAKE_CRASH") != std::string::npos) std::raise(SIGSEGV);
    if (src.find("FAKE_DISK_FULL") != std::string::npos && !g_worker) {
        // As the real harness says it when its response.json cannot be written (one-shot).
        std::fprintf(stderr,
                     "cuda-harness: internal_error: cannot write %s: No space left on device "
                     "(errno 28)\n",
                     response_path.c_str());
        std::exit(to_int(exit_code::internal_error));
    }
    if (src.find("FAKE_HANG") != std::string::npos)
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    if (src.find("FAKE_DEVICE_HEAP") != std::string::npos)
        g_retire_reason = "fake: its kernel uses the device heap (malloc)";
    describe_clocks(report, req, src);
    if (src.find("FAKE_NO_CASES") != std::string::npos) return finish();
    double define_factor = 1.0;
    for (const auto& [name, value] : req.kernel.defines)
        if (!value.empty() &&
            (std::isdigit(static_cast<unsigned char>(value[0])) || value[0] == '-'))
            define_factor += std::fabs(std::stod(value) - 32.0) / 64.0;

    for (std::size_t ci = 0; ci < req.cases.size(); ++ci) {
        const run_case& rc = req.cases[ci];
        case_outcome out;
        out.name = rc.name;
        out.measured = rc.measure;
        if (rc.measure && src.find("FAKE_INVALID_TIMING") != std::string::npos &&
            report.code == exit_code::ok) {
            out.status = case_run_status::invalid_timing;
            out.error =
                "timed sample 7 of " + std::to_string(req.timing.iterations) +
                " held 2 kernels: matmul_f32 and fake_intruder (another kernel ran inside it)";
            report.fail(exit_code::case_failed, "case '" + rc.name + "': " + out.error);
            report.cases.push_back(out);
            continue;
        }
        if (src.find("FAKE_ILLEGAL_ADDRESS") != std::string::npos) {
            out.status = case_run_status::cuda_error;
            out.error =
                "cuStreamSynchronize(stream) failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory "
                "access was encountered)";
            report.cases.push_back(out);
            for (std::size_t j = ci + 1; j < req.cases.size(); ++j) {
                case_outcome skipped;
                skipped.name = req.cases[j].name;
                skipped.error = "skipped: context lost";
                report.cases.push_back(skipped);
            }
            report.fail(exit_code::context_lost, "case '" + rc.name + "' lost the CUDA context");
            return finish();
        }
        const std::uint64_t launch =
            rc.launch_index_base + (rc.measure ? req.timing.checked_offset() : 0);
        if (const std::string why = fake_kernel_problem(req, rc); !why.empty()) {
            report.fail(exit_code::invalid_request, why);
            return finish();
        }
        fake_gemm g = fake_kernel(req, rc, launch);
        std::vector<float>& cv = g.c;
        const std::int64_t m = g.m, n = g.n, k = g.k;
        if (src.find("FAKE_WRONG") != std::string::npos) cv[0] += 1.0f;
        if (src.find("FAKE_OVERFIT") != std::string::npos && k != 29 && k % 32 != 0) cv[0] += 1.0f;
        const bool default_counts = req.timing.warmup == 10 && req.timing.iterations == 100;
        if (rc.measure && src.find("FAKE_COUNTS_LAUNCHES") != std::string::npos && !default_counts)
            cv[0] += 1.0f;
        if (rc.measure && src.find("FAKE_FAILS_REMEASURE") != std::string::npos &&
            req.timing.warmup != 10 && req.timing.iterations == 100)
            cv[0] += 1.0f;
        if (src.find("FAKE_NONDETERMINISTIC") != std::string::npos) {
            const bool big = src.find("FAKE_NONDETERMINISTIC_BIG") != std::string::npos;
            const bool untimed = std::none_of(
                req.cases.begin(), req.cases.end(),
                [](const run_case& x) { return x.measure || x.launch_index_base != 0; });
            if (!big || untimed)
                cv[0] += (big ? 1e-2f : 1e-6f) * static_cast<float>(1 + getpid() % 50);
        }
        const kernel_arg& c_arg = rc.args.at(2);
        std::vector<unsigned char> c_bytes = stored_bytes(c_arg.type, cv);
        const std::size_t c_size = dtype_size(c_arg.type);
        auto poison = [&](std::size_t from, std::size_t to) {  // elements [from, to) unwritten
            const std::uint64_t bits = poison_bits(c_arg.type);
            for (std::size_t i = from; i < to; ++i)
                std::memcpy(&c_bytes[i * c_size], &bits, c_size);
        };
        if (rc.measure && src.find("FAKE_LAST_LAUNCH_ONLY") != std::string::npos &&
            !checks_last_timed_launch(req.timing))
            poison(0, cv.size());
        if (src.find("FAKE_SKIP_LAST_ROW") != std::string::npos)
            poison(static_cast<std::size_t>((m - 1) * n), static_cast<std::size_t>(m * n));
        const bool write = src.find("FAKE_MISSING_OUTPUT") == std::string::npos;
        if (c_arg.check && write) {  // FAKE_MISSING_OUTPUT: a harness that lists a file it lost
            out.outputs.push_back(checked_output(c_arg, c_bytes, write));
        } else {
            if (write) write_file_atomic(*c_arg.output_file, c_bytes.data(), c_bytes.size());
            out.outputs.push_back({c_arg.name, "output", *c_arg.output_file, c_arg.type,
                                   c_arg.count, sha256_hex(c_bytes.data(), c_bytes.size()),
                                   count_poisoned(c_arg.type, c_bytes.data(), cv.size()),
                                   std::nullopt});
        }
        for (std::size_t i = 0; i < rc.args.size(); ++i) {  // an inout c has its values too
            const kernel_arg& in = rc.args[i];
            if (!in.input_dump_file) continue;
            const auto v = i == 0   ? g.a
                           : i == 1 ? g.b
                                    : values_of(in, values_launch(in, req, rc, launch));
            out.outputs.push_back(write_values(in, *in.input_dump_file, v, "input_dump"));
        }
        out.checked_launch_index = launch;
        out.inputs_changed = inputs_changed(rc, src);
        if (rc.measure) {
            const bool memoised =
                src.find("FAKE_MEMOISE") != std::string::npos && inputs_repeat(req, rc);
            const double ms = fake_ms_per_unit(src) * device_slowdown(req.device) * define_factor *
                              (memoised ? 0.25 : 1.0) * static_cast<double>(m * n * k) /
                              (256.0 * 256.0 * 256.0) * process_jitter(src, report.request_file) *
                              search_luck(src, req);
            time_case(out, req, src, ms);
        }
        out.status = case_run_status::ok;
        report.cases.push_back(out);
    }
    return finish();
}
