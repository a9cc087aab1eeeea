// A manifest's vendor_baseline for cuBLASLt's FP8 e4m3_gemm and CUB's segmented_sum: what the
// manifest reader checks at load time (the op's library, layout and fields, the operands'
// dtypes and counts, the scales, m, n, k multiples of 16 where the baseline is timed, one library
// for every case), and the orchestrator sending the manifest's library to the fake harness and
// naming it in its lines.
#include <catch2/catch.hpp>
#include <filesystem>

#include "common/dtype.hpp"
#include "common/json_document.hpp"
#include "common/runner_process.hpp"
#include "orchestrator/contract/manifest.hpp"
#include "orchestrator/evaluation/attempt_evaluator.hpp"
#include "orchestrator/evidence/winner_evidence.hpp"
#include "request_fixture.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

const std::string k_fp8_baseline =
    R"({ "library": "cublaslt", "op": "e4m3_gemm", "m": "m", "n": "n", "k": "k",
         "scale_a": "sa", "scale_b": "sb" })";

// C (bf16, m x n) = sa * sb * A (f8e4m3, m x k) x B (f8e4m3, stored n x k); the correctness
// case's sizes are no multiples of 16 (its baseline is never timed), the performance case's are.
std::string fp8_manifest(const std::string& baseline = k_fp8_baseline,
                         const std::string& perf = R"("m": 32, "n": 16, "k": 48)") {
    return R"({ "schema_version": 1, "launch": { "grid": [1], "block": [1] },
  "args": [
    { "name": "a", "dtype": "f8e4m3", "kind": "input", "count": "m*k" },
    { "name": "b", "dtype": "f8e4m3", "kind": "input", "count": "n*k" },
    { "name": "c", "dtype": "bf16", "kind": "output", "count": "m*n" },
    { "name": "sa", "dtype": "f32", "kind": "scalar", "value": 0.5 },
    { "name": "sb", "dtype": "f32", "kind": "scalar", "value": 3 },
    { "name": "m", "dtype": "i32", "kind": "scalar", "value": "m" },
    { "name": "n", "dtype": "i32", "kind": "scalar", "value": "n" },
    { "name": "k", "dtype": "i32", "kind": "scalar", "value": "k" } ],
  "vendor_baseline": )" +
           baseline + R"(,
  "cases": [
    { "name": "correctness-61x45x83", "kind": "correctness", "params": { "m": 61, "n": 45, "k": 83 } },
    { "name": "perf", "kind": "performance", "params": { )" +
           perf + R"( } } ] })";
}

using test::replaced;

struct fixture {
    test::scratch_folder dir;
    manifest read(const std::string& json) {
        dir.write("input_cases.json", json);
        return read_manifest(dir / "input_cases.json");
    }
    std::string error_of(const std::string& json) {
        return test::refusal([&] { read(json); });
    }
};

}  // namespace

TEST_CASE("an e4m3_gemm manifest baseline is read with its scales, row_major_bt by default") {
    fixture f;
    const manifest m = f.read(fp8_manifest());
    REQUIRE(m.vendor_baseline);
    const vendor_baseline_spec& v = *m.vendor_baseline;
    CHECK(v.library == "cublaslt");
    CHECK(v.layout == "row_major_bt");  // e4m3_gemm's only layout
    CHECK(v.a == "a");
    CHECK(v.b == "b");
    CHECK(v.c == "c");
    CHECK(v.scale_a == "sa");
    CHECK(v.scale_b == "sb");
    REQUIRE(m.cases[1].vendor);
    CHECK(m.cases[1].vendor->scale_b == "sb");
    // C may be f32.
    CHECK_NOTHROW(
        f.read(replaced(fp8_manifest(), R"("c", "dtype": "bf16")", R"("c", "dtype": "f32")")));
}

