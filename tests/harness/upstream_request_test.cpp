#include <catch2/catch.hpp>

#include "common/json_document.hpp"
#include "harness/request_reader.hpp"
#include "request_fixture.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

const char* k_upstream = R"({
  "source": "vec.cu", "kernel": "vec_add", "grid": [2, 1, 1], "block": [256, 1, 1],
  "shared_memory_bytes": 128, "warmup": 3, "iterations": 20,
  "arguments": [
    { "kind": "buffer", "direction": "in", "bytes": 2048, "input_file": "a.bin", "type": "float32" },
    { "kind": "buffer", "direction": "out", "bytes": 2048, "type": "float32" },
    { "kind": "buffer", "direction": "inout", "bytes": 16, "input_file": "raw.bin" },
    { "kind": "scalar", "type": "int32", "value": 512 } ] })";

}  // namespace

TEST_CASE("a v0.0 single-case request is read as one case with the same launch - args and timing") {
    test::scratch_folder dir;
    dir.write("vec.cu",
              "extern \"C\" __global__ void vec_add(const float*, float*, unsigned char*, int) {}");
    dir.write_values("a.bin", std::vector<float>(512, 1.0f));
    dir.write_values("raw.bin", std::vector<unsigned char>(16, 7));
    dir.write("req.json", k_upstream);
    const request r = read_request(dir / "req.json");
    CHECK(r.upstream_layout);
    CHECK(r.kernel.entry == "vec_add");
    CHECK(r.timing.warmup == 3);
    CHECK(r.timing.iterations == 20);
    REQUIRE(r.cases.size() == 1);
    const run_case& c = r.cases[0];
    CHECK(c.launch.grid == std::array<unsigned, 3>{2, 1, 1});
    CHECK(c.launch.dynamic_shared_bytes == 128);
    REQUIRE(c.args.size() == 4);
    CHECK(c.args[0].type == dtype::f32);
    CHECK(c.args[0].count == 512);
    CHECK_FALSE(c.args[0].is_output());
    CHECK(c.args[1].output_file->filename() == "arg1.bin");
    CHECK_FALSE(c.args[1].has_input());
    CHECK(c.args[2].type == dtype::u8);  // no type: raw bytes
    CHECK(c.args[2].count == 16);
    CHECK(c.args[2].has_input());
    CHECK(c.args[2].is_output());
    CHECK_FALSE(c.args[3].is_buffer);
}

// What reading k_upstream says once `from` is replaced by `to` ("" when it reads fine).
std::string error_with(const std::string& from, const std::string& to) {
    return test::request_folder().error_of(test::replaced(k_upstream, from, to));
}

TEST_CASE("a v0.0 request whose byte count is not a whole number of elements is rejected") {
    CHECK_THAT(error_with("\"bytes\": 2048, \"type\"", "\"bytes\": 2047, \"type\""),
               Catch::Contains(
                   "field arguments[1].bytes: 2047 is not a multiple of the f32 element size 4"));
}

TEST_CASE("a v0.0 request with an unknown type names the argument and the accepted spellings") {
    CHECK_THAT(
        error_with("\"int32\"", "\"quad\""),
        Catch::Contains("arguments[3].type: unknown type 'quad'") && Catch::Contains("float32"));
}

TEST_CASE("a v0.0 request's long unknown type is quoted in 200 characters and its size") {
    // Found by fuzz_request: a 21 KB type came back whole in the message.
    const std::string said = error_with("\"int32\"", "\"" + std::string(20000, 'p') + "\"");
    CHECK_THAT(said, Catch::Contains("arguments[3].type: unknown type '" + std::string(200, 'p') +
                                     "'… (20000 bytes); expected one of"));
    CHECK(said.size() < 1000);
}

TEST_CASE("a v0.0 request with a long inline source is read, not refused as a file name") {
    test::scratch_folder dir;
    dir.write_values("a.bin", std::vector<float>(512, 1.0f));
    dir.write_values("raw.bin", std::vector<unsigned char>(16, 7));
    const std::string source =
        std::string(300, 'x') + "/ padding comment\n" + std::string(5000, ' ') +
        "\nextern \"C\" __global__ void vec_add(const float*, float*, unsigned char*, int) {}";
    std::string text = k_upstream;
    rapidjson::Document d = parse_json(text, "k_upstream");
    d["source"].SetString(("//" + source).c_str(), d.GetAllocator());
    dir.write("req.json", to_pretty_json(d));
    const request r = read_request(dir / "req.json");
    CHECK(r.kernel.source.find("__global__ void vec_add") != std::string::npos);
}

TEST_CASE("v0.0 shared memory beyond 2^32 is refused under the field the file has") {
    CHECK_THAT(error_with("\"shared_memory_bytes\": 128", "\"shared_memory_bytes\": 4294967296"),
               Catch::Contains("req.json: field shared_memory_bytes: expected"));
}

TEST_CASE("a v0.0 request may spell fp8 the way torch and ml_dtypes do") {
    for (const auto& [spelling, type] : {std::pair{"float8_e4m3fn", dtype::f8e4m3},
                                         {"float8_e5m2", dtype::f8e5m2},
                                         {"f8e4m3", dtype::f8e4m3}}) {
        CAPTURE(spelling);
        test::scratch_folder dir;
        dir.write("vec.cu",
                  "extern \"C\" __global__ void vec_add(const float*, float*, "
                  "unsigned char*, int) {}");
        dir.write_values("a.bin", std::vector<float>(512, 1.0f));
        dir.write_values("raw.bin", std::vector<unsigned char>(16, 7));
        std::string text = k_upstream;
        const std::string from = R"("bytes": 2048, "type": "float32" },)";
        text.replace(text.rfind(from), from.size(),
                     std::string(R"("bytes": 2048, "type": ")") + spelling + "\" },");
        dir.write("req.json", text);
        const request r = read_request(dir / "req.json");
        CHECK(r.cases[0].args[1].type == type);
        CHECK(r.cases[0].args[1].count == 2048);  // one byte an element
    }
    CHECK_THAT(error_with("\"int32\"", "\"quad\""), Catch::Contains("float8_e4m3fn"));
}
