// NVRTC in this process. Seen on the H200 (CUDA 13.0): in a process where the CUDA driver
// has run, NVRTC's log lacks ptxas's report (registers, spills), so these tests need a process
// where no [gpu] test ran first. CTest runs each test in its own process;
// tools/gpu-quick-check.sh runs the [gpu] tests apart.
#include "harness/nvrtc_compiler.hpp"

#include <cuda.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>

using namespace cuopt;

namespace {

kernel_spec spec(const std::string& source, const std::string& entry) {
    kernel_spec k;
    k.source = source;
    k.source_name = "t.cu";
    k.entry = entry;
    return k;
}

const char* k_saxpy =
    "#include <cuda_fp16.h>\n"
    "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n";

}  // namespace

TEST_CASE("a kernel compiles for an explicit sm_90 with its resource report and full log") {
    const compile_result r = compile_kernel(spec(k_saxpy, "saxpy"), "sm_90");
    INFO(r.log);
    REQUIRE(r.ok);
    CHECK(r.lowered_name == "saxpy");
    CHECK(r.cubin.size() > 100);
    CHECK(r.cubin_sha256.size() == 64);
    CHECK(r.ptxas.registers > 0);
    CHECK(r.ptxas.spill_store_bytes == 0);
    CHECK(r.ptxas.static_shared_bytes == 0);
    CHECK_THAT(r.log, Catch::Contains("Compiling entry function 'saxpy' for 'sm_90'"));
    CHECK(r.options.front() == "--gpu-architecture=sm_90");
    CHECK_FALSE(r.cache_hit);
}

TEST_CASE("a compile error is a result carrying NVRTC's log - not an exception") {
    const compile_result r = compile_kernel(
        spec("extern \"C\" __global__ void k(float* p) { p[0] = undefined_thing; }", "k"), "sm_90");
    CHECK_FALSE(r.ok);
    CHECK_FALSE(r.entry_missing);
    CHECK_THAT(r.log, Catch::Contains("undefined_thing") && Catch::Contains("error"));
}

TEST_CASE("an entry that is absent - or not __global__ - is flagged as a missing entry") {
    const std::string source =
        "extern \"C\" __global__ void real(float* p) {}\n__device__ float helper(float x) { return "
        "x; }\n";
    CHECK(compile_kernel(spec(source, "nope"), "sm_90").entry_missing);
    CHECK(compile_kernel(spec(source, "helper"), "sm_90").entry_missing);
    CHECK_FALSE(compile_kernel(spec(source, "real"), "sm_90").entry_missing);
}

TEST_CASE("templated and C++-mangled kernels are found through name expressions") {
    const std::string source =
        "template <typename T> __global__ void fill(T* p, T v) { p[threadIdx.x] = v; }\n"
        "template __global__ void fill<float>(float*, float);\n"
        "__global__ void plain(int* p) { p[0] = 1; }\n";
    const compile_result t = compile_kernel(spec(source, "fill<float>"), "sm_90");
    INFO(t.log);
    REQUIRE(t.ok);
    CHECK(t.lowered_name.rfind("_Z", 0) == 0);
    const compile_result p = compile_kernel(spec(source, "plain"), "sm_90");
    REQUIRE(p.ok);
    CHECK(p.lowered_name == "_Z5plainPi");
}

TEST_CASE("defines reach the kernel and user options follow the harness's own") {
    kernel_spec k = spec(
        "#if TILE != 64\n#error TILE must be 64\n#endif\nextern \"C\" __global__ void k(float* p) "
        "{ __shared__ float s[TILE]; s[threadIdx.x] = 1; p[0] = s[0]; }",
        "k");
    k.defines = {{"TILE", "64"}};
    k.compile_options = {"--use_fast_math"};
    const compile_result r = compile_kernel(k, "sm_90");
    INFO(r.log);
    REQUIRE(r.ok);
    CHECK(r.ptxas.static_shared_bytes == 256);
    CHECK(r.options.back() == "--use_fast_math");
    k.defines = {{"TILE", "32"}};
    CHECK_THAT(compile_kernel(k, "sm_90").log, Catch::Contains("TILE must be 64"));
}

