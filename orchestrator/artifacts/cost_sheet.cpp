#include "orchestrator/artifacts/cost_sheet.hpp"

namespace cuopt {

std::optional<double> saved_ms_per_invocation(const std::vector<case_latency_pair>& cases) {
    if (cases.empty()) return std::nullopt;
    double sum = 0;
    for (const case_latency_pair& c : cases) sum += c.initial_ms - c.winner_ms;
    return sum / static_cast<double>(cases.size());
}

namespace {

// The flags a figure needs and the user did not give.
std::vector<std::string> missing_flags(const report_economics& e) {
    std::vector<std::string> out;
    if (!e.invocations_per_month) out.emplace_back("--invocations-per-month");
    if (!e.gpu_hour_cost_usd) out.emplace_back("--gpu-hour-cost");
    if (!e.engineer_hours) out.emplace_back("--engineer-hours");
    if (!e.engineer_rate_usd) out.emplace_back("--engineer-rate");
    return out;
}

}  // namespace

cost_figures compute_costs(const cost_inputs& in, const report_economics& e) {
    cost_figures f;
    f.missing = missing_flags(e);
    f.saved_ms_per_invocation = saved_ms_per_invocation(in.performance_cases);
    if (e.engineer_hours && e.engineer_rate_usd)
        f.engineer_cost_usd = *e.engineer_hours * *e.engineer_rate_usd;
    f.model_cost_usd = in.model_used ? in.model_cost_usd : std::optional<double>(0.0);
    if (e.gpu_hour_cost_usd) f.gpu_cost_usd = in.wall_s / 3600.0 * *e.gpu_hour_cost_usd;
    if (f.engineer_cost_usd && f.model_cost_usd && f.gpu_cost_usd)
        f.pilot_cost_usd = *f.engineer_cost_usd + *f.model_cost_usd + *f.gpu_cost_usd;
    if (f.saved_ms_per_invocation && e.invocations_per_month)
        f.saved_gpu_hours_per_month =
            *f.saved_ms_per_invocation * *e.invocations_per_month / k_ms_per_hour;
    if (f.saved_gpu_hours_per_month && e.gpu_hour_cost_usd)
        f.monthly_saving_usd = *f.saved_gpu_hours_per_month * *e.gpu_hour_cost_usd;
    if (f.monthly_saving_usd && *f.monthly_saving_usd <= 0) f.never_pays_back = true;
    if (f.monthly_saving_usd && *f.monthly_saving_usd > 0 && f.pilot_cost_usd)
        f.payback_months = *f.pilot_cost_usd / *f.monthly_saving_usd;
    return f;
}

}  // namespace cuopt