TEST_CASE("a manifest's e4m3_gemm with the wrong library, layout, dtype or scale is refused") {
    fixture f;
    const std::string prefix = "input_cases.json: field vendor_baseline.";
    CHECK(f.error_of(fp8_manifest(replaced(k_fp8_baseline, "cublaslt", "cublas"))) ==
          prefix +
              "op: e4m3_gemm is a cublaslt op but the library is cublas; expected one of "
              "sgemm, dgemm, hgemm");
    CHECK(f.error_of(
              fp8_manifest(replaced(k_fp8_baseline, R"("op": "e4m3_gemm")", R"("op": "sgemm")"))) ==
          prefix +
              "op: sgemm is a cublas op but the library is cublaslt; expected one of "
              "e4m3_gemm");
    CHECK(f.error_of(fp8_manifest(
              replaced(k_fp8_baseline, R"("m": "m")", R"("layout": "row_major", "m": "m")"))) ==
          prefix +
              "layout: e4m3_gemm takes only row_major_bt (A row-major m x k, B row-major "
              "n x k, C row-major m x n: the TN form cuBLASLt's FP8 needs); got row_major");
    CHECK(f.error_of(
              replaced(fp8_manifest(), R"("a", "dtype": "f8e4m3")", R"("a", "dtype": "f16")")) ==
          prefix + "a: e4m3_gemm needs f8e4m3 buffers; 'a' is f16");
    CHECK(
        f.error_of(replaced(fp8_manifest(), R"("c", "dtype": "bf16")", R"("c", "dtype": "f16")")) ==
        prefix + "c: e4m3_gemm needs bf16 or f32 for C; 'c' is f16");
    CHECK(f.error_of(
              fp8_manifest(replaced(k_fp8_baseline, R"("scale_a": "sa")", R"("scale_a": "c")"))) ==
          prefix +
              "scale_a: expected the name of an f32 scalar argument (cuBLASLt's scale type "
              "is CUDA_R_32F), got 'c' (a buffer of dtype bf16)");
    CHECK(f.error_of(
              fp8_manifest(replaced(k_fp8_baseline, R"("scale_b": "sb")", R"("scale_b": "k")"))) ==
          prefix +
              "scale_b: expected the name of an f32 scalar argument (cuBLASLt's scale type "
              "is CUDA_R_32F), got 'k' (a scalar of dtype i32)");
}

TEST_CASE("a timed e4m3_gemm needs m, n, k multiples of 16 and counts of its shape") {
    fixture f;
    CHECK(f.error_of(fp8_manifest(k_fp8_baseline, R"("m": 40, "n": 16, "k": 48)")) ==
          "input_cases.json: field cases[1] ('perf').vendor_baseline.m: 'm' = 40 is not a "
          "multiple of 16; cuBLASLt's FP8 e4m3_gemm needs m, n and k multiples of 16");
    CHECK(f.error_of(replaced(fp8_manifest(), R"("count": "n*k")", R"("count": "n*k+16")")) ==
          "input_cases.json: field cases[1] ('perf').vendor_baseline.b: 'b' has count n*k+16 = "
          "784 but e4m3_gemm with m=32, n=16, k=48 needs n*k = 768");
    // A holdout's cases are never timed against the library: any sizes.
    const manifest m = f.read(fp8_manifest());
    f.dir.write("holdout.json", R"({"schema_version": 1, "cases": [
        {"name": "hold-40x24x56", "kind": "performance", "params": {"m": 40, "n": 24, "k": 56}}]})");
    CHECK(read_holdout_manifest(f.dir / "holdout.json", m).cases.size() == 1);
}

TEST_CASE("a manifest whose cases name two vendor libraries is refused at load") {
    fixture f;
    const std::string two =
        replaced(replaced(fp8_manifest(),
                          R"({ "name": "k", "dtype": "i32", "kind": "scalar", "value": "k" })",
                          R"({ "name": "k", "dtype": "i32", "kind": "scalar", "value": "k" },
    { "name": "x", "dtype": "f32", "kind": "input", "count": "m*k" },
    { "name": "y", "dtype": "f32", "kind": "input", "count": "k*n" },
    { "name": "z", "dtype": "f32", "kind": "output", "count": "m*n" })"),
                 R"("kind": "performance", "params")",
                 R"("kind": "performance", "vendor_baseline": { "library": "cublas", "op": "sgemm",
           "m": "m", "n": "n", "k": "k", "a": "x", "b": "y", "c": "z" }, "params")");
    CHECK(f.error_of(two) ==
          "input_cases.json: field cases[1].vendor_baseline.library: 'cublas' but case "
          "'correctness-61x45x83' calls 'cublaslt'; a manifest's vendor baselines share one "
          "library (one vendor request)");
    // The same case with a cuBLASLt baseline of its own is fine.
    CHECK(f.error_of(replaced(two, R"("library": "cublas", "op": "sgemm",
           "m": "m", "n": "n", "k": "k", "a": "x", "b": "y", "c": "z")",
                              R"("library": "cublaslt", "op": "e4m3_gemm",
           "m": "m", "n": "n", "k": "k", "scale_a": "sb")")) == "");
}

