#include "orchestrator/contract/request_writer.hpp"

#include <catch2/catch.hpp>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "harness/request_reader.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

// A request as the orchestrator builds one: relative paths, every kind of argument.
request sample_request() {
    request req;
    req.kernel.source_name = "kernel.cu";
    req.kernel.entry = "scale";
    req.kernel.compile_options = {"--use_fast_math"};
    req.kernel.defines = {{"MODE", "fast"}, {"TILE", "32"}};
    req.device = 1;
    req.timing.warmup = 3;
    req.timing.iterations = 7;
    req.timing.fresh_inputs = true;
    run_case& c = req.cases.emplace_back();
    c.name = "small";
    c.launch_index_base = 10;
    c.launch.grid = {4, 2, 1};
    c.launch.block = {128, 1, 1};
    c.launch.dynamic_shared_bytes = 1024;
    kernel_arg& x = c.args.emplace_back();
    x.name = "x", x.is_buffer = true, x.count = 8, x.input_file = "inputs/x.bin";
    kernel_arg& y = c.args.emplace_back();
    y.name = "y", y.is_buffer = true, y.count = 8, y.output_file = "outputs/small.y.bin";
    y.generator = generator_spec{generator_kind::int_range, -3, 5, 0, 1, 0, 1, 1, 77, std::nullopt};
    y.type = dtype::i32;
    y.input_dump_file = "inputs/small.y.bin";
    kernel_arg& s = c.args.emplace_back();
    s.name = "s", s.type = dtype::f32, s.scalar = 0.1;
    kernel_arg& n = c.args.emplace_back();
    n.name = "n", n.type = dtype::i64, n.scalar = std::int64_t{4'000'000'000'000};
    return req;
}

}  // namespace

TEST_CASE("a request the orchestrator writes reads back in the harness exactly as it was built") {
    test::scratch_folder dir;
    dir.write("kernel.cu", "extern \"C\" __global__ void scale() {}\n");
    dir.write_values("inputs/x.bin", std::vector<float>(8, 1.0f));
    const std::string text = write_request_json(sample_request());
    validate_json(parse_json(text, "written"), embedded_schema("request"), "written");
    dir.write("request.json", text);

    const request r = read_request(dir / "request.json");
    const request want = sample_request();
    CHECK(r.kernel.entry == want.kernel.entry);
    CHECK(r.kernel.compile_options == want.kernel.compile_options);
    CHECK(r.kernel.defines == want.kernel.defines);
    CHECK_FALSE(r.kernel.arch_specific);
    CHECK(text.find("arch_specific") == std::string::npos);  // written only when asked for
    CHECK(r.device == 1);
    CHECK(r.timing.warmup == 3);
    CHECK(r.timing.iterations == 7);
    CHECK(r.timing.fresh_inputs);
    REQUIRE(r.cases.size() == 1);
    const run_case& c = r.cases[0];
    CHECK(c.launch_index_base == 10);
    CHECK(c.launch.grid == want.cases[0].launch.grid);
    CHECK(c.launch.block == want.cases[0].launch.block);
    CHECK(c.launch.dynamic_shared_bytes == 1024);
    REQUIRE(c.args.size() == 4);
    CHECK(c.args[0].input_file->filename() == "x.bin");
    CHECK(c.args[1].output_file->lexically_relative(r.folder) == "outputs/small.y.bin");
    CHECK(c.args[1].input_dump_file->lexically_relative(r.folder) == "inputs/small.y.bin");
    REQUIRE(c.args[1].generator);
    CHECK(c.args[1].generator->kind == generator_kind::int_range);
    CHECK(c.args[1].generator->low == -3);
    CHECK(c.args[1].generator->high == 5);
    CHECK(c.args[1].generator->seed == 77);
    CHECK(std::get<double>(c.args[2].scalar) == 0.1);
    CHECK(c.args[2].scalar_bytes == encode_scalar(dtype::f32, 0.1));
    CHECK(std::get<std::int64_t>(c.args[3].scalar) == 4'000'000'000'000);
}

TEST_CASE("integer defines are written as numbers and other defines as strings") {
    const rapidjson::Document d = parse_json(write_request_json(sample_request()), "written");
    CHECK(d["kernel"]["defines"]["TILE"].IsInt());
    CHECK(d["kernel"]["defines"]["TILE"].GetInt() == 32);
    CHECK(std::string(d["kernel"]["defines"]["MODE"].GetString()) == "fast");
    CHECK(std::string(d["cases"][0]["args"][0]["input_file"].GetString()) == "inputs/x.bin");
}

TEST_CASE("absolute paths inside the request's folder are written relative to it") {
    request req = sample_request();
    req.folder = "/runs/run-001/candidates/iter-01/attempt-0";
    req.cases[0].args[0].input_file = req.folder / "inputs/x.bin";
    const rapidjson::Document d = parse_json(write_request_json(req), "written");
    CHECK(std::string(d["cases"][0]["args"][0]["input_file"].GetString()) == "inputs/x.bin");
}

