#pragma once
/// The search's history as it grows: each new attempt scored against the initial kernel of its
/// own device and ranked by the min-gain rule, then the caller's hook (history.json is written
/// there, so nothing is lost if the run dies); resuming (optimize --resume), the recorded
/// attempts taken back as they were, in their order, and never a new one before them.

#include <cstddef>
#include <functional>
#include <utility>

#include "orchestrator/search/search_record.hpp"

namespace cuopt {

struct search_outcome;

class search_history {
  public:
    using attempt_hook = std::function<void(const attempt_result&, const search_outcome&)>;

    search_history(double min_gain, attempt_hook on_attempt)
        : m_min_gain(min_gain), m_on_attempt(std::move(on_attempt)) {}

    /// The run so far when resuming, else nullptr; starts a new pass either way.
    void resume_from(const search_record* resume) {
        m_resume = resume;
        m_replayed = 0;
    }
    /// Resuming: the recorded attempt (iteration, attempt), or nullptr.
    const attempt_result* recorded(int iteration, int attempt) const {
        return m_resume ? m_resume->attempt(iteration, attempt) : nullptr;
    }
    /// Resuming: the recorded batch and repairs of an iteration, or nullptr.
    const iteration_record* recorded_iteration(int iteration) const {
        return m_resume ? m_resume->iteration(iteration) : nullptr;
    }
    /// A new attempt: speedup against its own device's initial kernel, whether it became the
    /// best, then into history and the hook. Throws when recorded attempts are still to come.
    const attempt_result& record(attempt_result r, search_outcome& out);
    /// A recorded attempt into history as it was (no ranking again, no hook).
    const attempt_result& replay(const attempt_result& r, search_outcome& out);
    /// The recorded attempts not gone over again (a run interrupted at once), in their order.
    void replay_rest(search_outcome& out);
    /// The hook again for the last attempt (after a stop was decided on it).
    void tell(const search_outcome& out) const;

  private:
    double m_min_gain;
    attempt_hook m_on_attempt;
    const search_record* m_resume = nullptr;
    std::size_t m_replayed = 0;  // recorded attempts taken into history so far
};

}  // namespace cuopt