TEST_CASE("the vendor run sends the manifest's library: cublaslt, named in the lines after",
          "[integration]") {
    fixture f;
    // One timed case from files, so that the oracle is the test's own product.
    std::string json =
        replaced(fp8_manifest(), R"("count": "m*k" },)",
                 R"("count": "m*k", "init": { "kind": "file", "file": "a.bin" } },)");
    json = replaced(json, R"("count": "n*k" },)",
                    R"("count": "n*k", "init": { "kind": "file", "file": "b.bin" } },)");
    json = replaced(
        json,
        R"({ "name": "correctness-61x45x83", "kind": "correctness", "params": { "m": 61, "n": 45, "k": 83 } },)",
        "");
    std::string a, b;
    for (int i = 0; i < 32 * 48; ++i)
        a += static_cast<char>(double_to_fp8_bits((i % 23 - 11) / 8.0, fp8_format::e4m3));
    for (int i = 0; i < 16 * 48; ++i)
        b += static_cast<char>(double_to_fp8_bits((i % 13 - 6) / 4.0, fp8_format::e4m3));
    f.dir.write("a.bin", a);
    f.dir.write("b.bin", b);
    const manifest m = f.read(json);
    std::string expected;
    for (int i = 0; i < 32; ++i)
        for (int j = 0; j < 16; ++j) {
            double sum = 0;
            for (int p = 0; p < 48; ++p)
                sum += element_as_double(dtype::f8e4m3, a.data(), i * 48 + p) *
                       element_as_double(dtype::f8e4m3, b.data(), j * 48 + p);
            const auto bits = encode_scalar(dtype::bf16, 0.5 * 3 * sum);
            expected.append(bits.begin(), bits.end());
        }
    const oracle_files oracle{{{"perf", "c"}, f.dir.write("oracle-c.bin", expected)}};

    evaluator_settings settings;
    settings.harness = CUOPT_FAKE_HARNESS_BINARY;
    const auto runner = make_child_process_runner();
    const attempt_evaluator e(m, settings, *runner);
    const std::optional<attempt_result> r =
        e.evaluate_vendor(candidate{}, f.dir / "vendor", oracle);
    REQUIRE(r);
    INFO(r->reason);
    CHECK(r->verdict == verdict::valid);
    CHECK(r->cand.label == "cublaslt");
    const auto req = parse_json(test::read_text(f.dir / "vendor/request.json"), "request.json");
    CHECK(std::string(req["vendor"]["library"].GetString()) == "cublaslt");
    const auto& call = req["cases"][0]["vendor_call"];
    CHECK(std::string(call["op"].GetString()) == "e4m3_gemm");
    CHECK(std::string(call["layout"].GetString()) == "row_major_bt");
    CHECK(std::string(call["scale_a"].GetString()) == "sa");
    CHECK(std::string(call["scale_b"].GetString()) == "sb");
    const auto resp = test::read_response(f.dir / "vendor/response.json");
    CHECK(std::string(resp["vendor"]["library"].GetString()) == "cublaslt");
    CHECK(std::string(resp["cases"][0]["entry"].GetString()) == "cublaslt:e4m3_gemm");
    CHECK(vendor_outcome_of(&*r).library == "cublaslt");  // what the closing lines name
}

namespace {

// y (f32, rows) = the row sums of x (f32, rows x cols) through CUB, the reduction example's
// shape, beside an f64 input w and an f32 scalar s for the refusals.
const std::string k_sum_baseline =
    R"({ "library": "cub", "op": "segmented_sum", "layout": "row_major", "rows": "rows",
         "cols": "cols", "x": "x", "y": "y" })";

