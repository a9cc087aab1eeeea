// examples/gemm-fp8 end to end through the real cuda-optimizer against fake-harness (which
// computes the scaled e4m3 GEMM on the CPU): fp8 inputs, a bf16 output held to the reduction
// rule, the autotuner, the cuBLASLt baseline, the holdout, a model proposer on loopback and a
// replay. (The fp8 speed-of-light floor is evidence_test's; the same example on the H200 is
// tools/gpu-quick-check.sh's.)
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "common/dtype.hpp"
#include "common/json_document.hpp"
#include "loopback_http_server.hpp"
#include "orchestrator/contract/tolerance.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

using test::json_string;

const std::string k_example = std::string(CUOPT_SOURCE_DIR) + "/examples/gemm-fp8/";
const std::string k_fake = CUOPT_FAKE_HARNESS_BINARY;

// The example in a scratch folder, its 2048^3 case cut to 64 x 48 x 96 (the CPU's fake would
// take minutes; every size stays a multiple of 16, as cuBLASLt's FP8 GEMM needs).
struct fp8_example {
    test::scratch_folder dir;
    fp8_example() {
        for (const char* f : {"config.json", "initial.cu", "reference.cu", "input_cases.json",
                              "holdout_cases.json"})
            dir.write(f, test::read_text(k_example + f));
        std::string cases = test::read_text(k_example + "input_cases.json");
        const std::string from =
            R"("name": "perf-2048", "kind": "performance", "params": { "m": 2048, "n": 2048, "k": 2048 })";
        const auto at = cases.find(from);
        REQUIRE(at != std::string::npos);
        cases.replace(
            at, from.size(),
            R"("name": "perf-64x48x96", "kind": "performance", "params": { "m": 64, "n": 48, "k": 96 })");
        dir.write("input_cases.json", cases);
    }
    test::process_result optimize(std::vector<std::string> extra = {}) const {
        std::vector<std::string> a = {
            "optimize",
            "--config",
            (dir / "config.json").string(),
            "--harness",
            k_fake,
            "--results-dir",
            (dir / "results").string(),
            "--timeout",
            "10",
            "--sanitizer",
            std::string(CUOPT_SOURCE_DIR) + "/tests/fake-compute-sanitizer.sh"};
        a.insert(a.end(), extra.begin(), extra.end());
        return test::run_optimizer(a);
    }
    fs::path run() const { return dir / "results" / "run-001"; }
};

// A Chat Completions reply that submits the example's kernel with its tiled path on.
std::string submit_tiled() {
    const std::string source = "#define TILE_K 32\n#define ROWS_PER_THREAD 4\n" +
                               test::read_text(k_example + "initial.cu");
    const std::string args = "{\"source\": " + json_string(source) +
                             ", \"rationale\": \"stage fp8 tiles in shared memory as float\"}";
    return R"({"choices": [{"finish_reason": "tool_calls", "message": {"content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "submit_candidate", "arguments": )" +
           json_string(args) +
           "}}]}}], \"usage\": {\"prompt_tokens\": 1000, \"completion_tokens\": 100}}";
}

}  // namespace

