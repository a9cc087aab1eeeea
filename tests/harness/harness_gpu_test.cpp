// [gpu] tests: the real cuda-harness on a real device. Each skips with the reason
// printed when no device is usable here.
#include <catch2/catch.hpp>
#include <cmath>

#include "common/counter_rng.h"
#include "common/dtype.hpp"
#include "common/inputs_key.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

const char* k_kernels = R"(
extern "C" __global__ void axpb(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + b; }
extern "C" __global__ void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) { float acc = 0.f; for (int p = 0; p < k; ++p) acc += a[row * k + p] * b[p * n + col];
    c[row * n + col] = acc; } }
extern "C" __global__ void matmul_skip_last_row(const float* a, const float* b, float* c, int m, int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m - 1 && col < n) { float acc = 0.f; for (int p = 0; p < k; ++p) acc += a[row * k + p] * b[p * n + col];
    c[row * n + col] = acc; } }
extern "C" __global__ void add_one_in_place(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
__device__ float busy(float v) { for (int r = 0; r < 4000; ++r) v = v * 0.999f + 0.001f; return v; }
extern "C" __global__ void honest(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = busy(x[i]); }
extern "C" __global__ void skip_if_written(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  if (!isnan(y[i])) return;  // "already computed": only an unpoisoned output lets this cheat
  y[i] = busy(x[i]); }
extern "C" __global__ void copy_f32(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }
extern "C" __global__ void copy_i32(const int* x, int* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }
extern "C" __global__ void illegal(float* p, int n) { p[(1ull << 40) + threadIdx.x] = 1.0f; }
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void scale_half(const __half* x, __nv_bfloat16* y, __half s, float* scratch, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { scratch[i] = __half2float(x[i]); y[i] = __float2bfloat16(scratch[i] * __half2float(s)); } }
#include <cuda_fp8.h>
extern "C" __global__ void scale_fp8(const __nv_fp8_e4m3* x, const __nv_fp8_e5m2* w, __nv_fp8_e5m2* y,
                                     __nv_fp8_e4m3 s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __nv_fp8_e5m2(float(x[i]) * float(s) + float(w[i])); }
extern "C" __global__ void copy_fp8(const __nv_fp8_e4m3* x, const __nv_fp8_e5m2* w, __nv_fp8_e4m3* y,
                                    __nv_fp8_e5m2* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { y[i] = x[i]; z[i] = w[i]; } }
)";

struct gpu_fixture {
    test::scratch_folder dir;
    gpu_fixture() { dir.write("k.cu", k_kernels); }
    test::process_result run(const std::string& json) {
        dir.write("req.json", json);
        return test::run_harness(
            {(dir / "req.json").string(), "--cache-dir", test::test_cache_dir()});
    }
    rapidjson::Document response() { return test::read_response(dir / "response.json"); }
};

std::string header(const std::string& entry, int warmup = 3, int iterations = 10,
                   bool fresh = false) {
    return R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": ")" + entry +
           R"(" }, "timing": { "warmup": )" + std::to_string(warmup) + R"(, "iterations": )" +
           std::to_string(iterations) + R"(, "fresh_inputs": )" + (fresh ? "true" : "false") +
           " }, ";
}

std::string matmul_case(const std::string& name, int m, int n, int k) {
    const std::string mn = std::to_string(m * n), mk = std::to_string(m * k),
                      kn = std::to_string(k * n);
    return R"({ "name": ")" + name + R"(", "launch": { "grid": [)" + std::to_string((n + 15) / 16) +
           ", " + std::to_string((m + 15) / 16) + R"(], "block": [16, 16] }, "args": [
      { "name": "a", "dtype": "f32", "count": )" +
           mk +
           R"(, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": 1}, "input_dump_file": ")" +
           name + R"(/a.bin" },
      { "name": "b", "dtype": "f32", "count": )" +
           kn +
           R"(, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": 2}, "input_dump_file": ")" +
           name + R"(/b.bin" },
      { "name": "c", "dtype": "f32", "count": )" +
           mn + R"(, "output_file": ")" + name + R"(/c.bin" },
      { "name": "m", "dtype": "i32", "value": )" +
           std::to_string(m) + R"( },
      { "name": "n", "dtype": "i32", "value": )" +
           std::to_string(n) + R"( },
      { "name": "k", "dtype": "i32", "value": )" +
           std::to_string(k) + R"( } ] })";
}

