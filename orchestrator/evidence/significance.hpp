#pragma once
/// Is the winner really faster? Per-launch samples of interleaved harness runs of two
/// kernels, compared per case as a ratio of medians (baseline / candidate: above 1
/// means the candidate is faster) with a 95% interval from a two-level bootstrap that
/// resamples whole runs first and then the samples within each run, so run-to-run
/// drift widens the interval as it should. With as many runs on each side (one per
/// interleaved round) the runs are resampled in pairs: round i of one side with round i
/// of the other. The same comparison of a kernel against
/// itself (the A/A control) tells whether the GPU was quiet enough to trust the rest.
///
/// Differences smaller than a practical margin δ do not count: a GPU engineer's processes
/// differ by ~0.5% at 20-60 us even on a quiet GPU, so "the interval excludes 1" alone would
/// call a kernel against itself different almost every time. δ per case is
/// max(floor, factor x the spread between processes), the spread being the relative standard
/// deviation of each process's median around its side's, measured in the same rounds.

#include <cstdint>
#include <optional>
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

/// The verdict an interval [low, high] around a ratio implies, differences within the
/// margin δ not counting: faster when low > 1+δ, slower when high < 1-δ.
significance classify_interval(double low, double high, double margin = 0);

/// What the A/A control (a kernel against itself) says about the GPU.
enum class aa_class {
    equivalent,  // the interval lies inside 1±δ: the verdicts are reliable
    noisy,       // wider than that, or the spread itself beyond the practical cap
    biased       // the whole interval outside 1±δ: one process of two differs systematically
};

inline constexpr auto k_aa_classes =
    make_name_table<aa_class>({{aa_class::equivalent, "equivalent"},
                               {aa_class::noisy, "noisy"},
                               {aa_class::biased, "biased"}});

inline const char* to_string(aa_class c) {
    return k_aa_classes.name(c);
}

struct margin_settings {
    double floor = 0.005;  // δ is never below 0.5%
    double factor = 3;     // δ = factor x the spread between processes
    /// A margin beyond this is no practical margin: the A/A is noisy whatever its interval.
    double cap = 0.03;
};

/// The spread between processes of one case: each run's median against its side's (log
/// scale), pooled over the sides, as a relative standard deviation. nullopt when no side has
/// two runs.
std::optional<double> process_spread(const std::vector<const run_samples*>& sides);

/// δ for a spread (the floor alone when the spread is unknown).
double practical_margin(std::optional<double> spread, const margin_settings& s = {});

/// The A/A class of a kernel-against-itself estimate at margin δ.
aa_class classify_aa(const ratio_estimate& aa, double margin, const margin_settings& s = {});

/// One phrase for the A/A: "equivalent: 1.0003 [0.9981, 1.0024] within ±0.50%".
std::string describe_aa(const ratio_estimate& aa, double margin, const margin_settings& s = {});

}  // namespace cuopt
