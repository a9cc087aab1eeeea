#pragma once
/// Why a search ended, as summary.json spells it. A proposer says some of them (it ran out
/// of ideas or of model budget), so the names live here, below search/, which reads them.

#include "common/name_table.hpp"

namespace cuopt {

enum class stop_reason {
    max_iterations,       // every iteration ran
    proposer_exhausted,   // the proposer had nothing left to try
    interrupted,          // SIGINT/SIGTERM: stopped after the current attempt
    budget_exhausted,     // the model's call or token budget is spent
    error,                // the initial kernel failed, or the proposer could not go on
    near_speed_of_light,  // --stop-at-sol: every performance case is close enough to its floor
};

inline constexpr auto k_stop_reasons =
    make_name_table<stop_reason>({{stop_reason::max_iterations, "max_iterations"},
                                  {stop_reason::proposer_exhausted, "proposer_exhausted"},
                                  {stop_reason::interrupted, "interrupted"},
                                  {stop_reason::budget_exhausted, "budget_exhausted"},
                                  {stop_reason::error, "error"},
                                  {stop_reason::near_speed_of_light, "near_speed_of_light"}});

inline const char* to_string(stop_reason r) {
    return k_stop_reasons.name(r);
}

}  // namespace cuopt
