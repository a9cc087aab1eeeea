#include "orchestrator/evidence/sol_floor.hpp"

#include <algorithm>

#include "common/json_document.hpp"
#include "common/json_fields.hpp"

namespace cuopt {

namespace {

// The highest dense rate a kernel producing `type` may legitimately reach: fp32 results may
// come from TF32 tensor cores where the tolerance allows it; both fp8 formats share one rate.
std::optional<double> peak_for(dtype type, const device_peaks& d) {
    auto get = [&d](std::string_view key) -> std::optional<double> {
        const auto it = d.peak_tflops.find(std::string(key));
        return it != d.peak_tflops.end() && it->second > 0 ? std::optional<double>(it->second)
                                                           : std::nullopt;
    };
    std::optional<double> peak = get(dtype_name(type));
    if (type == dtype::f32)
        if (const auto tf32 = get("tf32"); tf32 && (!peak || *tf32 > *peak)) peak = tf32;
    if ((type == dtype::i8 || type == dtype::u8) && !peak) peak = get("i8");
    if (type == dtype::f8e4m3 || type == dtype::f8e5m2) peak = get("fp8");
    return peak;
}

// The highest peak over every buffer's dtype: an f16-input, f32-output GEMM may run at f16's.
std::optional<double> highest_peak(const manifest& m, const device_peaks& d) {
    std::optional<double> best;
    for (const manifest_arg& a : m.args)
        if (a.is_buffer())
            if (const auto p = peak_for(a.type, d); p && (!best || *p > *best)) best = p;
    return best;
}

}  // namespace

device_peaks peaks_of(const device_facts& device) {
    return {device.copy_bandwidth_gbps, device.l2_bytes, device.peak_tflops};
}

std::optional<sol_floor> floor_for_case(const manifest& m, const manifest_case& c,
                                        const device_peaks& d) {
    if (d.copy_bandwidth_gbps <= 0) return std::nullopt;
    sol_floor f;
    double written = 0;
    for (const manifest_arg& a : m.args) {
        if (!a.is_buffer()) continue;
        const double bytes = static_cast<double>(evaluate_integer_expression(a.count, c.params)) *
                             static_cast<double>(dtype_size(a.type));
        if (a.has_input()) f.bytes += bytes;
        if (a.has_output()) written += bytes;
    }
    f.traffic_bytes = f.bytes + written;
    f.traffic_ms = f.traffic_bytes / (d.copy_bandwidth_gbps * 1e9) * 1e3;
    f.bytes += std::max(0.0, written - d.l2_bytes);
    f.memory_ms = f.bytes / (d.copy_bandwidth_gbps * 1e9) * 1e3;
    f.floor_ms = f.memory_ms;
    f.bound = "memory";
    if (!c.flops.empty()) {
        f.flops = static_cast<double>(evaluate_integer_expression(c.flops, c.params));
        if (const auto peak = highest_peak(m, d)) {
            f.compute_ms = *f.flops / (*peak * 1e12) * 1e3;
            if (*f.compute_ms > f.floor_ms) {
                f.floor_ms = *f.compute_ms;
                f.bound = "compute";
            }
        }
    }
    return f;
}

std::map<std::string, sol_floor> floors_for(const manifest& m, const device_peaks& d) {
    std::map<std::string, sol_floor> out;
    for (const manifest_case& c : m.cases)
        if (c.kind == case_kind::performance)
            if (const auto f = floor_for_case(m, c, d)) out[c.name] = *f;
    return out;
}

std::optional<double> sol_score(double kernel_ms, double baseline_ms, double floor_ms) {
    if (baseline_ms <= floor_ms) return std::nullopt;
    const double score = 1.0 / (1.0 + (kernel_ms - floor_ms) / (baseline_ms - floor_ms));
    return std::clamp(score, 0.0, 1.0);
}

}  // namespace cuopt
