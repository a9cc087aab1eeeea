#include "orchestrator/contract/response_reader.hpp"

#include <catch2/catch.hpp>
#include <functional>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "harness/harness_report.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

// A report as the harness fills it after a context-lost run of two cases.
harness_report sample_report(const std::filesystem::path& folder) {
    harness_report r;
    r.request_file = folder / "request.json";
    r.request_folder = folder;
    r.entry = "scale";
    compile_result c;
    c.ok = true;
    c.log = "ptxas info: Used 12 registers";
    c.wall_ms = 4.5;
    c.ptxas.registers = 12;
    r.compile = c;
    case_outcome& ok = r.cases.emplace_back();
    ok.name = "first";
    ok.status = case_run_status::ok;
    ok.measured = true;
    ok.warmup = 2;
    ok.iterations = 3;
    ok.samples_ms = {1.0, 2.0, 3.0};
    ok.stats_ms = summarize(ok.samples_ms);
    ok.timer = "events";
    ok.event_samples_ms = ok.samples_ms;
    output_record o;
    o.arg = "y", o.role = "output", o.file = folder / "outputs/first.y.bin", o.type = dtype::f16,
    o.count = 4;
    o.sha256 = std::string(64, 'a');
    o.unwritten = 1;
    ok.outputs.push_back(o);
    o.arg = "x", o.role = "input_dump", o.file = folder / "inputs/first.x.bin";
    ok.outputs.push_back(o);
    case_outcome& lost = r.cases.emplace_back();
    lost.name = "second";
    lost.status = case_run_status::skipped;
    lost.error = "skipped: context lost";
    r.fail(exit_code::context_lost, "case 'first' lost the CUDA context");
    return r;
}

// The same as issue 12's harness reports it: CUPTI timed the first case with CUDA events beside
// it, the adaptive loop met its noise target, and NVML saw the power cap hold the clocks down
// by the end of the loop.
harness_report timed_report(const std::filesystem::path& folder) {
    harness_report r = sample_report(folder);
    r.timer = "cupti";
    r.timer_library = "libcupti.so.13";
    r.gpu_monitor = true;
    case_outcome& c = r.cases[0];
    c.timer = "cupti";
    c.cupti_samples_ms = c.samples_ms;
    c.event_samples_ms = {1.0013, 2.0013, 3.0013};
    c.rule = stop_rule::target_noise;
    c.relative_standard_error = 0.004;
    gpu_state before;
    before.sm_clock_mhz = 1980, before.mem_clock_mhz = 3201, before.temperature_c = 41;
    before.power_w = 118.5, before.power_limit_w = 700, before.throttle_mask = 0x1;  // idle
    gpu_state after = before;
    after.sm_clock_mhz = 1410, after.temperature_c = 63, after.power_w = 699.5;
    after.throttle_mask = 0x4;  // sw_power_cap
    c.state_before = before;
    c.state_after = after;
    return r;
}

// Writes the report's response, changed by `edit`, and reads it back.
harness_response read_edited(const test::scratch_folder& dir, const harness_report& report,
                             const std::function<void(rapidjson::Document&)>& edit) {
    rapidjson::Document doc = parse_json(write_response_json(report), "written");
    edit(doc);
    write_file_atomic(dir / "response.json", to_pretty_json(doc));
    return read_response(dir / "response.json");
}

}  // namespace

TEST_CASE("a response the harness writes reads back typed, with statuses, timing and outputs") {
    test::scratch_folder dir;
    write_file_atomic(dir / "response.json", write_response_json(sample_report(dir.path())));
    const harness_response r = read_response(dir / "response.json");
    CHECK(r.status == response_status::cuda_error);
    CHECK(r.exit_code == to_int(exit_code::context_lost));
    CHECK(r.error == "case 'first' lost the CUDA context");
    REQUIRE(r.compile);
    CHECK(r.compile->ok);
    CHECK(r.compile->wall_ms == 4.5);
    CHECK(r.compile->registers == 12);
    REQUIRE(r.cases.size() == 2);
    const response_case& a = r.cases[0];
    CHECK(a.status == case_run_status::ok);
    REQUIRE(a.timing);
    CHECK(a.timing->median_ms == 2.0);
    CHECK(a.timing->samples_ms == std::vector<double>{1.0, 2.0, 3.0});
    REQUIRE(a.outputs.size() == 2);
    CHECK(a.outputs[0].file == dir / "outputs/first.y.bin");
    CHECK(a.outputs[0].type == dtype::f16);
    CHECK(a.outputs[0].unwritten == 1);
    CHECK_FALSE(a.outputs[0].is_input_dump);
    CHECK(a.outputs[1].is_input_dump);
    CHECK(r.cases[1].status == case_run_status::skipped);
    CHECK_FALSE(r.cases[1].timing);
}

