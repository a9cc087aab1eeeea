// The significance gate: interleaved rounds of the initial kernel, the candidate and the
// candidate again (the A/A control), estimated and classified at practical margins.
#include <map>
#include <set>

#include "common/message_text.hpp"
#include "orchestrator/evidence/evidence_gates.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

// Each case's practical margin from the spread between the rounds' processes, the speedups
// classified at it, and the A/A's class; reliable only when every class is equivalent.
void apply_margins(significance_report& rep, const std::vector<run_samples>& vb,
                   const std::vector<run_samples>& vw, const std::vector<run_samples>& va) {
    rep.margin = 0;
    for (std::size_t i = 0; i < rep.cases.size(); ++i) {
        const std::optional<double> spread = process_spread({&vb[i], &vw[i], &va[i]});
        const double delta = practical_margin(spread);
        rep.spreads.push_back(spread);
        rep.margins.push_back(delta);
        rep.margin += delta / static_cast<double>(rep.cases.size());
        ratio_estimate& e = rep.speedup.cases[i];
        e.verdict = classify_interval(e.low, e.high, delta);
        rep.aa_classes.push_back(classify_aa(rep.aa.cases[i], delta));
    }
    ratio_estimate& g = rep.speedup.geomean;
    g.verdict = classify_interval(g.low, g.high, rep.margin);
    rep.aa_overall = classify_aa(rep.aa.geomean, rep.margin);
    // The headline is the geometric mean, and so is the verdict's reliability: requiring every
    // case's A/A too would multiply the false alarms by the number of cases (one in six pilot
    // runs on a quiet H200). A case whose own A/A is not equivalent gets a warning instead.
    rep.reliable = rep.aa_overall == aa_class::equivalent;
}

// The interval estimates from the rounds' samples; nullopt without a case in common.
std::optional<significance_report> estimate_rounds(std::map<std::string, run_samples>& base,
                                                   std::map<std::string, run_samples>& win,
                                                   std::map<std::string, run_samples>& again) {
    significance_report rep;
    std::vector<run_samples> vb, vw, va;
    for (const auto& [name, runs] : base) {
        if (!win.count(name) || !again.count(name)) continue;
        rep.cases.push_back(name);
        vb.push_back(runs);
        vw.push_back(win[name]);
        va.push_back(again[name]);
        rep.initial_median_ms[name] = pooled_median(runs);
        rep.winner_median_ms[name] = pooled_median(win[name]);
    }
    if (rep.cases.empty()) return std::nullopt;
    rep.speedup = compare_cases(vb, vw);
    rep.aa = compare_cases(vw, va, {2000, 2});
    apply_margins(rep, vb, vw, va);
    return rep;
}

}  // namespace

