#include "orchestrator/evidence/rerank.hpp"

#include <algorithm>

namespace cuopt {

namespace fs = std::filesystem;

void append_performance_samples(const attempt_result& r, std::map<std::string, run_samples>& into) {
    for (const case_evaluation& ce : r.cases)
        if (ce.kind == case_kind::performance && !ce.samples_ms.empty())
            into[ce.name].push_back(ce.samples_ms);
}

namespace {

// The cases every side measured in every counted round, and each side's samples of them.
std::vector<std::string> common_cases(const std::map<std::string, run_samples>& base,
                                      const std::vector<rerank_entry>& entries, int rounds) {
    std::vector<std::string> cases;
    for (const auto& [name, runs] : base) {
        bool everywhere = static_cast<int>(runs.size()) == rounds;
        for (const rerank_entry& e : entries)
            everywhere =
                everywhere &&
                (!e.problem.empty() ||
                 (e.samples.count(name) && static_cast<int>(e.samples.at(name).size()) == rounds));
        if (everywhere) cases.push_back(name);
    }
    return cases;
}

multi_case_estimate compare_on(const std::vector<std::string>& cases,
                               const std::map<std::string, run_samples>& baseline,
                               const std::map<std::string, run_samples>& candidate,
                               std::uint64_t seed) {
    std::vector<run_samples> b, k;
    for (const std::string& c : cases) {
        b.push_back(baseline.at(c));
        k.push_back(candidate.at(c));
    }
    return compare_cases(b, k, {2000, seed});
}

// One round: the initial kernel and every candidate still measured, in an order rotated by
// the round so that no candidate always runs first or right after the initial kernel.
// Returns false when the initial kernel's run failed (the round does not count).
bool run_round(const search_outcome& o, int round, const fs::path& rd, const round_setup_fn& setup,
               rerank_report& rep, std::map<std::string, run_samples>& base) {
    std::vector<rerank_entry>& entries = rep.entries;
    const auto [e, oracle] = setup(rd);
    std::vector<std::optional<std::size_t>> sides{std::nullopt};  // nullopt: the initial kernel
    for (std::size_t i = 0; i < entries.size(); ++i)
        if (entries[i].problem.empty()) sides.push_back(i);
    std::rotate(sides.begin(), sides.begin() + static_cast<std::ptrdiff_t>(round % sides.size()),
                sides.end());
    std::map<std::size_t, attempt_result> runs;
    std::optional<attempt_result> initial;
    for (const auto& side : sides) {
        const attempt_result& r = o.history[side ? entries[*side].attempt : *o.initial];
        attempt_result run = e.evaluate(r.cand, rd / (side ? r.id() : "initial"), &oracle);
        rep.runs.push_back(run);
        if (side)
            runs.emplace(*side, std::move(run));
        else
            initial = std::move(run);
    }
    if (initial->verdict != verdict::valid) return false;
    append_performance_samples(*initial, base);
    for (auto& [i, run] : runs) {
        if (run.verdict != verdict::valid) {
            entries[i].problem = "round " + std::to_string(round) + ": " + to_string(run.verdict) +
                                 ": " + run.reason;
            continue;
        }
        append_performance_samples(run, entries[i].samples);
    }
    return true;
}

}  // namespace

std::optional<rerank_report> rerank_candidates(const search_outcome& o,
                                               const std::vector<std::size_t>& candidates,
                                               int rounds, double min_gain, const fs::path& dir,
                                               const round_setup_fn& setup,
                                               const std::function<void(const std::string&)>& say) {
    if (candidates.size() < 2 || !o.initial) return std::nullopt;
    rerank_report rep;
    for (std::size_t c : candidates) rep.entries.push_back({c, {}, "", {}});
    std::map<std::string, run_samples> base;
    for (int round = 1; round <= rounds; ++round) {
        say("  rerank round " + std::to_string(round) + "/" + std::to_string(rounds) + " (" +
            std::to_string(candidates.size()) + " candidates and the initial kernel)");
        if (!run_round(o, round, dir / ("round-" + std::to_string(round)), setup, rep, base))
            continue;
        ++rep.rounds;
    }
    // A candidate that failed a round is dropped whole: its rounds would not pair.
    for (rerank_entry& e : rep.entries)
        if (!e.problem.empty()) e.samples.clear();
    const std::vector<std::string> cases = common_cases(base, rep.entries, rep.rounds);
    const auto measured = std::count_if(rep.entries.begin(), rep.entries.end(),
                                        [](const rerank_entry& e) { return e.problem.empty(); });
    if (rep.rounds < 2 || measured < 2 || cases.empty()) return std::nullopt;
    for (rerank_entry& e : rep.entries)
        if (e.problem.empty()) e.speedup = compare_on(cases, base, e.samples, 4);
    // The search's order, where a candidate moves ahead only when re-measured faster than the
    // one before it by more than min_gain (the search's own rule for a new best): a difference
    // within it is a tie, and a tie keeps the search's order. Dropped ones go last.
    for (std::size_t i = 1; i < rep.entries.size(); ++i)
        for (std::size_t j = i; j > 0; --j) {
            const rerank_entry &a = rep.entries[j - 1], &b = rep.entries[j];
            const bool ahead = b.problem.empty() &&
                               (!a.problem.empty() ||
                                b.speedup.geomean.ratio > a.speedup.geomean.ratio * (1 + min_gain));
            if (!ahead) break;
            std::swap(rep.entries[j - 1], rep.entries[j]);
        }
    return rep;
}

std::vector<std::size_t> reranked_order(const std::vector<std::size_t>& order,
                                        const rerank_report& r) {
    std::vector<std::size_t> out;
    for (const rerank_entry& e : r.entries)
        if (e.problem.empty()) out.push_back(e.attempt);
    for (std::size_t i : order)
        if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
    return out;
}

void margin_over_runner_up(rerank_report& r, std::size_t winner,
                           const std::vector<std::size_t>& disqualified) {
    const auto is_winner = [winner](const rerank_entry& e) { return e.attempt == winner; };
    const auto w = std::find_if(r.entries.begin(), r.entries.end(), is_winner);
    if (w == r.entries.end() || !w->problem.empty()) return;
    for (const rerank_entry& e : r.entries) {
        if (e.attempt == winner || !e.problem.empty() ||
            std::count(disqualified.begin(), disqualified.end(), e.attempt))
            continue;
        std::vector<std::string> cases;
        for (const auto& [name, runs] : w->samples)
            if (e.samples.count(name)) cases.push_back(name);
        if (cases.empty()) continue;
        r.runner_up = e.attempt;  // entries are fastest first: the first other is the closest
        r.over_runner_up = compare_on(cases, e.samples, w->samples, 5).geomean;
        return;
    }
}

}  // namespace cuopt