TEST_CASE("a response that breaks the schema is refused naming the file and the field") {
    test::scratch_folder dir;
    std::string text = write_response_json(sample_report(dir.path()));
    text.replace(text.find("\"cuda_error\""), 12, "\"on_fire\"");
    write_file_atomic(dir / "response.json", text);
    try {
        read_response(dir / "response.json");
        FAIL("no error");
    } catch (const json_error& e) {
        CHECK_THAT(e.what(), Catch::Contains("response.json: field status"));
    }
}

TEST_CASE(
    "a response from a harness before issue 12, without a timer, clocks or GPU state, still "
    "reads, every new field absent") {
    test::scratch_folder dir;
    const harness_response r =
        read_edited(dir, timed_report(dir.path()), [](rapidjson::Document& doc) {
            doc.RemoveMember("timer");
            doc.RemoveMember("gpu_monitor");
            rapidjson::Value& t = doc["cases"][0]["timing"];
            for (const char* k :
                 {"timer", "timer_note", "channels", "event_overhead_ms", "channels_agree",
                  "stop_rule", "relative_standard_error", "gpu_time_ms", "gpu_state"})
                t.RemoveMember(k);
        });
    CHECK_FALSE(r.timer);
    CHECK_FALSE(r.gpu_monitor);
    REQUIRE(r.cases[0].timing);
    CHECK(r.cases[0].timing->median_ms == 2.0);
    const response_timing_details& d = r.cases[0].timing->details;
    CHECK_FALSE(d.timer);
    CHECK_FALSE(d.cupti);
    CHECK_FALSE(d.events);
    CHECK_FALSE(d.channels_agree);
    CHECK_FALSE(d.stop_rule);
    CHECK_FALSE(d.relative_standard_error);
    CHECK_FALSE(d.gpu_time_ms);
    CHECK_FALSE(d.gpu_state);
}

TEST_CASE(
    "issue 12's timer, both clocks, the stop rule, the noise and the GPU state read back typed") {
    test::scratch_folder dir;
    write_file_atomic(dir / "response.json", write_response_json(timed_report(dir.path())));
    const harness_response r = read_response(dir / "response.json");
    REQUIRE(r.timer);
    CHECK(r.timer->name == response_timer_kind::cupti);
    CHECK(r.timer->library == "libcupti.so.13");
    CHECK_FALSE(r.timer->note);
    REQUIRE(r.gpu_monitor);
    CHECK(r.gpu_monitor->source == "nvml");
    REQUIRE(r.cases[0].timing);
    const response_timing_details& d = r.cases[0].timing->details;
    CHECK(d.timer == response_timer_kind::cupti);
    REQUIRE(d.cupti);
    CHECK(d.cupti->median_ms == 2.0);
    CHECK(d.cupti->samples_ms == std::vector<double>{1.0, 2.0, 3.0});
    REQUIRE(d.events);
    CHECK(d.events->median_ms == Approx(2.0013));
    CHECK(d.event_overhead_ms == Approx(0.0013));
    CHECK(d.channels_agree == true);
    CHECK(d.stop_rule == response_stop_rule::target_noise);
    CHECK(d.relative_standard_error == 0.004);
    CHECK(d.gpu_time_ms == 6.0);
    REQUIRE(d.gpu_state);
    CHECK(d.gpu_state->throttled);
    CHECK(d.gpu_state->throttle_reasons == std::vector<std::string>{"sw_power_cap"});
    REQUIRE(d.gpu_state->before);
    CHECK(d.gpu_state->before->throttle_reasons == std::vector<std::string>{"gpu_idle"});
    CHECK(d.gpu_state->before->sm_clock_mhz == 1980);
    REQUIRE(d.gpu_state->after);
    CHECK(d.gpu_state->after->sm_clock_mhz == 1410);
    CHECK(d.gpu_state->after->temperature_c == 63);
    CHECK(d.gpu_state->after->power_w == 699.5);
    CHECK(d.gpu_state->after->power_limit_w == 700);
    CHECK(d.gpu_state->after->throttle_mask == 0x4u);
}

