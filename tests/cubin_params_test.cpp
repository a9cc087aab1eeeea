#include "harness/cubin_params.hpp"

#include <catch2/catch.hpp>

#include "harness/nvrtc_compiler.hpp"

using namespace cuopt;

namespace {

compile_result compiled(const std::string& source, const std::string& entry,
                        const std::string& arch = "sm_90") {
    kernel_spec k;
    k.source = source;
    k.source_name = "t.cu";
    k.entry = entry;
    compile_result r = compile_kernel(k, arch);
    INFO(r.log);
    REQUIRE(r.ok);
    return r;
}

std::optional<std::size_t> params_of(const std::string& source, const std::string& entry,
                                     const std::string& arch = "sm_90") {
    const compile_result r = compiled(source, entry, arch);
    return count_kernel_params(r.cubin, r.lowered_name);
}

const char* k_kernels = R"(
extern "C" __global__ void none() {}
extern "C" __global__ void three(const float* x, float* y, int n) {
  int i = threadIdx.x; if (i < n) y[i] = x[i]; }
template <typename T>
__global__ void seven(T* a, T b, char c, double d, short e, const int* f, long long g) {
  a[0] = b + c + d + e + f[0] + g; }
template __global__ void seven<float>(float*, float, char, double, short, const int*, long long);
struct big { int v[40]; };
__global__ void unused_and_big(big s, float* o, double never_read) { o[0] = s.v[3]; }
)";

// sm_90 and later: thread block clusters.
const char* k_cluster = R"(
extern "C" __global__ void __cluster_dims__(2, 1, 1) clustered(float* o, int n) {
  __shared__ float s[64]; s[threadIdx.x] = o[threadIdx.x]; __syncthreads(); o[threadIdx.x] = s[63 - threadIdx.x] + n; }
)";

}  // namespace

TEST_CASE("a kernel's parameter count is read from its NVRTC cubin - 0, 3 and 7 parameters") {
    CHECK(params_of(k_kernels, "none") == std::size_t{0});
    CHECK(params_of(k_kernels, "three") == std::size_t{3});
    CHECK(params_of(k_kernels, "seven<float>") == std::size_t{7});  // a C++-mangled template
}

TEST_CASE("unused and by-value struct parameters count, and other record formats are skipped") {
    CHECK(params_of(k_kernels, "unused_and_big") == std::size_t{3});
    // A cluster kernel's section carries a 4-byte NVAL record and a BVAL record.
    CHECK(params_of(k_cluster, "clustered") == std::size_t{2});
}

TEST_CASE("the count holds for every architecture the harness targets") {
    for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}) {
        INFO(arch);
        CHECK(params_of(k_kernels, "three", arch) == std::size_t{3});
    }
}

TEST_CASE("an image that is not a cubin, or lacks the kernel's section, gives no count") {
    const compile_result r = compiled(k_kernels, "three");
    CHECK_FALSE(count_kernel_params(r.cubin, "no_such_kernel"));
    CHECK_FALSE(count_kernel_params({}, "three"));
    CHECK_FALSE(
        count_kernel_params(std::vector<char>(r.cubin.begin(), r.cubin.begin() + 40), "three"));
    std::vector<char> not_elf = r.cubin;
    not_elf[1] = 'X';
    CHECK_FALSE(count_kernel_params(not_elf, "three"));
    // Every truncation either still finds the whole section or gives up; it never reads past
    // the end (the sanitized build checks that) and never invents a different count.
    for (std::size_t cut = 0; cut < r.cubin.size(); cut += 7) {
        const auto n =
            count_kernel_params(std::vector<char>(r.cubin.begin(), r.cubin.begin() + cut), "three");
        if (n) REQUIRE(*n == 3);
    }
}
