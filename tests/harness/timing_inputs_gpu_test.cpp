// [gpu] tests of timing_inputs on the real cuda-harness: a file input reaches the checked
// launch exactly, and a kernel that memoises its first launch's result is caught by the
// default perturbation (and only passes when the request asks for inputs as given).
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace cuopt;

namespace {

const char* k_kernels = R"(
extern "C" __global__ void copy_f32(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }
// One block: computes into a global cache on its first launch, then only copies the cache.
__device__ unsigned g_launches = 0;
__device__ float g_cache[4096];
extern "C" __global__ void memoise(const float* x, float* y, int n) {
  __shared__ bool first;
  if (threadIdx.x == 0) first = g_launches == 0;
  __syncthreads();
  if (first) for (int i = threadIdx.x; i < n; i += blockDim.x) g_cache[i] = x[i] * 2.0f;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = g_cache[i];
  __syncthreads();
  if (threadIdx.x == 0) g_launches = 1; }
)";

struct fixture {
    test::scratch_folder dir;
    std::vector<float> x;
    fixture() : x(1000) {
        dir.write("k.cu", k_kernels);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * static_cast<float>(i) - 17.0f;
        dir.write_values("x.bin", x);
    }
    // One measured case (3 warm-ups, 10 timed launches); `mode` is x's timing_inputs or "".
    test::process_result run(const std::string& entry, int grid, const std::string& mode) {
        const std::string timing_inputs =
            mode.empty() ? "" : R"(, "timing_inputs": ")" + mode + R"(")";
        dir.write("req.json",
                  R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": ")" +
                      entry + R"(" }, "timing": { "warmup": 3, "iterations": 10 },
  "cases": [ { "name": "c", "launch": { "grid": [)" +
                      std::to_string(grid) +
                      R"(], "block": [256] }, "args": [
    { "name": "x", "dtype": "f32", "count": 1000, "input_file": "x.bin")" +
                      timing_inputs + R"( },
    { "name": "y", "dtype": "f32", "count": 1000, "output_file": "y.bin" },
    { "name": "n", "dtype": "i32", "value": 1000 } ] } ] })");
        return test::run_harness(
            {(dir / "req.json").string(), "--cache-dir", test::test_cache_dir()});
    }
    std::vector<float> y() const { return test::read_values<float>(dir / "y.bin"); }
};

}  // namespace

TEST_CASE("a perturbed file input reaches the checked launch exactly as the file holds it",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    fixture f;
    const auto r = f.run("copy_f32", 4, "");  // f32 input_file: perturbed by default
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto doc = test::read_response(f.dir / "response.json");
    CHECK(doc["cases"][0]["checked_launch_index"].GetUint64() == 13);
    CHECK(f.y() == f.x);
}

TEST_CASE(
    "a kernel that memoises its first launch gives wrong outputs under perturbed inputs "
    "and right ones with inputs as given",
    "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    fixture f;
    std::vector<float> doubled(f.x.size());
    for (std::size_t i = 0; i < f.x.size(); ++i) doubled[i] = 2.0f * f.x[i];

    auto r = f.run("memoise", 1, "");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto perturbed = f.y();
    REQUIRE(perturbed.size() == f.x.size());
    int wrong = 0;
    for (std::size_t i = 0; i < f.x.size(); ++i) wrong += perturbed[i] != doubled[i];
    CHECK(wrong > 990);  // the cache holds launch 0's rotated inputs, not the checked launch's

    r = f.run("memoise", 1, "perturbed");
    REQUIRE(r.exit_code == 0);
    CHECK(f.y() != doubled);

    r = f.run("memoise", 1, "as_given");
    REQUIRE(r.exit_code == 0);
    CHECK(f.y() == doubled);
}
