#pragma once
/// What a search writes down before it acts, so that a killed run can be continued
/// (`optimize --resume`): each iteration's batch as the proposer gave it, and each repair the
/// proposer was asked for, before any of them is evaluated (candidates/iter-NN/candidates.json);
/// and what a resumed search starts from: those records and the attempts completed so far.
/// Plain data; artifacts/candidates_file writes and reads it.

#include <map>
#include <optional>
#include <vector>

#include "orchestrator/contract/candidate.hpp"
#include "orchestrator/evaluation/attempt_evaluator.hpp"

namespace cuopt {

/// A repair the proposer was asked for: the attempt it repairs, the attempt number its fix
/// takes, and the fix (none: the proposer had none, and the search moved on).
struct repair_record {
    int repair_of = 0;
    int attempt = 0;
    std::optional<candidate> fixed;
};

/// One iteration's candidates: the batch (batch[j] is attempt j), then the repairs in order.
struct iteration_record {
    std::vector<candidate> batch;
    std::vector<repair_record> repairs;

    const repair_record* repair_for(int repair_of) const {
        for (const repair_record& r : repairs)
            if (r.repair_of == repair_of) return &r;
        return nullptr;
    }
};

/// A run so far, as its folder holds it: where a resumed search starts.
struct search_record {
    /// The completed attempts in history.json's order, each with its whole candidate.
    std::vector<attempt_result> history;
    std::map<int, iteration_record> iterations;  // by iteration number, 1 and up

    const attempt_result* attempt(int iteration, int attempt) const {
        for (const attempt_result& r : history)
            if (r.iteration == iteration && r.attempt == attempt) return &r;
        return nullptr;
    }
    const iteration_record* iteration(int n) const {
        const auto it = iterations.find(n);
        return it == iterations.end() ? nullptr : &it->second;
    }
};

}  // namespace cuopt