// Relative L2 error of c against a float64 reference computed from the dumped inputs.
double matmul_error(const test::scratch_folder& dir, const std::string& name, int m, int n, int k) {
    const auto a = test::read_values<float>(dir / (name + "/a.bin"));
    const auto b = test::read_values<float>(dir / (name + "/b.bin"));
    const auto c = test::read_values<float>(dir / (name + "/c.bin"));
    REQUIRE(c.size() == static_cast<std::size_t>(m * n));
    double diff = 0, norm = 0;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double ref = 0;
            for (int p = 0; p < k; ++p) ref += static_cast<double>(a[i * k + p]) * b[p * n + j];
            REQUIRE_FALSE(std::isnan(c[i * n + j]));
            diff += (c[i * n + j] - ref) * (c[i * n + j] - ref);
            norm += ref * ref;
        }
    return std::sqrt(diff / norm);
}

}  // namespace

TEST_CASE("an elementwise kernel's outputs match the CPU and its timing is complete", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    std::vector<float> x(5000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i) - 300.0f;
    f.dir.write_values("x.bin", x);
    const auto r = f.run(header("axpb", 2, 25) +
                         R"("cases": [ { "name": "e", "launch": { "grid": [20], "block": [256] },
      "args": [ { "name": "x", "dtype": "f32", "count": 5000, "input_file": "x.bin" },
                { "name": "y", "dtype": "f32", "count": 5000, "output_file": "y.bin" },
                { "name": "a", "dtype": "f32", "value": 1.5 }, { "name": "b", "dtype": "f32", "value": -2 },
                { "name": "n", "dtype": "i32", "value": 5000 } ] } ] })");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto doc = f.response();
    const auto& c = doc["cases"][0];
    CHECK(c["outputs"][0]["unwritten"].GetUint64() == 0);
    const auto y = test::read_values<float>(f.dir / "y.bin");
    for (std::size_t i = 0; i < x.size(); ++i)
        REQUIRE(y[i] == Approx(1.5f * x[i] - 2.0f).epsilon(1e-6));
    const auto& t = c["timing"];
    CHECK(t["samples_ms"].GetArray().Size() == 25);
    CHECK(t["min_ms"].GetDouble() > 0);
    CHECK(t["min_ms"].GetDouble() <= t["median_ms"].GetDouble());
    CHECK(t["median_ms"].GetDouble() <= t["max_ms"].GetDouble());
    CHECK_FALSE(t["stream_hold_timed_out"].GetBool());
    CHECK(std::string(doc["device"]["arch"].GetString()).rfind("sm_", 0) == 0);
    CHECK(std::string(doc["compile"]["resources"]["source"].GetString()) == "driver");
}

TEST_CASE("the pilot matmul at 31x37x29 and 256^3 matches a float64 CPU reference", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    const auto r = f.run(header("matmul_f32") + R"("cases": [ )" + matmul_case("odd", 31, 37, 29) +
                         ", " + matmul_case("cube", 256, 256, 256) + "] }");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(matmul_error(f.dir, "odd", 31, 37, 29) < 1e-6);
    CHECK(matmul_error(f.dir, "cube", 256, 256, 256) < 1e-6);
    const auto doc = f.response();
    for (const auto& c : doc["cases"].GetArray())
        for (const auto& o : c["outputs"].GetArray()) CHECK(o["unwritten"].GetUint64() == 0);
}

TEST_CASE("poisoning catches a kernel that skips the last row", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    const auto r = f.run(header("matmul_skip_last_row") + R"("cases": [ )" +
                         matmul_case("odd", 31, 37, 29) + "] }");
    REQUIRE(r.exit_code == 0);
    const auto doc = f.response();
    CHECK(doc["cases"][0]["outputs"][2]["unwritten"].GetUint64() == 37);
    const auto c = test::read_values<float>(f.dir / "odd/c.bin");
    CHECK(std::isnan(c[30 * 37]));
    CHECK_FALSE(std::isnan(c[29 * 37]));
}