TEST_CASE("the ptxas report is parsed for the named function only") {
    const std::string log =
        "ptxas info    : Compiling entry function 'a' for 'sm_90'\n"
        "ptxas info    : Function properties for a\n"
        "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem, 368 bytes cmem[0]\n"
        "ptxas info    : Compiling entry function 'b' for 'sm_90'\n"
        "ptxas info    : Function properties for b\n"
        "ptxas info    : Used 10 registers\n"
        "ptxas info    : Compiling entry function 'c' for 'sm_90'\n"
        "ptxas info    : Function properties for a\n"
        "ptxas info    : Used 99 registers\n";
    const ptxas_report a = parse_ptxas_report(log, "a");
    CHECK(a.registers == 255);
    CHECK(a.spill_store_bytes == 4);
    CHECK(a.stack_frame_bytes == 8);
    CHECK(a.static_shared_bytes == 1024);
    CHECK(a.constant_bytes == 368);
    CHECK(parse_ptxas_report(log, "b").registers == 10);
    CHECK(parse_ptxas_report(log, "c").registers == -1);  // interleaved: another function's lines
    CHECK(parse_ptxas_report(log, "d").registers == -1);
}

TEST_CASE("cooperative groups and libcu++ headers compile (CUDA 13 keeps them under cccl/)") {
    const compile_result r =
        compile_kernel(spec("#include <cooperative_groups.h>\n#include <cuda/std/type_traits>\n"
                            "namespace cg = cooperative_groups;\n"
                            "extern \"C\" __global__ void k(float* y) {\n"
                            "  cg::thread_block b = cg::this_thread_block();\n"
                            "  static_assert(cuda::std::is_same<float, float>::value, \"\");\n"
                            "  y[b.thread_rank()] = 1.0f; b.sync(); }\n",
                            "k"),
                       "sm_90");
    INFO(r.log);
    CHECK(r.ok);
}

TEST_CASE(
    "a compile failure is described by its source's error lines only - not the entry lookup's, "
    "not NVRTC's own option errors") {
    kernel_spec k = spec("extern \"C\" __global__ void k(float* p) {\n  p[0] = a1;\n}\n", "k");
    k.display_name = "mine.cu";
    const compile_result r = compile_kernel(k, "sm_90");
    REQUIRE_FALSE(r.ok);
    CHECK(compile_error_lines(r.log) ==
          std::vector<std::string>{"mine.cu(2): error: identifier \"a1\" is undefined"});
    CHECK(describe_compile_failure("mine.cu", "sm_90", r.log, "LOG") ==
          "NVRTC could not compile mine.cu for sm_90 (1 error; the whole log is in LOG):\n"
          "  mine.cu(2): error: identifier \"a1\" is undefined");
    CHECK(compile_error_lines("__nv_name_map(2): error: identifier \"k\" is undefined\n"
                              "nvrtc: error: invalid value for --gpu-architecture (-arch)\n"
                              "1 error detected in the compilation of \"mine.cu\".")
              .empty());
    CHECK(check_arch("sm_90").empty());
    CHECK(check_arch("sm_90a").empty());
    CHECK_THAT(check_arch("sm_999"), Catch::StartsWith("unknown architecture sm_999; expected "
                                                       "sm_XY such as sm_90"));
    CHECK_FALSE(check_arch("compute_90").empty());
}

TEST_CASE("NVRTC is loaded at run time from the toolkit it was built with, and never linked",
          "[integration]") {
    const std::filesystem::path lib = nvrtc_library();
    CHECK(lib.filename() == "libnvrtc.so." + std::to_string(CUDA_VERSION / 1000));
    bool builtins = false;
    for (const auto& e :
         std::filesystem::directory_iterator(std::filesystem::canonical(lib).parent_path()))
        builtins |= e.path().filename().string().rfind("libnvrtc-builtins", 0) == 0;
    CHECK(builtins);  // what a confined compile may read besides the toolkit's headers
    // A harness that compiles nothing (--version, --device-info, the fake) never maps NVRTC.
    for (const std::string binary : {CUOPT_HARNESS_BINARY, CUOPT_FAKE_HARNESS_BINARY}) {
        std::string needed;
        FILE* p = ::popen(("readelf -d '" + binary + "' 2>&1").c_str(), "r");
        REQUIRE(p);
        char line[512];
        while (std::fgets(line, sizeof line, p))
            if (std::strstr(line, "(NEEDED)")) needed += line;
        ::pclose(p);
        INFO(binary << ":\n" << needed);
        CHECK(needed.find("libstdc++") != std::string::npos);  // readelf read the binary
        CHECK(needed.find("libnvrtc") == std::string::npos);
    }
}