// Rounds of initial, winner, winner again (the order reversed every other round), each round
// with its own random warm-up count, so the checked launch moves and each round's outputs are
// checked against an oracle made for it. A failed run of the winner disqualifies it.
bool timing_gates::significance(const attempt_result& r, const fs::path& dir, candidate_check& c) {
    const attempt_result& initial = m_outcome.history[*m_outcome.initial];
    std::map<std::string, run_samples> base, win, again;
    std::vector<int> warmups;
    std::string note;
    const std::size_t first_run = m_timed.size();
    for (int round = 1; round <= m_s.significance_runs; ++round) {
        const fs::path rd = dir / "significance" / ("round-" + std::to_string(round));
        say("  significance round " + std::to_string(round) + "/" +
            std::to_string(m_s.significance_runs));
        int warmup = 0;
        const auto [e, oracle] = m_rounds.round_setup(rd, &warmup, &note);
        std::map<std::string, attempt_result> runs;
        for (const char* who : round % 2
                                   ? std::vector<const char*>{"initial", "winner", "winner-aa"}
                                   : std::vector<const char*>{"winner-aa", "winner", "initial"}) {
            const bool base = std::string(who) == "initial";
            runs[who] = e.evaluate(base ? initial.cand : r.cand, rd / who, &oracle);
            if (base)
                m_timed.push_back(runs[who]);
            else
                keep_own(runs[who]);
        }
        for (const char* who : {"winner", "winner-aa"})
            if (runs[who].verdict != verdict::valid)
                return disqualify(c, "significance", "run_failed",
                                  "round " + std::to_string(round) + " (" + (rd / who).string() +
                                      ", " + std::to_string(warmup) + " warm-up launches): " +
                                      to_string(runs[who].verdict) + ": " + runs[who].reason);
        if (runs["initial"].verdict != verdict::valid) continue;  // the baseline's problem
        warmups.push_back(warmup);
        append_performance_samples(runs["initial"], base);
        append_performance_samples(runs["winner"], win);
        append_performance_samples(runs["winner-aa"], again);
    }
    std::optional<significance_report> rep = static_cast<int>(warmups.size()) >= m_s.min_rounds
                                                 ? estimate_rounds(base, win, again)
                                                 : std::nullopt;
    if (!rep) {
        c.gates.push_back({"significance", true, false,
                           std::to_string(warmups.size()) + " round(s) counted; " +
                               std::to_string(m_s.min_rounds) + " needed"});
        c.warnings.push_back("significance: the speedup could not be re-measured");
        return true;
    }
    rep->runs = static_cast<int>(warmups.size());
    rep->warmups = warmups;
    flag_throttling(*rep, first_run, c);
    rep->device = m_in.evaluator.settings().device;
    const ratio_estimate& g = rep->speedup.geomean;
    const std::string detail = fmt(g.ratio, 4) + "x [" + fmt(g.low, 4) + ", " + fmt(g.high, 4) +
                               "] " + to_string(g.verdict) + " at a margin of ±" +
                               fmt(100 * rep->margin, 2) + "% over " + std::to_string(rep->runs) +
                               " rounds; A/A " + describe_aa(rep->aa.geomean, rep->margin) +
                               (note.empty() ? "" : "; " + note);
    if (g.verdict != significance::faster)
        c.warnings.push_back("significance: not significantly faster than the initial kernel: " +
                             detail);
    if (!rep->reliable)
        c.warnings.push_back("significance: the A/A control is not equivalent (" +
                             aa_problem(*rep) + "): the verdicts are not reliable");
    for (std::size_t i = 0; rep->reliable && i < rep->cases.size(); ++i)
        if (rep->aa_classes[i] != aa_class::equivalent)
            c.warnings.push_back("significance: case " + quote_value(rep->cases[i]) +
                                 ": its own A/A is " +
                                 describe_aa(rep->aa.cases[i], rep->margins[i]) +
                                 ": that case's speedup is less certain than the geomean's");
    c.significance = rep;
    c.gates.push_back({"significance", true, true, detail});
    return true;
}

// The significance rounds' runs (m_timed from `first`) timed while the GPU throttled: counted,
// and a warning, since a clock held down on one side of a ratio moves the ratio.
void timing_gates::flag_throttling(significance_report& rep, std::size_t first,
                                   candidate_check& c) {
    int cases = 0;
    std::set<std::string> reasons;
    for (std::size_t i = first; i < m_timed.size(); ++i)
        for (const case_evaluation& ce : m_timed[i].cases) {
            if (!ce.timing.gpu_state) continue;
            ++cases;
            if (!ce.timing.gpu_state->throttled) continue;
            ++rep.throttled_cases;
            reasons.insert(ce.timing.gpu_state->throttle_reasons.begin(),
                           ce.timing.gpu_state->throttle_reasons.end());
        }
    if (!rep.throttled_cases) return;
    std::string why;
    for (const std::string& r : reasons) why += (why.empty() ? "" : ", ") + r;
    c.warnings.push_back("significance: " + std::to_string(rep.throttled_cases) + " of " +
                         std::to_string(cases) + " re-measured cases timed while the GPU " +
                         "throttled (" + (why.empty() ? "no reason given" : why) +
                         "): the speedup may not hold at full clocks");
}

}  // namespace cuopt