std::string sum_manifest(const std::string& baseline = k_sum_baseline) {
    return R"({ "schema_version": 1, "launch": { "grid": [1], "block": [1] },
  "args": [
    { "name": "x", "dtype": "f32", "kind": "input", "count": "rows*cols" },
    { "name": "w", "dtype": "f64", "kind": "input", "count": "rows*cols" },
    { "name": "y", "dtype": "f32", "kind": "output", "count": "rows" },
    { "name": "s", "dtype": "f32", "kind": "scalar", "value": 2 },
    { "name": "rows", "dtype": "i32", "kind": "scalar", "value": "rows" },
    { "name": "cols", "dtype": "i32", "kind": "scalar", "value": "cols" } ],
  "vendor_baseline": )" +
           baseline + R"(,
  "cases": [
    { "name": "correctness-5x3", "kind": "correctness", "params": { "rows": 5, "cols": 3 } },
    { "name": "perf", "kind": "performance", "params": { "rows": 4, "cols": 8 } } ] })";
}

}  // namespace

TEST_CASE("a segmented_sum baseline is read with rows, cols, x and y: x and y by default") {
    fixture f;
    const manifest m = f.read(sum_manifest());
    REQUIRE(m.vendor_baseline);
    const vendor_baseline_spec& v = *m.vendor_baseline;
    CHECK(v.library == "cub");
    CHECK(v.op == "segmented_sum");
    CHECK(v.layout == "row_major");
    CHECK(v.rows == "rows");
    CHECK(v.cols == "cols");
    CHECK(v.m.empty());
    REQUIRE(m.cases[1].vendor);
    CHECK(m.cases[1].vendor->y == "y");
    // Without x and y: the first input and the first output; without a layout: row_major.
    const manifest d = f.read(sum_manifest(
        R"({ "library": "cub", "op": "segmented_sum", "rows": "rows", "cols": "cols" })"));
    CHECK(d.vendor_baseline->x == "x");
    CHECK(d.vendor_baseline->y == "y");
    CHECK(d.vendor_baseline->layout == "row_major");
    // The bundled reduction example declares it for every case.
    const manifest example = read_manifest(std::filesystem::path(CUOPT_SOURCE_DIR) /
                                           "examples/reduction/input_cases.json");
    REQUIRE(example.vendor_baseline);
    CHECK(example.vendor_baseline->library == "cub");
    CHECK(example.vendor_baseline->op == "segmented_sum");
    for (const manifest_case& mc : example.cases) CHECK(mc.vendor);
}

TEST_CASE("a segmented_sum baseline's bad field is refused in one line naming it") {
    fixture f;
    const std::string prefix = "input_cases.json: field vendor_baseline.";
    auto with = [&](const std::string& from, const std::string& to) {
        return f.error_of(sum_manifest(replaced(k_sum_baseline, from, to)));
    };
    CHECK(with(R"("cub")", R"("cublas")") ==
          prefix +
              "op: segmented_sum is a cub op but the library is cublas; expected one of "
              "sgemm, dgemm, hgemm");
    CHECK(with(R"("row_major")", R"("col_major")") ==
          prefix +
              "layout: segmented_sum takes only row_major (x row-major rows x cols, one sum "
              "per row into y); got col_major");
    CHECK(with(R"("rows": "rows",)", "") ==
          prefix +
              "rows: missing; segmented_sum needs rows and cols, expressions over the "
              "case's params");
    CHECK(with(R"("rows": "rows")", R"("rows": "rows", "m": "rows")") ==
          prefix + "m: segmented_sum takes rows, cols, x and y, not m");
    CHECK(with(R"("x": "x")", R"("x": "x", "a": "x")") ==
          prefix + "a: segmented_sum takes rows, cols, x and y, not a");
    CHECK(with(R"("x": "x")", R"("x": "y")") ==
          prefix + "x: expected the name of an input buffer, got 'y'");
    CHECK(with(R"("y": "y")", R"("y": "x")") ==
          prefix + "y: expected the name of an output buffer, got 'x'");
    CHECK(with(R"("x": "x")", R"("x": "w")") ==
          prefix + "x: segmented_sum needs f32 buffers; 'w' is f64");
    CHECK(with(R"("y": "y")", R"("y": "y", "scale_a": "s")") ==
          prefix + "scale_a: segmented_sum takes no scales; only e4m3_gemm scales its product");
    // The gemms take none of segmented_sum's fields, and need their own.
    const std::string sgemm =
        R"({ "library": "cublas", "op": "sgemm", "m": "rows", "n": "1", "k": "cols" })";
    CHECK(f.error_of(
              sum_manifest(replaced(sgemm, R"("k": "cols")", R"("k": "cols", "rows": "rows")"))) ==
          prefix + "rows: sgemm takes m, n, k, a, b and c, not rows");
    CHECK(f.error_of(sum_manifest(replaced(sgemm, R"(, "k": "cols")", ""))) ==
          prefix + "k: missing; sgemm needs m, n and k, expressions over the case's params");
}

