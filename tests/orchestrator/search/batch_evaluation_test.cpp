// A batch on several GPUs and compiled ahead (orchestrator/search/batch_evaluation), with
// measurements that only sleep and note when they ran: no GPU never times two things at once,
// records come in batch order, a stop or an error ends the batch cleanly; compile-ahead runs
// fake-harness --compile-only on the candidates no GPU has taken yet (served in memory:
// support/in_memory_harness).
#include "orchestrator/search/batch_evaluation.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <thread>

#include "in_memory_harness.hpp"
#include "orchestrator/commands/device_list.hpp"
#include "orchestrator/search/device_baselines.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

using clock_type = std::chrono::steady_clock;

struct run_span {
    int job = 0, device = 0;
    clock_type::time_point start, end;
};

struct batch_fixture {
    test::scratch_folder dir;
    manifest m = read_manifest(std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/input_cases.json");
    std::unique_ptr<process_runner> runner =
        std::make_unique<test::in_memory_harness>();  // no process
    std::vector<candidate> candidates;
    std::vector<batch_job> jobs;
    std::mutex mutex;
    std::vector<run_span> spans;
    std::vector<int> recorded;

    explicit batch_fixture(int n) {
        candidate c;
        c.source = test::read_text(std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/initial.cu");
        c.entry = "matmul_f32";
        c.proposer = proposer_kind::autotune;
        for (int i = 0; i < n; ++i) {
            c.label = "c" + std::to_string(i);
            c.defines["BLOCK_X"] = std::to_string(8 + i);
            candidates.push_back(c);
        }
        for (int i = 0; i < n; ++i) jobs.push_back({&candidates[i], i, true});
    }
    std::vector<measuring_device> devices(std::vector<int> indices) const {
        evaluator_settings s;
        s.harness = CUOPT_FAKE_HARNESS_BINARY;
        s.arch = "sm_90";
        parallel_settings p;
        for (int d : indices) p.devices.emplace_back(d, "");
        return measuring_devices(attempt_evaluator(m, s, *runner), p);
    }
    // A measurement that sleeps `ms` (job 0 `first_ms`) and notes when and where it ran.
    measure_function sleeping(int ms, int first_ms = -1) {
        return [this, ms, first_ms](const batch_job& j, const measuring_device& d) {
            run_span s{j.attempt, d.index, clock_type::now(), {}};
            std::this_thread::sleep_for(
                std::chrono::milliseconds(j.attempt == 0 && first_ms >= 0 ? first_ms : ms));
            s.end = clock_type::now();
            std::lock_guard<std::mutex> lock(mutex);
            spans.push_back(s);
            attempt_result r;
            r.attempt = j.attempt;
            r.device = d.index;
            return r;
        };
    }
    record_function recording() {
        return [this](attempt_result r) { recorded.push_back(r.attempt); };
    }
    double seconds_for(const std::vector<measuring_device>& devices, int ms) {
        const auto start = clock_type::now();
        evaluate_batch(jobs, devices, {}, sleeping(ms), recording(), nullptr);
        return std::chrono::duration<double>(clock_type::now() - start).count();
    }
};

bool overlaps(const run_span& a, const run_span& b) {
    return a.start < b.end && b.start < a.end;
}

}  // namespace

TEST_CASE("two devices measure a batch in about half the time, never two jobs at once on one",
          "[batch]") {
    batch_fixture f(8);
    const double one = f.seconds_for(f.devices({0}), 60);
    f.spans.clear();
    f.recorded.clear();
    const double two = f.seconds_for(f.devices({0, 1}), 60);
    INFO("one device " << one << " s, two " << two << " s");
    CHECK(two < 0.7 * one);
    REQUIRE(f.spans.size() == 8);
    for (const run_span& a : f.spans)
        for (const run_span& b : f.spans)
            if (&a != &b && a.device == b.device) CHECK_FALSE(overlaps(a, b));
    CHECK(std::count_if(f.spans.begin(), f.spans.end(),
                        [](const run_span& s) { return s.device == 1; }) >= 2);
    CHECK(f.recorded == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("a job that finishes early is recorded only after every job before it", "[batch]") {
    batch_fixture f(4);
    std::vector<std::pair<int, int>> order;  // (job recorded, jobs measured by then)
    evaluate_batch(
        f.jobs, f.devices({0, 1}), {}, f.sleeping(20, 300),
        [&f, &order](attempt_result r) {
            std::lock_guard<std::mutex> lock(f.mutex);
            order.emplace_back(r.attempt, static_cast<int>(f.spans.size()));
        },
        nullptr);
    REQUIRE(order.size() == 4);
    for (int i = 0; i < 4; ++i) CHECK(order[i].first == i);
    CHECK(order[0].second == 4);  // job 0 (slow) finished last: every other waited for it
}

TEST_CASE("a GPU measures its next job while the last one's record is written", "[batch]") {
    batch_fixture f(3);
    clock_type::time_point first_recorded{};
    evaluate_batch(
        f.jobs, f.devices({0}), {}, f.sleeping(10),
        [&](attempt_result r) {
            if (r.attempt == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
            std::lock_guard<std::mutex> lock(f.mutex);
            if (r.attempt == 0) first_recorded = clock_type::now();
            f.recorded.push_back(r.attempt);
        },
        nullptr);
    REQUIRE(f.spans.size() == 3);
    CHECK(f.recorded == std::vector<int>{0, 1, 2});
    // Job 0's slow record (history, artifacts) did not hold the GPU: jobs 1 and 2 were
    // measured before it was done.
    for (const run_span& s : f.spans)
        if (s.job > 0) CHECK(s.end < first_recorded);
}

TEST_CASE("a stop starts no new job, the running ones finish and are recorded in order",
          "[batch]") {
    batch_fixture f(8);
    std::atomic<bool> stop{false};
    evaluate_batch(
        f.jobs, f.devices({0, 1}), {}, f.sleeping(40),
        [&](attempt_result r) {
            f.recorded.push_back(r.attempt);
            if (r.attempt == 2) stop = true;
        },
        &stop);
    // Job 2's record sets the stop, on the recorder thread; the devices finish jobs 2 and 3
    // together and may each have taken their next (4 and 5) before that record was made.
    // Nothing after.
    CHECK(f.recorded.size() >= 3);
    CHECK(f.recorded.size() <= 6);
    for (std::size_t i = 0; i < f.recorded.size(); ++i) CHECK(f.recorded[i] == static_cast<int>(i));
}

TEST_CASE("an error in one job is rethrown after the batch, and no job starts after it",
          "[batch]") {
    batch_fixture f(6);
    const measure_function measure = [&f](const batch_job& j, const measuring_device& d) {
        if (j.attempt == 1) throw std::runtime_error("disk full");
        return f.sleeping(30)(j, d);
    };
    CHECK_THROWS_WITH(
        evaluate_batch(f.jobs, f.devices({0, 1}), {}, measure, f.recording(), nullptr),
        "disk full");
    CHECK(f.spans.size() <= 3);
}

TEST_CASE(
    "compile-ahead compiles the jobs no GPU has taken yet, before their runs, and the run carries "
    "its record",
    "[batch]") {
    batch_fixture f(6);
    const test::scoped_env trace("CUOPT_FAKE_TRACE", (f.dir / "trace.txt").c_str());
    std::vector<attempt_result> results;
    const compile_ahead_settings ahead{2, f.dir / "compile-ahead"};
    evaluate_batch(
        f.jobs, f.devices({0}), ahead, f.sleeping(150),
        [&results](attempt_result r) { results.push_back(std::move(r)); }, nullptr);
    REQUIRE(results.size() == 6);
    CHECK_FALSE(results[0].compile_ahead);  // the GPU took it at once
    for (std::size_t i = 1; i < results.size(); ++i) {
        INFO("job " << i);
        REQUIRE(results[i].compile_ahead);
        CHECK(results[i].compile_ahead->ok);
        CHECK(results[i].compile_ahead->wall_ms > 0);
    }
    const std::string log = test::read_text(f.dir / "trace.txt");
    std::size_t compiles = 0;
    for (std::size_t at = 0; (at = log.find("compile device=0", at)) != std::string::npos; ++at)
        ++compiles;
    CHECK(compiles == 5);
    CHECK_FALSE(fs::exists(f.dir / "compile-ahead"));  // scratch requests removed
}

TEST_CASE("compile-ahead leaves out what it cannot help: taken jobs, uncacheable options",
          "[batch]") {
    CHECK(cacheable_options({"--use_fast_math", "-DX=1"}));
    CHECK_FALSE(cacheable_options({"-I/usr/local/cuda/include"}));
    CHECK_FALSE(cacheable_options({"--include-path=/x"}));
    CHECK_FALSE(cacheable_options({"--pre-include=x.h"}));
    CHECK(default_compile_threads(1) >= 1);
    CHECK(default_compile_threads(1000) == 1);
    batch_fixture f(2);
    const test::scoped_env trace("CUOPT_FAKE_TRACE", (f.dir / "trace.txt").c_str());
    const compile_ahead_settings ahead{4, f.dir / "compile-ahead"};
    evaluate_batch(f.jobs, f.devices({0, 1}), ahead, f.sleeping(50), f.recording(), nullptr);
    CHECK_FALSE(fs::exists(f.dir / "trace.txt"));  // two jobs, two GPUs: nothing to compile ahead
}

TEST_CASE("the --devices list holds distinct GPU indices, and compile threads follow the flags",
          "[batch]") {
    CHECK(device_list_problem("0,1").empty());
    CHECK(device_list_problem(" 2 , 0 ").empty());
    CHECK(parse_device_list(" 2 , 0 ") == std::vector<int>{2, 0});
    CHECK_THAT(device_list_problem("0,0"), Catch::Contains("GPU 0 is named twice"));
    CHECK_THAT(device_list_problem("0,00"), Catch::Contains("GPU 0 is named twice"));  // by value
    CHECK_THAT(device_list_problem("1,0001"), Catch::Contains("GPU 1 is named twice"));
    CHECK(device_list_problem("9999") == "GPU 9999: expected an index from 0 to 1023");
    CHECK(device_list_problem("1023").empty());
    CHECK_THAT(device_list_problem("0,x"), Catch::Contains("expected GPU indices"));
    CHECK_THAT(device_list_problem(""), Catch::Contains("expected GPU indices"));
    CHECK_THAT(device_list_problem("0,,1"), Catch::Contains("expected GPU indices"));
    optimizer_options o;
    o.device = 3;
    CHECK(devices_of(o) == std::vector<int>{3});
    o.devices = "1,0";
    CHECK(devices_of(o) == std::vector<int>{1, 0});
    o.compile_threads = 5;
    CHECK(compile_threads_of(o) == 5);
    o.no_compile_ahead = true;
    CHECK(compile_threads_of(o) == 0);
}

TEST_CASE("each attempt is scored against the initial kernel on its own device", "[batch]") {
    search_outcome o;
    attempt_result initial;
    initial.device = 0;
    initial.verdict = verdict::valid;
    initial.geomean_ms = 2.0;
    o.history.push_back(initial);
    o.initial = 0;
    attempt_result slower_gpu = initial;
    slower_gpu.device = 1;
    slower_gpu.geomean_ms = 2.2;
    o.baselines.push_back(slower_gpu);
    attempt_result on_1;
    on_1.device = 1;
    on_1.verdict = verdict::valid;
    on_1.geomean_ms = 1.1;
    CHECK(*initial_geomean_ms(o, 1) == Approx(2.2));
    CHECK(*normalised_geomean_ms(o, on_1) == Approx(1.0));  // 2x over its own device's initial
    attempt_result on_0 = on_1;
    on_0.device = 0;
    CHECK(*normalised_geomean_ms(o, on_0) == 1.1);  // the first device's own scale, exactly
    CHECK_FALSE(initial_geomean_ms(o, 7));
    CHECK(*normalised_geomean_ms(o, [] {
        attempt_result r;
        r.device = 7;
        r.geomean_ms = 3.0;
        return r;
    }()) == 3.0);  // no initial there: its own figure
}
