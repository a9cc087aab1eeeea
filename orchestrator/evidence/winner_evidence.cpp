#include "orchestrator/evidence/winner_evidence.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "common/file_io.hpp"
#include "orchestrator/evaluation/ranker.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

std::string attempt_id(const attempt_result& r) {
    return std::to_string(r.iteration) + "." + std::to_string(r.attempt);
}

std::string fmt(double v, int precision = 4) {
    std::ostringstream s;
    s.precision(precision);
    s << v;
    return s.str();
}

// The machine epsilon of a floating dtype (0 for integers: compared exactly anyway).
double epsilon_of(dtype t) {
    switch (t) {
        case dtype::f16:
            return 9.77e-4;
        case dtype::bf16:
            return 7.81e-3;
        case dtype::f32:
            return 1.19e-7;
        case dtype::f64:
            return 2.22e-16;
        default:
            return 0;
    }
}

std::optional<double> perf_geomean(const attempt_result& r) {
    std::vector<double> medians;
    for (const case_evaluation& ce : r.cases)
        if (ce.kind == case_kind::performance && ce.median_ms) medians.push_back(*ce.median_ms);
    return geometric_mean(medians);
}

/// The gates of one candidate, with everything they need.
class gate_runner {
  public:
    gate_runner(const search_outcome& o, const evidence_inputs& in, const evidence_settings& s)
        : m_outcome(o), m_in(in), m_s(s) {}

    candidate_check check(std::size_t index);

  private:
    using gate = bool (gate_runner::*)(const attempt_result&, const fs::path&, candidate_check&);
    bool holdout(const attempt_result& r, const fs::path& dir, candidate_check& c);
    bool fresh_seeds(const attempt_result& r, const fs::path& dir, candidate_check& c);
    bool repetition(const attempt_result& r, const fs::path& dir, candidate_check& c);
    bool determinism(const attempt_result& r, const fs::path& dir, candidate_check& c);
    bool sanitizer(const attempt_result& r, const fs::path& dir, candidate_check& c);
    attempt_evaluator correctness_evaluator() const;
    void say(const std::string& line) const {
        if (m_in.progress) m_in.progress(line);
    }

    const search_outcome& m_outcome;
    const evidence_inputs& m_in;
    const evidence_settings& m_s;
    std::optional<std::optional<oracle_files>> m_fresh_oracle;  // built on first use
};

attempt_evaluator gate_runner::correctness_evaluator() const {
    evaluator_settings es = m_in.evaluator.settings();
    es.correctness_only = true;
    es.floors_ms.clear();
    return m_in.evaluator.with(es);
}

// Fails the check with `verdict` at `gate`.
bool disqualify(candidate_check& c, const std::string& gate, const std::string& verdict,
                const std::string& reason) {
    c.passed = false;
    c.gate = gate;
    c.verdict = verdict;
    c.reason = reason;
    c.gates.push_back({gate, false, true, reason});
    return false;
}

bool gate_runner::holdout(const attempt_result& r, const fs::path& dir, candidate_check& c) {
    if (!m_in.holdout || !m_in.holdout_oracle) {
        c.gates.push_back({"holdout", true, false, "no --holdout-cases given"});
        return true;
    }
    const attempt_evaluator e = correctness_evaluator().with(*m_in.holdout);
    const attempt_result h = e.evaluate(r.cand, dir / "holdout", m_in.holdout_oracle);
    if (h.verdict != verdict::valid)
        return disqualify(c, "holdout", "holdout_failed",
                          std::string(to_string(h.verdict)) + ": " + h.reason);
    c.gates.push_back({"holdout", true, true,
                       "all " + std::to_string(h.cases.size()) + " holdout case(s) match"});
    return true;
}

// Timed again with inputs from seeds the search never used and with another number of
// warm-up and timed launches, so the checked launch is a different one: a kernel that counts
// its launches and computes only where the search checked is caught here.
bool gate_runner::fresh_seeds(const attempt_result& r, const fs::path& dir, candidate_check& c) {
    evaluator_settings es = m_in.evaluator.settings();
    es.launch_offset = m_s.fresh_seed_offset;
    es.timing.warmup += 3;
    es.timing.iterations += 7;
    es.floors_ms.clear();
    const attempt_evaluator e = m_in.evaluator.with(es);
    if (!m_fresh_oracle)
        m_fresh_oracle = m_in.fresh_seed_oracle ? m_in.fresh_seed_oracle(e) : std::nullopt;
    if (!*m_fresh_oracle) {
        c.gates.push_back({"fresh_seeds", true, false,
                           "generated inputs but no reference kernel to re-seed against"});
        return true;
    }
    const attempt_result f = e.evaluate(r.cand, dir / "fresh-seeds", &**m_fresh_oracle);
    if (f.verdict != verdict::valid)
        return disqualify(c, "fresh_seeds", "fresh_seed_failed",
                          std::string(to_string(f.verdict)) + ": " + f.reason);
    c.gates.push_back({"fresh_seeds", true, true,
                       "the provided cases pass with other seeds and " +
                           std::to_string(es.timing.warmup) + " warm-up + " +
                           std::to_string(es.timing.iterations) + " timed launches"});
    return true;
}

