// timing_inputs (perturbed file inputs, as_given generators) on the CPU: the request
// reader's defaults and errors, the request writer's round trip, and the rotation shifts.
#include <catch2/catch.hpp>
#include <set>

#include "common/json_document.hpp"
#include "harness/case_runner.hpp"
#include "harness/request_reader.hpp"
#include "orchestrator/contract/request_writer.hpp"
#include "request_fixture.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

// x: f32 file, w: i32 file, g: generated f32, y: output; `extra` lands in arg `target`.
std::string request_with(const std::string& target, const std::string& extra) {
    auto arg = [&](const std::string& name, const std::string& body) {
        return R"({ "name": ")" + name + R"(", )" + body + (name == target ? ", " + extra : "") +
               " }";
    };
    return R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": "k" },
  "cases": [ { "name": "c", "launch": { "grid": [1], "block": [32] }, "args": [ )" +
           arg("x", R"("dtype": "f32", "count": 8, "input_file": "x.bin")") + ", " +
           arg("w", R"("dtype": "i32", "count": 8, "input_file": "w.bin")") + ", " +
           arg("g",
               R"("dtype": "f32", "count": 8, "generator": {"kind": "uniform", "low": 0, "high": 1})") +
           ", " + arg("y", R"("dtype": "f32", "count": 8, "output_file": "y.bin")") + ", " +
           arg("n", R"("dtype": "i32", "value": 8)") + " ] } ] }";
}

struct fixture : test::request_folder {
    fixture() {
        dir.write("k.cu", "extern \"C\" __global__ void k() {}\n");
        dir.write_values("x.bin", std::vector<float>(8, 1.5f));
        dir.write_values("w.bin", std::vector<int>(8, 3));
    }
};

}  // namespace

TEST_CASE("without timing_inputs only a floating-point file input is perturbed for timing") {
    fixture f;
    const request r = f.read(request_with("", ""));
    const auto& a = r.cases[0].args;
    CHECK(a[0].perturbed_for_timing());        // f32 input_file
    CHECK_FALSE(a[1].perturbed_for_timing());  // i32 input_file: indices stay where they are
    CHECK_FALSE(a[2].perturbed_for_timing());  // generator: fresh_inputs decides
    CHECK_FALSE(a[3].perturbed_for_timing());  // output only
    for (const auto& arg : a) CHECK_FALSE(arg.timing_inputs_mode);
}

TEST_CASE("timing_inputs as given on a buffer overrides the default either way") {
    fixture f;
    CHECK_FALSE(f.read(request_with("x", R"("timing_inputs": "as_given")"))
                    .cases[0]
                    .args[0]
                    .perturbed_for_timing());
    CHECK(f.read(request_with("w", R"("timing_inputs": "perturbed")"))
              .cases[0]
              .args[1]
              .perturbed_for_timing());
    const request g = f.read(request_with("g", R"("timing_inputs": "as_given")"));
    CHECK(g.cases[0].args[2].timing_inputs_mode == timing_inputs::as_given);
}

TEST_CASE("timing_inputs on a buffer without an input, or on a scalar, is refused by field") {
    fixture f;
    CHECK(f.error_of(request_with("y", R"("timing_inputs": "perturbed")")) ==
          "req.json: field cases[0].args[3].timing_inputs: only a buffer with an input "
          "('input_file' or 'generator') can say what its timed launches see; expected no "
          "timing_inputs here");
    CHECK_THAT(f.error_of(request_with("n", R"("timing_inputs": "as_given")")),
               Catch::Contains("field cases[0].args[4]: has 'value' (a scalar) and buffer fields"));
    CHECK_THAT(f.error_of(request_with("x", R"("timing_inputs": "rotated")")),
               Catch::Contains("field cases[0].args[0].timing_inputs: expected one of "
                               "[\"perturbed\",\"as_given\"]"));
}

TEST_CASE("timing_inputs survives the orchestrator's request writer and the harness's reader") {
    fixture f;
    request req = f.read(request_with("x", R"("timing_inputs": "as_given")"));
    req.cases[0].args[2].timing_inputs_mode = timing_inputs::perturbed;
    const std::string text = write_request_json(req);
    validate_json(parse_json(text, "written"), embedded_schema("request"), "written");
    const request back = f.read(text);
    const auto& a = back.cases[0].args;
    CHECK(a[0].timing_inputs_mode == timing_inputs::as_given);
    CHECK_FALSE(a[1].timing_inputs_mode);
    CHECK(a[2].timing_inputs_mode == timing_inputs::perturbed);
    CHECK(parse_json(text, "written")["cases"][0]["args"][1].HasMember("timing_inputs") == false);
}

TEST_CASE("timing_inputs' words are exactly the ones the request schema allows") {
    rapidjson::Document d = parse_json(std::string(embedded_schema("request")), "request");
    std::set<std::string> schema, table;
    for (const auto& e : d["definitions"]["arg"]["properties"]["timing_inputs"]["enum"].GetArray())
        schema.insert(e.GetString());
    for (const auto& e : k_timing_inputs.entries) {
        table.insert(e.name);
        CHECK(k_timing_inputs.parse(e.name) == e.value);
    }
    CHECK(schema == table);
}

TEST_CASE("a perturbed input is rotated by a non-zero shift that changes at every launch") {
    CHECK(rotation_shift(5, 0) == 0);
    CHECK(rotation_shift(5, 1) == 0);
    CHECK(rotation_shift(0, 2) == 1);  // two elements: the only rotation there is
    CHECK(rotation_shift(1, 2) == 1);
    for (std::uint64_t count : {3ull, 4ull, 17ull, 1000ull, 65536ull, 1ull << 40}) {
        std::set<std::uint64_t> seen;
        for (std::uint64_t launch = 0; launch < 200; ++launch) {
            const std::uint64_t s = rotation_shift(launch, count);
            INFO("count " << count << " launch " << launch);
            REQUIRE(s >= 1);
            REQUIRE(s <= count - 1);
            REQUIRE(s != rotation_shift(launch + 1, count));
            seen.insert(s);
        }
        if (count >= 1000) CHECK(seen.size() > 150);  // spread, not a handful of shifts
    }
    // Launch indices near 2^64 do not overflow.
    CHECK(rotation_shift(~0ull, 1000) >= 1);
}

TEST_CASE("the fake harness times a FAKE_MEMOISE kernel 4x faster only when inputs repeat",
          "[integration]") {
    fixture f;
    f.dir.write("mm.cu", "// FAKE_MEMOISE\nextern \"C\" __global__ void matmul_f32() {}\n");
    f.dir.write_values("a.bin", std::vector<float>(64 * 64, 0.5f));
    auto median_with = [&](const std::string& mode, bool fresh) {
        const std::string ti = mode.empty() ? "" : R"(, "timing_inputs": ")" + mode + "\"";
        f.dir.write(
            "mm.json",
            R"({ "schema_version": 1, "kernel": { "source_file": "mm.cu", "entry": "matmul_f32" },
  "timing": { "warmup": 1, "iterations": 3, "fresh_inputs": )" +
                std::string(fresh ? "true" : "false") + R"( },
  "cases": [ { "name": "c", "launch": { "grid": [1], "block": [1] }, "args": [
    { "name": "a", "dtype": "f32", "count": 4096, "input_file": "a.bin")" +
                ti + R"( },
    { "name": "b", "dtype": "f32", "count": 4096, "generator": {"kind": "uniform", "low": 0, "high": 1}},
    { "name": "c", "dtype": "f32", "count": 4096, "output_file": "c.bin" },
    { "name": "m", "dtype": "i32", "value": 64 }, { "name": "n", "dtype": "i32", "value": 64 },
    { "name": "k", "dtype": "i32", "value": 64 } ] } ] })");
        const auto r = test::run_program(CUOPT_FAKE_HARNESS_BINARY, {(f.dir / "mm.json").string()});
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
        return test::read_response(f.dir / "response.json")["cases"][0]["timing"]["median_ms"]
            .GetDouble();
    };
    const double honest = median_with("", false);  // a.bin is perturbed by default
    CHECK(median_with("perturbed", false) == Approx(honest));
    CHECK(median_with("as_given", true) == Approx(honest));  // b is regenerated every launch
    CHECK(median_with("as_given", false) == Approx(honest / 4));
}