TEST_CASE("an in-place kernel sees its restored inputs before every launch", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    std::vector<float> x(1000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    f.dir.write_values("x.bin", x);
    const auto r = f.run(header("add_one_in_place", 5, 20) +
                         R"("cases": [ { "name": "ip", "launch": { "grid": [4], "block": [256] },
      "args": [ { "name": "x", "dtype": "f32", "count": 1000, "input_file": "x.bin", "output_file": "x.out.bin" },
                { "name": "n", "dtype": "i32", "value": 1000 } ] } ] })");
    REQUIRE(r.exit_code == 0);
    const auto out = test::read_values<float>(f.dir / "x.out.bin");
    for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(out[i] == x[i] + 1.0f);  // not + 26
}

TEST_CASE("a kernel that skips work when its output looks written is timed like the honest one",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    const std::string args = R"("launch": { "grid": [1056], "block": [256] }, "args": [
        { "name": "x", "dtype": "f32", "count": 270336, "generator": {"kind": "uniform", "low": 0, "high": 1} },
        { "name": "y", "dtype": "f32", "count": 270336, "output_file": "y.bin" },
        { "name": "n", "dtype": "i32", "value": 270336 } ] } ] })";
    REQUIRE(f.run(header("honest", 3, 30) + R"("cases": [ { "name": "h", )" + args).exit_code == 0);
    const double honest_ms = f.response()["cases"][0]["timing"]["median_ms"].GetDouble();
    REQUIRE(f.run(header("skip_if_written", 3, 30) + R"("cases": [ { "name": "s", )" + args)
                .exit_code == 0);
    const auto doc = f.response();
    const double cheat_ms = doc["cases"][0]["timing"]["median_ms"].GetDouble();
    INFO("honest " << honest_ms << " ms, skip-if-written " << cheat_ms << " ms");
    CHECK(cheat_ms > 0.9 * honest_ms);
    CHECK(doc["cases"][0]["outputs"][0]["unwritten"].GetUint64() == 0);
}

TEST_CASE("an illegal-address kernel gives cuda_error - exit 13 - and skips the remaining cases",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    f.dir.write("out/second.bin", "stale");
    const std::string one = R"("launch": { "grid": [1], "block": [32] }, "args": [
        { "name": "p", "dtype": "f32", "count": 32, "output_file": "out/)";
    const auto r =
        f.run(header("illegal") + R"("cases": [ { "name": "first", )" + one + R"(first.bin" },
        { "name": "n", "dtype": "i32", "value": 32 } ] }, { "name": "second", )" +
              one + R"(second.bin" },
        { "name": "n", "dtype": "i32", "value": 32 } ] } ] })");
    CHECK(r.exit_code == 13);
    const auto doc = f.response();
    REQUIRE(doc["cases"].Size() == 2);
    CHECK(std::string(doc["status"].GetString()) == "cuda_error");
    CHECK(std::string(doc["cases"][0]["status"].GetString()) == "cuda_error");
    CHECK_THAT(doc["cases"][0]["error"].GetString(), Catch::Contains("CUDA_ERROR_ILLEGAL_ADDRESS"));
    CHECK(std::string(doc["cases"][1]["status"].GetString()) == "skipped");
    CHECK(std::string(doc["cases"][1]["error"].GetString()) == "skipped: context lost");
    CHECK_FALSE(std::filesystem::exists(f.dir / "out/first.bin"));
    // A file from an earlier run is never touched; the response lists no output for the
    // skipped case, so nothing passes it off as this run's result.
    CHECK(test::read_text(f.dir / "out/second.bin") == "stale");
    CHECK(doc["cases"][1]["outputs"].Size() == 0);
}

