#include "orchestrator/evidence/winner_evidence.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "common/cli_value_checks.hpp"
#include "common/file_io.hpp"
#include "common/inputs_key.hpp"
#include "common/message_text.hpp"
#include "orchestrator/search/device_baselines.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

std::string fmt(double v, int precision = 4) {
    std::ostringstream s;
    s.precision(precision);
    s << v;
    return s.str();
}

// The machine epsilon of a floating dtype (0 for integers: compared exactly anyway).
double epsilon_of(dtype t) {
    return 2 * unit_roundoff(t);
}

/// The gates of one candidate, with everything they need.
class gate_runner {
  public:
    gate_runner(const search_outcome& o, const evidence_inputs& in, const evidence_settings& s)
        : m_outcome(o),
          m_in(in),
          m_s(s),
          m_rng(s.seed ? s.seed
                       : (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}()) {}

    candidate_check check(std::size_t index);
    std::optional<rerank_report> rerank(const std::vector<std::size_t>& order);
    /// Every timed harness run of the gates so far (fresh seeds, repetition, significance).
    const std::vector<attempt_result>& timed() const { return m_timed; }

  private:
    using gate = bool (gate_runner::*)(const attempt_result&, const fs::path&, candidate_check&);
    bool instructions(const attempt_result& r, const fs::path& dir, candidate_check& c);
    instruction_audit audit(const attempt_result& r, const fs::path& dir) const;
    bool holdout(const attempt_result& r, const fs::path& dir, candidate_check& c);
    bool fresh_seeds(const attempt_result& r, const fs::path& dir, candidate_check& c);
    bool repetition(const attempt_result& r, const fs::path& dir, candidate_check& c);
    bool determinism(const attempt_result& r, const fs::path& dir, candidate_check& c);
    bool sanitizer(const attempt_result& r, const fs::path& dir, candidate_check& c);
    bool significance(const attempt_result& r, const fs::path& dir, candidate_check& c);
    bool amortised_work(const attempt_result& r, const fs::path& dir, candidate_check& c);
    /// A timed run of the candidate itself on varied inputs: the amortised_work gate's input.
    void keep_own(const attempt_result& run) {
        m_timed.push_back(run);
        m_own.push_back(m_timed.size() - 1);
    }
    /// The oracle and evaluator of one significance or rerank round: a random warm-up count and
    /// checked launch where an oracle can be built for them, else the search's.
    std::pair<attempt_evaluator, oracle_files> round_setup(const fs::path& dir, int* warmup,
                                                           std::string* note);
    void flag_throttling(significance_report& rep, std::size_t first, candidate_check& c);
    attempt_evaluator correctness_evaluator() const;
    manifest sanitized_cases() const;
    int draw(int low, int high) { return std::uniform_int_distribution<int>(low, high)(m_rng); }
    /// The checked launch among `positions` timed ones: with keyed inputs the key's secret for
    /// the round (the request then says only that it is keyed: a kernel's compile can read its
    /// request), else drawn here.
    int checked_position(evaluator_settings& es, int positions) {
        if (!es.inputs_key) return draw(0, positions - 1);
        es.timing.checked_launch_keyed = true;
        return keyed_checked_position(read_inputs_key(es.inputs_key->file), es.inputs_key->round,
                                      positions);
    }
    void say(const std::string& line) const {
        if (m_in.progress) m_in.progress(line);
    }

    const search_outcome& m_outcome;
    const evidence_inputs& m_in;
    const evidence_settings& m_s;
    std::mt19937_64 m_rng;
    std::vector<attempt_result> m_timed;  // every timed run of the gates, in order
    std::vector<std::size_t> m_own;       // the checked candidate's varied runs in m_timed
};

attempt_evaluator gate_runner::correctness_evaluator() const {
    evaluator_settings es = m_in.evaluator.settings();
    es.correctness_only = true;
    es.floors_ms.clear();
    return m_in.evaluator.with(es);
}

