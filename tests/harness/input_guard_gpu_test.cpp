// [gpu] tests of the harness's input guard: the real cuda-harness hashes every declared input
// (an input and no output) on the GPU before and after the checked launch and names, in the
// case's inputs_changed, those a kernel wrote into. Each skips with the reason printed when no
// device is usable here.
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace cuopt;

namespace {

const char* k_kernels = R"(
extern "C" __global__ void copy_f32(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }
extern "C" __global__ void copy_then_zero_last(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { y[i] = x[i]; if (i == n - 1) const_cast<float*>(x)[i] = 0.0f; } }
extern "C" __global__ void copy_then_swap_first_two(const float* x, float* y, int n) {
  int i = threadIdx.x; if (i < n) y[i] = x[i];
  __syncthreads();
  if (i == 0) { float* w = const_cast<float*>(x); float t = w[0]; w[0] = w[1]; w[1] = t; } }
extern "C" __global__ void copy_then_flip_last_bit(const unsigned char* x, unsigned char* y, int n) {
  int i = threadIdx.x;
  if (i < n) { y[i] = x[i]; if (i == n - 1) const_cast<unsigned char*>(x)[i] ^= 1; } }
extern "C" __global__ void add_one_in_place(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
)";

struct guard_fixture {
    test::scratch_folder dir;
    guard_fixture() {
        dir.write("k.cu", k_kernels);
        std::vector<float> x(1000);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.5f + static_cast<float>(i);
        dir.write_values("x.bin", x);
        dir.write("u8.bin", "abcdefghijklm");  // 13 bytes: one whole 8-byte word and a tail
    }
    // Runs `cases` with `entry` (4 warm-up and 12 timed launches, fresh inputs, then
    // `timing_extra`'s fields) and returns the response; REQUIREs exit 0.
    rapidjson::Document run(const std::string& entry, const std::string& cases,
                            const std::string& timing_extra = "") {
        dir.write("req.json",
                  R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": ")" +
                      entry +
                      R"(" }, "timing": { "warmup": 4, "iterations": 12, "fresh_inputs": true)" +
                      timing_extra + R"( }, "cases": [ )" + cases + " ] }");
        const auto r =
            test::run_harness({(dir / "req.json").string(), "--cache-dir", test::test_cache_dir()});
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
        return test::read_response(dir / "response.json");
    }
};

// A case of a copy kernel: x as `input`, y = x out; measured or one untimed launch.
std::string copy_case(const std::string& name, const std::string& input, bool measure) {
    return R"({ "name": ")" + name + R"(", "measure": )" + (measure ? "true" : "false") +
           R"(, "launch": { "grid": [4], "block": [256] },
      "args": [ { "name": "x", "dtype": "f32", "count": 1000, )" +
           input + R"( },
                { "name": "y", "dtype": "f32", "count": 1000, "output_file": ")" +
           name + R"(.y.bin" },
                { "name": "n", "dtype": "i32", "value": 1000 } ] })";
}

// The same copy as generated inputs regenerated per launch, a file rotated for every launch
// but the checked one, a file as given, and one untimed launch.
std::string copy_cases() {
    const std::string generated =
        R"("generator": {"kind": "uniform", "low": 1, "high": 5, "seed": 7})";
    const std::string file = R"("input_file": "x.bin")";
    return copy_case("fresh", generated, true) + ", " + copy_case("rotated", file, true) + ", " +
           copy_case("as_given", file + R"(, "timing_inputs": "as_given")", true) + ", " +
           copy_case("once", generated, false);
}

std::vector<std::string> changed(const rapidjson::Value& c) {
    REQUIRE(c.HasMember("inputs_changed"));
    std::vector<std::string> out;
    for (const auto& name : c["inputs_changed"].GetArray()) out.emplace_back(name.GetString());
    return out;
}

}  // namespace

TEST_CASE("a kernel that writes one element of its input is named in every case's inputs_changed",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    guard_fixture f;
    const auto doc = f.run("copy_then_zero_last", copy_cases());
    REQUIRE(doc["cases"].Size() == 4);
    for (const auto& c : doc["cases"].GetArray()) {
        INFO("case " << c["name"].GetString());
        CHECK(std::string(c["status"].GetString()) == "ok");
        CHECK(changed(c) == std::vector<std::string>{"x"});
    }
}

TEST_CASE("an honest kernel's inputs are unchanged however they are fed to each launch", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    guard_fixture f;
    const auto doc = f.run("copy_f32", copy_cases());
    REQUIRE(doc["cases"].Size() == 4);
    for (const auto& c : doc["cases"].GetArray()) {
        INFO("case " << c["name"].GetString());
        CHECK(changed(c)
                  .empty());  // regenerated and rotated inputs hash as the checked launch saw them
    }
}

TEST_CASE("two input elements swapped and one bit flipped in an odd-sized buffer's tail are seen",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    guard_fixture f;
    const auto swapped =
        f.run("copy_then_swap_first_two",
              R"({ "name": "swap", "measure": false, "launch": { "grid": [1], "block": [1000] },
      "args": [ { "name": "x", "dtype": "f32", "count": 1000, "input_file": "x.bin" },
                { "name": "y", "dtype": "f32", "count": 1000, "output_file": "swap.y.bin" },
                { "name": "n", "dtype": "i32", "value": 1000 } ] })");
    CHECK(changed(swapped["cases"][0]) == std::vector<std::string>{"x"});  // same values, moved
    const auto flipped =
        f.run("copy_then_flip_last_bit",
              R"({ "name": "tail", "measure": false, "launch": { "grid": [1], "block": [32] },
      "args": [ { "name": "x", "dtype": "u8", "count": 13, "input_file": "u8.bin" },
                { "name": "y", "dtype": "u8", "count": 13, "output_file": "tail.y.bin" },
                { "name": "n", "dtype": "i32", "value": 13 } ] })");
    CHECK(changed(flipped["cases"][0]) == std::vector<std::string>{"x"});
}

TEST_CASE("an in-place argument written in place is not an input that changed", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    guard_fixture f;
    const auto doc = f.run("add_one_in_place",
                           R"({ "name": "ip", "launch": { "grid": [4], "block": [256] },
      "args": [ { "name": "x", "dtype": "f32", "count": 1000, "input_file": "x.bin", "output_file": "x.out.bin" },
                { "name": "n", "dtype": "i32", "value": 1000 } ] })");
    CHECK(changed(doc["cases"][0]).empty());
    CHECK(test::read_values<float>(f.dir / "x.out.bin")[999] == 1000.5f);  // it did write
}

TEST_CASE(
    "with the checked launch in the middle of the timed loop the inputs are hashed right after it",
    "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    guard_fixture f;
    // Timed launch 4 of 12 is checked: the next launch's inputs are regenerated or rotated
    // after the guard has hashed what the checked one left.
    const std::string cases = copy_cases();
    const auto writer = f.run("copy_then_zero_last", cases, R"(, "checked_launch": 3)");
    const auto honest = f.run("copy_f32", cases, R"(, "checked_launch": 3)");
    for (std::size_t i = 0; i < 4; ++i) {
        INFO("case " << writer["cases"][i]["name"].GetString());
        CHECK(changed(writer["cases"][i]) == std::vector<std::string>{"x"});
        CHECK(changed(honest["cases"][i]).empty());
    }
    CHECK(honest["cases"][0]["checked_launch_index"].GetUint64() == 4 + 3 + 1);
}
