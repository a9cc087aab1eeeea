#include "harness/peak_rates.hpp"

namespace cuopt {

namespace {

// Dense operations per SM per clock (an FMA counts 2). Where a family has a full-rate and
// a reduced-rate part (GeForce halves FP32-accumulate tensor math), the full rate.
struct sm_rates {
    int cc;  // major * 10 + minor
    double f64, f32, tf32, f16, bf16, fp8, i8;
};

// Sources: NVIDIA's architecture whitepapers and datasheets, each checked as
// rate = published dense peak / (SMs x boost clock): V100, T4, A100, A40/RTX A6000,
// L40S/RTX 4090, H100/H200, B200, RTX 5090/RTX PRO 6000. No tensor cores for a type: the
// fastest non-tensor path (tf32 and bf16 run as f32 before sm_80). fp8 (e4m3 and e5m2, f32
// accumulation): tensor cores from Ada (sm_89) on; before that a kernel reading fp8 converts
// it, so its fastest path is f16's.
constexpr sm_rates k_rates[] = {
    {70, 64, 128, 128, 1024, 128, 1024, 512},         // V100: f16 tensor cores, i8 via dp4a
    {75, 4, 128, 128, 1024, 128, 1024, 2048},         // Turing (T4, RTX 20)
    {80, 128, 128, 1024, 2048, 2048, 2048, 4096},     // A100: f64 tensor cores
    {86, 4, 256, 512, 1024, 1024, 1024, 2048},        // GA10x (A40, RTX A6000, RTX 30)
    {89, 4, 256, 512, 1024, 1024, 2048, 2048},        // Ada (L40S, L4, RTX 40): fp8 733 TF L40S
    {90, 256, 256, 2048, 4096, 4096, 8192, 8192},     // Hopper (H100, H200): fp8 1979 TF
    {100, 256, 256, 4096, 8192, 8192, 16384, 16384},  // B200 (f64: 256 covers every SKU's 37-45 TF)
    {120, 4, 256, 512, 1024, 1024, 2048, 2048},       // Blackwell RTX (RTX 50, RTX PRO 6000)
};

const sm_rates* rates_for(const device_fingerprint& d) {
    const int cc = d.cc_major * 10 + d.cc_minor;
    for (const sm_rates& r : k_rates)
        if (r.cc == cc) return &r;
    return nullptr;
}

}  // namespace

std::optional<peak_tflops> peak_tflops_for(const device_fingerprint& d) {
    const sm_rates* r = rates_for(d);
    if (!r || d.sm_count <= 0 || d.sm_clock_khz <= 0) return std::nullopt;
    const double per_rate = static_cast<double>(d.sm_count) * d.sm_clock_khz * 1e3 / 1e12;
    return peak_tflops{r->f64 * per_rate,  r->f32 * per_rate, r->tf32 * per_rate, r->f16 * per_rate,
                       r->bf16 * per_rate, r->fp8 * per_rate, r->i8 * per_rate};
}

std::string peak_note(const device_fingerprint& d) {
    if (!rates_for(d)) return "no rate table for " + d.arch() + ": peak_tflops omitted";
    if (d.sm_count <= 0 || d.sm_clock_khz <= 0)
        return "the driver reports no SM count or clock: peak_tflops omitted";
    return "dense operations per SM per clock for " + d.arch() +
           " (tensor cores where faster, full-rate parts) x " + std::to_string(d.sm_count) +
           " SMs x " + std::to_string(d.sm_clock_khz / 1000) +
           " MHz (the maximum SM clock): published rates, not measured; fp8 covers e4m3 and e5m2; "
           "i8 in "
           "tera-operations";
}

}  // namespace cuopt
