// Issue 12 through the real cuda-optimizer against fake-harness: the timing flags reach the
// request, a mistimed case is its own verdict, and the clock and the GPU's state are recorded
// in run.json, summary.json, history.json and the closing lines.
#include <catch2/catch.hpp>

#include "common/json_document.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

using test::optimizer_fixture;

// The request the search wrote for one attempt.
rapidjson::Document attempt_request(const optimizer_fixture& f, int iteration, int attempt) {
    char folder[64];
    std::snprintf(folder, sizeof folder, "candidates/iter-%02d/attempt-%d/request.json", iteration,
                  attempt);
    return test::read_checked_json(f.run() / folder, "request");
}

// Reasons and warnings wrapped on indented lines, read as one line each.
std::string flattened(std::string text) {
    for (std::size_t p; (p = text.find("\n    ")) != std::string::npos;) text.replace(p, 5, " ");
    return text;
}

}  // namespace

TEST_CASE(
    "a candidate whose timed sample held another kernel is rejected as invalid_timing with the "
    "harness's message, and the run goes on",
    "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/a_mistimed.cu", f.kernel("FAKE_INVALID_TIMING FAKE_MS=0.5"));
    f.dir.write("cands/b_faster.cu", f.kernel("FAKE_MS=1"));
    const auto r = test::run_optimizer(f.args(
        {"--proposer", "files", "--candidates", (f.dir / "cands").string(), "--no-evidence"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    CHECK(test::verdict_of(history, "a_mistimed.cu") == "invalid_timing");
    CHECK(test::verdict_of(history, "b_faster.cu") == "valid");
    const auto& mistimed = history["attempts"][1];
    CHECK_THAT(mistimed["reason"].GetString(),
               Catch::StartsWith("case 'perf-256': timed sample 7 of 100 held 2 kernels: "
                                 "matmul_f32 and fake_intruder"));
    CHECK_THAT(flattened(r.output), Catch::Contains("a_mistimed.cu  invalid_timing  (best 1.00x): "
                                                    "case 'perf-256': timed sample 7 of 100 held"));
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(summary["counts"]["rejected"]["invalid_timing"].GetInt() == 1);
    CHECK(std::string(summary["best"]["label"].GetString()) == "b_faster.cu");
}

TEST_CASE(
    "a case timed while the GPU throttled warns on its progress line and is named in run.json's "
    "GPU-state summary and in history.json",
    "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/hot.cu", f.kernel("FAKE_MS=1 FAKE_THROTTLED=perf-256"));
    const auto r = test::run_optimizer(f.args(
        {"--proposer", "files", "--candidates", (f.dir / "cands").string(), "--no-evidence"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("hot.cu  valid") &&
                             Catch::Contains("\n  warning: case 'perf-256' timed while throttled "
                                             "(sw_power_cap)\n"));
    CHECK_THAT(r.output, !Catch::Contains("case 'perf-384x256x320' timed while throttled"));
    const auto run = test::read_checked_json(f.run() / "run.json", "run");
    const auto& gpu = run["gpu_state"];
    CHECK(std::string(gpu["source"].GetString()) == "nvml");
    CHECK(gpu["cases"].GetInt() == 4);  // two performance cases, two attempts
    CHECK(gpu["sm_clock_min_mhz"].GetInt() == 1410);
    CHECK(gpu["sm_clock_max_mhz"].GetInt() == 1980);
    CHECK(gpu["mem_clock_max_mhz"].GetInt() == 3201);
    CHECK(gpu["max_temperature_c"].GetInt() == 52);
    CHECK(gpu["max_power_w"].GetDouble() == 699.0);
    CHECK(gpu["power_limit_w"].GetDouble() == 700.0);
    CHECK(gpu["throttled_cases"].GetInt() == 1);
    REQUIRE(gpu["throttle_reasons"].Size() == 1);
    CHECK(std::string(gpu["throttle_reasons"][0].GetString()) == "sw_power_cap");
    REQUIRE(gpu["throttled"].Size() == 1);
    CHECK(std::string(gpu["throttled"][0]["label"].GetString()) == "hot.cu");
    CHECK(std::string(gpu["throttled"][0]["case"].GetString()) == "perf-256");
    CHECK(gpu["throttled"][0]["iteration"].GetInt() == 1);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(summary["throttled_cases"].GetInt() == 1);
    CHECK_THAT(r.output, Catch::Contains("1 of 4 measured cases timed while throttled "
                                         "(sw_power_cap)"));
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    const auto& hot_case = history["attempts"][1]["cases"][1];
    REQUIRE(std::string(hot_case["name"].GetString()) == "perf-256");
    CHECK(hot_case["gpu_state"]["throttled"].GetBool());
    CHECK(hot_case["gpu_state"]["after"]["sm_clock_mhz"].GetInt() == 1410);
}

TEST_CASE(
    "the timer is recorded in run.json, summary.json, history.json and the closing table, and "
    "clocks that disagree warn",
    "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/odd.cu", f.kernel("FAKE_MS=1 FAKE_CHANNELS_DISAGREE"));
    const auto r = test::run_optimizer(f.args(
        {"--proposer", "files", "--candidates", (f.dir / "cands").string(), "--no-evidence"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto run = test::read_checked_json(f.run() / "run.json", "run");
    CHECK(std::string(run["timer"]["name"].GetString()) == "cupti");
    CHECK(std::string(run["timer"]["library"].GetString()) == "libcupti.so.13 (fake)");
    CHECK(run["timer"]["cases"]["cupti"].GetInt() == 4);
    CHECK(run["timer"]["event_overhead_ms_median"].IsNumber());
    CHECK(run["timer"]["channels_disagree"].GetInt() == 2);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(std::string(summary["timer"]["name"].GetString()) == "cupti");
    CHECK(summary["throttled_cases"].GetInt() == 0);
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    const auto& perf = history["attempts"][0]["cases"][1];
    CHECK(std::string(perf["timer"].GetString()) == "cupti");
    CHECK(std::string(perf["stop_rule"].GetString()) == "fixed");
    CHECK(perf["iterations"].GetInt() == 100);
    CHECK(perf["event_overhead_ms"].GetDouble() == Approx(0.0013));
    CHECK(perf["channels_agree"].GetBool());
    CHECK_FALSE(history["attempts"][1]["cases"][1]["channels_agree"].GetBool());
    CHECK_THAT(r.output,
               Catch::Matches("[^]*\ntimer \\(simulated\\): cupti \\(CUDA events beside: median "
                              "overhead 1\\.3 us; 2 case\\(s\\) where the clocks "
                              "disagree\\)\n[^]*"));
    CHECK_THAT(r.output, Catch::Contains("\n  warning: case 'perf-256': CUPTI 2.4844 ms and CUDA "
                                         "events 3.7266 ms disagree beyond the events' overhead"));
}

TEST_CASE(
    "the timer asked for with --timer events reaches the request, and the run records events "
    "with the harness's note",
    "[integration]") {
    optimizer_fixture f;
    const auto r = test::run_optimizer(
        f.args({"--max-iterations", "0", "--no-evidence", "--timer", "events"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto req = attempt_request(f, 0, 0);
    CHECK(std::string(req["timing"]["timer"].GetString()) == "events");
    CHECK_FALSE(req["timing"].HasMember("mode"));
    const auto run = test::read_checked_json(f.run() / "run.json", "run");
    CHECK(std::string(run["timer"]["name"].GetString()) == "events");
    CHECK(std::string(run["timer"]["note"].GetString()) == "timing.timer is events");
    CHECK(std::string(run["settings"]["timer"].GetString()) == "events");
    CHECK_THAT(r.output, Catch::Contains("\ntimer (simulated): events (timing.timer is events)\n"));
}

TEST_CASE(
    "adaptive timing reaches the request with a cap of 1000 unless --iterations gives one, and "
    "history.json records each case's stop rule",
    "[integration]") {
    optimizer_fixture f;
    auto r = test::run_optimizer(
        f.args({"--max-iterations", "0", "--no-evidence", "--timing-mode", "adaptive",
                "--min-samples", "30", "--target-rse", "0.01", "--min-time-ms", "40"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    auto req = attempt_request(f, 0, 0);
    const auto& t = req["timing"];
    CHECK(std::string(t["mode"].GetString()) == "adaptive");
    CHECK(t["iterations"].GetInt() == 1000);
    CHECK(t["min_samples"].GetInt() == 30);
    CHECK(t["min_time_ms"].GetDouble() == 40.0);
    CHECK(t["target_rse"].GetDouble() == 0.01);
    CHECK_FALSE(t.HasMember("timer"));
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    // perf-256 at 2 ms a launch: 40 ms takes 20 samples, fewer than 30: min_samples decides.
    const auto& perf = history["attempts"][0]["cases"][1];
    CHECK(perf["iterations"].GetInt() == 30);
    CHECK(std::string(perf["stop_rule"].GetString()) == "target_noise");
    const auto run = test::read_checked_json(f.run() / "run.json", "run");
    CHECK(std::string(run["settings"]["timing_mode"].GetString()) == "adaptive");
    CHECK(run["settings"]["iterations"].GetInt() == 1000);
    CHECK(run["settings"]["min_samples"].GetInt() == 30);

    // An explicit --iterations is the cap; the same from a config file.
    f.dir.write("config.json", R"({ "timing_mode": "adaptive", "iterations": 25,
                                    "min_samples": 20, "min_time_ms": 1000 })");
    r = test::run_optimizer(f.args(
        {"--max-iterations", "0", "--no-evidence", "--config", (f.dir / "config.json").string()}));
    REQUIRE(r.exit_code == 0);
    req =
        test::read_checked_json(f.run(2) / "candidates/iter-00/attempt-0/request.json", "request");
    CHECK(req["timing"]["iterations"].GetInt() == 25);
    const auto capped = test::read_checked_json(f.run(2) / "history.json", "history");
    CHECK(capped["attempts"][0]["cases"][1]["iterations"].GetInt() == 25);
    CHECK(std::string(capped["attempts"][0]["cases"][1]["stop_rule"].GetString()) == "cap");
}

TEST_CASE("a request timed the default way carries no adaptive field and a fixed stop rule",
          "[integration]") {
    optimizer_fixture f;
    REQUIRE(test::run_optimizer(f.args({"--max-iterations", "0", "--no-evidence"})).exit_code == 0);
    const auto req = attempt_request(f, 0, 0);
    CHECK(req["timing"].MemberCount() == 4);
    const auto run = test::read_checked_json(f.run() / "run.json", "run");
    CHECK(std::string(run["settings"]["timing_mode"].GetString()) == "fixed");
    CHECK(std::string(run["settings"]["timer"].GetString()) == "auto");
    CHECK(run["settings"]["iterations"].GetInt() == 100);
}

TEST_CASE("bad timing flags exit 64 with a message naming the flag, before any run",
          "[integration]") {
    optimizer_fixture f;
    const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
        {{"--timing-mode", "sometimes"}, "--timing-mode"},
        {{"--timer", "sundial"}, "--timer"},
        {{"--min-samples", "2"}, "--min-samples"},
        {{"--min-time-ms=-1"}, "--min-time-ms"},
        {{"--target-rse", "0"}, "--target-rse"},
        {{"--target-rse", "1.5"}, "--target-rse"},
        {{"--timing-mode", "adaptive", "--iterations", "20", "--min-samples", "50"},
         "--min-samples 50 is more than --iterations 20"},
    };
    for (const auto& [flags, named] : bad) {
        const auto r = test::run_optimizer(f.args(flags));
        INFO(r.output);
        CHECK(r.exit_code == 64);
        CHECK_THAT(r.output, Catch::Contains(named));
    }
    CHECK_FALSE(fs::exists(f.dir / "results"));
}
