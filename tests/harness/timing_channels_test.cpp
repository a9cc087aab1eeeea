// The parts of the two-clock timer that need no GPU: CUPTI records to samples and the check
// that a sample holds only the case's work, the median's noise and the stopping rule, NVML's
// reason names, and the response's new timing fields against the schema.
#include <catch2/catch.hpp>
#include <chrono>
#include <random>

#include "common/json_document.hpp"
#include "harness/gpu_state.hpp"
#include "harness/harness_report.hpp"
#include "harness/kernel_records.hpp"
#include "harness/sample_statistics.hpp"

using namespace cuopt;

namespace {

kernel_record kernel(std::uint64_t start, std::uint64_t end, std::uint32_t id,
                     const char* name = "k") {
    return {start, end, id, name, false};
}

}  // namespace

TEST_CASE("each timed launch's sample is its kernel's GPU start to end", "[timing]") {
    // Support kernels (ids 1, 4, 7: the flush before each launch) sit between the launches.
    const std::vector<kernel_record> records{
        kernel(0, 900, 1, "flush"), kernel(1000, 3000, 2, "k"),     kernel(3100, 4000, 4, "flush"),
        kernel(4100, 6600, 5, "k"), kernel(6700, 7000, 7, "flush"), kernel(7100, 8100, 8, "k")};
    const std::vector<launch_call> calls{{2, 0}, {5, 1}, {8, 2}};
    const attributed_samples a = attribute_samples(records, calls, 3, true);
    CHECK(a.problem.empty());
    CHECK(a.missing == 0);
    REQUIRE(a.samples_ms.size() == 3);
    CHECK(a.samples_ms[0] == Approx(0.002));
    CHECK(a.samples_ms[1] == Approx(0.0025));
    CHECK(a.samples_ms[2] == Approx(0.001));
}

TEST_CASE("a kernel running inside a timed sample makes the case's timing invalid", "[timing]") {
    const std::vector<launch_call> calls{{2, 0}, {5, 1}};
    SECTION("a kernel no timed call launched (device-launched, another stream)") {
        std::vector<kernel_record> records{kernel(1000, 3000, 2), kernel(4000, 9000, 5, "k"),
                                           kernel(5000, 6000, 0, "child")};
        records.back().device_launched = true;
        const attributed_samples a = attribute_samples(records, calls, 2, true);
        CHECK_THAT(a.problem, Catch::Contains("timed launch 2 of 2") &&
                                  Catch::Contains("child (device-launched)"));
    }
    SECTION("a kernel launch that ran two grids") {
        const std::vector<kernel_record> records{kernel(1000, 3000, 2), kernel(3000, 3500, 2, "x"),
                                                 kernel(4000, 9000, 5)};
        const attributed_samples a = attribute_samples(records, calls, 2, true);
        CHECK_THAT(a.problem,
                   Catch::Contains("timed launch 1 of 2 ran 2 grids") && Catch::Contains("k, x"));
        // A vendor call may run several grids: its sample spans them, first start to last end.
        const attributed_samples v = attribute_samples(records, calls, 2, false);
        CHECK(v.problem.empty());
        REQUIRE(v.samples_ms.size() == 2);
        CHECK(v.samples_ms[0] == Approx(0.0025));
    }
    SECTION("a support kernel overlapping the sample (the stream ordering broke)") {
        const std::vector<kernel_record> records{
            kernel(1000, 3000, 2), kernel(2500, 3200, 3, "flush"), kernel(4000, 9000, 5)};
        CHECK_THAT(
            attribute_samples(records, calls, 2, true).problem,
            Catch::Contains("timed launch 1 of 2 (k) had another kernel running inside it: flush"));
    }
}

TEST_CASE(
    "the intruder check agrees with the plain all-pairs check on random traces, spans in "
    "any order, and stays fast at adaptive timing's thousands of samples",
    "[timing]") {
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 300; ++trial) {
        const std::size_t launches = 1 + rng() % 12;
        std::vector<kernel_record> records;
        std::vector<launch_call> calls;
        std::uint32_t id = 1;
        for (std::size_t i = 0; i < launches; ++i) {  // starts jump around: not launch order
            const std::uint64_t start = rng() % 10000, length = 1 + rng() % 400;
            records.push_back(kernel(start, start + length, id, "k"));
            calls.push_back({id++, i});
        }
        for (int extra = 0, n = static_cast<int>(rng() % 3); extra < n; ++extra) {
            const std::uint64_t start = rng() % 10000;
            records.push_back(kernel(start, start + 1 + rng() % 50, 0, "other"));
        }
        // All pairs: a record that is not launch i's own overlapping launch i's span.
        bool expected = false;
        for (std::size_t r = 0; r < records.size(); ++r)
            for (std::size_t i = 0; i < launches; ++i)
                expected |= r != i && records[i].start_ns < records[r].end_ns &&
                            records[i].end_ns > records[r].start_ns;
        INFO("trial " << trial);
        CHECK(!attribute_samples(records, calls, launches, true).problem.empty() == expected);
    }
    // 5000 back-to-back samples and their flushes, attributed 100 times (adaptive batches).
    std::vector<kernel_record> records;
    std::vector<launch_call> calls;
    for (std::uint32_t i = 0; i < 5000; ++i) {
        records.push_back(kernel(i * 1000, i * 1000 + 300, 2 * i + 1, "flush"));
        records.push_back(kernel(i * 1000 + 400, i * 1000 + 900, 2 * i + 2, "k"));
        calls.push_back({2 * i + 2, i});
    }
    const auto start = std::chrono::steady_clock::now();
    for (int batch = 0; batch < 100; ++batch)
        CHECK(attribute_samples(records, calls, 5000, true).problem.empty());
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("a timed launch CUPTI has no record for is counted, not timed", "[timing]") {
    const std::vector<kernel_record> records{kernel(1000, 3000, 2)};
    const attributed_samples a = attribute_samples(records, {{2, 0}, {5, 1}}, 2, true);
    CHECK(a.missing == 1);
    CHECK(a.samples_ms.size() == 1);
    CHECK(a.problem.empty());
}

