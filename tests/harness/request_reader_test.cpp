#include "harness/request_reader.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>

#include "common/json_document.hpp"
#include "request_fixture.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

const char* k_kernel =
    "extern \"C\" __global__ void scale(const float* x, float* y, float s, int n) {}\n";

// A valid request with a file input, a generated input, an output and two scalars.
std::string base_request() {
    return R"({
  "schema_version": 1,
  "kernel": { "source_file": "k.cu", "entry": "scale", "defines": {"TILE": 32, "A_FLAG": true} },
  "timing": { "warmup": 2, "iterations": 5, "fresh_inputs": true },
  "cases": [ { "name": "small", "launch": { "grid": [4], "block": [128, 1] },
    "args": [
      { "name": "x", "dtype": "f32", "count": 8, "input_file": "x.bin" },
      { "name": "y", "dtype": "f32", "count": 8, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": 9},
        "output_file": "out/y.bin" },
      { "name": "s", "dtype": "f32", "value": 0.5 },
      { "name": "n", "dtype": "i32", "value": 8 } ] } ] })";
}

using test::replaced;

struct fixture : test::request_folder {
    fixture() {
        dir.write("k.cu", k_kernel);
        dir.write_values("x.bin", std::vector<float>(8, 1.5f));
    }
    /// The error for the base request with `from` replaced by `to` ("" when it reads fine).
    std::string error_with(const std::string& from, const std::string& to) {
        return error_of(replaced(base_request(), from, to));
    }
};

}  // namespace

TEST_CASE("a valid request is read with paths resolved - defines sorted and scalars encoded") {
    fixture f;
    f.dir.write("req.json", base_request());
    const request r = read_request(f.dir / "req.json");
    CHECK(r.kernel.entry == "scale");
    CHECK(r.kernel.source == k_kernel);
    REQUIRE(r.kernel.defines.size() == 2);
    CHECK(r.kernel.defines[0] == std::make_pair(std::string("A_FLAG"), std::string("1")));
    CHECK(r.kernel.defines[1] == std::make_pair(std::string("TILE"), std::string("32")));
    CHECK(r.timing.warmup == 2);
    CHECK(r.timing.iterations == 5);
    CHECK(r.timing.flush_l2);
    CHECK(r.timing.fresh_inputs);
    REQUIRE(r.cases.size() == 1);
    const run_case& c = r.cases[0];
    CHECK(c.launch.grid == std::array<unsigned, 3>{4, 1, 1});
    CHECK(c.launch.block == std::array<unsigned, 3>{128, 1, 1});
    REQUIRE(c.args.size() == 4);
    CHECK(c.args[0].is_buffer);
    CHECK(*c.args[0].input_file == std::filesystem::weakly_canonical(f.dir / "x.bin"));
    CHECK(c.args[1].generator->seed == 9);
    CHECK(c.args[1].is_output());
    CHECK_FALSE(c.args[2].is_buffer);
    CHECK(c.args[2].scalar_bytes.size() == 4);
    CHECK(c.args[3].scalar_bytes.size() == 4);
}

TEST_CASE(
    "a buffer whose input file size disagrees with dtype x count is rejected with both sizes") {
    fixture f;
    CHECK(f.error_with("\"count\": 8, \"input_file\"", "\"count\": 9, \"input_file\"") ==
          "req.json: field cases[0].args[0].input_file: 'x.bin' holds 32 bytes but count 9 x f32 "
          "(4 bytes) needs 36");
}

TEST_CASE("an unknown dtype is rejected with the list of accepted ones") {
    fixture f;
    CHECK_THAT(f.error_with("\"dtype\": \"f32\", \"value\"", "\"dtype\": \"float\", \"value\""),
               Catch::Contains(
                   "field cases[0].args[2].dtype: expected one of [\"f16\",\"bf16\",\"f32\"") &&
                   Catch::Contains("(got \"float\")"));
}

