#pragma once
/// The cost sheet's arithmetic, apart from any file: what the pilot cost (the engineer's time,
/// the model's charges, the GPU held for the run's wall time) and what the winner could save
/// per month at a given invocation rate, with the payback in months. Every saving is a
/// kernel-only upper bound: the end-to-end workload must be measured before believing it.

#include <optional>
#include <string>
#include <vector>

namespace cuopt {

/// The economics the user gives (--invocations-per-month, --gpu-hour-cost, --engineer-hours,
/// --engineer-rate); nullopt where not given.
struct report_economics {
    std::optional<double> invocations_per_month;  // launches of the kernel per month
    std::optional<double> gpu_hour_cost_usd;      // what one GPU hour costs, US dollars
    std::optional<double> engineer_hours;         // the engineer's time on the pilot
    std::optional<double> engineer_rate_usd;      // per engineer hour, US dollars
};

/// One performance case's medians: the initial kernel's and the winner's.
struct case_latency_pair {
    double initial_ms = 0;
    double winner_ms = 0;
};

struct cost_inputs {
    bool model_used = false;
    std::optional<double> model_cost_usd;  // the model's estimated charges; nullopt: no price
    double wall_s = 0;                     // the run's wall time, start to end
    std::vector<case_latency_pair> performance_cases;  // empty: no winner to save anything
};

struct cost_figures {
    std::optional<double> saved_ms_per_invocation;
    std::optional<double> engineer_cost_usd;  // hours x rate
    std::optional<double> model_cost_usd;     // 0 where no model ran; nullopt: price unknown
    std::optional<double> gpu_cost_usd;       // wall hours x GPU-hour cost
    std::optional<double> pilot_cost_usd;     // engineer + model + GPU, when all three are known
    std::optional<double> saved_gpu_hours_per_month;
    std::optional<double> monthly_saving_usd;
    std::optional<double> payback_months;  // pilot / monthly saving, when the saving is positive
    bool never_pays_back = false;          // the monthly saving is known and not positive
    std::vector<std::string> missing;      // the flags the missing figures need, in flag order
};

/// Saved ms per invocation: the mean over the performance cases of (initial median - winner
/// median), i.e. one invocation is one launch with the cases as equally likely shapes; nullopt
/// without cases. Negative when the winner is slower.
std::optional<double> saved_ms_per_invocation(const std::vector<case_latency_pair>& cases);

/// Pilot cost = engineer hours x rate + model charges + run wall hours x GPU-hour cost; saved
/// GPU hours per month = saved ms per invocation x invocations / 3,600,000; monthly saving =
/// saved GPU hours x GPU-hour cost; payback months = pilot cost / monthly saving.
cost_figures compute_costs(const cost_inputs& in, const report_economics& e);

/// Milliseconds in an hour: the divisor of the saved GPU hours.
inline constexpr double k_ms_per_hour = 3'600'000;

}  // namespace cuopt
