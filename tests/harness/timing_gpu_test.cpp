// [gpu] tests of the two clocks on a real device: CUPTI's kernel records as the primary
// timer with CUDA events beside them, NVML's GPU state around each timed loop, the adaptive
// stopping rule, and a timed sample that holds a second grid failing as invalid_timing.
#include <catch2/catch.hpp>

#include "harness/case_runner.hpp"
#include "harness/cuda_driver.hpp"
#include "harness/cupti_trace.hpp"
#include "harness/device_info.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "harness/request_reader.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

const char* k_kernels = R"(
extern "C" __global__ void copy_f32(const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = x[i]; }
extern "C" __global__ void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) { float acc = 0.f; for (int p = 0; p < k; ++p) acc += a[row * k + p] * b[p * n + col];
    c[row * n + col] = acc; } }
)";

// A 16 Mi-float copy (~40 us on an H200) or a 256^3 naive matmul (~20 us), timed as `timing`.
std::string copy_request(const std::string& timing, int n = 16 << 20) {
    const std::string count = std::to_string(n);
    return R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": "copy_f32" },
      "timing": )" +
           timing + R"(, "cases": [ { "name": "copy", "launch": { "grid": [1056], "block": [256] },
      "args": [ { "name": "x", "dtype": "f32", "count": )" +
           count + R"(, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": 1} },
                { "name": "y", "dtype": "f32", "count": )" +
           count + R"(, "output_file": "y.bin" },
                { "name": "n", "dtype": "i32", "value": )" +
           count + R"( } ] } ] })";
}

std::string matmul_request(const std::string& timing) {
    return R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": "matmul_f32" },
      "timing": )" +
           timing +
           R"(, "cases": [ { "name": "mm", "launch": { "grid": [16, 16], "block": [16, 16] },
      "args": [ { "name": "a", "dtype": "f32", "count": 65536, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": 1} },
                { "name": "b", "dtype": "f32", "count": 65536, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": 2} },
                { "name": "c", "dtype": "f32", "count": 65536, "output_file": "c.bin" },
                { "name": "m", "dtype": "i32", "value": 256 }, { "name": "n", "dtype": "i32", "value": 256 },
                { "name": "k", "dtype": "i32", "value": 256 } ] } ] })";
}

struct timing_fixture {
    test::scratch_folder dir;
    timing_fixture() { dir.write("k.cu", k_kernels); }
    rapidjson::Document run(const std::string& json) {
        dir.write("req.json", json);
        const auto r =
            test::run_harness({(dir / "req.json").string(), "--cache-dir", test::test_cache_dir()});
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
        return test::read_response(dir / "response.json");
    }
};

// CUPTI comes with the toolkit; a machine without it times with events and says so.
bool cupti_missing(const rapidjson::Document& doc) {
    if (std::string(doc["timer"]["name"].GetString()) == "cupti") return false;
    const std::string note =
        doc["timer"]["note"].IsString() ? doc["timer"]["note"].GetString() : "";
    if (note.rfind("CUPTI not found", 0) == 0) {
        WARN("skipped: " << note);
        return true;
    }
    FAIL("CUPTI did not time the launches: " << note);
    return true;
}

}  // namespace

TEST_CASE("CUPTI times each launch, CUDA events run beside it, NVML watches the GPU", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    timing_fixture f;
    const auto doc = f.run(copy_request(R"({ "warmup": 5, "iterations": 40 })"));
    if (cupti_missing(doc)) return;
    CHECK(doc["phases_ms"].HasMember("cupti_init"));
    const auto& t = doc["cases"][0]["timing"];
    CHECK(std::string(t["timer"].GetString()) == "cupti");
    CHECK(t["timer_note"].IsNull());
    CHECK(t["samples_ms"].Size() == 40);
    CHECK(t["channels"]["cupti"]["samples_ms"].Size() == 40);
    CHECK(t["channels"]["events"]["samples_ms"].Size() == 40);
    CHECK(t["median_ms"].GetDouble() == t["channels"]["cupti"]["median_ms"].GetDouble());
    // The events' own cost: positive, and within what channels_agree allows (4 us plus 2% of
    // the kernel: a two-GPU H200 host read 4.08 us at 41 us).
    const double overhead = t["event_overhead_ms"].GetDouble();
    INFO("event overhead " << overhead * 1000 << " us; median " << t["median_ms"].GetDouble() * 1000
                           << " us");
    CHECK(overhead > 0);
    CHECK(overhead < 0.004 + 0.02 * t["median_ms"].GetDouble());
    CHECK(t["channels_agree"].GetBool());
    CHECK(std::string(t["stop_rule"].GetString()) == "fixed");
    if (doc["gpu_monitor"]["source"].IsNull()) {
        WARN("no GPU state: " << doc["gpu_monitor"]["note"].GetString());
        return;
    }
    const auto& before = t["gpu_state"]["before"];
    CHECK(before["sm_clock_mhz"].GetUint() > 0);
    CHECK(before["mem_clock_mhz"].GetUint() > 0);
    CHECK(before["power_limit_w"].GetDouble() > 0);
    CHECK(t["gpu_state"]["after"]["temperature_c"].GetInt() > 0);
}

