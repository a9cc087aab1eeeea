#include "orchestrator/evidence/winner_evidence.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>

#include "common/message_text.hpp"
#include "orchestrator/evidence/evidence_gates.hpp"
#include "orchestrator/search/device_baselines.hpp"

namespace cuopt {

namespace fs = std::filesystem;

std::string fmt(double v, int precision) {
    std::ostringstream s;
    s.precision(precision);
    s << v;
    return s.str();
}

bool disqualify(candidate_check& c, const std::string& gate, const std::string& verdict,
                const std::string& reason) {
    c.passed = false;
    c.gate = gate;
    c.verdict = verdict;
    c.reason = reason;
    c.gates.push_back({gate, false, true, reason});
    return false;
}

namespace {

// The machine epsilon of a floating dtype (0 for integers: compared exactly anyway).
double epsilon_of(dtype t) {
    return 2 * unit_roundoff(t);
}

/// The gates of one candidate in order, with everything they need.
class gate_runner {
  public:
    gate_runner(const search_outcome& o, const evidence_inputs& in, const evidence_settings& s)
        : m_outcome(o),
          m_in(in),
          m_s(s),
          m_rounds(in, s.seed),
          m_correctness(o, in, s),
          m_timing(o, in, s, m_rounds) {}

    candidate_check check(std::size_t index);
    std::optional<rerank_report> rerank(const std::vector<std::size_t>& order);
    /// Every timed harness run of the gates so far (fresh seeds, repetition, significance).
    const std::vector<attempt_result>& timed() const { return m_timing.timed(); }

  private:
    void say(const std::string& line) const {
        if (m_in.progress) m_in.progress(line);
    }

