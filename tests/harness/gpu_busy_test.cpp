// GPU busy time, measured (issue 29): the union of kernel spans, the response's gpu_busy read
// back, the optimizer's per-GPU meter, run.json's gpu_busy and the closing line after a fake
// run, and on a real GPU a response whose busy time holds its timed samples.
#include <catch2/catch.hpp>
#include <functional>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "harness/harness_report.hpp"
#include "harness/kernel_records.hpp"
#include "orchestrator/artifacts/console_report.hpp"
#include "orchestrator/contract/response_reader.hpp"
#include "orchestrator/evaluation/gpu_busy_meter.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

using spans = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// A run-mode report of one measured case, as the harness fills it.
harness_report busy_report(const std::filesystem::path& folder) {
    harness_report r;
    r.request_file = folder / "request.json";
    r.request_folder = folder;
    r.entry = "scale";
    case_outcome& c = r.cases.emplace_back();
    c.name = "first";
    c.status = case_run_status::ok;
    c.measured = true;
    c.iterations = 3;
    c.samples_ms = {1.0, 2.0, 3.0};
    c.stats_ms = summarize(c.samples_ms);
    c.timer = "cupti";
    c.cupti_samples_ms = c.samples_ms;
    r.timer = "cupti";
    r.gpu_busy = {"cupti", 7.25, 12, ""};
    return r;
}

// The report's response, changed by `edit`, written and read back.
harness_response read_edited(const test::scratch_folder& dir,
                             const std::function<void(rapidjson::Document&)>& edit) {
    rapidjson::Document doc = parse_json(write_response_json(busy_report(dir.path())), "written");
    edit(doc);
    write_file_atomic(dir / "response.json", to_pretty_json(doc));
    return read_response(dir / "response.json");
}