TEST_CASE("timing.timer events times with CUDA events alone and says so", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    timing_fixture f;
    const auto doc = f.run(copy_request(R"({ "warmup": 2, "iterations": 10, "timer": "events" })"));
    CHECK(std::string(doc["timer"]["name"].GetString()) == "events");
    CHECK(std::string(doc["timer"]["note"].GetString()) == "timing.timer is events");
    const auto& t = doc["cases"][0]["timing"];
    CHECK(std::string(t["timer"].GetString()) == "events");
    CHECK(t["channels"]["cupti"].IsNull());
    CHECK(t["event_overhead_ms"].IsNull());
}

TEST_CASE("adaptive timing stops at the noise target and keeps the checked launch in place",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    timing_fixture f;
    const auto doc = f.run(matmul_request(
        R"({ "warmup": 5, "iterations": 3000, "mode": "adaptive", "min_samples": 30, "min_time_ms": 1, "target_rse": 0.005 })"));
    const auto& c = doc["cases"][0];
    const auto& t = c["timing"];
    INFO("samples " << t["iterations"].GetInt() << ", rse "
                    << t["relative_standard_error"].GetDouble());
    CHECK(std::string(t["stop_rule"].GetString()) == "target_noise");
    CHECK(t["iterations"].GetInt() >= 30);
    CHECK(t["iterations"].GetInt() < 3000);
    CHECK(t["relative_standard_error"].GetDouble() <= 0.005);
    CHECK(t["gpu_time_ms"].GetDouble() >= 1.0);
    // The checked launch is where a fixed loop of 3000 would have put it.
    CHECK(c["checked_launch_index"].GetUint64() == 5 + 3000);
    CHECK(c["outputs"][0]["unwritten"].GetUint64() == 0);
}

namespace {

// Launches the kernel twice per launch: a timed sample that holds a second grid.
class twice_launcher : public kernel_launcher {
  public:
    using kernel_launcher::kernel_launcher;
    std::function<void()> bind(const run_case& c, const std::vector<live_buffer>& buffers,
                               CUstream stream) override {
        std::function<void()> once = kernel_launcher::bind(c, buffers, stream);
        return [once] {
            once();
            once();
        };
    }
};

}  // namespace

TEST_CASE("a timed sample holding a second grid fails the case as invalid_timing", "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    timing_fixture f;
    f.dir.write("req.json", copy_request(R"({ "warmup": 1, "iterations": 8 })", 1 << 16));
    const request req = read_request(f.dir / "req.json", {});
    const device_fingerprint device = query_device(0);
    device_session& session = device_session::on(0, device);
    std::string why;
    kernel_trace* trace = kernel_trace::start(&why);
    if (!trace) {
        WARN("skipped: " << why);
        return;
    }
    const compile_result compiled = compile_kernel(req.kernel, device.arch());
    REQUIRE(compiled.ok);
    const module_handle module = load_module(compiled.cubin.data());
    CUfunction kernel{};
    CU_CALL(cuModuleGetFunction(&kernel, module.get(), compiled.lowered_name.c_str()));
    case_runner::clocks clocks;
    clocks.trace = trace;
    kernel_launcher honest_launcher(kernel);
    const case_outcome honest =
        case_runner(device, session, honest_launcher, req.timing, clocks).run(req.cases[0]);
    CHECK(honest.status == case_run_status::ok);
    CHECK(honest.timer == "cupti");
    twice_launcher twice(kernel);
    const case_outcome bad =
        case_runner(device, session, twice, req.timing, clocks).run(req.cases[0]);
    CHECK(bad.status == case_run_status::invalid_timing);
    CHECK_THAT(bad.error,
               Catch::Contains("timed launch 1 of 8 ran 2 grids") && Catch::Contains("copy_f32"));
}
