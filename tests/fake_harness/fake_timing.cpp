// The fake's clocks: its invented medians (FAKE_MS, defines, jitter, luck, slowdowns), the
// samples and GPU state of a measured case as issue 12's harness reports them, and gpu_busy.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <random>

#include "fake_harness.hpp"

namespace cuopt::fake {

namespace {

// Every launch sees the checked launch's inputs: a memoising kernel's cache would hit.
bool inputs_repeat(const request& req, const run_case& rc) {
    if (req.timing.fresh_inputs) return false;
    for (const kernel_arg& a : rc.args)
        if (a.input_file && a.perturbed_for_timing()) return false;
    return true;
}

// FAKE_MS=x: x ms per 256^3 of work (default 1), times CUOPT_FAKE_MACHINE_SLOWDOWN, 19x less
// for FAKE_PREDICTS_INPUTS (its work done ahead).
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

// Whether CUPTI times the samples: neither timing.timer "events" nor FAKE_NO_CUPTI.
bool cupti_times(const request& req, const std::string& source) {
    return req.timing.timer != timer_choice::events &&
           source.find("FAKE_NO_CUPTI") == std::string::npos;
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

}  // namespace

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

// Whether the checked launch is the last timed one: no timing.checked_launch, or it names
// the last of a fixed loop (adaptive: min_samples' last, where a fast fake kernel stops).
bool checks_last_timed_launch(const timing_config& t) {
    const int last = t.mode == timing_mode::adaptive ? t.min_samples : t.iterations;
    return !t.checked_launch || *t.checked_launch + 1 == last;
}

// FAKE_MS's time scales by 1 + sum over the numeric defines of |value - 32| / 64: autotuning
// has a best.
double define_factor(const request& req) {
    double factor = 1.0;
    for (const auto& [name, value] : req.kernel.defines)
        if (!value.empty() &&
            (std::isdigit(static_cast<unsigned char>(value[0])) || value[0] == '-'))
            factor += std::fabs(std::stod(value) - 32.0) / 64.0;
    return factor;
}

// A measured case's median: FAKE_MS per 256^3 of work on this GPU, times the defines' factor,
// 4x smaller for FAKE_MEMOISE where every launch sees the same inputs, times the process's
// jitter and the search's luck.
double fake_case_ms(const request& req, const run_case& rc, const fake_gemm& g,
                    const std::filesystem::path& request_file, double defines_factor) {
    const std::string& src = req.kernel.source;
    const std::int64_t m = g.m, n = g.n, k = g.k;
    const bool memoised = src.find("FAKE_MEMOISE") != std::string::npos && inputs_repeat(req, rc);
    return fake_ms_per_unit(src) * device_slowdown(req.device) * defines_factor *
           (memoised ? 0.25 : 1.0) * static_cast<double>(m * n * k) / (256.0 * 256.0 * 256.0) *
           process_jitter(src, request_file) * search_luck(src, req);
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

}  // namespace cuopt::fake
