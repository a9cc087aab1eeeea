#include "orchestrator/evaluation/ranker.hpp"

#include <cmath>

namespace cuopt {

std::optional<double> geometric_mean(const std::vector<double>& values) {
    if (values.empty()) return std::nullopt;
    double log_sum = 0;
    for (double v : values) {
        if (!(v > 0) || !std::isfinite(v)) return std::nullopt;
        log_sum += std::log(v);
    }
    return std::exp(log_sum / static_cast<double>(values.size()));
}

ranking_decision rank_candidate(std::optional<double> best_ms, double candidate_ms,
                                double min_gain) {
    ranking_decision d;
    if (!best_ms) {
        d.becomes_best = true;
        return d;
    }
    d.speedup = *best_ms / candidate_ms;
    d.becomes_best = d.speedup > 1.0 + min_gain;
    return d;
}

}  // namespace cuopt
