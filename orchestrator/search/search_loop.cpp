// The gated search: iteration 0, then batches, repairs and the stop rules.
#include "orchestrator/search/search_loop.hpp"

#include <algorithm>

#include "orchestrator/search/device_baselines.hpp"

namespace cuopt {

namespace {

// A candidate's run on one device (or its refusal), not yet recorded; thread-safe.
attempt_result measure(const candidate& c, int iteration, int attempt, const oracle_files& oracle,
                       const attempt_evaluator& e, const search_settings& settings,
                       const search_loop::folder_for& folders) {
    attempt_result r;
    const std::string refused = check_compile_options(c.compile_options, settings.run_folder);
    if (!c.rejected.empty() || !refused.empty()) {
        r.cand = c;
        r.folder = folders(iteration, attempt);
        r.device = e.settings().device;
        r.verdict = c.rejected.empty() ? verdict::invalid_request : verdict::invalid_submission;
        r.reason = c.rejected.empty() ? refused : c.rejected;
    } else {
        r = e.evaluate(c, folders(iteration, attempt), &oracle);
    }
    r.iteration = iteration;
    r.attempt = attempt;
    return r;
}

// Every performance case of the best within stop_at_sol of its floor.
bool near_speed_of_light(const manifest& m, const search_settings& settings,
                         const search_outcome& out) {
    if (settings.stop_at_sol <= 0 || !out.best || settings.floors_ms.empty()) return false;
    for (const manifest_case& mc : m.cases) {
        if (mc.kind != case_kind::performance) continue;
        const auto floor = settings.floors_ms.find(mc.name);
        const std::optional<double> median = out.median_ms(out.best, mc.name);
        if (floor == settings.floors_ms.end() || !median ||
            floor->second / *median < settings.stop_at_sol)
            return false;
    }
    return true;
}

}  // namespace

search_loop::search_loop(const manifest& m, const attempt_evaluator& evaluator, proposer& p,
                         search_settings settings, folder_for folders, attempt_hook on_attempt,
                         const std::atomic<bool>* interrupted)
    : m_manifest(m),
      m_proposer(p),
      m_settings(std::move(settings)),
      m_folders(std::move(folders)),
      m_history(m_settings.min_gain, std::move(on_attempt)),
      m_interrupted(interrupted),
      m_devices(measuring_devices(evaluator, m_settings.parallel)) {}

attempt_result search_loop::evaluate(const candidate& c, int iteration, int attempt,
                                     const oracle_files& oracle, search_outcome& out,
                                     int repair_of) {
    if (const attempt_result* done = m_history.recorded(iteration, attempt))
        return m_history.replay(*done, out);
    attempt_result r =
        measure(c, iteration, attempt, oracle, m_devices.front().evaluator, m_settings, m_folders);
    r.repair_of = repair_of;
    return m_history.record(std::move(r), out);
}

attempt_result search_loop::evaluate_initial(const candidate& initial, const oracle_files& oracle,
                                             search_outcome& out) {
    const std::filesystem::path iteration_folder = m_folders(0, 0).parent_path();
    const attempt_result* zero =
        m_history.recorded(0, 0);  // resuming: only the baselines are measured
    std::vector<attempt_result> runs = on_every_device(m_devices, [&](const measuring_device& d) {
        if (&d == &m_devices.front())
            return zero ? *zero
                        : measure(initial, 0, 0, oracle, d.evaluator, m_settings, m_folders);
        return d.evaluator.evaluate(
            initial, iteration_folder / ("initial-device-" + std::to_string(d.index)), &oracle);
    });
    out.baselines.assign(std::make_move_iterator(runs.begin() + 1),
                         std::make_move_iterator(runs.end()));
    return zero ? m_history.replay(*zero, out) : m_history.record(std::move(runs.front()), out);
}

std::vector<attempt_result> search_loop::measure_batch(const std::vector<candidate>& batch,
                                                       int iteration, const oracle_files& oracle,
                                                       search_outcome& out) {
    std::vector<batch_job> jobs;
    std::vector<attempt_result> compile_errors;
    for (std::size_t j = 0; j < batch.size(); ++j) {
        if (std::any_of(out.history.begin(), out.history.end(), [&](const attempt_result& r) {
                return r.iteration == iteration && r.attempt == static_cast<int>(j);
            }))
            continue;  // start_from's kernel, measured before the batch was asked for
        if (const attempt_result* done = m_history.recorded(iteration, static_cast<int>(j))) {
            if (m_history.replay(*done, out).verdict == verdict::compile_error)
                compile_errors.push_back(*done);
            continue;  // resuming: evaluated before the run stopped
        }
        const candidate& c = batch[j];
        jobs.push_back(
            {&c, static_cast<int>(j),
             c.rejected.empty() && cacheable_options(c.compile_options) &&
                 check_compile_options(c.compile_options, m_settings.run_folder).empty()});
    }
    const compile_ahead_settings ahead{m_settings.parallel.compile_threads,
                                       m_folders(iteration, 0).parent_path() / "compile-ahead"};
    evaluate_batch(
        jobs, m_devices, ahead,
        [&](const batch_job& j, const measuring_device& d) {
            return measure(*j.cand, iteration, j.attempt, oracle, d.evaluator, m_settings,
                           m_folders);
        },
        [&](attempt_result r) {
            if (m_history.record(std::move(r), out).verdict == verdict::compile_error)
                compile_errors.push_back(out.history.back());
        },
        m_interrupted);
    return compile_errors;
}

namespace {

// "" when the initial kernel passed on every other device too, else which one it failed on.
std::string baseline_failure(const search_outcome& out) {
    for (const attempt_result& b : out.baselines)
        if (b.verdict != verdict::valid)
            return "the initial kernel fails on device " + std::to_string(b.device) + ": " +
                   to_string(b.verdict) + (b.reason.empty() ? "" : ": " + b.reason);
    return "";
}

}  // namespace

std::optional<std::vector<candidate>> search_loop::next_batch(int iteration,
                                                              const candidate& initial,
                                                              search_outcome& out) {
    const iteration_record* written = m_history.recorded_iteration(iteration);
    // The user's own kernel leads iteration 1 (measured already): not the proposer's.
    const std::size_t own = iteration == 1 && m_own ? 1 : 0;
    const bool proposed = written && written->batch.size() > own;
    if (!proposed && near_speed_of_light(m_manifest, m_settings, out)) {
        out.stop = stop_reason::near_speed_of_light;
        return std::nullopt;
    }
    const search_state state{m_manifest, initial, out.history, out.best, iteration};
    if (proposed) {  // resuming: the batch it gave then, its state rebuilt with it
        m_current = *written;
        m_proposer.restore(
            state, {m_current.batch.begin() + static_cast<long>(own), m_current.batch.end()});
        return m_current.batch;
    }
    std::vector<candidate> batch;
    try {
        batch = m_proposer.propose(state);
    } catch (const proposer_stop& stop) {
        out.stop = stop.reason();
        out.error = stop.what();
        return std::nullopt;
    }
    if (batch.empty()) {
        out.stop = stop_reason::proposer_exhausted;
        return std::nullopt;
    }
    for (candidate& c : batch) c.pytorch_mode.clear();  // built on a PyTorch baseline: CUDA now
    if (own) batch.insert(batch.begin(), *m_own);
    m_current = {batch, {}};
    if (m_on_candidates) m_on_candidates(iteration, m_current);
    return batch;
}

std::optional<candidate> search_loop::fix(const attempt_result& failed, int attempt,
                                          const candidate& initial, const search_outcome& out) {
    if (const repair_record* written = m_current.repair_for(failed.attempt)) return written->fixed;
    const search_state now{m_manifest, initial, out.history, out.best, failed.iteration};
    std::optional<candidate> fixed = m_proposer.repair(now, failed);  // may throw proposer_stop
    m_current.repairs.push_back({failed.attempt, attempt, fixed});
    if (m_on_candidates) m_on_candidates(failed.iteration, m_current);
    return fixed;
}

bool search_loop::measure_own(const oracle_files& oracle, search_outcome& out) {
    if (!m_history.recorded_iteration(1)) {  // written down before it is measured
        m_current = {{*m_own}, {}};
        if (m_on_candidates) m_on_candidates(1, m_current);
    }
    const attempt_result r = evaluate(*m_own, 1, 0, oracle, out);
    if (r.verdict == verdict::valid) return true;
    out.stop = stop_reason::error;
    out.error = "the initial kernel fails: " + std::string(to_string(r.verdict)) +
                (r.reason.empty() ? "" : ": " + r.reason);
    m_history.tell(out);
    return false;
}

void search_loop::iterate(const candidate& baseline, const oracle_files& oracle,
                          search_outcome& out) {
    const attempt_result first = evaluate_initial(baseline, oracle, out);
    if (first.verdict != verdict::valid || !baseline_failure(out).empty()) {
        out.stop = stop_reason::error;
        out.error = first.verdict != verdict::valid
                        ? "the initial kernel fails: " + std::string(to_string(first.verdict)) +
                              (first.reason.empty() ? "" : ": " + first.reason)
                        : baseline_failure(out);
        m_history.tell(out);
        return;
    }
    if (m_settings.max_iterations < 1 || (m_interrupted && *m_interrupted)) {
        out.stop = m_interrupted && *m_interrupted ? stop_reason::interrupted
                                                   : stop_reason::max_iterations;
        return;
    }
    if (m_own && !measure_own(oracle, out)) return;
    const candidate& initial = m_own ? *m_own : baseline;  // what the proposer starts from
    for (int iteration = 1; iteration <= m_settings.max_iterations; ++iteration) {
        if (m_interrupted && *m_interrupted) {
            out.stop = stop_reason::interrupted;
            return;
        }
        const std::optional<std::vector<candidate>> batch = next_batch(iteration, initial, out);
        if (!batch) return;
        int attempt = static_cast<int>(batch->size()), repairs = 0;
        for (attempt_result r : measure_batch(*batch, iteration, oracle, out)) {
            if (m_interrupted && *m_interrupted) break;
            while (r.verdict == verdict::compile_error && repairs < m_settings.max_repairs) {
                std::optional<candidate> fixed;
                try {
                    fixed = fix(r, attempt, initial, out);
                } catch (const proposer_stop& stop) {
                    out.stop = stop.reason();
                    out.error = stop.what();
                    return;
                }
                if (!fixed) break;
                ++repairs;
                r = evaluate(*fixed, iteration, attempt++, oracle, out, r.attempt);
            }
        }
    }
    out.stop =
        m_interrupted && *m_interrupted ? stop_reason::interrupted : stop_reason::max_iterations;
}

search_outcome search_loop::run(const candidate& initial, const oracle_files& oracle,
                                const search_record* resume) {
    m_history.resume_from(resume);
    search_outcome out;
    iterate(initial, oracle, out);
    // Stopped before every recorded attempt was gone over again (interrupted at once): the rest
    // still belong to the run, in their order.
    m_history.replay_rest(out);
    return out;
}

}  // namespace cuopt