TEST_CASE("fresh inputs change every launch and the checked launch's inputs are reproducible",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    const auto r = f.run(header("copy_f32", 4, 12, true) +
                         R"("cases": [ { "name": "fr", "launch": { "grid": [8], "block": [128] },
      "args": [ { "name": "x", "dtype": "f32", "count": 1000, "generator": {"kind": "uniform", "low": -3, "high": 5, "seed": 42},
                  "input_dump_file": "x.bin" },
                { "name": "y", "dtype": "f32", "count": 1000, "output_file": "y.bin" },
                { "name": "n", "dtype": "i32", "value": 1000 } ] } ] })");
    REQUIRE(r.exit_code == 0);
    const auto doc = f.response();
    const std::uint64_t launch = doc["cases"][0]["checked_launch_index"].GetUint64();
    CHECK(launch == 4 + 12);
    const auto x = test::read_values<float>(f.dir / "x.bin");
    const auto y = test::read_values<float>(f.dir / "y.bin");
    REQUIRE(x.size() == 1000);
    CHECK(x == y);  // the outputs were computed from exactly the dumped inputs
    int differs_from_first_launch = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float expected =
            static_cast<float>(cuopt_rng::uniform(cuopt_rng::random_bits(42, launch, i), -3, 5));
        REQUIRE(x[i] == expected);  // the CPU regenerates them bit for bit
        differs_from_first_launch +=
            x[i] != static_cast<float>(cuopt_rng::uniform(cuopt_rng::random_bits(42, 0, i), -3, 5));
    }
    CHECK(differs_from_first_launch > 990);

    // A single untimed launch based at the checked launch's index sees exactly the same inputs.
    REQUIRE(f.run(header("copy_f32", 4, 12, true) +
                  R"("cases": [ { "name": "fr", "measure": false, "launch_index_base": 16,
      "launch": { "grid": [8], "block": [128] },
      "args": [ { "name": "x", "dtype": "f32", "count": 1000, "generator": {"kind": "uniform", "low": -3, "high": 5, "seed": 42},
                  "input_dump_file": "x2.bin" },
                { "name": "y", "dtype": "f32", "count": 1000, "output_file": "y2.bin" },
                { "name": "n", "dtype": "i32", "value": 1000 } ] } ] })")
                .exit_code == 0);
    CHECK(f.response()["cases"][0]["checked_launch_index"].GetUint64() == 16);
    CHECK(test::read_values<float>(f.dir / "y2.bin") == y);
}

TEST_CASE(
    "keyed inputs: the GPU's ChaCha20 stream is the CPU's, bit for bit, and not the public one",
    "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    const inputs_key_words key = draw_inputs_key();
    write_inputs_key(f.dir / "inputs-key.json", key);
    // The request in a folder of its own (as an attempt folder), the key one level up in --root.
    f.dir.write("attempt/k.cu", k_kernels);
    f.dir.write("attempt/req.json", header("copy_i32", 2, 5, true) + R"(
      "inputs_key": { "file": "../inputs-key.json", "round": 7 },
      "cases": [ { "name": "kf", "launch": { "grid": [8], "block": [128] },
      "args": [ { "name": "x", "dtype": "i32", "count": 1001,
                  "generator": {"kind": "int_range", "low": -1000000, "high": 1000000, "seed": 42},
                  "input_dump_file": "x.bin" },
                { "name": "y", "dtype": "i32", "count": 1001, "output_file": "y.bin" },
                { "name": "n", "dtype": "i32", "value": 1001 } ] } ] })");
    const auto r = test::run_harness({(f.dir / "attempt" / "req.json").string(), "--cache-dir",
                                      test::test_cache_dir(), "--root", f.dir.path().string()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto doc = test::read_response(f.dir / "attempt" / "response.json");
    const std::uint64_t launch = doc["cases"][0]["checked_launch_index"].GetUint64();
    const auto x = test::read_values<std::int32_t>(f.dir / "attempt" / "x.bin");
    REQUIRE(x.size() == 1001);
    CHECK(test::read_values<std::int32_t>(f.dir / "attempt" / "y.bin") == x);
    cuopt_rng::stream_key k{};
    const auto words = stream_key_of(key, 7, 42);
    std::copy(words.begin(), words.end(), k.words);
    int public_matches = 0;
    for (std::uint64_t i = 0; i < x.size(); ++i) {
        REQUIRE(x[i] ==
                cuopt_rng::int_range(cuopt_rng::keyed_bits(k, launch, i), -1000000, 1000000));
        public_matches +=
            x[i] == cuopt_rng::int_range(cuopt_rng::random_bits(42, launch, i), -1000000, 1000000);
    }
    CHECK(public_matches < 5);
    // Without --root the key lies outside what the harness may read: refused, never unkeyed.
    const auto refused = test::run_harness({(f.dir / "attempt" / "req.json").string()});
    CHECK(refused.exit_code == 11);
    CHECK_THAT(refused.output, Catch::Contains("inputs_key") && Catch::Contains("--root"));
}

TEST_CASE("an integer range generator fills every value inside its inclusive bounds", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    REQUIRE(f.run(header("copy_i32") +
                  R"("cases": [ { "name": "ints", "launch": { "grid": [16], "block": [256] },
      "args": [ { "name": "x", "dtype": "i32", "count": 4096, "generator": {"kind": "int_range", "low": -5, "high": 5, "seed": 3} },
                { "name": "y", "dtype": "i32", "count": 4096, "output_file": "y.bin" },
                { "name": "n", "dtype": "i32", "value": 4096 } ] } ] })")
                .exit_code == 0);
    const auto y = test::read_values<int>(f.dir / "y.bin");
    int lows = 0, highs = 0;
    for (int v : y) {
        REQUIRE(v >= -5);
        REQUIRE(v <= 5);
        lows += v == -5;
        highs += v == 5;
    }
    CHECK(lows > 0);
    CHECK(highs > 0);
}

