#pragma once
/// The search's best is one noisy draw among near ties: before any gate, the K best
/// candidates are re-measured in interleaved rounds with the initial kernel (each round its
/// own random warm-up count and oracle, the order rotated every round), ranked by that
/// re-measure, and gated in that order. Once a winner is declared, its margin over the
/// runner-up (the best other re-measured candidate) is estimated from the same rounds.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/evaluation/attempt_evaluator.hpp"
#include "orchestrator/evidence/significance.hpp"
#include "orchestrator/search/search_loop.hpp"

namespace cuopt {

/// One re-measured candidate.
struct rerank_entry {
    std::size_t attempt = 0;      // index into the history
    multi_case_estimate speedup;  // initial / candidate over the rounds it ran in
    std::string problem;          // why it was dropped (a failed run); "" when measured
    std::map<std::string, run_samples> samples;  // per case, per round
};

struct rerank_report {
    int rounds = 0;                        // rounds that counted (the initial kernel's run valid)
    std::vector<rerank_entry> entries;     // fastest re-measured first; dropped ones last
    std::optional<std::size_t> runner_up;  // the winner's closest re-measured rival
    std::optional<ratio_estimate> over_runner_up;  // runner-up / winner: above 1, winner faster
    std::vector<attempt_result> runs;              // every run of the rounds, in order
};

/// A round's evaluator and oracle, made for its folder (the evidence stage's round set-up).
using round_setup_fn =
    std::function<std::pair<attempt_evaluator, oracle_files>(const std::filesystem::path& dir)>;

/// Appends each performance case's samples of one run to `into` (one entry per run).
void append_performance_samples(const attempt_result& r, std::map<std::string, run_samples>& into);

/// Re-measures `candidates` (history indices in the search's order, none of them the initial
/// kernel) over `rounds` interleaved rounds under `dir` and orders them by that: one moves
/// ahead of another only when re-measured faster by more than `min_gain`. nullopt when fewer
/// than two rounds counted or fewer than two candidates stay measured (nothing to rank).
std::optional<rerank_report> rerank_candidates(const search_outcome& o,
                                               const std::vector<std::size_t>& candidates,
                                               int rounds, double min_gain,
                                               const std::filesystem::path& dir,
                                               const round_setup_fn& setup,
                                               const std::function<void(const std::string&)>& say);

/// `order` with its re-measured entries moved to the front in re-measured order (those
/// dropped for a failed run keep their place after them).
std::vector<std::size_t> reranked_order(const std::vector<std::size_t>& order,
                                        const rerank_report& r);

/// Fills runner_up and over_runner_up for the declared winner, when it was re-measured; the
/// runner-up is the fastest other re-measured candidate not `disqualified` by a gate.
void margin_over_runner_up(rerank_report& r, std::size_t winner,
                           const std::vector<std::size_t>& disqualified);

}  // namespace cuopt
