#pragma once
/// Is the winner really faster? Per-launch samples of interleaved harness runs of two
/// kernels, compared per case as a ratio of medians (baseline / candidate: above 1
/// means the candidate is faster) with a 95% interval from a two-level bootstrap that
/// resamples whole runs first and then the samples within each run, so run-to-run
/// drift widens the interval as it should. With as many runs on each side (one per
/// interleaved round) the runs are resampled in pairs: round i of one side with round i
/// of the other. The same comparison of a kernel against
/// itself (the A/A control) tells whether the GPU was quiet enough to trust the rest.

#include <cstdint>
#include <string>
#include <vector>

#include "common/name_table.hpp"

namespace cuopt {

enum class significance { faster, no_significant_difference, slower };

inline constexpr auto k_significances = make_name_table<significance>(
    {{significance::faster, "faster"},
     {significance::no_significant_difference, "no_significant_difference"},
     {significance::slower, "slower"}});

inline const char* to_string(significance s) {
    return k_significances.name(s);
}

/// Per harness run, the per-launch samples (ms) of one case.
using run_samples = std::vector<std::vector<double>>;

struct ratio_estimate {
    double ratio = 1;  // median(baseline) / median(candidate)
    double low = 1, high = 1;
    significance verdict = significance::no_significant_difference;
};

struct bootstrap_settings {
    int resamples = 2000;
    std::uint64_t seed = 1;
    /// false: the two sides' runs were not interleaved (figures recorded in another session), so
    /// they are never resampled in pairs, even when their counts agree.
    bool pair_runs = true;
};

/// One case. Both sides need at least one run with at least one sample (else
/// std::invalid_argument).
ratio_estimate compare_runs(const run_samples& baseline, const run_samples& candidate,
                            const bootstrap_settings& s = {});

/// Several cases at once: each case's estimate and the geometric mean of the ratios, whose
/// interval comes from the geometric mean of each bootstrap round's per-case ratios.
struct multi_case_estimate {
    std::vector<ratio_estimate> cases;
    ratio_estimate geomean;
};
multi_case_estimate compare_cases(const std::vector<run_samples>& baseline,
                                  const std::vector<run_samples>& candidate,
                                  const bootstrap_settings& s = {});

/// The median of every sample of every run together.
double pooled_median(const run_samples& runs);

/// The verdict an interval [low, high] around a ratio implies.
significance classify_interval(double low, double high);

}  // namespace cuopt