bool gate_runner::repetition(const attempt_result& r, const fs::path& dir, candidate_check& c) {
    evaluator_settings repeated = m_in.evaluator.settings();
    repeated.repeat_inputs = true;
    repeated.floors_ms.clear();
    const oracle_files none;
    std::vector<double> varied_ms, repeated_ms;
    for (int run = 1; run <= 2; ++run) {
        const std::string n = std::to_string(run);
        const attempt_result v = m_in.evaluator.with(m_in.evaluator.settings())
                                     .evaluate(r.cand, dir / ("varied-" + n), &none);
        const attempt_result p =
            m_in.evaluator.with(repeated).evaluate(r.cand, dir / ("repeated-" + n), &none);
        const auto gv = perf_geomean(v), gp = perf_geomean(p);
        if (v.verdict != verdict::valid || p.verdict != verdict::valid || !gv || !gp) {
            c.gates.push_back({"repetition", true, false,
                               "a timing run failed: " + (v.reason.empty() ? p.reason : v.reason)});
            return true;
        }
        varied_ms.push_back(*gv);
        repeated_ms.push_back(*gp);
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
    c.gates.push_back({"repetition", true, true, detail});
    return true;
}

bool gate_runner::determinism(const attempt_result& r, const fs::path& dir, candidate_check& c) {
    const attempt_evaluator e = correctness_evaluator();
    const oracle_files none;
    std::vector<attempt_result> runs;
    for (int i = 1; i <= m_s.determinism_runs; ++i) {
        runs.push_back(e.evaluate(r.cand, dir / ("determinism-" + std::to_string(i)), &none));
        if (runs.back().verdict != verdict::valid)
            return disqualify(c, "determinism", "nondeterministic",
                              "run " + std::to_string(i) + " failed: " +
                                  to_string(runs.back().verdict) + ": " + runs.back().reason);
    }
    determinism_result worst;
    for (std::size_t ci = 0; ci < runs[0].cases.size(); ++ci)
        for (std::size_t oi = 0; oi < runs[0].cases[ci].outputs.size(); ++oi) {
            const output_check& first = runs[0].cases[ci].outputs[oi];
            const manifest_arg* arg = m_in.evaluator.contract().find_arg(first.arg);
            if (!arg) continue;
            std::vector<std::vector<unsigned char>> bytes;
            for (const attempt_result& run : runs)
                bytes.push_back(read_binary_file(run.cases[ci].outputs[oi].file));
            worst = worse(worst, classify_runs(arg->type, arg->tol, bytes,
                                               runs[0].cases[ci].name + " '" + first.arg + "'"));
        }
    c.determinism = worst;
    if (worst.kind == determinism_class::beyond_tolerance)
        return disqualify(c, "determinism", "nondeterministic", worst.detail);
    if (worst.kind == determinism_class::within_tolerance)
        c.warnings.push_back(
            "determinism: results differ bitwise between runs, within "
            "tolerance (" +
            worst.detail + ")");
    c.gates.push_back({"determinism", true, true,
                       std::to_string(runs.size()) + " runs: " + to_string(worst.kind)});
    return true;
}

bool gate_runner::sanitizer(const attempt_result& r, const fs::path& dir, candidate_check& c) {
    if (m_s.sanitizer.empty()) {
        c.gates.push_back({"sanitizer", true, false, "compute-sanitizer not found"});
        return true;
    }
    manifest checked = m_in.evaluator.contract();
    const bool any_correctness =
        std::any_of(checked.cases.begin(), checked.cases.end(),
                    [](const manifest_case& mc) { return mc.kind == case_kind::correctness; });
    if (any_correctness)
        checked.cases.erase(std::remove_if(checked.cases.begin(), checked.cases.end(),
                                           [](const manifest_case& mc) {
                                               return mc.kind != case_kind::correctness;
                                           }),
                            checked.cases.end());
    std::string findings;
    for (const std::string& tool : k_sanitizer_tools) {
        evaluator_settings es = correctness_evaluator().settings();
        const fs::path folder = dir / ("sanitizer-" + tool), log = folder / "sanitizer.log";
        fs::create_directories(folder);
        es.wrapper = {m_s.sanitizer.string(), "--tool", tool, "--log-file", log.string()};
        if (tool == "memcheck") es.wrapper.insert(es.wrapper.end(), {"--report-api-errors", "all"});
        es.timeout =
            std::chrono::milliseconds(static_cast<long long>(m_s.sanitizer_timeout_s * 1e3));
        const oracle_files none;
        const attempt_result run =
            m_in.evaluator.with(es).with(checked).evaluate(r.cand, folder, &none);
        std::string text;
        if (fs::exists(log)) text = read_text_file(log);
        sanitizer_result s = parse_sanitizer_output(tool, text, run.verdict == verdict::valid);
        if (!s.completed)
            s.problem += " (harness: " + std::string(to_string(run.verdict)) +
                         (run.reason.empty() ? "" : ": " + run.reason) + ")";
        if (s.completed && !s.clean())
            findings += (findings.empty() ? "" : "; ") + tool + ": " + std::to_string(s.errors) +
                        " error(s)" +
                        (s.warnings ? ", " + std::to_string(s.warnings) + " warning(s)" : "") +
                        (s.first_lines.empty() ? "" : " (" + s.first_lines.front() + ")");
        if (!s.completed)
            c.warnings.push_back("sanitizer: " + tool + " did not finish: " + s.problem);
        c.sanitizer.push_back(s);
    }
    if (!findings.empty() && !m_s.allow_sanitizer_findings)
        return disqualify(c, "sanitizer", "sanitizer_findings", findings);
    if (!findings.empty()) c.warnings.push_back("sanitizer (allowed): " + findings);
    c.gates.push_back({"sanitizer", true, true, findings.empty() ? "clean" : findings});
    return true;
}

candidate_check gate_runner::check(std::size_t index) {
    const attempt_result& r = m_outcome.history[index];
    candidate_check c;
    c.attempt = index;
    const fs::path dir = m_in.run / "evidence" / attempt_id(r);
    say("evidence: checking " + attempt_id(r) + " " + r.cand.label);
    for (gate g : {&gate_runner::holdout, &gate_runner::fresh_seeds, &gate_runner::repetition,
                   &gate_runner::determinism, &gate_runner::sanitizer}) {
        if (!(this->*g)(r, dir, c)) break;
        say("  " + c.gates.back().gate + ": " + (c.gates.back().ran ? "passed" : "skipped") + " (" +
            c.gates.back().detail + ")");
    }
    if (m_outcome.initial && index != *m_outcome.initial)
        if (const std::string w = precision_warning(r, m_outcome.history[*m_outcome.initial],
                                                    m_in.evaluator.contract());
            !w.empty())
            c.warnings.push_back(w);
    if (!c.passed) say("  " + c.gate + ": DISQUALIFIED " + c.verdict + ": " + c.reason);
    return c;
}

// Per performance case, the samples of every run of one side.
void collect(const attempt_result& r, std::map<std::string, run_samples>& into) {
    for (const case_evaluation& ce : r.cases)
        if (ce.kind == case_kind::performance && !ce.samples_ms.empty())
            into[ce.name].push_back(ce.samples_ms);
}

double pooled_median(const run_samples& runs) {
    std::vector<double> all;
    for (const auto& r : runs) all.insert(all.end(), r.begin(), r.end());
    std::sort(all.begin(), all.end());
    return all.size() % 2 ? all[all.size() / 2]
                          : (all[all.size() / 2 - 1] + all[all.size() / 2]) / 2;
}

std::optional<significance_report> measure_significance(const search_outcome& o,
                                                        const evidence_inputs& in,
                                                        const evidence_settings& s) {
    const attempt_result& initial = o.history[*o.initial];
    const attempt_result& winner = o.history[*o.best];
    std::map<std::string, run_samples> base, win, again;
    for (int round = 1; round <= s.significance_runs; ++round) {
        const fs::path dir =
            in.run / "evidence" / "significance" / ("round-" + std::to_string(round));
        if (in.progress)
            in.progress("evidence: significance round " + std::to_string(round) + "/" +
                        std::to_string(s.significance_runs));
        const attempt_result a = in.evaluator.evaluate(initial.cand, dir / "initial", &in.oracle);
        const attempt_result b = in.evaluator.evaluate(winner.cand, dir / "winner", &in.oracle);
        const attempt_result c = in.evaluator.evaluate(winner.cand, dir / "winner-aa", &in.oracle);
        if (a.verdict != verdict::valid || b.verdict != verdict::valid ||
            c.verdict != verdict::valid)
            continue;  // a failed round adds nothing; the report says how many counted
        collect(a, base);
        collect(b, win);
        collect(c, again);
    }
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
        rep.runs = static_cast<int>(runs.size());
    }
    if (rep.cases.empty()) return std::nullopt;
    rep.speedup = compare_cases(vb, vw);
    rep.aa = compare_cases(vw, va, {2000, 2});
    rep.reliable = rep.aa.geomean.verdict == significance::no_significant_difference &&
                   std::all_of(rep.aa.cases.begin(), rep.aa.cases.end(), [](const auto& e) {
                       return e.verdict == significance::no_significant_difference;
                   });
    return rep;
}