    const search_outcome& m_outcome;
    const evidence_inputs& m_in;
    const evidence_settings& m_s;
    fresh_rounds m_rounds;  // before m_timing, which draws from it
    correctness_gates m_correctness;
    timing_gates m_timing;
};

// The best few of `order` re-measured against the initial kernel, when there are two or more.
std::optional<rerank_report> gate_runner::rerank(const std::vector<std::size_t>& order) {
    std::vector<std::size_t> top;
    for (std::size_t i : order)
        if (i != *m_outcome.initial && static_cast<int>(top.size()) < m_s.rerank) top.push_back(i);
    if (top.size() < 2) return std::nullopt;
    say("evidence: re-measuring the " + std::to_string(top.size()) +
        " best candidates against the initial kernel before gating them");
    std::optional<rerank_report> r = rerank_candidates(
        m_outcome, top, m_s.rerank_runs, m_s.min_gain, m_in.run / "evidence" / "rerank",
        [this](const fs::path& rd) {
            int warmup = 0;
            std::string note;
            return m_rounds.round_setup(rd, &warmup, &note);
        },
        [this](const std::string& line) { say(line); });
    if (!r) say("  rerank: not enough rounds or candidates counted; the search's order stands");
    return r;
}

candidate_check gate_runner::check(std::size_t index) {
    const attempt_result& r = m_outcome.history[index];
    candidate_check c;
    c.attempt = index;
    const fs::path dir = m_in.run / "evidence" / r.id();
    say("evidence: checking " + r.cand.label + " (iteration " + std::to_string(r.iteration) +
        ", attempt " + std::to_string(r.attempt) + ")");  // "1.0" would read as a number
    const bool is_initial = m_outcome.initial && index == *m_outcome.initial;
    m_timing.begin_candidate();
    if (!r.cand.pytorch_mode.empty()) {  // the problem's own forward: the oracle, not a kernel
        c.gates.push_back({"pytorch", true, false,
                           "PyTorch " + r.cand.pytorch_mode +
                               " is the problem's own code and its oracle: no kernel to gate"});
        say("  pytorch: skipped (" + c.gates.back().detail + ")");
        return c;
    }
    // The gates in order, each with whether it applies (the initial kernel has nothing to be
    // significantly faster than).
    const std::pair<bool, std::function<bool()>> gates[] = {
        {true, [&] { return m_correctness.instructions(r, dir, c); }},
        {true, [&] { return m_correctness.holdout(r, dir, c); }},
        {true, [&] { return m_timing.fresh_seeds(r, dir, c); }},
        {true, [&] { return m_timing.repetition(r, dir, c); }},
        {true, [&] { return m_correctness.determinism(r, dir, c); }},
        {true, [&] { return m_correctness.sanitizer(r, dir, c); }},
        {!is_initial, [&] { return m_timing.significance(r, dir, c); }},
        {true, [&] { return m_timing.amortised_work(r, dir, c); }},
    };
    for (const auto& [applies, run_gate] : gates) {
        if (!applies) continue;
        if (!run_gate()) break;
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

}  // namespace

vendor_outcome vendor_outcome_of(const attempt_result* vendor) {
    vendor_outcome v;
    if (!vendor) return v;
    v.ran = true;
    v.library = vendor->cand.label;  // evaluate_vendor's: the library's name
    v.verdict = to_string(vendor->verdict);
    v.reason = vendor->reason;
    if (vendor->verdict != verdict::valid) return v;  // wrong answers have no speed
    for (const case_evaluation& ce : vendor->cases)
        if (ce.median_ms) v.median_ms[ce.name] = *ce.median_ms;
    return v;
}

std::vector<std::size_t> ranking_order(const search_outcome& o, double min_gain,
                                       int max_candidates) {
    std::vector<std::size_t> order;
    if (!o.initial) return order;
    // On the first device's scale: with several GPUs each against its own device's initial.
    const std::optional<double> initial_ms = o.history[*o.initial].geomean_ms;
    std::vector<std::size_t> faster;
    std::map<std::size_t, double> scaled_ms;
    for (std::size_t i = 0; i < o.history.size(); ++i) {
        const attempt_result& r = o.history[i];
        const std::optional<double> ms = normalised_geomean_ms(o, r);
        if (i == *o.initial || r.verdict != verdict::valid || !ms || !initial_ms) continue;
        scaled_ms[i] = *ms;
        if (*ms * (1 + min_gain) < *initial_ms) faster.push_back(i);
    }
    std::stable_sort(faster.begin(), faster.end(), [&scaled_ms](std::size_t a, std::size_t b) {
        return scaled_ms[a] < scaled_ms[b];
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
                out = "precision: case " + quote_value(ce.name) + " output '" + oc.arg +
                      "' has relative L2 error " + fmt(error, 3) + " vs " + fmt(initial_error, 3) +
                      " for the initial kernel: within tolerance, but it computes in lower "
                      "precision than the initial kernel";
        }
    return out;
}

bool memoises_inputs(const std::vector<double>& varied, const std::vector<double>& repeated,
                     double threshold, double* ratio) {
    const double v = std::sqrt(varied[0] * varied[1]), r = std::sqrt(repeated[0] * repeated[1]);
    const double noise = std::fabs(varied[0] / varied[1] - 1);
    *ratio = v / r;
    return *ratio > 1 + std::max(threshold, 3 * noise);
}

bool slower_on_repeats(const std::vector<double>& varied, const std::vector<double>& repeated,
                       double threshold) {
    const double v = std::sqrt(varied[0] * varied[1]), r = std::sqrt(repeated[0] * repeated[1]);
    const double noise = std::fabs(varied[0] / varied[1] - 1);
    return v / r < 1 / (1 + std::max(threshold, 3 * noise));
}

bool inputs_vary_between_launches(const manifest& m, const evaluator_settings& s) {
    for (const manifest_case& mc : m.cases) {
        if (mc.kind != case_kind::performance) continue;
        for (const manifest_arg& a : m.args) {
            if (!a.has_input()) continue;
            const input_init& init = m.init_for(mc, a);
            if (init.file) {
                if (a.timing ? *a.timing == timing_inputs::perturbed : is_float(a.type))
                    return true;
                continue;
            }
            const generator_kind k = init.generator.kind;
            const bool random = k == generator_kind::uniform || k == generator_kind::normal ||
                                k == generator_kind::int_range;
            if (random && s.timing.fresh_inputs && a.timing != timing_inputs::as_given) return true;
        }
    }
    return false;
}

evidence_report gather_evidence(search_outcome& outcome, const evidence_inputs& in,
                                const evidence_settings& s) {
    evidence_report rep;
    rep.floors = in.floors;
    rep.search_best = outcome.best;
    rep.vendor = vendor_outcome_of(in.vendor);
    rep.devices = in.devices;
    if (!s.enabled || !outcome.initial ||
        outcome.history[*outcome.initial].verdict != verdict::valid) {
        rep.skipped = !s.enabled ? "--no-evidence" : "the initial kernel is not valid";
        return rep;
    }
    rep.ran = true;
    gate_runner gates(outcome, in, s);
    std::vector<std::size_t> order = ranking_order(outcome, s.min_gain, s.max_candidates);
    rep.rerank = gates.rerank(order);
    if (rep.rerank) {
        order = reranked_order(order, *rep.rerank);
        rep.timed_runs = rep.rerank->runs;
    }
    std::vector<std::size_t> disqualified;
    for (std::size_t index : order) {
        rep.checked.push_back(gates.check(index));
        if (rep.checked.back().passed) {
            rep.winner = index;
            rep.significance = rep.checked.back().significance;
            break;
        }
        disqualified.push_back(index);
    }
    if (rep.rerank && rep.winner) margin_over_runner_up(*rep.rerank, *rep.winner, disqualified);
    rep.timed_runs.insert(rep.timed_runs.end(), gates.timed().begin(), gates.timed().end());
    outcome.best = rep.winner;
    return rep;
}

std::string aa_problem(const significance_report& rep) {
    if (rep.aa_overall != aa_class::equivalent)
        return "geomean " + describe_aa(rep.aa.geomean, rep.margin);
    for (std::size_t i = 0; i < rep.cases.size(); ++i)
        if (rep.aa_classes[i] != aa_class::equivalent)
            return rep.cases[i] + " " + describe_aa(rep.aa.cases[i], rep.margins[i]);
    return "equivalent";
}

}  // namespace cuopt