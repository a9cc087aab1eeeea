#include "orchestrator/search/device_baselines.hpp"

namespace cuopt {

const attempt_result* initial_on(const search_outcome& o, int device) {
    if (o.initial && o.history[*o.initial].device == device) return &o.history[*o.initial];
    for (const attempt_result& b : o.baselines)
        if (b.device == device) return &b;
    return nullptr;
}

std::optional<double> initial_geomean_ms(const search_outcome& o, int device) {
    const attempt_result* r = initial_on(o, device);
    return r && r->verdict == verdict::valid ? r->geomean_ms : std::nullopt;
}

std::optional<double> normalised_geomean_ms(const search_outcome& o, const attempt_result& r) {
    if (!r.geomean_ms || !o.initial) return r.geomean_ms;
    const std::optional<double> first = o.history[*o.initial].geomean_ms;
    const std::optional<double> own = initial_geomean_ms(o, r.device);
    if (!first || !own) return r.geomean_ms;
    return *r.geomean_ms * (*first / *own);
}

std::optional<double> initial_median_ms(const search_outcome& o, int device,
                                        const std::string& case_name) {
    const attempt_result* r = initial_on(o, device);
    if (!r) return std::nullopt;
    for (const case_evaluation& ce : r->cases)
        if (ce.name == case_name) return ce.median_ms;
    return std::nullopt;
}

}  // namespace cuopt
