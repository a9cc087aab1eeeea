// [gpu] tests of vendor-baseline requests on the real cuda-harness: cuBLAS's gemms
// against a float64 CPU reference, timed like a kernel, answered without a compile block.
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

// The largest |c - ref| / max(1, |ref|) over C, against a float64 product of the dumped inputs.
double worst_relative_error(const test::scratch_folder& dir, dtype t, bool row_major, int m, int n,
                            int k) {
    const auto a = values(dir, "a.bin", t), b = values(dir, "b.bin", t),
               c = values(dir, "c.bin", t);
    REQUIRE(c.size() == static_cast<std::size_t>(m) * n);
    double worst = 0;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double ref = 0;
            for (int p = 0; p < k; ++p)
                ref += row_major ? a[i * k + p] * b[p * n + j] : a[i + p * m] * b[p + j * k];
            const double got = c[row_major ? i * n + j : i + j * m];
            REQUIRE_FALSE(std::isnan(got));
            worst = std::max(worst, std::fabs(got - ref) / std::max(1.0, std::fabs(ref)));
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
    CHECK(worst_relative_error(f.dir, dtype::f32, true, 256, 192, 128) < 1e-4);
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
    CHECK(worst_relative_error(f.dir, dtype::f32, false, 96, 80, 64) < 1e-4);
    f.run(gemm_request("dgemm", "row_major", "f64", 96, 80, 64));
    CHECK(worst_relative_error(f.dir, dtype::f64, true, 96, 80, 64) < 1e-12);
    const auto doc = f.run(gemm_request("hgemm", "row_major", "f16", 96, 80, 64));
    CHECK(std::string(doc["cases"][0]["entry"].GetString()) == "cublas:hgemm");
    // f32 accumulation, one f16 rounding of the result: about 2^-11 relative.
    CHECK(worst_relative_error(f.dir, dtype::f16, true, 96, 80, 64) < 2e-3);
}