// The message read_response throws for a response edited so.
std::string refusal(const std::function<void(rapidjson::Document&)>& edit) {
    test::scratch_folder dir;
    try {
        read_edited(dir, edit);
    } catch (const json_error& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("busy_union counts overlapping and nested kernels once and gaps not at all") {
    SECTION("no kernels") {
        const busy_time t = busy_union({});
        CHECK(t.busy_ns == 0);
        CHECK(t.kernels == 0);
        CHECK(t.first_start_ns == 0);
        CHECK(t.last_end_ns == 0);
    }
    SECTION("one kernel") {
        const busy_time t = busy_union({{100, 250}});
        CHECK(t.busy_ns == 150);
        CHECK(t.kernels == 1);
        CHECK(t.first_start_ns == 100);
        CHECK(t.last_end_ns == 250);
    }
    SECTION("two overlapping kernels, given out of order") {
        const busy_time t = busy_union({{150, 300}, {100, 200}});
        CHECK(t.busy_ns == 200);
        CHECK(t.kernels == 2);
        CHECK(t.first_start_ns == 100);
        CHECK(t.last_end_ns == 300);
    }
    SECTION("a kernel nested inside another") {
        CHECK(busy_union({{100, 500}, {200, 300}}).busy_ns == 400);
        CHECK(busy_union({{200, 300}, {100, 500}, {250, 260}}).busy_ns == 400);
    }
    SECTION("gaps between kernels are idle; kernels that touch are one run") {
        const busy_time t = busy_union({{0, 10}, {10, 20}, {50, 60}, {100, 130}});
        CHECK(t.busy_ns == 20 + 10 + 30);
        CHECK(t.kernels == 4);
        CHECK(t.last_end_ns == 130);
    }
    SECTION("an unfinished record (end before start) is counted as a kernel of no time") {
        const busy_time t = busy_union({{100, 0}, {200, 260}});
        CHECK(t.busy_ns == 60);
        CHECK(t.kernels == 2);
    }
}

TEST_CASE("a response's gpu_busy reads back, one from an older harness reads as absent") {
    test::scratch_folder dir;
    const harness_response r = read_edited(dir, [](rapidjson::Document&) {});
    REQUIRE(r.gpu_busy);
    CHECK(r.gpu_busy->ms == 7.25);
    CHECK(r.gpu_busy->kernels == 12);
    CHECK(r.gpu_busy->source == gpu_busy_source::cupti);
    CHECK_FALSE(r.gpu_busy->note);
    const harness_response unmeasured = read_edited(dir, [](rapidjson::Document& doc) {
        doc["gpu_busy"]["ms"].SetNull();
        doc["gpu_busy"]["kernels"].SetNull();
        doc["gpu_busy"]["source"].SetString("none");
        doc["gpu_busy"]["note"].SetString("a profiler is injected");
    });
    REQUIRE(unmeasured.gpu_busy);
    CHECK_FALSE(unmeasured.gpu_busy->ms);
    CHECK(unmeasured.gpu_busy->source == gpu_busy_source::none);
    CHECK(unmeasured.gpu_busy->note == "a profiler is injected");
    const harness_response older =
        read_edited(dir, [](rapidjson::Document& doc) { doc.RemoveMember("gpu_busy"); });
    CHECK_FALSE(older.gpu_busy);
}

TEST_CASE("a gpu_busy of the wrong kind is refused in one line naming the field") {
    const std::string ms =
        refusal([](rapidjson::Document& doc) { doc["gpu_busy"]["ms"].SetString("fast"); });
    CHECK(ms == "response.json: field gpu_busy.ms: expected a number, found a string");
    CHECK(ms.find('\n') == std::string::npos);
    const std::string source =
        refusal([](rapidjson::Document& doc) { doc["gpu_busy"]["source"].SetString("guessed"); });
    CHECK_THAT(source, Catch::StartsWith("response.json: field gpu_busy.source: expected one of "
                                         "cupti, simulated, none"));
    const std::string block =
        refusal([](rapidjson::Document& doc) { doc["gpu_busy"].SetString("busy"); });
    CHECK_THAT(block, Catch::Contains("field gpu_busy"));
    CHECK_THAT(refusal([](rapidjson::Document& doc) { doc["gpu_busy"]["ms"].SetDouble(-1); }),
               Catch::Contains("gpu_busy"));
}

TEST_CASE("the meter sums each GPU's runs, the search's share apart, and names its source") {
    gpu_busy_meter m({0, 1});
    m.add(0, 5.0, 10, "cupti");  // the reference, before the search
    m.begin_search();
    m.add(0, 20.0, 40, "cupti");
    m.add(1, std::nullopt, 0, "");  // a crash: no figure
    m.add(1, 0.0, 0, "none");       // a compile error: no kernel ran
    m.end_search();
    m.add(0, 2.5, 5, "cupti");  // an evidence run
    const gpu_busy_record r = m.record();
    CHECK(r.source == "cupti");
    REQUIRE(r.gpus.size() == 2);
    CHECK(r.gpus[0].device == 0);
    CHECK(r.gpus[0].busy_ms == 27.5);
    CHECK(r.gpus[0].search_busy_ms == 20.0);
    CHECK(r.gpus[0].kernels == 55);
    CHECK(r.gpus[0].search_kernels == 40);
    CHECK(r.gpus[0].harness_runs == 3);
    CHECK(r.gpus[1].harness_runs == 2);
    CHECK(r.gpus[1].unmeasured_runs == 1);
    CHECK(r.search_wall_s > 0);
    REQUIRE(r.busy_fraction);
    CHECK(*r.busy_fraction == Approx(0.020 / (r.search_wall_s * 2)));
    m.add(1, 1.0, 1, "simulated");
    CHECK(m.record().source == "mixed");
    const gpu_busy_record none = gpu_busy_meter({0}).record();
    CHECK(none.source == "none");
    CHECK_FALSE(none.busy_fraction);
    CHECK(none.gpus.size() == 1);
}

TEST_CASE("the closing line gives the search's busy share, its CUPTI time and kernels") {
    gpu_busy_record g;
    g.source = "cupti";
    g.search_wall_s = 14.2;
    g.busy_fraction = 8.7 / 14.2;
    gpu_busy_totals t;
    t.search_busy_ms = 8700;
    t.search_kernels = 1234;
    t.harness_runs = 40;
    g.gpus = {t};
    CHECK(gpu_busy_line(g) ==
          "gpu busy: 61% of the search's 14.2 s on GPU 0 (CUPTI: 8.7 s in 1,234 kernels)\n");
    g.gpus[0].unmeasured_runs = 2;
    CHECK_THAT(gpu_busy_line(g),
               Catch::EndsWith("; 2 of 40 harness runs gave no figure: a floor)\n"));
    gpu_busy_totals second;
    second.device = 1;
    second.search_busy_ms = 5000;
    second.search_kernels = 1000;
    g.gpus = {t, second};
    g.busy_fraction = 13.7 / (14.2 * 2);
    CHECK(gpu_busy_line(g) ==
          "gpu busy: 48% of the search's 14.2 s on GPUs 0, 1 (GPU 0 61%, GPU 1 35%; CUPTI: 13.7 s "
          "in 2,234 kernels)\n");
    g.source = "simulated";
    CHECK(gpu_busy_line(g) == "gpu busy: simulated (the fake harness measured nothing)\n");
    g.source = "none";
    g.busy_fraction.reset();
    CHECK(gpu_busy_line(g) == "gpu busy: not measured (none of 40 harness runs gave a figure)\n");
}

TEST_CASE("a fake run's run.json says its busy time was simulated, within the search's wall time",
          "[integration]") {
    test::optimizer_fixture f;
    const auto r = test::run_optimizer(f.args({"--max-iterations", "2", "--no-evidence"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output,
               Catch::Contains("\ngpu busy: simulated (the fake harness measured nothing)\n"));
    const auto run = test::read_checked_json(f.run() / "run.json", "run");
    CHECK_FALSE(run.HasMember("gpu_busy_ms_estimate"));
    REQUIRE(run.HasMember("gpu_busy"));
    const auto& busy = run["gpu_busy"];
    CHECK(std::string(busy["source"].GetString()) == "simulated");
    REQUIRE(busy["gpus"].Size() == 1);
    const auto& gpu = busy["gpus"][0];
    CHECK(gpu["device"].GetInt() == 0);
    CHECK(gpu["busy_s"].GetDouble() > 0);
    CHECK(gpu["search_busy_s"].GetDouble() > 0);
    CHECK(gpu["search_busy_s"].GetDouble() <= gpu["busy_s"].GetDouble());
    CHECK(gpu["harness_runs"].GetInt() >= 3);  // the reference, the initial kernel, a candidate
    CHECK(gpu["unmeasured_runs"].GetInt() == 0);
    CHECK(busy["search_wall_s"].GetDouble() > 0);
    CHECK(busy["search_wall_s"].GetDouble() <= run["wall_s"].GetDouble());
    REQUIRE(busy["busy_fraction"].IsNumber());
    CHECK(busy["busy_fraction"].GetDouble() > 0);
    CHECK(busy["busy_fraction"].GetDouble() <= 1);
    const auto response =
        test::read_checked_json(f.run() / "candidates/iter-00/attempt-0/response.json", "response");
    CHECK(std::string(response["gpu_busy"]["source"].GetString()) == "simulated");
    CHECK(response["gpu_busy"]["ms"].GetDouble() > 0);
}

TEST_CASE("a real response's busy time holds its timed samples and fits in its wall time",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    test::scratch_folder dir;
    dir.write("k.cu", R"(
extern "C" __global__ void copy_f32(const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = x[i]; })");
    auto request = [](bool measure) {
        return std::string(
                   R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": "copy_f32" },
      "timing": { "warmup": 5, "iterations": 50 },
      "cases": [ { "name": "copy", "measure": )") +
               (measure ? "true" : "false") + R"(, "launch": { "grid": [1056], "block": [256] },
      "args": [ { "name": "x", "dtype": "f32", "count": 4194304, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": 1} },
                { "name": "y", "dtype": "f32", "count": 4194304, "output_file": "y.bin" },
                { "name": "n", "dtype": "i32", "value": 4194304 } ] } ] })";
    };
    auto run = [&](bool measure) {
        dir.write("req.json", request(measure));
        const auto r =
            test::run_harness({(dir / "req.json").string(), "--cache-dir", test::test_cache_dir()});
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
        return test::read_response(dir / "response.json");
    };
    const auto doc = run(true);
    const auto& busy = doc["gpu_busy"];
    if (std::string(busy["source"].GetString()) != "cupti") {
        const std::string note = busy["note"].IsString() ? busy["note"].GetString() : "";
        REQUIRE_THAT(note, Catch::StartsWith("CUPTI not found"));
        WARN("skipped: " << note);
        return;
    }
    double timed_ms = 0;
    for (const auto& s : doc["cases"][0]["timing"]["samples_ms"].GetArray())
        timed_ms += s.GetDouble();
    INFO("busy " << busy["ms"].GetDouble() << " ms in " << busy["kernels"].GetInt()
                 << " kernels; timed " << timed_ms << " ms; wall " << doc["wall_ms"].GetDouble()
                 << " ms");
    CHECK(busy["ms"].GetDouble() >= timed_ms);
    CHECK(busy["ms"].GetDouble() <= doc["wall_ms"].GetDouble());
    CHECK(busy["kernels"].GetInt() > 55);  // 5 warm-up + 50 timed, and the support kernels
    // An untimed run (the reference's kind) still counts its generation and launch.
    const auto untimed = run(false);
    CHECK(std::string(untimed["gpu_busy"]["source"].GetString()) == "cupti");
    CHECK(untimed["gpu_busy"]["ms"].GetDouble() > 0);
    CHECK(untimed["gpu_busy"]["ms"].GetDouble() <= untimed["wall_ms"].GetDouble());
}
