// The gates that time a candidate again on fresh and on repeated inputs (significance has a
// file of its own), the amortised-work check over those runs, and the fresh rounds' draws.
#include "common/inputs_key.hpp"
#include "orchestrator/evidence/evidence_gates.hpp"

namespace cuopt {

namespace fs = std::filesystem;

evaluator_settings fresh_round(evaluator_settings es) {
    if (!es.inputs_key) {
        es.launch_offset = 1ull << 40;
        return es;
    }
    es.inputs_key->round = draw_random_u64();
    es.launch_offset = (1ull << 40) + (draw_random_u64() >> 24);  // below 2^41: no overflow
    return es;
}

int fresh_rounds::checked_position(evaluator_settings& es, int positions) {
    if (!es.inputs_key) return draw(0, positions - 1);
    es.timing.checked_launch_keyed = true;
    return keyed_checked_position(read_inputs_key(es.inputs_key->file), es.inputs_key->round,
                                  positions);
}

std::pair<attempt_evaluator, oracle_files> fresh_rounds::round_setup(const fs::path& dir,
                                                                     int* warmup,
                                                                     std::string* note) {
    evaluator_settings es = fresh_round(m_in.evaluator.settings());
    es.timing.warmup += draw(1, 16);
    // The checked launch drawn too, as in fresh_seeds: every round is one more chance to land
    // on a launch that a kernel computing only where a fixed rule looks leaves undone.
    es.timing.checked_launch = checked_position(
        es, es.timing.mode == timing_mode::adaptive ? es.timing.min_samples : es.timing.iterations);
    attempt_evaluator e = m_in.evaluator.with(es);
    std::optional<oracle_files> oracle =
        m_in.oracle_for ? m_in.oracle_for(e, (dir / "reference").string(), note) : std::nullopt;
    if (!oracle) {
        *warmup = m_in.evaluator.settings().timing.warmup;
        return {m_in.evaluator.with(m_in.evaluator.settings()), m_in.oracle};
    }
    *warmup = es.timing.warmup;
    return {std::move(e), std::move(*oracle)};
}

// Timed again with inputs from seeds the search never used, a random number of extra warm-up
// and timed launches, and the checked launch drawn among the timed ones (adaptive: among the
// min_samples always taken): a kernel that counts its launches and computes only where a fixed
// rule would check (the first, the last) is caught here unless the draw lands on one it computes.
bool timing_gates::fresh_seeds(const attempt_result& r, const fs::path& dir, candidate_check& c) {
    evaluator_settings es = fresh_round(m_in.evaluator.settings());
    es.timing.warmup += m_rounds.draw(1, 16);
    es.timing.iterations += m_rounds.draw(1, 16);
    const bool adaptive = es.timing.mode == timing_mode::adaptive;
    const int positions = adaptive ? es.timing.min_samples : es.timing.iterations;
    es.timing.checked_launch = m_rounds.checked_position(es, positions);
    es.floors_ms.clear();
    const std::string launches =
        std::to_string(es.timing.warmup) + " warm-up + " + std::to_string(es.timing.iterations) +
        " timed launches, checked launch " + std::to_string(*es.timing.checked_launch + 1) +
        " of " + (adaptive ? "at least " : "") + std::to_string(positions) + " timed";
    const attempt_evaluator e = m_in.evaluator.with(es);
    std::string note;
    const std::optional<oracle_files> oracle =
        m_in.oracle_for ? m_in.oracle_for(e, (dir / "fresh-seeds-reference").string(), &note)
                        : std::nullopt;
    if (!oracle) {
        c.gates.push_back({"fresh_seeds", true, false, note});
        c.warnings.push_back("fresh_seeds: not run: " + note);
        return true;
    }
    const attempt_result f = e.evaluate(r.cand, dir / "fresh-seeds", &*oracle);
    keep_own(f);
    if (f.verdict != verdict::valid)
        return disqualify(
            c, "fresh_seeds", "fresh_seed_failed",
            std::string(to_string(f.verdict)) + " with " + launches + ": " + f.reason);
    c.gates.push_back({"fresh_seeds", true, true,
                       "the provided cases pass with other seeds and " + launches +
                           (note.empty() ? "" : "; " + note)});
    return true;
}

bool timing_gates::repetition(const attempt_result& r, const fs::path& dir, candidate_check& c) {
    if (!inputs_vary_between_launches(m_in.evaluator.contract(), m_in.evaluator.settings())) {
        const std::string why =
            "no input of a performance case changes between launches (integer files, sequence "
            "or constant generators, as_given): a kernel that remembers results across launches "
            "cannot be told apart; give float file inputs or random generators";
        c.gates.push_back({"repetition", true, false, why});
        c.warnings.push_back("repetition: not run: " + why);
        return true;
    }
    evaluator_settings repeated = m_in.evaluator.settings();
    repeated.repeat_inputs = true;
    repeated.floors_ms.clear();
    const oracle_files none;
    std::vector<double> varied_ms, repeated_ms;
    for (int run = 1; run <= 2; ++run) {
        const std::string n = std::to_string(run);
        for (const bool same : {false, true}) {
            const std::string name = (same ? "repeated-" : "varied-") + n;
            const attempt_result t =
                m_in.evaluator.with(same ? repeated : m_in.evaluator.settings())
                    .evaluate(r.cand, dir / name, &none);
            if (same)
                m_timed.push_back(t);
            else
                keep_own(t);
            const std::optional<double> g = t.geomean_ms;  // a valid run's, over its perf cases
            if (t.verdict != verdict::valid || !g)
                return disqualify(c, "repetition", "run_failed",
                                  "timing run " + name + " (" + (dir / name).string() +
                                      "): " + to_string(t.verdict) + ": " + t.reason);
            (same ? repeated_ms : varied_ms).push_back(*g);
        }
    }
    double ratio = 1;
    const bool memo = memoises_inputs(varied_ms, repeated_ms, m_s.memoisation_threshold, &ratio);
    c.repetition_ratio = ratio;
    const std::string detail = "geomean " + fmt(varied_ms[0] * 1e3) + "/" +
                               fmt(varied_ms[1] * 1e3) + " us with varied inputs, " +
                               fmt(repeated_ms[0] * 1e3) + "/" + fmt(repeated_ms[1] * 1e3) +
                               " us with the same inputs repeated (" + fmt(ratio, 3) + "x)";
    if (memo)
        return disqualify(
            c, "repetition", "memoises_inputs",
            "faster when its inputs repeat: " + detail + "; it remembers results across launches");
    if (slower_on_repeats(varied_ms, repeated_ms, m_s.repeats_slower_threshold))
        return disqualify(c, "repetition", "slower_on_repeats",
                          "much slower when its inputs repeat: " + detail +
                              "; its speed on varied inputs depends on knowing them ahead");
    c.gates.push_back({"repetition", true, true, detail});
    return true;
}

// The candidate's own timed runs on varied inputs (fresh seeds, the varied repetition runs, the
// significance rounds): launches summed far above median x count mean work done in rare ones.
bool timing_gates::amortised_work(const attempt_result&, const fs::path&, candidate_check& c) {
    std::vector<const attempt_result*> runs;
    for (const std::size_t i : m_own) runs.push_back(&m_timed[i]);
    c.launch_spreads = launch_spreads(runs);
    if (c.launch_spreads.empty()) {
        c.gates.push_back({"amortised_work", true, false, "no timed run with launch samples"});
        return true;
    }
    if (const std::string why =
            amortised_problem(c.launch_spreads, m_s.amortised_threshold, m_s.amortised_tail_share);
        !why.empty())
        return disqualify(c, "amortised_work", "amortised_work", why);
    c.gates.push_back({"amortised_work", true, true, describe_spreads(c.launch_spreads)});
    return true;
}

}  // namespace cuopt
