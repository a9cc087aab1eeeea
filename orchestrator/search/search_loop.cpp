#include "orchestrator/search/search_loop.hpp"

#include "orchestrator/evaluation/ranker.hpp"

namespace cuopt {

search_loop::search_loop(const manifest& m, const attempt_evaluator& evaluator, proposer& p,
                         search_settings settings, folder_for folders, attempt_hook on_attempt,
                         const std::atomic<bool>* interrupted)
    : m_manifest(m),
      m_evaluator(evaluator),
      m_proposer(p),
      m_settings(std::move(settings)),
      m_folders(std::move(folders)),
      m_on_attempt(std::move(on_attempt)),
      m_interrupted(interrupted) {}

attempt_result search_loop::evaluate(const candidate& c, int iteration, int attempt,
                                     const oracle_files& oracle, search_outcome& out,
                                     int repair_of) {
    attempt_result r;
    const std::string refused = check_compile_options(c.compile_options, m_settings.run_folder);
    if (!c.rejected.empty()) {
        r.cand = c;
        r.folder = m_folders(iteration, attempt);
        r.verdict = verdict::invalid_submission;
        r.reason = c.rejected;
    } else if (!refused.empty()) {
        r.cand = c;
        r.folder = m_folders(iteration, attempt);
        r.verdict = verdict::invalid_request;
        r.reason = refused;
    } else {
        r = m_evaluator.evaluate(c, m_folders(iteration, attempt), &oracle);
    }
    r.iteration = iteration;
    r.attempt = attempt;
    r.repair_of = repair_of;
    if (r.verdict == verdict::valid && r.geomean_ms) {
        const std::optional<double> best_ms =
            out.best ? out.history[*out.best].geomean_ms : std::optional<double>();
        if (out.initial && out.history[*out.initial].geomean_ms)
            r.speedup_vs_initial = *out.history[*out.initial].geomean_ms / *r.geomean_ms;
        else if (iteration == 0)
            r.speedup_vs_initial = 1.0;
        r.became_best = rank_candidate(best_ms, *r.geomean_ms, m_settings.min_gain).becomes_best;
    }
    out.history.push_back(r);
    if (r.became_best) out.best = out.history.size() - 1;
    if (iteration == 0) out.initial = out.history.size() - 1;
    if (m_on_attempt) m_on_attempt(out.history.back(), out);
    return out.history.back();
}

bool search_loop::near_speed_of_light(const search_outcome& out) const {
    if (m_settings.stop_at_sol <= 0 || !out.best || m_settings.floors_ms.empty()) return false;
    for (const manifest_case& mc : m_manifest.cases) {
        if (mc.kind != case_kind::performance) continue;
        const auto floor = m_settings.floors_ms.find(mc.name);
        const std::optional<double> median = out.median_ms(out.best, mc.name);
        if (floor == m_settings.floors_ms.end() || !median ||
            floor->second / *median < m_settings.stop_at_sol)
            return false;
    }
    return true;
}

search_outcome search_loop::run(const candidate& initial, const oracle_files& oracle) {
    search_outcome out;
    const attempt_result first = evaluate(initial, 0, 0, oracle, out);
    if (first.verdict != verdict::valid) {
        out.stop = stop_reason::error;
        out.error = "the initial kernel fails: " + std::string(to_string(first.verdict)) +
                    (first.reason.empty() ? "" : ": " + first.reason);
        if (m_on_attempt) m_on_attempt(out.history.back(), out);
        return out;
    }
    for (int iteration = 1; iteration <= m_settings.max_iterations; ++iteration) {
        if (m_interrupted && *m_interrupted) {
            out.stop = stop_reason::interrupted;
            return out;
        }
        if (near_speed_of_light(out)) {
            out.stop = stop_reason::near_speed_of_light;
            return out;
        }
        const search_state state{m_manifest, initial, out.history, out.best, iteration};
        std::vector<candidate> batch;
        try {
            batch = m_proposer.propose(state);
        } catch (const proposer_stop& stop) {
            out.stop = stop.reason();
            out.error = stop.what();
            return out;
        }
        if (batch.empty()) {
            out.stop = stop_reason::proposer_exhausted;
            return out;
        }
        int attempt = 0, repairs = 0;
        for (const candidate& c : batch) {
            if (m_interrupted && *m_interrupted) break;
            attempt_result r = evaluate(c, iteration, attempt++, oracle, out);
            while (r.verdict == verdict::compile_error && repairs < m_settings.max_repairs) {
                const search_state now{m_manifest, initial, out.history, out.best, iteration};
                std::optional<candidate> fixed;
                try {
                    fixed = m_proposer.repair(now, r);
                } catch (const proposer_stop& stop) {
                    out.stop = stop.reason();
                    out.error = stop.what();
                    return out;
                }
                if (!fixed) break;
                ++repairs;
                r = evaluate(*fixed, iteration, attempt++, oracle, out, r.attempt);
            }
        }
    }
    out.stop =
        m_interrupted && *m_interrupted ? stop_reason::interrupted : stop_reason::max_iterations;
    return out;
}

}  // namespace cuopt