TEST_CASE("a launch the device or kernel cannot run is rejected before anything runs", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    const std::string args =
        R"(, "args": [ { "name": "x", "dtype": "f32", "count": 10, "generator": {"kind": "normal"} },
        { "name": "y", "dtype": "f32", "count": 10, "output_file": "y.bin" }, { "name": "n", "dtype": "i32", "value": 10 } ] } ] })";
    auto r =
        f.run(header("copy_f32") +
              R"("cases": [ { "name": "big", "launch": { "grid": [1], "block": [2048] })" + args);
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("field cases[0].launch.block: [2048, 1, 1]") &&
                             Catch::Contains("exceeds the device's maximum block"));
    r = f.run(header("copy_f32") +
              R"("cases": [ { "name": "big", "launch": { "grid": [1, 70000], "block": [32] })" +
              args);
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output,
               Catch::Contains(
                   "field cases[0].launch.grid: [1, 70000, 1] exceeds the device's maximum grid"));
    r = f.run(
        header("copy_f32") +
        R"("cases": [ { "name": "big", "launch": { "grid": [1], "block": [32], "dynamic_shared_bytes": 1000000 })" +
        args);
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("launch.dynamic_shared_bytes: 1000000"));
    CHECK(std::string(f.response()["cases"][0]["status"].GetString()) == "invalid_launch");
}

TEST_CASE("arguments that disagree with the kernel's parameter list are rejected", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    auto r = f.run(header("copy_f32") +
                   R"("cases": [ { "name": "few", "launch": { "grid": [1], "block": [32] },
      "args": [ { "name": "x", "dtype": "f32", "count": 10, "generator": {"kind": "normal"} },
                { "name": "y", "dtype": "f32", "count": 10, "output_file": "y.bin" } ] } ] })");
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output,
               Catch::Contains(
                   "field cases[0].args: the kernel takes 3 parameter(s) but the case gives 2"));
    r = f.run(header("copy_f32") +
              R"("cases": [ { "name": "wide", "launch": { "grid": [1], "block": [32] },
      "args": [ { "name": "x", "dtype": "f32", "count": 10, "generator": {"kind": "normal"} },
                { "name": "y", "dtype": "f32", "count": 10, "output_file": "y.bin" },
                { "name": "n", "dtype": "i64", "value": 10 } ] } ] })");
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output,
               Catch::Contains(
                   "args[2] ('n'): kernel parameter 2 is 4 bytes but a i64 scalar is 8 bytes"));
}

