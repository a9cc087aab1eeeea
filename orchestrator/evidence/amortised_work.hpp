#pragma once
/// Work hidden in rare launches. A median is blind to one slow launch in N: a kernel that does
/// the work of many launches in one (a "warm-up precompute", results batched ahead) and only
/// copies in the others shows a fast median while its launches cost, summed, what honest ones
/// do. Per performance case, over a candidate's timed runs (fresh seeds, the varied repetition
/// runs, the significance rounds), each run's launches are scaled by that run's median and
/// pooled: the sum of the launches against median x count, and the slowest launches against the
/// median, say whether the time is where the median says it is.

#include <string>
#include <vector>

#include "orchestrator/evaluation/attempt_evaluator.hpp"

namespace cuopt {

/// One performance case's launches, pooled over runs, each run scaled by its own median.
struct launch_spread {
    std::string case_name;
    int runs = 0;
    int launches = 0;
    double mean_over_median = 1;     // sum of the launches / (median x count)
    double slowest_over_median = 1;  // the slowest launch / the median
    double tail_share = 0;           // the share of the summed time in launches above 2x median
    /// Each run's own figures (its launches against its median), in run order: a verdict needs
    /// most runs, so one preemption or clock dip in one run is not a kernel's doing.
    std::vector<double> run_mean_over_median, run_tail_share;
};

/// The spread of every performance case found in `runs` (valid runs with samples only), in the
/// order the cases first appear.
std::vector<launch_spread> launch_spreads(const std::vector<const attempt_result*>& runs);

/// Where a case's launches say its work is amortised, in more than half of its runs: a run's
/// summed time more than 1 + `threshold` times median x count (what a median can overstate is
/// bounded by that), or more than `tail_share` of it in launches above twice the median (a rare
/// launch carrying the work of many, even when the sum stays under the first bound). A kernel
/// that amortises does so in every run; a preemption hits one. "" when no case is, else one
/// line with the figures.
std::string amortised_problem(const std::vector<launch_spread>& spreads, double threshold,
                              double tail_share);

/// The cases' figures in one line: "perf-256: 1.01x mean/median, slowest 1.3x, 0.0% above 2x
/// (330 launches in 3 runs)".
std::string describe_spreads(const std::vector<launch_spread>& spreads);

}  // namespace cuopt
