#include "orchestrator/evidence/significance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>

namespace cuopt {

namespace {

double median_of(std::vector<double>& v) {
    const std::size_t n = v.size();
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
    const double upper = v[n / 2];
    if (n % 2) return upper;
    return (upper + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2))) /
           2;
}

void check_side(const run_samples& runs, const char* side) {
    const bool usable = !runs.empty() && std::all_of(runs.begin(), runs.end(),
                                                     [](const auto& r) { return !r.empty(); });
    if (!usable)
        throw std::invalid_argument(std::string("compare_runs: the ") + side +
                                    " needs at least one run, each with samples");
}

// One bootstrap draw: the runs `picked` (drawn with replacement), then samples within each.
double resampled_median(const run_samples& runs, const std::vector<std::size_t>& picked,
                        std::mt19937_64& rng, std::vector<double>& work) {
    work.clear();
    for (std::size_t r : picked) {
        const auto& run = runs[r];
        std::uniform_int_distribution<std::size_t> pick(0, run.size() - 1);
        for (std::size_t i = 0; i < run.size(); ++i) work.push_back(run[pick(rng)]);
    }
    return median_of(work);
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const double pos = p * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

ratio_estimate estimate(double ratio, const std::vector<double>& rounds) {
    ratio_estimate e;
    e.ratio = ratio;
    e.low = percentile(rounds, 0.025);
    e.high = percentile(rounds, 0.975);
    e.verdict = classify_interval(e.low, e.high);
    return e;
}

}  // namespace

double pooled_median(const run_samples& runs) {
    std::vector<double> all;
    for (const auto& r : runs) all.insert(all.end(), r.begin(), r.end());
    return median_of(all);
}

significance classify_interval(double low, double high, double margin) {
    if (low > 1 + margin) return significance::faster;
    if (high < 1 - margin) return significance::slower;
    return significance::no_significant_difference;
}

std::optional<double> process_spread(const std::vector<const run_samples*>& sides) {
    double sum_squares = 0;
    std::size_t values = 0, groups = 0;
    for (const run_samples* side : sides) {
        if (!side || side->size() < 2) continue;
        std::vector<double> logs;
        for (const auto& run : *side) {
            if (run.empty()) continue;
            std::vector<double> copy = run;
            logs.push_back(std::log(median_of(copy)));
        }
        if (logs.size() < 2) continue;
        double mean = 0;
        for (double l : logs) mean += l / static_cast<double>(logs.size());
        for (double l : logs) sum_squares += (l - mean) * (l - mean);
        values += logs.size();
        ++groups;
    }
    if (groups == 0) return std::nullopt;
    return std::sqrt(sum_squares / static_cast<double>(values - groups));
}

double practical_margin(std::optional<double> spread, const margin_settings& s) {
    return spread ? std::max(s.floor, s.factor * *spread) : s.floor;
}

aa_class classify_aa(const ratio_estimate& aa, double margin, const margin_settings& s) {
    if (aa.low > 1 + margin || aa.high < 1 - margin) return aa_class::biased;
    if (margin > s.cap || aa.low < 1 - margin || aa.high > 1 + margin) return aa_class::noisy;
    return aa_class::equivalent;
}

ratio_estimate compare_runs(const run_samples& baseline, const run_samples& candidate,
                            const bootstrap_settings& s) {
    return compare_cases({baseline}, {candidate}, s).cases.front();
}

multi_case_estimate compare_cases(const std::vector<run_samples>& baseline,
                                  const std::vector<run_samples>& candidate,
                                  const bootstrap_settings& s) {
    if (baseline.size() != candidate.size() || baseline.empty())
        throw std::invalid_argument("compare_cases: expected the same, non-zero number of cases");
    const std::size_t cases = baseline.size();
    std::mt19937_64 rng(s.seed);
    std::vector<std::vector<double>> rounds(cases);
    std::vector<double> geomean_rounds(static_cast<std::size_t>(s.resamples), 0.0), work;
    multi_case_estimate out;
    double log_sum = 0;
    for (std::size_t c = 0; c < cases; ++c) {
        check_side(baseline[c], "baseline");
        check_side(candidate[c], "candidate");
        const double ratio = pooled_median(baseline[c]) / pooled_median(candidate[c]);
        log_sum += std::log(ratio);
        // Paired when both sides have a run per round: a round's runs are drawn together, so
        // a slow round slows both sides, as it did on the GPU.
        const bool paired = s.pair_runs && baseline[c].size() == candidate[c].size();
        std::vector<std::size_t> pick_b(baseline[c].size()), pick_k(candidate[c].size());
        std::uniform_int_distribution<std::size_t> run_b(0, pick_b.size() - 1),
            run_k(0, pick_k.size() - 1);
        for (int i = 0; i < s.resamples; ++i) {
            for (std::size_t& p : pick_b) p = run_b(rng);
            if (paired)
                pick_k = pick_b;
            else
                for (std::size_t& p : pick_k) p = run_k(rng);
            const double b = resampled_median(baseline[c], pick_b, rng, work);
            const double k = resampled_median(candidate[c], pick_k, rng, work);
            rounds[c].push_back(b / k);
            geomean_rounds[static_cast<std::size_t>(i)] += std::log(b / k) / cases;
        }
        out.cases.push_back(estimate(ratio, rounds[c]));
    }
    for (double& g : geomean_rounds) g = std::exp(g);
    out.geomean = estimate(std::exp(log_sum / cases), geomean_rounds);
    return out;
}

std::string describe_aa(const ratio_estimate& aa, double margin, const margin_settings& s) {
    const aa_class c = classify_aa(aa, margin, s);
    char buf[200];
    if (c == aa_class::noisy && margin > s.cap)
        std::snprintf(buf, sizeof buf,
                      "noisy: %.4f [%.4f, %.4f]; the spread between processes makes the margin "
                      "±%.2f%%, beyond the practical ±%.2f%%",
                      aa.ratio, aa.low, aa.high, 100 * margin, 100 * s.cap);
    else
        std::snprintf(buf, sizeof buf, "%s: %.4f [%.4f, %.4f] %s ±%.2f%%", to_string(c), aa.ratio,
                      aa.low, aa.high,
                      c == aa_class::equivalent ? "within"
                      : c == aa_class::biased   ? "wholly outside"
                                                : "reaching beyond",
                      100 * margin);
    return buf;
}

}  // namespace cuopt