TEST_CASE("a path outside the request's folder is refused, never written as an empty name") {
    request req = sample_request();
    req.cases[0].args[0].input_file = "/elsewhere/x.bin";
    CHECK_THROWS_WITH(write_request_json(req), Catch::Contains("/elsewhere/x.bin is not inside"));
    req.folder = "/runs/run-001";
    CHECK_THROWS_WITH(write_request_json(req),
                      Catch::Contains("is not inside the request's folder '/runs/run-001'"));
}

TEST_CASE(
    "a kernel's display name is written as source_name and names the source in the harness, "
    "which otherwise uses the file's own name") {
    test::scratch_folder dir;
    dir.write("kernel.cu", "extern \"C\" __global__ void scale() {}\n");
    dir.write_values("inputs/x.bin", std::vector<float>(8, 1.0f));
    request req = sample_request();
    req.kernel.display_name = "initial.cu";
    std::string text = write_request_json(req);
    validate_json(parse_json(text, "written"), embedded_schema("request"), "written");
    dir.write("request.json", text);
    request r = read_request(dir / "request.json");
    CHECK(r.kernel.source_name == "kernel.cu");
    CHECK(r.kernel.shown_name() == "initial.cu");

    text = write_request_json(sample_request());
    CHECK(text.find("source_name") == std::string::npos);
    dir.write("request.json", text);
    r = read_request(dir / "request.json");
    CHECK(r.kernel.shown_name() == "kernel.cu");
}

TEST_CASE(
    "a request timed the default way names no mode, timer or adaptive setting, so it reads as "
    "before they existed") {
    const rapidjson::Document d = parse_json(write_request_json(sample_request()), "written");
    const rapidjson::Value& t = d["timing"];
    CHECK(t.MemberCount() == 4);  // warmup, iterations, flush_l2, fresh_inputs
    for (const char* k :
         {"mode", "timer", "min_samples", "min_time_ms", "target_rse", "checked_launch"})
        CHECK_FALSE(t.HasMember(k));
}

TEST_CASE("a checked launch position is written and reads back in the harness as it was built") {
    test::scratch_folder dir;
    dir.write("kernel.cu", "extern \"C\" __global__ void scale() {}\n");
    dir.write_values("inputs/x.bin", std::vector<float>(8, 1.0f));
    request req = sample_request();
    req.timing.checked_launch = 3;
    const std::string text = write_request_json(req);
    const rapidjson::Document d = parse_json(text, "written");
    validate_json(d, embedded_schema("request"), "written");
    CHECK(d["timing"]["checked_launch"].GetInt() == 3);
    dir.write("request.json", text);
    CHECK(read_request(dir / "request.json").timing.checked_launch == 3);
}

TEST_CASE(
    "an adaptive request with the events timer says how it stops and reads back in the harness "
    "as it was built") {
    test::scratch_folder dir;
    dir.write("kernel.cu", "extern \"C\" __global__ void scale() {}\n");
    dir.write_values("inputs/x.bin", std::vector<float>(8, 1.0f));
    request req = sample_request();
    req.timing.iterations = 1000;
    req.timing.mode = timing_mode::adaptive;
    req.timing.timer = timer_choice::events;
    req.timing.min_samples = 30;
    req.timing.target_rse = 0.01;
    const std::string text = write_request_json(req);
    const rapidjson::Document d = parse_json(text, "written");
    validate_json(d, embedded_schema("request"), "written");
    CHECK(std::string(d["timing"]["mode"].GetString()) == "adaptive");
    CHECK(std::string(d["timing"]["timer"].GetString()) == "events");
    CHECK(d["timing"]["min_time_ms"].GetDouble() == 10.0);  // the default, written: adaptive
    dir.write("request.json", text);
    const request r = read_request(dir / "request.json");
    CHECK(r.timing.mode == timing_mode::adaptive);
    CHECK(r.timing.timer == timer_choice::events);
    CHECK(r.timing.iterations == 1000);
    CHECK(r.timing.min_samples == 30);
    CHECK(r.timing.min_time_ms == 10.0);
    CHECK(r.timing.target_rse == 0.01);
    // A fixed request with one adaptive setting changed writes only that one.
    req.timing.mode = timing_mode::fixed;
    req.timing.timer = timer_choice::automatic;
    req.timing.min_samples = 20;
    const rapidjson::Document f = parse_json(write_request_json(req), "written");
    CHECK_FALSE(f["timing"].HasMember("mode"));
    CHECK_FALSE(f["timing"].HasMember("min_samples"));
    CHECK(f["timing"]["target_rse"].GetDouble() == 0.01);
}

TEST_CASE("a kernel's arch_specific is written and reads back in the harness") {
    test::scratch_folder dir;
    dir.write("kernel.cu", "extern \"C\" __global__ void scale() {}\n");
    dir.write_values("inputs/x.bin", std::vector<float>(8, 1.0f));
    request req = sample_request();
    req.kernel.arch_specific = true;
    const std::string text = write_request_json(req);
    validate_json(parse_json(text, "written"), embedded_schema("request"), "written");
    dir.write("request.json", text);
    CHECK(read_request(dir / "request.json").kernel.arch_specific);
}
