// [gpu] tests of vendor-baseline requests on the real cuda-harness: cuBLAS's gemms,
// cuBLASLt's FP8 e4m3_gemm and CUB's segmented_sum against a float64 CPU reference, timed like a
// kernel, answered without a compile block.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "common/dtype.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

// A (m x k) and B (k x n) generated, C (m x n) written; A and B dumped for the reference.
std::string gemm_request(const std::string& op, const std::string& layout, const char* dtype, int m,
                         int n, int k) {
    auto count = [](long long x) { return std::to_string(x); };
    return R"({ "schema_version": 1, "vendor": { "library": "cublas" },
  "timing": { "warmup": 2, "iterations": 10, "fresh_inputs": true },
  "cases": [ { "name": "g", "vendor_call": { "op": ")" +
           op + R"(", "layout": ")" + layout + R"(", "m": )" + count(m) + R"(, "n": )" + count(n) +
           R"(, "k": )" + count(k) + R"(, "a": "a", "b": "b", "c": "c" }, "args": [
    { "name": "a", "dtype": ")" +
           dtype + R"(", "count": )" + count(1ll * m * k) +
           R"(, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": 7}, "input_dump_file": "a.bin" },
    { "name": "b", "dtype": ")" +
           dtype + R"(", "count": )" + count(1ll * k * n) +
           R"(, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": 8}, "input_dump_file": "b.bin" },
    { "name": "c", "dtype": ")" +
           dtype + R"(", "count": )" + count(1ll * m * n) + R"(, "output_file": "c.bin" } ] } ] })";
}

std::vector<double> values(const test::scratch_folder& dir, const char* file, dtype t) {
    const std::string bytes = test::read_text(dir / file);
    std::vector<double> out(bytes.size() / dtype_size(t));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = element_as_double(t, bytes.data(), i);
    return out;
}

// The largest |c - ref| / max(1, |ref|) over C, against a float64 product of the dumped inputs
// (`layout`: row_major, col_major or row_major_bt, where B is stored n x k).
double worst_relative_error(const test::scratch_folder& dir, dtype t, const std::string& layout,
                            int m, int n, int k) {
    const bool row_major = layout != "col_major", bt = layout == "row_major_bt";
    const auto a = values(dir, "a.bin", t), b = values(dir, "b.bin", t),
               c = values(dir, "c.bin", t);
    REQUIRE(c.size() == static_cast<std::size_t>(m) * n);
    double worst = 0;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double ref = 0;
            for (int p = 0; p < k; ++p)
                ref += bt          ? a[i * k + p] * b[j * k + p]
                       : row_major ? a[i * k + p] * b[p * n + j]
                                   : a[i + p * m] * b[p + j * k];
            const double got = c[row_major ? i * n + j : i + j * m];
            REQUIRE_FALSE(std::isnan(got));
            worst = std::max(worst, std::fabs(got - ref) / std::max(1.0, std::fabs(ref)));
        }
    return worst;
}

// e4m3_gemm (row_major_bt): A (m x k) and B (stored n x k) generated in f8e4m3 and dumped, C
// (m x n) of `c_dtype`, f32 scalars sa = 0.5 and sb = 2; `scales`: the vendor_call's scale fields.
std::string e4m3_request(const char* c_dtype, int m, int n, int k, const std::string& scales) {
    auto count = [](long long x) { return std::to_string(x); };
    return R"({ "schema_version": 1, "vendor": { "library": "cublaslt" },
  "timing": { "warmup": 2, "iterations": 10, "fresh_inputs": true },
  "cases": [ { "name": "g", "vendor_call": { "op": "e4m3_gemm", "layout": "row_major_bt", "m": )" +
           count(m) + R"(, "n": )" + count(n) + R"(, "k": )" + count(k) +
           R"(, "a": "a", "b": "b", "c": "c")" + scales + R"( }, "args": [
    { "name": "a", "dtype": "f8e4m3", "count": )" +
           count(1ll * m * k) +
           R"(, "generator": {"kind": "uniform", "low": -2, "high": 2, "seed": 7}, "input_dump_file": "a.bin" },
    { "name": "b", "dtype": "f8e4m3", "count": )" +
           count(1ll * n * k) +
           R"(, "generator": {"kind": "uniform", "low": -2, "high": 2, "seed": 8}, "input_dump_file": "b.bin" },
    { "name": "c", "dtype": ")" +
           c_dtype + R"(", "count": )" + count(1ll * m * n) + R"(, "output_file": "c.bin" },
    { "name": "sa", "dtype": "f32", "value": 0.5 },
    { "name": "sb", "dtype": "f32", "value": 2 } ] } ] })";
}

