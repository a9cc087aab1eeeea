#pragma once
/// The gated search: iteration 0 is the initial kernel (it must pass every case), then
/// each iteration asks the proposer for a batch, evaluates every candidate (on several GPUs
/// at once where given, compiled ahead: batch_evaluation), lets the proposer repair compile
/// errors (bounded, after the batch), and moves the best only for a real gain.
/// After every attempt the caller's hook runs (history is written there), so nothing
/// is lost if the run is interrupted or dies.

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/evaluation/attempt_evaluator.hpp"
#include "orchestrator/proposers/proposer.hpp"
#include "orchestrator/proposers/stop_reason.hpp"
#include "orchestrator/search/batch_evaluation.hpp"
#include "orchestrator/search/search_history.hpp"
#include "orchestrator/search/search_record.hpp"

namespace cuopt {

struct search_settings {
    int max_iterations = 7;
    double min_gain = 0.01;  // a new best must be more than 1% faster
    int max_repairs = 2;     // compile-error repairs per iteration
    std::string run_folder;  // for the compile-option allow-list
    /// Stop (near_speed_of_light) once the best is within this fraction of the floor on every
    /// performance case; 0 = never.
    double stop_at_sol = 0;
    std::map<std::string, double> floors_ms;  // per performance case
    parallel_settings parallel;               // the GPUs that measure, compile-ahead threads
};

struct search_outcome {
    std::vector<attempt_result> history;
    std::optional<std::size_t> initial;  // index of iteration 0
    /// The initial kernel measured on every other device of a several-GPU run (not attempts):
    /// each attempt is scored against the one of its own device (search/device_baselines.hpp).
    std::vector<attempt_result> baselines;
    std::optional<std::size_t> best;
    stop_reason stop = stop_reason::max_iterations;
    std::string error;

    /// How many attempts are valid, and the rejected ones by verdict name.
    struct verdict_counts {
        int valid = 0;
        std::map<std::string, int> rejected;
    };
    verdict_counts counts() const {
        verdict_counts c;
        for (const attempt_result& r : history) {
            if (r.verdict == verdict::valid)
                ++c.valid;
            else
                ++c.rejected[to_string(r.verdict)];
        }
        return c;
    }

    /// The user's own kernel beside a PyTorch eager baseline (search_loop::start_from), or
    /// nullopt.
    std::optional<std::size_t> own_kernel() const {
        for (std::size_t i = 0; i < history.size(); ++i)
            if (history[i].iteration > 0 && history[i].cand.proposer == proposer_kind::initial)
                return i;
        return std::nullopt;
    }

    /// The median latency of one case in one attempt (nullopt: no such attempt, or not timed).
    std::optional<double> median_ms(std::optional<std::size_t> attempt,
                                    const std::string& case_name) const {
        if (!attempt) return std::nullopt;
        for (const auto& ce : history[*attempt].cases)
            if (ce.name == case_name) return ce.median_ms;
        return std::nullopt;
    }
};

class search_loop {
  public:
    using attempt_hook = search_history::attempt_hook;
    using folder_for = std::function<std::filesystem::path(int iteration, int attempt)>;

    search_loop(const manifest& m, const attempt_evaluator& evaluator, proposer& p,
                search_settings settings, folder_for folders, attempt_hook on_attempt,
                const std::atomic<bool>* interrupted);

    /// Called with an iteration's candidates before any of them is evaluated: the batch as
    /// proposed, then again with each repair asked for (candidates/iter-NN/candidates.json).
    using candidates_hook = std::function<void(int iteration, const iteration_record&)>;
    void on_candidates(candidates_hook hook) { m_on_candidates = std::move(hook); }

    /// With `resume` (optimize --resume: the run so far) the search goes over the same ground
    /// again without redoing it: each recorded attempt is taken as it was (the hook is not
    /// called for it), each recorded batch and repair is taken instead of asking the proposer
    /// (which is restored with it), and what was recorded but not evaluated is evaluated now.
    search_outcome run(const candidate& initial, const oracle_files& oracle,
                       const search_record* resume = nullptr);

    /// The user's own kernel when the baseline is not theirs (an imported problem's PyTorch
    /// eager): the proposers' starting point (search_state::initial) and one more row, measured
    /// as iteration 1's attempt 0 before the proposer is asked. A failure stops the search the
    /// way a failing initial kernel does; nothing that does not beat it can become the best.
    void start_from(candidate own) { m_own = std::move(own); }

  private:
    attempt_result evaluate(const candidate& c, int iteration, int attempt,
                            const oracle_files& oracle, search_outcome& out, int repair_of = -1);
    /// Iteration 0 on the first device, and the initial kernel on every other device at once.
    attempt_result evaluate_initial(const candidate& initial, const oracle_files& oracle,
                                    search_outcome& out);
    /// A batch on every device, recorded in order; its compile errors, for the repairs.
    std::vector<attempt_result> measure_batch(const std::vector<candidate>& batch, int iteration,
                                              const oracle_files& oracle, search_outcome& out);
    /// The iteration's batch: the one written down before the run stopped (the proposer
    /// restored with it), else the proposer's, written down first; nullopt when the search
    /// stops there (out.stop says why).
    std::optional<std::vector<candidate>> next_batch(int iteration, const candidate& initial,
                                                     search_outcome& out);
    /// The fix for a compile error: the one written down, else the proposer's (written down
    /// first, a declined one too). Throws proposer_stop.
    std::optional<candidate> fix(const attempt_result& failed, int attempt,
                                 const candidate& initial, const search_outcome& out);
    /// start_from's kernel, iteration 1's attempt 0; false (out.stop says why) when it fails.
    bool measure_own(const oracle_files& oracle, search_outcome& out);
    /// Iteration 0, then each iteration until a stop; `out` holds where it stopped.
    void iterate(const candidate& initial, const oracle_files& oracle, search_outcome& out);

    const manifest& m_manifest;
    proposer& m_proposer;
    search_settings m_settings;
    folder_for m_folders;
    search_history m_history;  // new attempts recorded, recorded ones replayed
    const std::atomic<bool>* m_interrupted;
    std::vector<measuring_device> m_devices;  // the evaluator once per measuring GPU
    candidates_hook m_on_candidates;
    iteration_record m_current;      // this iteration's candidates as written down
    std::optional<candidate> m_own;  // start_from's
};

}  // namespace cuopt