TEST_CASE("the FP8 GEMM example runs end to end on the fake harness, against cuBLASLt",
          "[integration]") {
    fp8_example f;
    const auto r = f.optimize({"--max-iterations", "3"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    CHECK(test::verdict_of(history, "initial.cu") == "valid");
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(summary["counts"]["valid"].GetInt() >= 3);  // the autotuner's variants pass too
    // Each case's bf16 output is held to the reduction rule at its own k.
    for (const auto& c : summary["cases"].GetArray()) {
        const auto& out = c["outputs"][0];
        CHECK(std::string(out["dtype"].GetString()) == "bf16");
        const std::uint64_t k = std::string(c["name"].GetString()) == "perf-64x48x96" ? 96 : 83;
        CHECK(out["rtol"].GetDouble() == reduction_tolerance(dtype::bf16, k).rtol);
        CHECK(out["rms_atol"].GetDouble() == out["rtol"].GetDouble());
        CHECK(out["atol"].GetDouble() == 0);
    }
    // The vendor baseline ran through cuBLASLt and passed the oracle.
    const auto& vendor = summary["evidence"]["vendor"];
    REQUIRE(vendor.IsObject());
    CHECK(std::string(vendor["verdict"].GetString()) == "valid");
    CHECK(vendor["cases"][0]["median_ms"].GetDouble() > 0);
    CHECK_THAT(r.output, Catch::Contains("vendor baseline cublaslt: valid"));
    // The holdout's odd shapes pass; the replay of the best's performance case matches.
    CHECK_THAT(test::read_text(f.run() / "summary.json"), Catch::Contains("holdout"));
    const auto replay = test::run_optimizer(
        {"replay", (f.run() / "best-case-1.json").string(), "--harness", k_fake});
    INFO(replay.output);
    CHECK(replay.exit_code == 0);
    CHECK_THAT(replay.output, Catch::Contains("verdict: match"));
}

TEST_CASE("the FP8 example's tolerance catches an output off by one", "[integration]") {
    fp8_example f;
    f.dir.write("cands/wrong.cu", test::read_text(k_example + "initial.cu") + "// FAKE_WRONG\n");
    const auto r = f.optimize({"--proposer", "files", "--candidates", (f.dir / "cands").string(),
                               "--max-iterations", "2"});
    INFO(r.output);
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    CHECK(test::verdict_of(history, "initial.cu") == "valid");
    CHECK(test::verdict_of(history, "wrong.cu") == "wrong_output");
}

TEST_CASE("a model sees the fp8 signature and the reduction rule, and its fp8 kernel is judged",
          "[integration]") {
    fp8_example f;
    test::loopback_http_server server({{200, {}, submit_tiled()}});
    std::vector<std::string> a = {
        "-u",
        "ANTHROPIC_API_KEY",
        "-u",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY=sk-fp8-test",
        CUOPT_OPTIMIZER_BINARY,
        "optimize",
        "--config",
        (f.dir / "config.json").string(),
        "--harness",
        k_fake,
        "--results-dir",
        (f.dir / "results").string(),
        "--timeout",
        "10",
        "--sanitizer",
        std::string(CUOPT_SOURCE_DIR) + "/tests/fake-compute-sanitizer.sh",
        "--proposer",
        "llm",
        "--base-url",
        server.url("/v1"),
        "--max-iterations",
        "1"};
    const auto r = test::run_program("/usr/bin/env", a);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto requests = server.requests();
    REQUIRE_FALSE(requests.empty());
    CHECK_THAT(requests[0].body, Catch::Contains("__nv_fp8_e4m3") && Catch::Contains("f8e4m3") &&
                                     Catch::Contains("reduction rule over k products"));
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    REQUIRE(history["attempts"].Size() == 2);
    for (const auto& att : history["attempts"].GetArray())
        CHECK(std::string(att["verdict"].GetString()) == "valid");
}

TEST_CASE(
    "the fake harness rounds generated fp8 inputs like the GPU, in its dumps, and stores "
    "a bf16 output in bf16, a generator reaching past fp8's largest value is refused",
    "[integration]") {
    test::scratch_folder dir;
    dir.write("k.cu", test::read_text(k_example + "initial.cu"));
    dir.write("req.json", R"({ "schema_version": 1,
      "kernel": { "source_file": "k.cu", "entry": "gemm_e4m3" },
      "cases": [ { "name": "q", "measure": false, "launch": { "grid": [1, 1], "block": [16, 16] },
        "args": [ { "name": "a", "dtype": "f8e4m3", "count": 256, "input_dump_file": "a.bin",
                    "generator": { "kind": "sequence", "start": -448, "step": 3.5 } },
                  { "name": "b", "dtype": "f8e5m2", "count": 256, "input_dump_file": "b.bin",
                    "generator": { "kind": "sequence", "start": 57344, "step": -449.7 } },
                  { "name": "c", "dtype": "bf16", "count": 256, "output_file": "c.bin" },
                  { "name": "scale_a", "dtype": "f32", "value": 0.5 },
                  { "name": "scale_b", "dtype": "f32", "value": 0.375 },
                  { "name": "m", "dtype": "i32", "value": 16 },
                  { "name": "n", "dtype": "i32", "value": 16 },
                  { "name": "k", "dtype": "i32", "value": 16 } ] } ] })");
    const auto r = test::run_program(k_fake, {(dir / "req.json").string()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto a = test::read_values<std::uint8_t>(dir / "a.bin");
    const auto b = test::read_values<std::uint8_t>(dir / "b.bin");
    REQUIRE(a.size() == 256);
    REQUIRE(b.size() == 256);
    for (std::size_t i = 0; i < 256; ++i) {  // both ends reach the largest finite values
        CHECK(a[i] == double_to_fp8_bits(-448 + 3.5 * static_cast<double>(i), fp8_format::e4m3));
        CHECK(b[i] == double_to_fp8_bits(57344 - 449.7 * static_cast<double>(i), fp8_format::e5m2));
    }
    // c[0][0] = 0.5 * 0.375 * sum_p a[p] * b[p], rounded to bf16 (16 bits).
    const auto c = test::read_values<std::uint16_t>(dir / "c.bin");
    REQUIRE(c.size() == 256);
    float acc = 0;
    for (std::size_t p = 0; p < 16; ++p)
        acc += static_cast<float>(fp8_bits_to_double(a[p], fp8_format::e4m3) *
                                  fp8_bits_to_double(b[p], fp8_format::e5m2));
    const auto want = encode_scalar(dtype::bf16, acc * 0.1875f);
    std::uint16_t want_bits = 0;
    std::memcpy(&want_bits, want.data(), 2);
    CHECK(c[0] == want_bits);
    // Past them the GPU would saturate without a word: the request is refused instead.
    std::string past = test::read_text(dir / "req.json");
    const std::string from = "\"start\": -448";
    past.replace(past.find(from), from.size(), "\"start\": -500");
    dir.write("req.json", past);
    const auto refused = test::run_program(k_fake, {(dir / "req.json").string()});
    CHECK(refused.exit_code == 11);
    CHECK_THAT(test::read_text(dir / "response.json"),
               Catch::Contains("generator.start: value -500 does not fit f8e4m3"));
}

TEST_CASE("the fake harness refuses a gemm_e4m3 request it cannot compute, naming what is wrong",
          "[integration]") {
    test::scratch_folder dir;
    dir.write("k.cu", test::read_text(k_example + "initial.cu"));
    const std::string buffers = R"(
        { "name": "a", "dtype": "f8e4m3", "count": 256, "generator": { "kind": "constant", "value": 1 } },
        { "name": "b", "dtype": "f8e4m3", "count": 256, "generator": { "kind": "constant", "value": 1 } },
        { "name": "c", "dtype": "bf16", "count": 256, "output_file": "c.bin" },)";
    const std::string head = R"({ "schema_version": 1,
      "kernel": { "source_file": "k.cu", "entry": "gemm_e4m3" },
      "cases": [ { "name": "q", "measure": false, "launch": { "grid": [1], "block": [1] },
        "args": [ )";
    for (const auto& [args, said] :
         {std::pair<std::string, std::string>{
              buffers + R"( { "name": "m", "dtype": "i32", "value": 16 } ] } ] })",
              "expected 8 arguments, found 4"},
          {buffers + R"( { "name": "sa", "dtype": "f8e4m3", "value": 1 },
                       { "name": "sb", "dtype": "f32", "value": 1 },
                       { "name": "m", "dtype": "i32", "value": 16 }, { "name": "n", "dtype": "i32", "value": 16 },
                       { "name": "k", "dtype": "i32", "value": 16 } ] } ] })",
           "argument 3 must be an f32 scalar"},
          {buffers + R"( { "name": "sa", "dtype": "f32", "value": 1 },
                       { "name": "sb", "dtype": "f32", "value": 1 },
                       { "name": "m", "dtype": "i32", "value": 16 }, { "name": "n", "dtype": "i32", "value": 16 },
                       { "name": "k", "dtype": "i32", "value": 17 } ] } ] })",
           "a, b or c holds fewer elements than m, n and k need"}}) {
        CAPTURE(said);
        dir.write("req.json", head + args);
        const auto r = test::run_program(k_fake, {(dir / "req.json").string()});
        CHECK(r.exit_code == 11);
        CHECK_THAT(test::read_text(dir / "response.json"),
                   Catch::Contains("case 'q' of gemm_e4m3: " + said));
    }
}