TEST_CASE("a timed segmented_sum needs counts of its shape and sizes of at least 1") {
    fixture f;
    CHECK(f.error_of(replaced(sum_manifest(), R"("count": "rows" })", R"("count": "rows+1" })")) ==
          "input_cases.json: field cases[1] ('perf').vendor_baseline.y: 'y' has count rows+1 = 5 "
          "but segmented_sum with rows=4, cols=8 needs rows = 4");
    CHECK(f.error_of(
              sum_manifest(replaced(k_sum_baseline, R"("cols": "cols")", R"("cols": "cols-3")"))) ==
          "input_cases.json: field cases[0] ('correctness-5x3').vendor_baseline.cols: 'cols-3' is "
          "below 1");
    CHECK(f.error_of(
              sum_manifest(replaced(k_sum_baseline, R"("cols": "cols")", R"("cols": "2*cols")"))) ==
          "input_cases.json: field cases[1] ('perf').vendor_baseline.x: 'x' has count rows*cols = "
          "32 but segmented_sum with rows=4, cols=16 needs rows*cols = 64");
}

TEST_CASE("the vendor run sends cub's segmented_sum and its sums meet the oracle",
          "[integration]") {
    fixture f;
    std::string json =
        replaced(sum_manifest(), R"("count": "rows*cols" },)",
                 R"("count": "rows*cols", "init": { "kind": "file", "file": "x.bin" } },)");
    json = replaced(
        json,
        R"({ "name": "correctness-5x3", "kind": "correctness", "params": { "rows": 5, "cols": 3 } },)",
        "");
    std::vector<float> x(32);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
    f.dir.write_values("x.bin", x);
    const manifest m = f.read(json);
    std::vector<float> sums(4, 0.0f);
    for (int r = 0; r < 4; ++r) {
        double sum = 0;
        for (int j = 0; j < 8; ++j) sum += x[r * 8 + j];
        sums[r] = static_cast<float>(sum);
    }
    evaluator_settings settings;
    settings.harness = CUOPT_FAKE_HARNESS_BINARY;
    const auto runner = make_child_process_runner();
    const attempt_evaluator e(m, settings, *runner);
    const oracle_files oracle{{{"perf", "y"}, f.dir.write_values("oracle-y.bin", sums)}};
    const std::optional<attempt_result> r =
        e.evaluate_vendor(candidate{}, f.dir / "vendor", oracle);
    REQUIRE(r);
    INFO(r->reason);
    CHECK(r->verdict == verdict::valid);
    CHECK(r->cand.label == "cub");
    const auto req = parse_json(test::read_text(f.dir / "vendor/request.json"), "request.json");
    CHECK(std::string(req["vendor"]["library"].GetString()) == "cub");
    const auto& call = req["cases"][0]["vendor_call"];
    CHECK(std::string(call["op"].GetString()) == "segmented_sum");
    CHECK(call["rows"].GetInt() == 4);
    CHECK(call["cols"].GetInt() == 8);
    CHECK(std::string(call["x"].GetString()) == "x");
    CHECK_FALSE(call.HasMember("m"));
    const auto resp = test::read_response(f.dir / "vendor/response.json");
    CHECK(std::string(resp["cases"][0]["entry"].GetString()) == "cub:segmented_sum");
    CHECK(vendor_outcome_of(&*r).library == "cub");
    // An oracle one row off: the same run is judged wrong.
    sums[2] += 1.0f;
    const oracle_files wrong{{{"perf", "y"}, f.dir.write_values("oracle-y2.bin", sums)}};
    const auto bad = e.evaluate_vendor(candidate{}, f.dir / "vendor-2", wrong);
    REQUIRE(bad);
    CHECK(bad->verdict != verdict::valid);
}