// Settings for a round of fresh inputs: the run's key under a round drawn now (getrandom, not
// the --seed's generator: nobody can know it beforehand) and a launch offset drawn past the
// search's; without a key (a run from before keys), the fixed offset of old.
evaluator_settings fresh_round(evaluator_settings es) {
    if (!es.inputs_key) {
        es.launch_offset = 1ull << 40;
        return es;
    }
    es.inputs_key->round = draw_random_u64();
    es.launch_offset = (1ull << 40) + (draw_random_u64() >> 24);  // below 2^41: no overflow
    return es;
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

// The candidate compiled again for the run's GPU (cuda-harness --compile-only --cubin-out: the
// optimizer never links NVRTC) and its cubin disassembled; ran = false with the reason where
// either cannot be done.
instruction_audit gate_runner::audit(const attempt_result& r, const fs::path& dir) const {
    instruction_audit a;
    if (m_s.disassembler.empty()) {
        a.reason = "cuobjdump not found (--cuobjdump PATH)";
        return a;
    }
    const fs::path folder = dir / "instructions", cubin = folder / "kernel.cubin";
    const compile_summary compiled = m_in.evaluator.compile_only(r.cand, folder, cubin);
    std::error_code ec;
    if (!compiled.ok || !fs::is_regular_file(cubin, ec)) {
        a.reason = !compiled.ok ? "cuda-harness --compile-only failed: " +
                                      compiled.log.substr(0, compiled.log.find('\n'))
                                : "the harness wrote no cubin (" + cubin.string() + ")";
        return a;
    }
    const auto runner = make_child_process_runner();
    a = audit_cubin(
        *runner, m_s.disassembler, cubin,
        compiled.lowered_name.empty() ? r.cand.entry : compiled.lowered_name,
        std::chrono::milliseconds(static_cast<long long>(1000 * m_s.disassembler_timeout_s)));
    if (a.arch.empty()) a.arch = compiled.arch;
    return a;
}

// The instruction mix on the record; a candidate without the manifest's requires.mma class is
// precision_path, and reads of the clock registers are a warning (clock_read). An audit that
// cannot run proves nothing: not run, and where an MMA class is required, a warning that the
// verdict's rule turns into a no-go. The initial kernel is audited, never held to it.
bool gate_runner::instructions(const attempt_result& r, const fs::path& dir, candidate_check& c) {
    c.instructions = audit(r, dir);
    const instruction_audit& a = *c.instructions;
    const bool initial = m_outcome.initial && &r == &m_outcome.history[*m_outcome.initial];
    const std::string required = initial ? "" : m_in.evaluator.contract().required_mma;
    if (!a.ran) {
        c.gates.push_back({"instructions", true, false, a.reason});
        if (!required.empty())
            c.warnings.push_back("instructions: not run: requires.mma " + required +
                                 " cannot be checked (" + a.reason + ")");
        return true;
    }
    std::string detail = describe_mix(a.mix) + (a.arch.empty() ? "" : " (" + a.arch + ")");
    if (!a.mix.other_kernels.empty())
        detail += "; " + std::to_string(a.mix.other_kernels.size()) +
                  " other kernel(s) of the source not counted: never launched";
    if (!initial && a.mix.clock_reads) {
        std::string regs;
        for (const std::string& s : a.mix.clock_registers) regs += (regs.empty() ? "" : ", ") + s;
        c.warnings.push_back("clock_read: the kernel reads the clock (" + regs +
                             "): it can tell when it is timed and behave differently then");
    }
    if (!required.empty() && !satisfies_mma(a.mix, required))
        return disqualify(c, "instructions", "precision_path",
                          "requires.mma is " + required + ", but its SASS holds no " + required +
                              " MMA: " + detail);
    c.gates.push_back(
        {"instructions", true, true,
         detail + (required.empty() ? "" : "; requires.mma " + required + ": present")});
    return true;
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

// Timed again with inputs from seeds the search never used, a random number of extra warm-up
// and timed launches, and the checked launch drawn among the timed ones (adaptive: among the
// min_samples always taken): a kernel that counts its launches and computes only where a fixed
// rule would check (the first, the last) is caught here unless the draw lands on one it computes.
bool gate_runner::fresh_seeds(const attempt_result& r, const fs::path& dir, candidate_check& c) {
    evaluator_settings es = fresh_round(m_in.evaluator.settings());
    es.timing.warmup += draw(1, 16);
    es.timing.iterations += draw(1, 16);
    const bool adaptive = es.timing.mode == timing_mode::adaptive;
    const int positions = adaptive ? es.timing.min_samples : es.timing.iterations;
    es.timing.checked_launch = checked_position(es, positions);
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

bool gate_runner::repetition(const attempt_result& r, const fs::path& dir, candidate_check& c) {
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
            const manifest& contract = m_in.evaluator.contract();
            const manifest_arg* arg = contract.find_arg(first.arg);
            if (!arg) continue;
            std::vector<std::vector<unsigned char>> bytes;
            for (const attempt_result& run : runs)
                bytes.push_back(read_binary_file(run.cases[ci].outputs[oi].file));
            const std::string& case_name = runs[0].cases[ci].name;
            worst =
                worse(worst, classify_runs(arg->type, tolerance_in_case(contract, *arg, case_name),
                                           bytes, case_name + " " + quote_value(first.arg)));
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

// The correctness cases, plus the smallest performance case when it is small enough for the
// slow tools (a fast path taken only at performance shapes is sanitized too); without
// correctness cases, the smallest performance case whatever its size.
manifest gate_runner::sanitized_cases() const {
    const manifest& m = m_in.evaluator.contract();
    manifest out = m;
    out.cases.clear();
    const manifest_case* smallest = nullptr;
    std::uint64_t smallest_bytes = 0;
    for (const manifest_case& mc : m.cases) {
        if (mc.kind == case_kind::correctness) {
            out.cases.push_back(mc);
            continue;
        }
        std::uint64_t bytes = 0;
        for (const manifest_arg& a : m.args)
            if (a.is_buffer())
                bytes +=
                    static_cast<std::uint64_t>(evaluate_integer_expression(a.count, mc.params)) *
                    dtype_size(a.type);
        if (!smallest || bytes < smallest_bytes) {
            smallest = &mc;
            smallest_bytes = bytes;
        }
    }
    if (smallest && (out.cases.empty() || smallest_bytes <= m_s.sanitizer_max_case_bytes))
        out.cases.push_back(*smallest);
    return out;
}

bool gate_runner::sanitizer(const attempt_result& r, const fs::path& dir, candidate_check& c) {
    if (m_s.sanitizer.empty()) {
        c.gates.push_back({"sanitizer", true, false, m_s.sanitizer_skipped});
        c.warnings.push_back(
            "sanitizer: not run: " + m_s.sanitizer_skipped +
            (m_s.sanitizer_skipped == "--no-sanitizer" ? "" : " (--sanitizer PATH)"));
        return true;
    }
    const manifest checked = sanitized_cases();
    std::string findings, names;
    for (const manifest_case& mc : checked.cases) names += (names.empty() ? "" : ", ") + mc.name;
    for (const std::string& tool : k_sanitizer_tools) {
        evaluator_settings es = correctness_evaluator().settings();
        const fs::path folder = dir / ("sanitizer-" + tool), log = folder / "sanitizer.log";
        fs::create_directories(folder);
        es.wrapper = {m_s.sanitizer.string(), "--tool", tool, "--log-file", log.string()};
        if (tool == "memcheck") es.wrapper.insert(es.wrapper.end(), {"--report-api-errors", "all"});
        es.timeout = milliseconds_of(m_s.sanitizer_timeout_s);
        const oracle_files none;
        const attempt_result run =
            m_in.evaluator.with(es).with(checked).evaluate(r.cand, folder, &none);
        const std::string text = fs::exists(log) ? read_text_file(log) : "";
        // racecheck prints nothing at all when it finds nothing; the others always summarise.
        sanitizer_result s = parse_sanitizer_output(
            tool, text, tool == "racecheck" && run.verdict == verdict::valid);
        std::string finding;
        if (!s.completed)
            finding = tool + " did not finish (" + s.problem + "; harness " +
                      to_string(run.verdict) + (run.reason.empty() ? "" : ": " + run.reason) +
                      "; log " + log.string() + ")";
        else if (!s.clean())
            finding = tool + ": " + std::to_string(s.errors) + " error(s)" +
                      (s.warnings ? ", " + std::to_string(s.warnings) + " warning(s)" : "") +
                      (s.first_lines.empty() ? "" : " (" + s.first_lines.front() + ")");
        if (!finding.empty()) findings += (findings.empty() ? "" : "; ") + finding;
        c.sanitizer.push_back(s);
    }
    if (!findings.empty() && !m_s.allow_sanitizer_findings)
        return disqualify(c, "sanitizer", "sanitizer_findings", findings);
    if (!findings.empty()) c.warnings.push_back("sanitizer (allowed): " + findings);
    c.gates.push_back(
        {"sanitizer", true, true, (findings.empty() ? "clean" : findings) + " on " + names});
    return true;
}

std::pair<attempt_evaluator, oracle_files> gate_runner::round_setup(const fs::path& dir,
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

// Rounds of initial, winner, winner again (the order reversed every other round), each round
// with its own random warm-up count, so the checked launch moves and each round's outputs are
// checked against an oracle made for it. A failed run of the winner disqualifies it.
bool gate_runner::significance(const attempt_result& r, const fs::path& dir, candidate_check& c) {
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
        const auto [e, oracle] = round_setup(rd, &warmup, &note);
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

// The candidate's own timed runs on varied inputs (fresh seeds, the varied repetition runs, the
// significance rounds): launches summed far above median x count mean work done in rare ones.
bool gate_runner::amortised_work(const attempt_result&, const fs::path&, candidate_check& c) {
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

// The significance rounds' runs (m_timed from `first`) timed while the GPU throttled: counted,
// and a warning, since a clock held down on one side of a ratio moves the ratio.
void gate_runner::flag_throttling(significance_report& rep, std::size_t first, candidate_check& c) {
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
            return round_setup(rd, &warmup, &note);
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
    m_own.clear();
    if (!r.cand.pytorch_mode.empty()) {  // the problem's own forward: the oracle, not a kernel
        c.gates.push_back({"pytorch", true, false,
                           "PyTorch " + r.cand.pytorch_mode +
                               " is the problem's own code and its oracle: no kernel to gate"});
        say("  pytorch: skipped (" + c.gates.back().detail + ")");
        return c;
    }
    for (gate g : {&gate_runner::instructions, &gate_runner::holdout, &gate_runner::fresh_seeds,
                   &gate_runner::repetition, &gate_runner::determinism, &gate_runner::sanitizer,
                   &gate_runner::significance, &gate_runner::amortised_work}) {
        if (g == &gate_runner::significance && is_initial) continue;
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
