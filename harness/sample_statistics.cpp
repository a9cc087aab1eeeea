#include "harness/sample_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace cuopt {

sample_statistics summarize(std::vector<double> samples) {
    sample_statistics s;
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    const std::size_t n = samples.size();
    s.min = samples.front();
    s.max = samples.back();
    s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
    if (n > 1) {
        double sq = 0;
        for (double v : samples) sq += (v - s.mean) * (v - s.mean);
        s.stdev = std::sqrt(sq / static_cast<double>(n - 1));
    }
    return s;
}

std::optional<double> median_relative_standard_error(std::vector<double> samples) {
    const std::size_t n = samples.size();
    if (n < 5) return std::nullopt;
    std::sort(samples.begin(), samples.end());
    const double median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    if (!(median > 0)) return std::nullopt;
    constexpr double z = 1.959964;  // two-sided 95%
    const double half = z * std::sqrt(static_cast<double>(n)) / 2;
    // 1-based ranks of the interval's ends, clamped to the sample; 0-based indices below.
    const auto lo = static_cast<std::size_t>(
        std::clamp(std::floor(static_cast<double>(n) / 2 - half), 1.0, static_cast<double>(n)));
    const auto hi = static_cast<std::size_t>(
        std::clamp(std::ceil(static_cast<double>(n) / 2 + half) + 1, 1.0, static_cast<double>(n)));
    return (samples[hi - 1] - samples[lo - 1]) / (2 * z) / median;
}

std::optional<stop_rule> stop_now(const timing_config& timing, const std::vector<double>& samples) {
    const auto n = static_cast<long long>(samples.size());
    if (timing.mode == timing_mode::fixed) {
        if (n >= timing.iterations) return stop_rule::fixed;
        return std::nullopt;
    }
    if (n >= timing.iterations) return stop_rule::cap;
    if (n < timing.min_samples) return std::nullopt;
    if (std::accumulate(samples.begin(), samples.end(), 0.0) < timing.min_time_ms)
        return std::nullopt;
    const std::optional<double> rse = median_relative_standard_error(samples);
    if (rse && *rse <= timing.target_rse) return stop_rule::target_noise;
    return std::nullopt;
}

}  // namespace cuopt