TEST_CASE("a path escaping the request folder is rejected naming the field") {
    fixture f;
    CHECK_THAT(
        f.error_with("\"out/y.bin\"", "\"../y.bin\""),
        Catch::StartsWith(
            "req.json: field cases[0].args[1].output_file: '../y.bin' escapes the request folder"));
    CHECK_THAT(f.error_with("\"k.cu\"", "\"/etc/k.cu\""),
               Catch::Contains("field kernel.source_file: '/etc/k.cu' is absolute"));
}

TEST_CASE("a missing input or source file is rejected naming the field") {
    fixture f;
    CHECK_THAT(f.error_with("\"x.bin\"", "\"nope.bin\""),
               Catch::Contains("field cases[0].args[0].input_file: cannot read"));
    CHECK_THAT(
        f.error_with("\"k.cu\"", "\"nope.cu\""),
        Catch::Contains("field kernel.source_file:") && Catch::Contains("nope.cu': cannot open"));
}

TEST_CASE("a kernel needs exactly one of source_file and source") {
    fixture f;
    CHECK(f.error_with("\"source_file\": \"k.cu\", ", "") ==
          "req.json: field kernel: expected exactly one of 'source_file' and 'source'");
    CHECK(f.error_with("\"source_file\": \"k.cu\", ",
                       "\"source_file\": \"k.cu\", \"source\": \"x\", ") ==
          "req.json: field kernel: expected exactly one of 'source_file' and 'source'");
}

TEST_CASE("an argument is a buffer or a scalar - never both or neither") {
    fixture f;
    CHECK_THAT(f.error_with("\"value\": 0.5", "\"value\": 0.5, \"count\": 3"),
               Catch::Contains("field cases[0].args[2]: has 'value' (a scalar) and buffer fields"));
    CHECK(f.error_with(", \"value\": 0.5", "") ==
          "req.json: field cases[0].args[2]: expected 'count' (a buffer) or 'value' (a scalar)");
    CHECK_THAT(f.error_with("\"value\": 8", "\"value\": 3000000000"),
               Catch::Contains("field cases[0].args[3].value: value 3000000000") &&
                   Catch::Contains("i32"));
}

TEST_CASE("generator problems are rejected with the generator's field") {
    fixture f;
    CHECK_THAT(f.error_with("\"low\": -1, \"high\": 1", "\"low\": 1, \"high\": 1"),
               Catch::Contains("field cases[0].args[1].generator: uniform needs low < high"));
    CHECK_THAT(f.error_with("\"dtype\": \"f32\", \"count\": 8, \"generator\"",
                            "\"dtype\": \"i32\", \"count\": 8, \"generator\""),
               Catch::Contains("generator.kind: 'uniform' fills floating-point buffers; for i32 "
                               "use 'int_range', 'sequence' or 'constant'"));
    CHECK_THAT(
        f.error_with("\"input_file\": \"x.bin\"",
                     "\"input_file\": \"x.bin\", \"input_dump_file\": \"d.bin\""),
        Catch::Contains(
            "args[0].input_dump_file: only a buffer with a 'generator' can dump its inputs"));
    CHECK_THAT(f.error_with("\"input_file\": \"x.bin\"",
                            "\"input_file\": \"x.bin\", \"generator\": {\"kind\": \"normal\"}"),
               Catch::Contains("has both 'input_file' and 'generator'"));
}

TEST_CASE("two arguments writing one file - or two cases with one name - are rejected") {
    fixture f;
    CHECK_THAT(f.error_with("\"input_file\": \"x.bin\"",
                            "\"input_file\": \"x.bin\", \"output_file\": \"out/y.bin\""),
               Catch::Contains("field cases[0].args[1]: writes") &&
                   Catch::Contains("which another argument also writes"));
    const std::string one_case =
        R"({ "name": "small", "launch": { "grid": [1], "block": [1] }, "args": [] })";
    const std::string two =
        R"({ "schema_version": 1, "kernel": { "source": "x", "entry": "k" }, "cases": [ )" +
        one_case + ", " + one_case + " ] }";
    CHECK_THAT(f.error_of(two),
               Catch::Contains("field cases[1].name: duplicate case name 'small'"));
}