vendor_report measure_vendor(const evidence_inputs& in) {
    vendor_report v;
    if (!in.run_vendor) return v;
    const std::optional<attempt_result> r = in.run_vendor(in.run / "vendor");
    if (!r) return v;
    v.ran = true;
    v.verdict = to_string(r->verdict);
    v.reason = r->reason;
    for (const case_evaluation& ce : r->cases)
        if (ce.median_ms) v.median_ms[ce.name] = *ce.median_ms;
    return v;
}

}  // namespace

std::vector<std::size_t> ranking_order(const search_outcome& o, double min_gain,
                                       int max_candidates) {
    std::vector<std::size_t> order;
    if (!o.initial) return order;
    const std::optional<double> initial_ms = o.history[*o.initial].geomean_ms;
    std::vector<std::size_t> faster;
    for (std::size_t i = 0; i < o.history.size(); ++i) {
        const attempt_result& r = o.history[i];
        if (i == *o.initial || r.verdict != verdict::valid || !r.geomean_ms || !initial_ms)
            continue;
        if (*r.geomean_ms * (1 + min_gain) < *initial_ms) faster.push_back(i);
    }
    std::stable_sort(faster.begin(), faster.end(), [&o](std::size_t a, std::size_t b) {
        return *o.history[a].geomean_ms < *o.history[b].geomean_ms;
    });
    if (o.best && *o.best != *o.initial) order.push_back(*o.best);
    for (std::size_t i : faster)
        if (static_cast<int>(order.size()) < max_candidates &&
            std::find(order.begin(), order.end(), i) == order.end())
            order.push_back(i);
    order.push_back(*o.initial);
    return order;
}

