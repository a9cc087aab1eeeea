#include "orchestrator/evidence/significance.hpp"

#include <algorithm>
#include <cmath>
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

significance classify_interval(double low, double high) {
    if (low > 1) return significance::faster;
    if (high < 1) return significance::slower;
    return significance::no_significant_difference;
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

}  // namespace cuopt
