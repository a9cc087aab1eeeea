// The regression gate's rule apart from any harness run: the latency comparisons with their
// intervals, what fails, what cannot be judged, and how the machine's changes are named.
#include "orchestrator/gate/gate_verdict.hpp"

#include <catch2/catch.hpp>
#include <random>

#include "common/json_document.hpp"
#include "orchestrator/gate/environment_check.hpp"

using namespace cuopt;

namespace {

// `runs` runs of 100 samples around `median_ms`, each sample within +-1%.
run_samples noisy_runs(double median_ms, int runs, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> jitter(-0.01, 0.01);
    run_samples out(static_cast<std::size_t>(runs));
    for (auto& run : out)
        for (int i = 0; i < 100; ++i) run.push_back(median_ms * (1 + jitter(rng)));
    return out;
}

latency_inputs one_case(double accepted_ms, double kernel_ms, double threshold = 0.05) {
    latency_inputs in;
    in.accepted["perf"] = noisy_runs(accepted_ms, 5, 1);
    in.kernel["perf"] = noisy_runs(kernel_ms, 5, 2);
    in.threshold = threshold;
    return in;
}

gate_findings with_latency(const latency_inputs& in) {
    gate_findings f;
    f.threshold = in.threshold;
    f.latency = compare_latency(in);
    return f;
}

}  // namespace

TEST_CASE("a kernel 10% slower than the accepted figures is a regression past a 5% threshold") {
    const auto report = compare_latency(one_case(1.0, 1.10));
    REQUIRE(report);
    const slowdown_estimate& s = report->cases.at(0).vs_accepted;
    CHECK(s.ratio == Approx(1.10).epsilon(0.01));
    CHECK(s.low > 1.05);
    CHECK(s.verdict == significance::slower);
    CHECK(s.regression);
    CHECK(report->geomean.regression);
    const gate_verdict v = judge(with_latency(one_case(1.0, 1.10)));
    CHECK(v.outcome == gate_outcome::fail);
    CHECK_THAT(v.line, Catch::StartsWith("FAIL: case 'perf' is 1.1") &&
                           Catch::Contains("slower than the accepted figures (limit 1.050x)"));
}

TEST_CASE("a kernel slower by less than the threshold passes, though significantly slower") {
    const auto report = compare_latency(one_case(1.0, 1.03));
    REQUIRE(report);
    CHECK(report->cases.at(0).vs_accepted.verdict == significance::slower);
    CHECK_FALSE(report->cases.at(0).vs_accepted.regression);
    const gate_verdict v = judge(with_latency(one_case(1.0, 1.03)));
    CHECK(v.outcome == gate_outcome::pass);
    CHECK(v.reasons.empty());
    CHECK_THAT(v.line, Catch::StartsWith("PASS: every output matches the oracle; geomean 1.03"));
    CHECK(judge(with_latency(one_case(1.0, 1.03, 0.01))).outcome == gate_outcome::fail);
}

TEST_CASE("the accepted kernel timed beside it is compared too, and its own drift is named") {
    latency_inputs in = one_case(1.0, 1.20);
    in.accepted_now["perf"] = noisy_runs(1.20, 5, 3);  // the machine got 20% slower
    const auto report = compare_latency(in);
    REQUIRE(report);
    const case_latency& c = report->cases.at(0);
    REQUIRE(c.vs_accepted_now);
    REQUIRE(c.drift);
    CHECK_FALSE(c.vs_accepted_now->regression);
    CHECK(c.drift->regression);
    const gate_verdict v = judge(with_latency(in));
    CHECK(v.outcome == gate_outcome::fail);
    CHECK_THAT(v.line, Catch::Contains("slower now too: the machine drifted"));
    CHECK_THAT(v.line, !Catch::Contains("than the accepted kernel timed beside it"));
}

TEST_CASE("a kernel slower than the accepted kernel beside it fails even on a faster machine") {
    latency_inputs in = one_case(1.0, 1.0);
    in.accepted_now["perf"] = noisy_runs(0.8, 5, 3);  // the machine got 20% faster
    const gate_verdict v = judge(with_latency(in));
    CHECK(v.outcome == gate_outcome::fail);
    CHECK_THAT(v.line, Catch::Contains("slower than the accepted kernel timed beside it") &&
                           !Catch::Contains("slower than the accepted figures"));
}