std::string precision_warning(const attempt_result& candidate, const attempt_result& initial,
                              const manifest& m) {
    std::string out;
    for (const case_evaluation& ce : candidate.cases)
        for (const output_check& oc : ce.outputs) {
            if (!oc.validation) continue;
            double initial_error = 0;
            for (const case_evaluation& ie : initial.cases)
                for (const output_check& io : ie.outputs)
                    if (ie.name == ce.name && io.arg == oc.arg && io.validation)
                        initial_error = io.validation->relative_l2_error;
            // Reordered sums in a type cost a few ulps; far beyond that is a cheaper type.
            const manifest_arg* arg = m.find_arg(oc.arg);
            if (!arg || !is_float(arg->type)) continue;
            const double error = oc.validation->relative_l2_error;
            const double allowed = std::max(10 * initial_error, 64 * epsilon_of(arg->type));
            if (error > allowed && out.empty())
                out = "precision: case '" + ce.name + "' output '" + oc.arg +
                      "' has relative L2 error " + fmt(error, 3) + " vs " + fmt(initial_error, 3) +
                      " for the initial kernel: within tolerance, but it computes in lower "
                      "precision than the initial kernel";
        }
    return out;
}

bool memoises_inputs(const std::vector<double>& varied, const std::vector<double>& repeated,
                     double threshold, double* ratio) {
    const double v = std::sqrt(varied[0] * varied[1]), r = std::sqrt(repeated[0] * repeated[1]);
    const double noise =
        std::max(std::fabs(varied[0] / varied[1] - 1), std::fabs(repeated[0] / repeated[1] - 1));
    *ratio = v / r;
    return *ratio > 1 + std::max(threshold, 3 * noise);
}

evidence_report gather_evidence(search_outcome& outcome, const evidence_inputs& in,
                                const evidence_settings& s) {
    evidence_report rep;
    rep.floors = in.floors;
    rep.search_best = outcome.best;
    if (!s.enabled || !outcome.initial ||
        outcome.history[*outcome.initial].verdict != verdict::valid) {
        rep.skipped = !s.enabled ? "--no-evidence" : "the initial kernel is not valid";
        return rep;
    }
    rep.ran = true;
    gate_runner gates(outcome, in, s);
    for (std::size_t index : ranking_order(outcome, s.min_gain, s.max_candidates)) {
        rep.checked.push_back(gates.check(index));
        if (rep.checked.back().passed) {
            rep.winner = index;
            break;
        }
    }
    outcome.best = rep.winner;
    if (rep.winner && *rep.winner != *outcome.initial)
        rep.significance = measure_significance(outcome, in, s);
    rep.vendor = measure_vendor(in);
    return rep;
}

}  // namespace cuopt
