#pragma once
/// Summary statistics of timing samples. The median is the headline figure (robust
/// to the odd preempted launch); the samples themselves are kept in the response.
/// The median's noise (its relative standard error) decides when an adaptive case stops.

#include <optional>
#include <vector>

#include "common/request.hpp"

namespace cuopt {

struct sample_statistics {
    double median = 0, mean = 0, min = 0, max = 0, stdev = 0;  // stdev: sample (n-1)
};

sample_statistics summarize(std::vector<double> samples);

/// The median's standard error over the median, distribution-free: the 95% confidence
/// interval of the median from order statistics (ranks n/2 -+ 1.96 sqrt(n)/2), its half-width
/// over 1.96. None for fewer than 5 samples or a median of 0.
std::optional<double> median_relative_standard_error(std::vector<double> samples);

/// What ended a case's timed loop: the fixed count, the noise target (adaptive), or the cap
/// (adaptive, `iterations` reached before the target).
enum class stop_rule { fixed, target_noise, cap };
inline constexpr auto k_stop_rules =
    make_name_table<stop_rule>({{stop_rule::fixed, "fixed"},
                                {stop_rule::target_noise, "target_noise"},
                                {stop_rule::cap, "cap"}});

/// Whether the timed loop may stop after `samples` (primary channel), and by which rule.
std::optional<stop_rule> stop_now(const timing_config& timing, const std::vector<double>& samples);

}  // namespace cuopt