TEST_CASE("an issue 12 field of the wrong kind is refused naming the file and that very field") {
    test::scratch_folder dir;
    const harness_report report = timed_report(dir.path());
    auto refusal = [&](const std::function<void(rapidjson::Document&)>& edit) {
        try {
            read_edited(dir, report, edit);
        } catch (const json_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(
        refusal([](rapidjson::Document& d) {
            d["cases"][0]["timing"]["channels_agree"].SetString("yes");
        }),
        Catch::StartsWith(
            "response.json: field cases[0].timing.channels_agree: expected true or false, found "
            "a string"));
    CHECK_THAT(refusal([](rapidjson::Document& d) { d["timer"]["name"].SetString("sundial"); }),
               Catch::Contains("field timer.name: expected one of cupti, events, found 'sundial'"));
    CHECK_THAT(refusal([](rapidjson::Document& d) {
                   d["cases"][0]["timing"]["stop_rule"].SetString("whenever");
               }),
               Catch::Contains("field cases[0].timing.stop_rule: expected one of fixed, "
                               "target_noise, cap, found 'whenever'"));
    CHECK_THAT(refusal([](rapidjson::Document& d) {
                   d["cases"][0]["timing"]["gpu_state"]["after"]["sm_clock_mhz"].SetDouble(1.5);
               }),
               Catch::Contains("field cases[0].timing.gpu_state.after.sm_clock_mhz: expected an "
                               "integer"));
    CHECK_THAT(
        refusal([](rapidjson::Document& d) {
            d["cases"][0]["timing"]["channels"]["cupti"]["median_ms"].SetString("fast");
        }),
        Catch::Contains("field cases[0].timing.channels.cupti.median_ms: expected a number"));
    CHECK_THAT(refusal([](rapidjson::Document& d) { d["gpu_monitor"].SetInt(3); }),
               Catch::Contains("field gpu_monitor: expected an object, found an integer"));
}

TEST_CASE(
    "the inputs a kernel wrote into read back by name, none from a response without the field") {
    test::scratch_folder dir;
    harness_report report = sample_report(dir.path());
    report.cases[0].inputs_changed = std::vector<std::string>{"x", "w"};
    write_file_atomic(dir / "response.json", write_response_json(report));
    const harness_response r = read_response(dir / "response.json");  // schema-checked
    CHECK(r.cases[0].inputs_changed == std::vector<std::string>{"x", "w"});
    CHECK(r.cases[1].inputs_changed.empty());  // skipped: the harness never got that far
    const rapidjson::Document doc = test::read_response(dir / "response.json");
    CHECK_FALSE(doc["cases"][1].HasMember("inputs_changed"));
    report.cases[0].inputs_changed = std::vector<std::string>{};
    write_file_atomic(dir / "response.json", write_response_json(report));
    CHECK(test::read_response(dir / "response.json")["cases"][0]["inputs_changed"].Size() == 0);
}

TEST_CASE("an inputs_changed that is not a list of distinct names is refused naming the field") {
    test::scratch_folder dir;
    harness_report report = sample_report(dir.path());
    report.cases[0].inputs_changed = std::vector<std::string>{"x"};
    auto refusal = [&](const std::function<void(rapidjson::Document&)>& edit) {
        try {
            read_edited(dir, report, edit);
        } catch (const json_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const std::vector<std::function<void(rapidjson::Document&)>> edits = {
        [](rapidjson::Document& d) { d["cases"][0]["inputs_changed"].SetString("x"); },
        [](rapidjson::Document& d) { d["cases"][0]["inputs_changed"][0].SetInt(5); },
        [](rapidjson::Document& d) {
            d["cases"][0]["inputs_changed"].PushBack("x", d.GetAllocator());  // twice
        },
        [](rapidjson::Document& d) { d["cases"][0]["inputs_changed"][0].SetString(""); }};
    for (const auto& edit : edits)
        CHECK_THAT(refusal(edit),
                   Catch::StartsWith("response.json: field cases[0].inputs_changed"));
}