TEST_CASE("schema problems in a request name the field") {
    fixture f;
    CHECK_THAT(f.error_with("\"block\": [128, 1]", "\"block\": [128, 0]"),
               Catch::Contains("field cases[0].launch.block[1]: expected a number >= 1"));
    CHECK_THAT(f.error_with("\"schema_version\": 1", "\"schema_version\": 2"),
               Catch::Contains("field schema_version: expected one of [1]"));
    CHECK_THAT(f.error_with("\"iterations\": 5", "\"iterations\": 0"),
               Catch::Contains("field timing.iterations: expected a number >= 1"));
    CHECK_THAT(f.error_with("\"grid\"", "\"grdi\""),
               Catch::Contains("field cases[0].launch.grdi: unknown field; expected one of: grid, "
                               "block, dynamic_shared_bytes"));
    CHECK_THAT(f.error_of("[1, 2"),
               Catch::StartsWith("req.json: malformed JSON at line 1, column 6"));
    CHECK_THAT(f.error_with("\"grid\": [4]", "\"grid\": [4], \"dynamic_shared_bytes\": 1e12"),
               Catch::Contains("field cases[0].launch.dynamic_shared_bytes: expected integer"));
    CHECK_THAT(f.error_with("\"grid\": [4]", "\"grid\": [4], \"dynamic_shared_bytes\": 5000000000"),
               Catch::Contains(
                   "field cases[0].launch.dynamic_shared_bytes: expected a number <= 4294967295"));
    CHECK_THAT(f.error_with("\"seed\": 9", "\"seed\": 99999999999999999999999"),
               Catch::Contains("field cases[0].args[1].generator.seed: expected"));
}

TEST_CASE(
    "an output that names a file the request reads is refused, naming the field and the file") {
    fixture f;
    CHECK_THAT(
        f.error_with("\"output_file\": \"out/y.bin\"", "\"output_file\": \"k.cu\""),
        Catch::Contains("field cases[0].args[1].output_file: writes 'k.cu', which is the kernel "
                        "source; outputs need paths of their own"));
    CHECK_THAT(f.error_with("\"output_file\": \"out/y.bin\"", "\"output_file\": \"req.json\""),
               Catch::Contains("which is the request itself"));
    CHECK_THAT(
        f.error_with("\"output_file\": \"out/y.bin\"", "\"output_file\": \"./out/../x.bin\""),
        Catch::Contains("writes 'x.bin', which is an input file"));
    f.dir.write("req.json", base_request());
    try {
        read_request(f.dir / "req.json", {f.dir / "out/y.bin"});
        FAIL("no error");
    } catch (const json_error& e) {
        CHECK_THAT(e.what(), Catch::Contains("which is the response"));
    }
}

TEST_CASE("64-bit integer scalars arrive exactly, and values that cannot are refused by field") {
    fixture f;
    auto read_scalar = [&f](const std::string& type, const std::string& value) {
        f.dir.write(
            "req.json",
            replaced(base_request(), R"({ "name": "n", "dtype": "i32", "value": 8 })",
                     R"({ "name": "n", "dtype": ")" + type + R"(", "value": )" + value + " }"));
        return read_request(f.dir / "req.json").cases[0].args[3];
    };
    const kernel_arg max = read_scalar("u64", "18446744073709551615");
    CHECK(max.scalar_bytes == std::vector<unsigned char>(8, 0xFF));
    CHECK(std::get<std::uint64_t>(max.scalar) == 18446744073709551615ull);
    const kernel_arg odd = read_scalar("u64", "10000000000000000001");
    std::uint64_t v = 0;
    std::memcpy(&v, odd.scalar_bytes.data(), 8);
    CHECK(v == 10000000000000000001ull);
    CHECK_THAT(
        f.error_with(R"("value": 8 })", R"("value": 1.5e19 })"),
        Catch::Contains(
            "field cases[0].args[3].value: a i32 beyond 2^53 must be written as an integer"));
    CHECK_THAT(f.error_with(R"("dtype": "i32", "value": 8)",
                            R"("dtype": "u64", "value": 18446744073709551616)"),
               Catch::Contains("field cases[0].args[3].value"));
    CHECK_THAT(f.error_with(R"("kind": "uniform", "low": -1, "high": 1)",
                            R"("kind": "int_range", "low": 0, "high": 18446744073709551615)"),
               Catch::Contains("int_range bounds beyond 2^53 are not carried exactly"));
}

