// The cost sheet's arithmetic, to the cent: pilot cost, saved GPU hours, monthly saving, payback.
#include "orchestrator/artifacts/cost_sheet.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;

namespace {

cost_inputs pilot_inputs() {
    cost_inputs in;
    in.model_used = true;
    in.model_cost_usd = 3.25;
    in.wall_s = 1800;                                 // half an hour
    in.performance_cases = {{3.0, 1.5}, {5.0, 2.5}};  // saves 1.5 and 2.5 ms: 2 ms on average
    return in;
}

report_economics all_given() {
    report_economics e;
    e.invocations_per_month = 1.8e9;
    e.gpu_hour_cost_usd = 2.5;
    e.engineer_hours = 10;
    e.engineer_rate_usd = 150;
    return e;
}

}  // namespace

TEST_CASE("saved time per invocation is the mean over performance cases of initial - winner") {
    CHECK(saved_ms_per_invocation({{3.0, 1.5}, {5.0, 2.5}}) == 2.0);
    CHECK(saved_ms_per_invocation({{1.0, 1.25}}) == -0.25);  // a slower winner saves nothing
    CHECK_FALSE(saved_ms_per_invocation({}));
}

TEST_CASE("the pilot pays back after pilot cost / monthly saving months, figures exact") {
    const cost_figures f = compute_costs(pilot_inputs(), all_given());
    CHECK(f.engineer_cost_usd == 1500.0);  // 10 h x $150
    CHECK(f.model_cost_usd == 3.25);
    CHECK(f.gpu_cost_usd == 1.25);  // 0.5 h x $2.5
    CHECK(f.pilot_cost_usd == 1504.5);
    CHECK(f.saved_ms_per_invocation == 2.0);
    CHECK(f.saved_gpu_hours_per_month == 1000.0);               // 2 ms x 1.8e9 / 3,600,000
    CHECK(f.monthly_saving_usd == 2500.0);                      // 1000 h x $2.5
    CHECK(*f.payback_months == Approx(0.6018).epsilon(1e-12));  // 1504.5 / 2500
    CHECK_FALSE(f.never_pays_back);
    CHECK(f.missing.empty());
}

TEST_CASE(
    "without a model the model charges are zero, and an unpriced model leaves the pilot unknown") {
    cost_inputs in = pilot_inputs();
    in.model_used = false;
    in.model_cost_usd.reset();
    CHECK(compute_costs(in, all_given()).pilot_cost_usd == 1501.25);
    in.model_used = true;  // a model ran, but the price table did not know it
    const cost_figures f = compute_costs(in, all_given());
    CHECK_FALSE(f.model_cost_usd);
    CHECK_FALSE(f.pilot_cost_usd);
    CHECK_FALSE(f.payback_months);
    CHECK(f.monthly_saving_usd == 2500.0);
}

TEST_CASE("a winner that saves nothing never pays back") {
    cost_inputs in = pilot_inputs();
    in.performance_cases = {{2.0, 2.0}};
    const cost_figures f = compute_costs(in, all_given());
    CHECK(f.monthly_saving_usd == 0.0);
    CHECK(f.never_pays_back);
    CHECK_FALSE(f.payback_months);
}

TEST_CASE("figures whose flags are missing stay empty and the flags are named in order") {
    report_economics e;
    e.gpu_hour_cost_usd = 4;
    const cost_figures f = compute_costs(pilot_inputs(), e);
    CHECK(f.gpu_cost_usd == 2.0);
    CHECK_FALSE(f.engineer_cost_usd);
    CHECK_FALSE(f.pilot_cost_usd);
    CHECK_FALSE(f.saved_gpu_hours_per_month);
    CHECK(f.missing == std::vector<std::string>{"--invocations-per-month", "--engineer-hours",
                                                "--engineer-rate"});
}