// bf16's spacing at |x| (8 significant bits).
double bf16_ulp(double x) {
    int exponent = 0;
    std::frexp(std::max(std::fabs(x), 1e-30), &exponent);
    return std::ldexp(1.0, exponent - 8);
}

// The largest |c - ref| over its allowance, every element of C against `scale` times a float64
// product of the dumped fp8 inputs (B stored n x k). The allowance: bf16 one ulp of ref, f32
// 1e-5 of |ref|, plus 2^-12 of scale * sum_p |A[i][p] B[j][p]|: Hopper's FP8 tensor cores keep
// about 13 bits of a partial sum (FAST_ACCUM off promotes them to f32 between chunks of k), and
// on an H200 the error reached 0.96 x 2^-13 of that sum at k = 64 and less at larger k.
double worst_e4m3_error(const test::scratch_folder& dir, dtype c_type, int m, int n, int k,
                        double scale) {
    const auto a = values(dir, "a.bin", dtype::f8e4m3), b = values(dir, "b.bin", dtype::f8e4m3),
               c = values(dir, "c.bin", c_type);
    REQUIRE(c.size() == static_cast<std::size_t>(m) * n);
    double worst = 0;
    int nonzero = 0;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double sum = 0, magnitude = 0;
            for (int p = 0; p < k; ++p) {
                sum += a[i * k + p] * b[j * k + p];
                magnitude += std::fabs(a[i * k + p] * b[j * k + p]);
            }
            const double ref = scale * sum, got = c[i * n + j];
            REQUIRE_FALSE(std::isnan(got));
            nonzero += ref != 0;
            const double allowed = (c_type == dtype::bf16 ? bf16_ulp(ref) : 1e-5 * std::fabs(ref)) +
                                   std::ldexp(scale * magnitude, -12);
            worst = std::max(worst, std::fabs(got - ref) / allowed);
        }
    CHECK(nonzero > m * n / 2);  // the inputs are not mostly zeros
    return worst;
}

// segmented_sum, two cases in one request (CUB's storage sized for each): "wide" (7 rows of
// 5003) and "tall" (4096 rows of 33), x generated in [-0.5, 1.5] and dumped, y written.
std::string sum_request() {
    auto one = [](const char* name, int rows, int cols, int seed) {
        const std::string r = std::to_string(rows), c = std::to_string(cols);
        return std::string(R"({ "name": ")") + name +
               R"(", "vendor_call": { "op": "segmented_sum", "layout": "row_major", "rows": )" + r +
               R"(, "cols": )" + c + R"(, "x": "x", "y": "y" }, "args": [
    { "name": "x", "dtype": "f32", "count": )" +
               std::to_string(1ll * rows * cols) +
               R"(, "generator": {"kind": "uniform", "low": -0.5, "high": 1.5, "seed": )" +
               std::to_string(seed) + R"(}, "input_dump_file": ")" + name + R"(.x.bin" },
    { "name": "y", "dtype": "f32", "count": )" +
               r + R"(, "output_file": ")" + name + R"(.y.bin" } ] })";
    };
    return R"({ "schema_version": 1, "vendor": { "library": "cub" },
  "timing": { "warmup": 2, "iterations": 10 },
  "cases": [ )" +
           one("wide", 7, 5003, 11) + ", " + one("tall", 4096, 33, 12) + " ] }";
}