TEST_CASE("half and bfloat16 buffers and a half scalar reach the kernel with the right bits",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    const auto r = f.run(
        header("scale_half") +
        R"("cases": [ { "name": "h", "measure": false, "launch": { "grid": [4], "block": [256] },
      "args": [ { "name": "x", "dtype": "f16", "count": 1000, "generator": {"kind": "uniform", "low": -4, "high": 4, "seed": 5},
                  "input_dump_file": "x.bin" },
                { "name": "y", "dtype": "bf16", "count": 1000, "output_file": "y.bin" },
                { "name": "s", "dtype": "f16", "value": -0.5 },
                { "name": "scratch", "dtype": "f32", "count": 1000 },
                { "name": "n", "dtype": "i32", "value": 1000 } ] } ] })");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto doc = f.response();
    CHECK(doc["cases"][0]["timing"].IsNull());  // measure: false runs once, untimed
    CHECK(doc["cases"][0]["checked_launch_index"].GetUint64() == 0);
    const auto x = test::read_values<std::uint16_t>(f.dir / "x.bin");
    const auto y = test::read_values<std::uint16_t>(f.dir / "y.bin");
    REQUIRE(x.size() == 1000);
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float xv = half_bits_to_float(x[i]);
        REQUIRE(x[i] == float_to_half_bits(static_cast<float>(
                            cuopt_rng::uniform(cuopt_rng::random_bits(5, 0, i), -4, 4))));
        REQUIRE(y[i] == float_to_bf16_bits(xv * -0.5f));
    }
}

TEST_CASE("sequence and constant generators fill start + step x index and one value", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    const std::string launch =
        R"("launch": { "grid": [4], "block": [256] }, "args": [ { "name": "x", "dtype": "f32", "count": 1000, )";
    const std::string rest = R"(, { "name": "n", "dtype": "i32", "value": 1000 } ] })";
    REQUIRE(
        f.run(
             header("copy_f32", 1, 3, true) + R"("cases": [ { "name": "seq", )" + launch +
             R"("generator": {"kind": "sequence", "start": -3, "step": 0.5} }, { "name": "y", "dtype": "f32", "count": 1000, "output_file": "seq.bin" })" +
             rest + R"(, { "name": "const", )" + launch +
             R"("generator": {"kind": "constant", "value": 2.25} }, { "name": "y", "dtype": "f32", "count": 1000, "output_file": "const.bin" })" +
             rest + "] }")
            .exit_code == 0);
    const auto seq = test::read_values<float>(f.dir / "seq.bin");
    const auto con = test::read_values<float>(f.dir / "const.bin");
    for (std::size_t i = 0; i < 1000; ++i) {
        REQUIRE(seq[i] == -3.0f + 0.5f * static_cast<float>(i));
        REQUIRE(con[i] == 2.25f);
    }
}

TEST_CASE("timing.checked_launch keeps the outputs of that timed launch, not the last one's",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    test::scratch_folder dir;
    // Every element of y is the launch's number in this process: 0 untimed, 1..3 warm-up,
    // 4..13 timed. Module globals start at zero in each harness process.
    dir.write("count.cu", R"(
__device__ unsigned int g_launches;
extern "C" __global__ void launch_number(float* y, int n) {
  __shared__ unsigned int seen;
  if (threadIdx.x == 0) seen = atomicAdd(&g_launches, 1u);
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = (float)seen; }
)");
    auto run = [&](const std::string& position) {
        dir.write("req.json",
                  R"({ "schema_version": 1, "kernel": { "source_file": "count.cu",
      "entry": "launch_number" }, "timing": { "warmup": 3, "iterations": 10)" +
                      position + R"( }, "cases": [ { "name": "c",
      "launch": { "grid": [1], "block": [64] },
      "args": [ { "name": "y", "dtype": "f32", "count": 1000, "output_file": "y.bin" },
                { "name": "n", "dtype": "i32", "value": 1000 } ] } ] })");
        return test::run_harness(
            {(dir / "req.json").string(), "--cache-dir", test::test_cache_dir()});
    };
    const auto r = run(R"(, "checked_launch": 3)");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto doc = test::read_checked_json(dir / "response.json", "response");
    const auto& c = doc["cases"][0];
    CHECK(c["checked_launch_index"].GetUint64() == 3 + 1 + 3);  // the 4th timed launch
    CHECK(doc["timing_config"]["checked_launch"].GetInt() == 3);
    CHECK(c["timing"]["samples_ms"].Size() == 10);  // the loop ran on after it
    CHECK(c["outputs"][0]["unwritten"].GetUint64() == 0);
    CHECK(test::read_values<float>(dir / "y.bin") == std::vector<float>(1000, 7.0f));
    // Without the field the checked launch is the last timed one, as before.
    REQUIRE(run("").exit_code == 0);
    CHECK(test::read_response(dir / "response.json")["cases"][0]["checked_launch_index"]
              .GetUint64() == 13);
    CHECK(test::read_values<float>(dir / "y.bin") == std::vector<float>(1000, 13.0f));
    // A position past the timed launches is refused before anything runs.
    const auto bad = run(R"(, "checked_launch": 10)");
    CHECK(bad.exit_code == 11);
    CHECK_THAT(bad.output, Catch::Contains("timing.checked_launch: 10 is not a timed launch"));
}