TEST_CASE(
    "hostile JSON shapes are refused with the field: deep nesting, duplicate keys, bad UTF-8") {
    fixture f;
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    CHECK_THAT(f.error_of(deep), Catch::StartsWith("req.json: field [0][0]") &&
                                     Catch::Contains("nested more than 64 levels deep"));
    CHECK_THAT(f.error_with(R"("entry": "scale")", R"("entry": "scale", "entry": "other")"),
               Catch::Contains("req.json: field kernel: duplicate key 'entry'"));
    CHECK_THAT(f.error_with(R"("name": "small")", "\"na\xf0me\": \"small\""),
               Catch::Contains("malformed JSON") && Catch::Contains("Invalid encoding"));
    CHECK_THAT(f.error_with(R"("name": "small")", R"("name": "\ud800")"),
               Catch::Contains("malformed JSON"));
}

TEST_CASE("a path part too long for the file system is refused naming the field") {
    fixture f;
    const std::string long_name = std::string(300, 'a') + ".bin";
    CHECK_THAT(f.error_with("\"input_file\": \"x.bin\"", "\"input_file\": \"" + long_name + "\""),
               Catch::Contains("field cases[0].args[0].input_file: 'aaaa") &&
                   Catch::Contains("File name too long"));
}

TEST_CASE("adaptive timing with more minimum samples than its cap is refused naming the field") {
    fixture f;
    CHECK_THAT(f.error_with("\"fresh_inputs\": true",
                            "\"fresh_inputs\": true, \"mode\": \"adaptive\", \"min_samples\": 6"),
               Catch::Contains("req.json: field timing.min_samples: 6 is more than "
                               "timing.iterations (5)"));
    CHECK(f.error_with("\"fresh_inputs\": true",
                       "\"fresh_inputs\": true, \"mode\": \"adaptive\", \"min_samples\": 5") == "");
    // Fixed mode ignores the adaptive settings.
    CHECK(f.error_with("\"fresh_inputs\": true", "\"fresh_inputs\": true, \"min_samples\": 6") ==
          "");
}

TEST_CASE("a checked launch outside the timed launches is refused in one line naming the field") {
    fixture f;
    const std::string from = "\"fresh_inputs\": true";
    CHECK_THAT(f.error_with(from, "\"fresh_inputs\": true, \"checked_launch\": 5"),
               Catch::Contains("req.json: field timing.checked_launch: 5 is not a timed launch; "
                               "expected 0 to 4 (below timing.iterations)"));
    // Adaptive: only the first min_samples timed launches are sure to happen.
    CHECK_THAT(f.error_with("\"iterations\": 5, \"fresh_inputs\": true",
                            "\"iterations\": 50, \"fresh_inputs\": true, \"mode\": "
                            "\"adaptive\", \"min_samples\": 8, \"checked_launch\": 8"),
               Catch::Contains("req.json: field timing.checked_launch: 8 is not a timed launch; "
                               "expected 0 to 7 (below timing.min_samples: an adaptive loop "
                               "may stop after that many timed launches)"));
    // Negative positions break the schema before the reader sees them.
    CHECK_THAT(f.error_with(from, "\"fresh_inputs\": true, \"checked_launch\": -1"),
               Catch::Contains("checked_launch"));
    const std::string error = f.error_with(from, "\"fresh_inputs\": true, \"checked_launch\": 5");
    CHECK(std::count(error.begin(), error.end(), '\n') == 0);
}