// The largest |y - ref| over its allowance, each row's sum against a float64 sum of the dumped x:
// f32 sums in any order stay within (cols - 1) * 2^-24 of the sum of |x|. That allows 0.9 in a
// wide row (sum near 2500) and 4e-5 in a tall one (near 16), where another row's sum is off by
// about 40 and 3, and a dropped or doubled element (tall) by about 0.5.
double worst_row_sum_error(const test::scratch_folder& dir, const std::string& name, int rows,
                           int cols) {
    const auto x = values(dir, (name + ".x.bin").c_str(), dtype::f32),
               y = values(dir, (name + ".y.bin").c_str(), dtype::f32);
    REQUIRE(x.size() == static_cast<std::size_t>(rows) * cols);
    REQUIRE(y.size() == static_cast<std::size_t>(rows));
    double worst = 0;
    for (int r = 0; r < rows; ++r) {
        double sum = 0, magnitude = 0;
        for (int j = 0; j < cols; ++j) {
            sum += x[static_cast<std::size_t>(r) * cols + j];
            magnitude += std::fabs(x[static_cast<std::size_t>(r) * cols + j]);
        }
        REQUIRE_FALSE(std::isnan(y[r]));
        const double allowed = std::ldexp(magnitude, -24) * (cols - 1) + 1e-30;
        worst = std::max(worst, std::fabs(y[r] - sum) / allowed);
    }
    return worst;
}

struct fixture {
    test::scratch_folder dir;
    rapidjson::Document run(const std::string& json) {
        dir.write("req.json", json);
        const auto r = test::run_harness({(dir / "req.json").string()});
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
        return test::read_response(dir / "response.json");
    }
};

}  // namespace

TEST_CASE("a 256x192x128 row-major cuBLAS sgemm matches a CPU reference within 1e-4", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    fixture f;
    const auto doc = f.run(gemm_request("sgemm", "row_major", "f32", 256, 192, 128));
    CHECK(worst_relative_error(f.dir, dtype::f32, "row_major", 256, 192, 128) < 1e-4);
    CHECK(doc["compile"].IsNull());
    CHECK(std::string(doc["vendor"]["library"].GetString()) == "cublas");
    CHECK(std::string(doc["vendor"]["math_mode"].GetString()) == "CUBLAS_DEFAULT_MATH");
    const auto& c = doc["cases"][0];
    CHECK(std::string(c["entry"].GetString()) == "cublas:sgemm");
    CHECK(c["checked_launch_index"].GetUint64() == 12);
    CHECK(c["timing"]["samples_ms"].Size() == 10);
    CHECK(c["timing"]["median_ms"].GetDouble() > 0);
    CHECK_FALSE(c["timing"]["stream_hold_timed_out"].GetBool());
    CHECK(c["outputs"][0]["unwritten"].GetUint64() == 0);
}

TEST_CASE("column-major sgemm, dgemm and hgemm through cuBLAS match the CPU too", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    fixture f;
    f.run(gemm_request("sgemm", "col_major", "f32", 96, 80, 64));
    CHECK(worst_relative_error(f.dir, dtype::f32, "col_major", 96, 80, 64) < 1e-4);
    f.run(gemm_request("dgemm", "row_major", "f64", 96, 80, 64));
    CHECK(worst_relative_error(f.dir, dtype::f64, "row_major", 96, 80, 64) < 1e-12);
    const auto doc = f.run(gemm_request("hgemm", "row_major", "f16", 96, 80, 64));
    CHECK(std::string(doc["cases"][0]["entry"].GetString()) == "cublas:hgemm");
    // f32 accumulation, one f16 rounding of the result: about 2^-11 relative.
    CHECK(worst_relative_error(f.dir, dtype::f16, "row_major", 96, 80, 64) < 2e-3);
}