TEST_CASE(
    "a checked launch inside the timed loop keeps the inputs and outputs of that launch, and an "
    "untimed run based at its index reproduces them",
    "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    const std::string timing =
        R"("timing": { "warmup": 4, "iterations": 12, "fresh_inputs": true, "checked_launch": 2 }, )";
    const std::string args = R"("launch": { "grid": [8], "block": [128] },
      "args": [ { "name": "x", "dtype": "f32", "count": 1000, "generator": {"kind": "uniform", "low": -3, "high": 5, "seed": 42},
                  "input_dump_file": "x.bin" },
                { "name": "y", "dtype": "f32", "count": 1000, "output_file": "y.bin" },
                { "name": "n", "dtype": "i32", "value": 1000 } ] } ] })";
    const std::string kernel =
        R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": "copy_f32" }, )";
    REQUIRE(f.run(kernel + timing + R"("cases": [ { "name": "fr", )" + args).exit_code == 0);
    const std::uint64_t launch = f.response()["cases"][0]["checked_launch_index"].GetUint64();
    CHECK(launch == 4 + 2 + 1);
    const auto x = test::read_values<float>(f.dir / "x.bin");
    const auto y = test::read_values<float>(f.dir / "y.bin");
    REQUIRE(x.size() == 1000);
    CHECK(x == y);  // the kept outputs came from exactly the dumped inputs
    for (std::size_t i = 0; i < x.size(); ++i)
        REQUIRE(x[i] == static_cast<float>(
                            cuopt_rng::uniform(cuopt_rng::random_bits(42, launch, i), -3, 5)));
    // The oracle's way: one untimed launch based at the checked launch's index.
    REQUIRE(f.run(kernel + timing +
                  R"("cases": [ { "name": "fr", "measure": false, "launch_index_base": 7, )" + args)
                .exit_code == 0);
    CHECK(test::read_values<float>(f.dir / "y.bin") == y);
}

TEST_CASE(
    "e4m3 and e5m2 buffers are generated as the host rounds them, and an fp8 scalar and "
    "output reach the kernel with the right bits",
    "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    const auto r = f.run(
        header("scale_fp8") +
        R"("cases": [ { "name": "q", "measure": false, "launch": { "grid": [8], "block": [256] },
      "args": [ { "name": "x", "dtype": "f8e4m3", "count": 2000, "generator": {"kind": "uniform", "low": -448, "high": 448, "seed": 7},
                  "input_dump_file": "x.bin" },
                { "name": "w", "dtype": "f8e5m2", "count": 2000, "generator": {"kind": "int_range", "low": -3, "high": 3, "seed": 8},
                  "input_dump_file": "w.bin" },
                { "name": "y", "dtype": "f8e5m2", "count": 2000, "output_file": "y.bin" },
                { "name": "s", "dtype": "f8e4m3", "value": -0.5 },
                { "name": "n", "dtype": "i32", "value": 2000 } ] } ] })");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto x = test::read_values<std::uint8_t>(f.dir / "x.bin");
    const auto w = test::read_values<std::uint8_t>(f.dir / "w.bin");
    const auto y = test::read_values<std::uint8_t>(f.dir / "y.bin");
    REQUIRE(x.size() == 2000);
    int largest = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double xv = cuopt_rng::uniform(cuopt_rng::random_bits(7, 0, i), -448, 448);
        REQUIRE(x[i] == double_to_fp8_bits(xv, fp8_format::e4m3));
        largest += std::fabs(fp8_bits_to_double(x[i], fp8_format::e4m3)) == 448;
        const double wv =
            static_cast<double>(cuopt_rng::int_range(cuopt_rng::random_bits(8, 0, i), -3, 3));
        REQUIRE(w[i] == double_to_fp8_bits(wv, fp8_format::e5m2));
        const double expected = fp8_bits_to_double(x[i], fp8_format::e4m3) * -0.5 + wv;
        REQUIRE(y[i] == double_to_fp8_bits(static_cast<float>(expected), fp8_format::e5m2));
    }
    CHECK(largest > 10);  // the range reaches e4m3's largest value (beyond it is refused)
    CHECK(f.response()["cases"][0]["outputs"][0]["unwritten"].GetUint64() == 0);
}

