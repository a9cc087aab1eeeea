// The go / no-go rule on summary.json: four conditions, each met, not met or not run.
#include "orchestrator/artifacts/report_verdict.hpp"

#include <catch2/catch.hpp>

#include "common/json_document.hpp"

using namespace cuopt;

namespace {

struct evidence_shape {
    std::string holdout = R"("ran": true, "passed": true, "detail": "4 cases pass")";
    std::string speedup = "faster", aa = "no_significant_difference";
    int sanitizer_errors = 0;
    double best_fraction = 0.25;
    std::string proposer = "files";
};

std::string summary_text(const evidence_shape& s) {
    return R"({ "best": { "iteration": 2, "attempt": 1, "label": "tiled.cu", "proposer": ")" +
           s.proposer + R"(", "speedup_vs_initial": 1.5 },
      "evidence": { "ran": true, "winner": "2.1",
        "checked": [ { "attempt": "2.1", "gates": [
            { "gate": "holdout", )" +
           s.holdout + R"( },
            { "gate": "sanitizer", "ran": true, "passed": true, "detail": "clean" } ],
          "sanitizer": [ { "tool": "memcheck", "completed": true, "errors": )" +
           std::to_string(s.sanitizer_errors) + R"( } ] } ],
        "significance": { "runs": 5,
          "speedup": { "ratio": 1.5, "low": 1.45, "high": 1.55, "verdict": ")" +
           s.speedup + R"(" },
          "aa": { "ratio": 1.0, "low": 0.99, "high": 1.01, "verdict": ")" +
           s.aa + R"(" } },
        "sol": [ { "name": "perf-256", "best_fraction": )" +
           std::to_string(s.best_fraction) + R"( } ] } })";
}

go_verdict verdict_of(const evidence_shape& s) {
    const rapidjson::Document summary = parse_json(summary_text(s), "summary.json");
    const rapidjson::Document run = parse_json("{}", "run.json");
    return decide_go(summary, run);
}

}  // namespace

TEST_CASE("a winner that meets all four conditions is a go, with its interval in the headline") {
    const go_verdict v = verdict_of({});
    CHECK(v.go);
    CHECK(v.winner == "tiled.cu (iteration 2, attempt 1)");
    REQUIRE(v.conditions.size() == 4);
    for (const go_condition& c : v.conditions) CHECK(c.state == condition_state::met);
    CHECK(v.headline ==
          "GO: tiled.cu (iteration 2, attempt 1) is 1.500x [1.450, 1.550] faster than the "
          "initial kernel and meets every condition");
}

TEST_CASE("a holdout that did not run proves nothing: no-go, the condition not run") {
    evidence_shape s;
    s.holdout = R"("ran": false, "passed": true, "detail": "no --holdout-cases given")";
    const go_verdict v = verdict_of(s);
    CHECK_FALSE(v.go);
    CHECK(v.conditions[0].state == condition_state::not_run);
    CHECK(v.conditions[0].detail == "no --holdout-cases given");
    CHECK(v.headline == "NO-GO: not run: passes the holdout");
}

TEST_CASE(
    "each failed condition is named: not faster, a noisy A/A, sanitizer errors, below the floor") {
    evidence_shape s;
    s.speedup = "no_significant_difference";
    CHECK(verdict_of(s).conditions[1].state == condition_state::not_met);
    s = {};
    s.aa = "slower";
    CHECK_THAT(verdict_of(s).conditions[1].detail, Catch::Contains("verdicts not reliable"));
    s = {};
    s.sanitizer_errors = 2;  // passed with --allow-sanitizer-findings, but not clean
    CHECK(verdict_of(s).conditions[2].state == condition_state::not_met);
    s = {};
    s.best_fraction = 1.2;
    const go_verdict v = verdict_of(s);
    CHECK(v.conditions[3].state == condition_state::not_met);
    CHECK(v.headline == "NO-GO: not met: not below the speed-of-light floor");
}

TEST_CASE("when nothing beat the initial kernel the verdict says so and is no-go") {
    evidence_shape s;
    s.proposer = "initial";
    const go_verdict v = verdict_of(s);
    CHECK_FALSE(v.go);
    CHECK(v.winner_is_initial);
    CHECK_THAT(v.headline, Catch::StartsWith("NO-GO: nothing beat the initial kernel"));
}

TEST_CASE("without a declared winner every condition is not run and the error is given") {
    const rapidjson::Document summary = parse_json(
        R"({ "best": null, "error": null, "evidence": { "ran": true, "winner": null } })", "s");
    const rapidjson::Document run = parse_json("{}", "run.json");
    const go_verdict v = decide_go(summary, run);
    CHECK_FALSE(v.go);
    CHECK(v.headline ==
          "NO-GO: no declared winner: no candidate passes the evidence gates, the initial kernel "
          "included");
    for (const go_condition& c : v.conditions) CHECK(c.state == condition_state::not_run);
    const rapidjson::Document failed = parse_json(R"({ "error": "the reference fails" })", "run");
    CHECK(decide_go(rapidjson::Value(), failed).headline ==
          "NO-GO: no declared winner: the reference fails");
}