TEST_CASE("a checked launch among the timed launches is read, and absent means the last") {
    fixture f;
    f.dir.write("req.json", replaced(base_request(), "\"fresh_inputs\": true",
                                     "\"fresh_inputs\": true, \"checked_launch\": 0"));
    const request r = read_request(f.dir / "req.json");
    REQUIRE(r.timing.checked_launch);
    CHECK(*r.timing.checked_launch == 0);
    CHECK(r.timing.checked_offset() == 2 + 1);  // launch 0, warm-up 1..2, the first timed
    f.dir.write("req.json", base_request());
    const request last = read_request(f.dir / "req.json");
    CHECK_FALSE(last.timing.checked_launch);
    CHECK(last.timing.checked_offset() == 2 + 5);
    f.dir.write("req.json",
                replaced(base_request(), "\"fresh_inputs\": true",
                         "\"fresh_inputs\": true, \"mode\": \"adaptive\", \"min_samples\": 5, "
                         "\"checked_launch\": 4"));
    CHECK(read_request(f.dir / "req.json").timing.checked_launch == 4);
}

TEST_CASE("a source file holding a NUL byte is refused: NVRTC would compile only its start") {
    fixture f;
    f.dir.write("k.cu", std::string(k_kernel) + std::string("\0#error hidden\n", 15));
    CHECK(f.error_of(base_request()) ==
          "req.json: field kernel.source_file: 'k.cu' holds a NUL byte at byte " +
              std::to_string(std::string(k_kernel).size()) +
              "; expected CUDA source text (NVRTC would stop there)");
}

TEST_CASE("a define's name is a C identifier and its value at most 4096 bytes") {
    fixture f;
    CHECK_THAT(f.error_with("\"TILE\"", "\"A B\""),
               Catch::EndsWith("field kernel.defines: a define's name: expected a C identifier of "
                               "at most 128 characters, got 'A B'"));
    CHECK_THAT(f.error_with("\"TILE\": 32", "\"TILE\": \"" + std::string(5000, '1') + "\""),
               Catch::EndsWith("field kernel.defines.TILE: a define's value of 5000 bytes; "
                               "expected at most 4096"));
}

TEST_CASE(
    "generated and scalar values that do not fit their dtype, and a tolerance on an integer "
    "output, are refused by field") {
    fixture f;
    const std::string y_gen =
        R"("dtype": "f32", "count": 8, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": 9})";
    auto y_as = [&](const std::string& dtype, const std::string& gen) {
        return f.error_with(y_gen,
                            R"("dtype": ")" + dtype + R"(", "count": 8, "generator": )" + gen);
    };
    // An integer out of its dtype's range names the range it must lie in.
    CHECK_THAT(y_as("u8", R"({"kind": "constant", "value": 300})"),
               Catch::EndsWith("field cases[0].args[1].generator.value: value 300 is not a u8 "
                               "integer; expected a whole number from 0 to 255"));
    CHECK_THAT(y_as("i8", R"({"kind": "sequence", "start": 0, "step": -20})"),
               Catch::EndsWith("generator.step: the last of 8 elements, start + step x 7: value "
                               "-140 is not a i8 integer; expected a whole number from -128 to "
                               "127"));
    CHECK_THAT(f.error_with(R"({ "name": "n", "dtype": "i32", "value": 8 })",
                            R"({ "name": "n", "dtype": "u32", "value": -1 })"),
               Catch::EndsWith("field cases[0].args[3].value: value -1 is not a u32 integer; "
                               "expected a whole number from 0 to 4294967295"));
    CHECK_THAT(y_as("u8", R"({"kind": "sequence", "start": 250, "step": 1})"),
               Catch::Contains("generator.step: the last of 8 elements, start + step x 7: value "
                               "257 is not a u8 integer"));
    CHECK(y_as("u8", R"({"kind": "sequence", "start": 248, "step": 1})").empty());
    CHECK_THAT(y_as("f8e5m2", R"({"kind": "constant", "value": 1e30})"),
               Catch::Contains("does not fit f8e5m2: expected a magnitude of at most 57344"));
    CHECK_THAT(f.error_with(R"({ "name": "s", "dtype": "f32", "value": 0.5 })",
                            R"({ "name": "s", "dtype": "f16", "value": 3.4e38 })"),
               Catch::Contains("field cases[0].args[2].value: value 3.4e+38 does not fit f16"));
    CHECK_THAT(f.error_with(R"({ "name": "s", "dtype": "f32", "value": 0.5 })",
                            R"({ "name": "s", "dtype": "f16", "value": 70000 })"),
               Catch::Contains("value 70000 does not fit f16"));
    CHECK(f.error_with(R"({ "name": "s", "dtype": "f32", "value": 0.5 })",
                       R"({ "name": "s", "dtype": "f16", "value": 65504 })")
              .empty());

    // An integer output's check: a tolerance would be ignored, so it is refused.
    f.dir.write_values("want.bin", std::vector<std::int32_t>(8, 1));
    const std::string out =
        R"("dtype": "f32", "count": 8, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": 9},
        "output_file": "out/y.bin" })";
    auto checked = [&](const std::string& tol) {
        return f.error_with(out, R"("dtype": "i32", "count": 8, "output_file": "out/y.bin",
            "check": { "expected_file": "want.bin", "expected_sha256": ")" +
                                     std::string(64, 'a') + "\"" + tol + "} }");
    };
    CHECK_THAT(checked(R"(, "atol": 0.5)"),
               Catch::Contains("field cases[0].args[1].check.atol: i32 outputs are compared "
                               "exactly (equal bits); expected 0 or no atol"));
    CHECK(checked(R"(, "atol": 0, "rtol": 0)").empty());
}

