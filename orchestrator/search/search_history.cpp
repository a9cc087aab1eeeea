// The search's history: new attempts scored and ranked, recorded ones replayed in order.
#include "orchestrator/search/search_history.hpp"

#include <stdexcept>

#include "orchestrator/evaluation/ranker.hpp"
#include "orchestrator/search/device_baselines.hpp"
#include "orchestrator/search/search_loop.hpp"

namespace cuopt {

const attempt_result& search_history::record(attempt_result r, search_outcome& out) {
    if (m_resume && m_replayed < m_resume->history.size())  // they come first, in order
        throw std::runtime_error(
            "cannot resume: history.json holds attempts its candidates.json files do not lead "
            "to (attempt " +
            r.id() + " is new, and not every recorded one came before it)");
    if (r.verdict == verdict::valid && r.geomean_ms) {
        if (const std::optional<double> initial_ms = initial_geomean_ms(out, r.device))
            r.speedup_vs_initial = *initial_ms / *r.geomean_ms;
        else if (r.iteration == 0)
            r.speedup_vs_initial = 1.0;
        const std::optional<double> best_ms =
            out.best ? normalised_geomean_ms(out, out.history[*out.best]) : std::nullopt;
        r.became_best =
            rank_candidate(best_ms, *normalised_geomean_ms(out, r), m_min_gain).becomes_best;
    }
    out.history.push_back(std::move(r));
    if (out.history.back().became_best) out.best = out.history.size() - 1;
    if (out.history.back().iteration == 0) out.initial = out.history.size() - 1;
    tell(out);
    return out.history.back();
}

const attempt_result& search_history::replay(const attempt_result& r, search_outcome& out) {
    out.history.push_back(r);
    ++m_replayed;
    if (r.became_best) out.best = out.history.size() - 1;
    if (r.iteration == 0) out.initial = out.history.size() - 1;
    return out.history.back();
}

void search_history::replay_rest(search_outcome& out) {
    for (std::size_t i = m_replayed; m_resume && i < m_resume->history.size(); ++i)
        replay(m_resume->history[i], out);
}

void search_history::tell(const search_outcome& out) const {
    if (m_on_attempt) m_on_attempt(out.history.back(), out);
}

}  // namespace cuopt