TEST_CASE("the median's relative standard error comes from its order-statistic interval",
          "[timing]") {
    CHECK_FALSE(median_relative_standard_error({1, 2, 3, 4}));
    CHECK(*median_relative_standard_error(std::vector<double>(50, 2.0)) == 0);
    // 100 samples 1..100: ranks 40 and 61 bound the 95% interval, median 50.5.
    std::vector<double> s;
    for (int i = 1; i <= 100; ++i) s.push_back(i);
    CHECK(*median_relative_standard_error(s) == Approx((61.0 - 40.0) / (2 * 1.959964) / 50.5));
    // Four times the samples halve the noise, near enough.
    std::vector<double> more;
    for (int r = 0; r < 4; ++r) more.insert(more.end(), s.begin(), s.end());
    CHECK(*median_relative_standard_error(more) ==
          Approx(*median_relative_standard_error(s) / 2).epsilon(0.15));
}

TEST_CASE("the stopping rule: a fixed count, or the noise target with its floors and cap",
          "[timing]") {
    timing_config t;
    t.iterations = 50;
    CHECK_FALSE(stop_now(t, std::vector<double>(49, 1.0)));
    CHECK(stop_now(t, std::vector<double>(50, 1.0)) == stop_rule::fixed);
    t.mode = timing_mode::adaptive;
    t.min_samples = 20;
    t.min_time_ms = 10;
    t.target_rse = 0.005;
    CHECK_FALSE(stop_now(t, std::vector<double>(19, 1.0)));  // too few samples
    CHECK_FALSE(stop_now(t, std::vector<double>(25, 0.1)));  // 2.5 ms of GPU time
    CHECK(stop_now(t, std::vector<double>(25, 1.0)) == stop_rule::target_noise);
    std::vector<double> noisy;
    for (int i = 0; i < 49; ++i) noisy.push_back(1.0 + (i % 7) * 0.1);
    CHECK_FALSE(stop_now(t, noisy));  // ~6% noise: not yet
    noisy.push_back(1.0);
    CHECK(stop_now(t, noisy) == stop_rule::cap);
}

TEST_CASE("NVML's reason bits have their names and only slowdowns count as throttling",
          "[timing]") {
    CHECK(throttle_reason_names(0x1 | 0x4 | 0x40) ==
          std::vector<std::string>{"gpu_idle", "sw_power_cap", "hw_thermal_slowdown"});
    CHECK(throttle_reason_names(1ull << 12) == std::vector<std::string>{"bit_12"});
    CHECK(slowing_reasons(0x1 | 0x2 | 0x10 | 0x100) == 0);
    CHECK(slowing_reasons(0x4 | 0x8 | 0x20 | 0x40 | 0x80) == 0xEC);
}

TEST_CASE("the response's timer, both channels and the GPU state pass the response schema",
          "[timing]") {
    harness_report r;
    r.request_file = "/tmp/request.json";
    r.request_folder = "/tmp";
    r.timer = "cupti";
    r.timer_library = "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13";
    r.gpu_monitor = true;
    case_outcome& c = r.cases.emplace_back();
    c.name = "big";
    c.status = case_run_status::ok;
    c.measured = true;
    c.iterations = 3;
    c.timer = "cupti";
    c.cupti_samples_ms = c.samples_ms = {0.010, 0.011, 0.012};
    c.event_samples_ms = {0.0114, 0.0124, 0.0134};
    c.stats_ms = summarize(c.samples_ms);
    gpu_state s;
    s.sm_clock_mhz = 1980;
    s.mem_clock_mhz = 2619;
    s.temperature_c = 41;
    s.power_w = 120.5;
    s.power_limit_w = 700;
    s.throttle_mask = 0x1;
    c.state_before = s;
    s.throttle_mask = 0x4;
    c.state_after = s;
    const rapidjson::Document doc = parse_json(write_response_json(r), "response.json");
    CHECK_NOTHROW(validate_json(doc, embedded_schema("response"), "response.json"));
    const auto& t = doc["cases"][0]["timing"];
    CHECK(std::string(t["timer"].GetString()) == "cupti");
    CHECK(t["event_overhead_ms"].GetDouble() == Approx(0.0014));
    CHECK(t["channels_agree"].GetBool());
    CHECK(t["gpu_state"]["throttled"].GetBool());
    CHECK(t["gpu_state"]["throttle_reasons"][0] == "sw_power_cap");
    CHECK(std::string(doc["timer"]["name"].GetString()) == "cupti");
    CHECK(std::string(doc["gpu_monitor"]["source"].GetString()) == "nvml");
    // Clocks 10 us apart on a 10 us kernel disagree beyond the events' own cost.
    r.cases[0].event_samples_ms = {0.030, 0.030, 0.030};
    const rapidjson::Document apart = parse_json(write_response_json(r), "response.json");
    CHECK_FALSE(apart["cases"][0]["timing"]["channels_agree"].GetBool());
}