TEST_CASE(
    "a refusal shows each path it names quoted on one line and cut after 200 characters, and a "
    "request path the file system refuses is one such line") {
    fixture f;
    auto one_line = [](const std::string& message) {
        INFO(message);
        CHECK(!message.empty());
        CHECK(message.find('\n') == std::string::npos);
        CHECK(message.size() < 700);
        return message;
    };
    f.dir.write("x\nbad.bin", std::string(12, '\0'));
    CHECK_THAT(
        one_line(f.error_with("\"input_file\": \"x.bin\"", "\"input_file\": \"x\\nbad.bin\"")),
        Catch::Contains("input_file: 'x\\nbad.bin' holds 12 bytes but count 8"));
    CHECK_THAT(one_line(f.error_with("\"input_file\": \"x.bin\"",
                                     "\"input_file\": \"" + std::string(4000, 'q') + "\"")),
               Catch::Contains("input_file: 'qqqq") &&
                   Catch::Contains("… (4000 bytes): File name too long"));
    const std::string checked = replaced(
        base_request(), R"("output_file": "out/y.bin")",
        R"("output_file": "out/y.bin", "check": { "expected_file": "x\nbad.bin", "expected_sha256": ")" +
            std::string(64, 'a') + "\" }");
    CHECK_THAT(one_line(f.error_of(checked)),
               Catch::Contains("check.expected_file: 'x\\nbad.bin' holds 12 bytes but the 8 f32"));
    const std::string twice = replaced(
        replaced(base_request(), R"("input_file": "x.bin")", R"("output_file": "o\nut.bin")"),
        R"("output_file": "out/y.bin")", R"("output_file": "o\nut.bin")");
    CHECK_THAT(one_line(f.error_of(twice)),
               Catch::Contains("o\\nut.bin', which another argument also writes"));

    // A source that exists and cannot be opened (a socket: open(2) says ENXIO).
    const std::filesystem::path socket_path = f.dir / "k\nsock.cu";
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(socket_path.string().size() < sizeof(address.sun_path));
    std::strcpy(address.sun_path, socket_path.c_str());
    const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(::bind(s, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0);
    CHECK_THAT(
        one_line(f.error_with("\"source_file\": \"k.cu\"", "\"source_file\": \"k\\nsock.cu\"")),
        Catch::Contains("field kernel.source_file: '") &&
            Catch::Contains("k\\nsock.cu': cannot open ("));
    ::close(s);

    // A worker's stdin line names the request: its name may be longer than the file system takes.
    const std::string too_long =
        test::refusal([&] { read_request(f.dir / (std::string(300, 'a') + ".json")); });
    CHECK_THAT(one_line(too_long),
               Catch::Contains("… (") &&
                   Catch::EndsWith(": cannot read (File name too long); expected a path to a "
                                   "request JSON file"));
    CHECK_THAT(one_line(test::refusal([&] { read_request(f.dir / "no\nsuch.json"); })),
               Catch::EndsWith("no\\nsuch.json': no such request file; expected a path to a "
                               "request JSON file"));
}