TEST_CASE(
    "every fp8 code goes through an input file, the kernel and the dumps bit for bit, and "
    "sequences round like the host",
    "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    gpu_fixture f;
    std::string codes;
    for (int i = 0; i < 256; ++i) codes += static_cast<char>(i);  // NaNs and infinities included
    f.dir.write("codes.bin", codes);
    const auto r = f.run(
        header("copy_fp8") +
        R"("cases": [ { "name": "files", "measure": false, "launch": { "grid": [1], "block": [256] },
      "args": [ { "name": "x", "dtype": "f8e4m3", "count": 256, "input_file": "codes.bin" },
                { "name": "w", "dtype": "f8e5m2", "count": 256, "input_file": "codes.bin" },
                { "name": "y", "dtype": "f8e4m3", "count": 256, "output_file": "y.bin" },
                { "name": "z", "dtype": "f8e5m2", "count": 256, "output_file": "z.bin" },
                { "name": "n", "dtype": "i32", "value": 256 } ] },
      { "name": "seq", "measure": false, "launch": { "grid": [4], "block": [256] },
      "args": [ { "name": "x", "dtype": "f8e4m3", "count": 1000, "generator": {"kind": "sequence", "start": -440, "step": 0.88}, "input_dump_file": "sx.bin" },
                { "name": "w", "dtype": "f8e5m2", "count": 1000, "generator": {"kind": "sequence", "start": 57000, "step": -114.1}, "input_dump_file": "sw.bin" },
                { "name": "y", "dtype": "f8e4m3", "count": 1000, "output_file": "sy.bin" },
                { "name": "z", "dtype": "f8e5m2", "count": 1000, "output_file": "sz.bin" },
                { "name": "n", "dtype": "i32", "value": 1000 } ] } ] })");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    // 0x7F is both formats' poison: e4m3's positive NaN, an e5m2 NaN no conversion makes.
    for (const char* file : {"y.bin", "z.bin"}) {
        INFO(file);
        CHECK(test::read_text(f.dir / file) == codes);
    }
    const auto sx = test::read_values<std::uint8_t>(f.dir / "sx.bin");
    const auto sw = test::read_values<std::uint8_t>(f.dir / "sw.bin");
    REQUIRE(sx.size() == 1000);
    for (std::size_t i = 0; i < sx.size(); ++i) {
        REQUIRE(sx[i] ==
                double_to_fp8_bits(-440 + 0.88 * static_cast<double>(i), fp8_format::e4m3));
        REQUIRE(sw[i] ==
                double_to_fp8_bits(57000 - 114.1 * static_cast<double>(i), fp8_format::e5m2));
    }
    CHECK(test::read_text(f.dir / "sy.bin") == test::read_text(f.dir / "sx.bin"));
    CHECK(test::read_text(f.dir / "sz.bin") == test::read_text(f.dir / "sw.bin"));
    const auto doc = f.response();
    std::map<std::string, std::uint64_t> unwritten;
    for (const auto& o : doc["cases"][0]["outputs"].GetArray())
        if (std::string(o["role"].GetString()) == "output")
            unwritten[o["arg"].GetString()] = o["unwritten"].GetUint64();
    CHECK(unwritten.at("y") == 1);  // 0x7F, the poison of both; 0xFF is a NaN written
    CHECK(unwritten.at("z") == 1);
}
