#pragma once
/// The proposer interface: given what the search has learned so far, return the next
/// candidates (a batch), or none when there is nothing left to try. A proposer that
/// can fix a compile error (a model) also implements repair(). Implementations:
/// autotune_proposer (embedded default), files_proposer (a folder of .cu files).

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/contract/candidate.hpp"
#include "orchestrator/contract/manifest.hpp"
#include "orchestrator/evaluation/attempt_evaluator.hpp"
#include "orchestrator/proposers/stop_reason.hpp"

namespace cuopt {

/// What a proposer may look at: the contract, the initial kernel, every attempt so far.
struct search_state {
    const manifest& contract;
    const candidate& initial;
    const std::vector<attempt_result>& history;
    std::optional<std::size_t> best;  // index into history
    int iteration = 1;                // the iteration being proposed
};

/// Thrown by a proposer that cannot go on (its budget is spent, its API refused): the
/// search stops with this reason (budget_exhausted, error) and message.
class proposer_stop : public std::runtime_error {
  public:
    proposer_stop(stop_reason reason, const std::string& message)
        : std::runtime_error(message), m_reason(reason) {}
    stop_reason reason() const { return m_reason; }

  private:
    stop_reason m_reason;
};

class proposer {
  public:
    virtual ~proposer() = default;
    /// The next batch; empty when exhausted.
    virtual std::vector<candidate> propose(const search_state& state) = 0;
    /// A fixed version of a candidate that failed to compile, or nullopt.
    virtual std::optional<candidate> repair(const search_state&, const attempt_result&) {
        return std::nullopt;
    }
    /// Resuming a run (optimize --resume): `batch` is what this proposer gave for `state` (the
    /// history as it stood then) before the run stopped, read back from the run folder; after
    /// it the proposer's own state is what it would be had the run never stopped, so it goes
    /// on proposing exactly what it would have. The default keeps nothing between iterations.
    virtual void restore(const search_state& state, const std::vector<candidate>& batch) {
        (void)state;
        (void)batch;
    }
};

/// Searches the manifest's tunables and a few NVRTC flag variants around the initial
/// kernel: a spread sample first, then neighbours of the best; never repeats a
/// configuration; deterministic for a given seed. Configurations whose launch the
/// device cannot run (a block over max_threads_per_block, when known: > 0) are skipped.
std::unique_ptr<proposer> make_autotune_proposer(const manifest& m, std::uint64_t seed,
                                                 int batch_size, int max_threads_per_block = 0);

/// One candidate per iteration from DIR/*.cu in name order, each with an optional
/// same-name .json (entry, launch, case_launch, defines, compile_options, rationale).
std::unique_ptr<proposer> make_files_proposer(const std::filesystem::path& folder);

}  // namespace cuopt