TEST_CASE("row_major_bt (B stored n x k) sgemm, dgemm and hgemm through cuBLAS match the CPU",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    fixture f;
    f.run(gemm_request("sgemm", "row_major_bt", "f32", 96, 80, 64));
    CHECK(worst_relative_error(f.dir, dtype::f32, "row_major_bt", 96, 80, 64) < 1e-4);
    f.run(gemm_request("dgemm", "row_major_bt", "f64", 96, 80, 64));
    CHECK(worst_relative_error(f.dir, dtype::f64, "row_major_bt", 96, 80, 64) < 1e-12);
    f.run(gemm_request("hgemm", "row_major_bt", "f16", 96, 80, 64));
    CHECK(worst_relative_error(f.dir, dtype::f16, "row_major_bt", 96, 80, 64) < 2e-3);
}

TEST_CASE(
    "cuBLASLt's e4m3_gemm with bf16 and f32 C and scales 0.5 and 2 matches the CPU per element",
    "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    fixture f;
    const std::string both = R"(, "scale_a": "sa", "scale_b": "sb")";
    const auto doc = f.run(e4m3_request("bf16", 192, 128, 256, both));
    CHECK(worst_e4m3_error(f.dir, dtype::bf16, 192, 128, 256, 0.5 * 2) <= 1.0);
    CHECK(doc["compile"].IsNull());
    CHECK(std::string(doc["vendor"]["library"].GetString()) == "cublaslt");
    CHECK_THAT(doc["vendor"]["file"].GetString(), Catch::StartsWith("libcublasLt.so"));
    CHECK(std::string(doc["vendor"]["math_mode"].GetString()) ==
          "CUBLAS_COMPUTE_32F, FAST_ACCUM off");
    const auto& c = doc["cases"][0];
    CHECK(std::string(c["entry"].GetString()) == "cublaslt:e4m3_gemm");
    CHECK(c["timing"]["samples_ms"].Size() == 10);
    CHECK(c["timing"]["median_ms"].GetDouble() > 0);
    CHECK(c["outputs"][0]["unwritten"].GetUint64() == 0);

    f.run(e4m3_request("f32", 192, 128, 256, both));
    CHECK(worst_e4m3_error(f.dir, dtype::f32, 192, 128, 256, 0.5 * 2) <= 1.0);
    // One scale alone (scale_b 1): the product is halved, so the scale pointers are honoured.
    f.run(e4m3_request("f32", 64, 32, 128, R"(, "scale_a": "sa")"));
    CHECK(worst_e4m3_error(f.dir, dtype::f32, 64, 32, 128, 0.5) <= 1.0);
}

TEST_CASE("CUB's segmented_sum through libcuopt_cub.so matches a CPU sum of every row", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    fixture f;
    const auto doc = f.run(sum_request());
    CHECK(worst_row_sum_error(f.dir, "wide", 7, 5003) <= 1.0);
    CHECK(worst_row_sum_error(f.dir, "tall", 4096, 33) <= 1.0);
    CHECK(doc["compile"].IsNull());
    CHECK(std::string(doc["vendor"]["library"].GetString()) == "cub");
    CHECK_THAT(doc["vendor"]["file"].GetString(), Catch::EndsWith("/libcuopt_cub.so"));
    CHECK_THAT(doc["vendor"]["version"].GetString(),
               Catch::Matches("[1-9][0-9]*\\.[0-9]+\\.[0-9]+"));
    for (const auto& c : doc["cases"].GetArray()) {
        INFO(c["name"].GetString());
        CHECK(std::string(c["status"].GetString()) == "ok");
        CHECK(std::string(c["entry"].GetString()) == "cub:segmented_sum");
        CHECK(c["timing"]["samples_ms"].Size() == 10);
        CHECK(c["timing"]["median_ms"].GetDouble() > 0);
        CHECK(c["outputs"][0]["unwritten"].GetUint64() == 0);
    }
}
