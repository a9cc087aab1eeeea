#include "orchestrator/contract/response_reader.hpp"

#include <catch2/catch.hpp>

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
