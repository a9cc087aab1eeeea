#pragma once
/// Ranking rules, apart from any file or process: a candidate's score is the geometric
/// mean of its per-case median latencies over the performance cases, and it replaces
/// the best only when it is faster by more than a minimum gain (noise is not progress).

#include <optional>
#include <vector>

namespace cuopt {

/// Geometric mean of positive values; nullopt for an empty list or a non-positive value.
std::optional<double> geometric_mean(const std::vector<double>& values);

struct ranking_decision {
    bool becomes_best = false;
    double speedup = 1.0;  // best_ms / candidate_ms (> 1 is faster)
};

/// Decides whether a candidate with `candidate_ms` replaces a best with `best_ms`
/// (none yet: it does). min_gain 0.01: its speedup over the best must exceed 1.01.
ranking_decision rank_candidate(std::optional<double> best_ms, double candidate_ms,
                                double min_gain);

}  // namespace cuopt