TEST_CASE("cannot judge wins over everything, wrong outputs and failed runs fail") {
    gate_findings f = with_latency(one_case(1.0, 1.0));
    f.wrong_outputs = {"round 1: case 'perf': c: 1 of 4 elements differ"};
    gate_verdict v = judge(f);
    CHECK(v.outcome == gate_outcome::fail);
    CHECK(v.reasons == f.wrong_outputs);
    f.cannot_judge = {"another GPU model"};
    v = judge(f);
    CHECK(v.outcome == gate_outcome::cannot_judge);
    CHECK(v.line == "CANNOT JUDGE: another GPU model");
    gate_findings failed;
    failed.kernel_failed = {"round 1: compile_error: kernel.cu(3): error"};
    CHECK(judge(failed).outcome == gate_outcome::fail);
    CHECK(judge(gate_findings{}).outcome == gate_outcome::cannot_judge);  // nothing was timed
}

TEST_CASE("environment: another model cannot be judged, driver and toolkit changes are named") {
    environment then, now;
    then.device = {"NVIDIA H200", "GPU-1", "9.0", "12.8", "12.8", 1980000, 3201000};
    now.device = then.device;
    CHECK(compare_environment(then, now).changes.empty());
    now.device.driver_version = "13.0";
    now.device.nvrtc_version = "13.0";
    now.device.uuid = "";  // not told: not compared
    const environment_comparison c = compare_environment(then, now);
    CHECK(c.same_model);
    REQUIRE(c.changes.size() == 2);
    CHECK(describe(c.changes[0]) == "driver changed: 12.8 -> 13.0");
    CHECK(describe(c.changes[1]) == "NVRTC (toolkit) changed: 12.8 -> 13.0");
    now.device.name = "NVIDIA A100-SXM4-80GB";
    CHECK_FALSE(compare_environment(then, now).same_model);
}

TEST_CASE("throttling now is named, and a GPU state survives its JSON form") {
    gpu_state_summary g;
    g.source = "nvml";
    g.cases = 4;
    g.sm_clock_min_mhz = 1410;
    g.sm_clock_max_mhz = 1980;
    g.throttle_reasons = {"sw_power_cap"};
    g.throttled.push_back({2, 0, "kernel", "perf-256", {"sw_power_cap"}});
    rapidjson::Document doc;
    const rapidjson::Value written = gpu_state_json(g, doc.GetAllocator());
    const auto back = gpu_state_from_json(json_field(written, "run.json", "gpu_state"));
    REQUIRE(back);
    CHECK(back->sm_clock_min_mhz == 1410);
    REQUIRE(back->throttled.size() == 1);
    CHECK(back->throttled[0].case_name == "perf-256");
    CHECK(back->throttled[0].iteration == 2);
    const rapidjson::Document bad = parse_json(R"({"cases": "4"})", "gate.json");
    CHECK_THROWS_WITH(gpu_state_from_json(json_field(bad, "run.json", "gpu_state")),
                      "run.json: field gpu_state.cases: expected an integer from -2147483648 to "
                      "2147483647, found a string");
    environment then, now;
    now.gpu_state = back;
    const auto lines = environment_lines(compare_environment(then, now));
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "1 of 4 measured cases timed while throttled now (sw_power_cap)");
}

TEST_CASE("clocks NVML saw are a change only beyond 5%: boost clocks wander from run to run") {
    environment then, now;
    then.gpu_state = gpu_state_summary{};
    then.gpu_state->sm_clock_max_mhz = 1980;
    now.gpu_state = gpu_state_summary{};
    now.gpu_state->sm_clock_max_mhz = 1965;
    CHECK(compare_environment(then, now).changes.empty());
    now.gpu_state->sm_clock_max_mhz = 1410;
    const auto c = compare_environment(then, now);
    REQUIRE(c.changes.size() == 1);
    CHECK(describe(c.changes[0]) == "SM clock (max seen) changed: 1980 MHz -> 1410 MHz");
}
