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

namespace {

// Kernels that reach the device heap each way CUDA C++ spells it, and one that does not; one
// source each, since a cubin imports what any of its kernels calls.
const char* k_with_malloc = R"(
extern "C" __global__ void k(float* y) {
  float* p = static_cast<float*>(malloc(64)); p[0] = y[0]; y[1] = p[0]; })";
const char* k_with_new = R"(
struct item { float v; };
extern "C" __global__ void k(float* y) { item* p = new item; p->v = y[0]; y[1] = p->v; delete p; })";
const char* k_with_aligned = R"(
extern "C" __global__ void k(float* y) {
  float* p = static_cast<float*>(__nv_aligned_device_malloc(64, 128)); y[1] = p ? 1.0f : 0.0f; })";
const char* k_with_printf = R"(
extern "C" __global__ void k(float* y) { y[0] = 1.0f; printf("%f\n", y[1]); })";
// The call written in inline PTX; the C++ call on a path never taken declares malloc to ptxas.
const char* k_with_ptx_call = R"(
extern "C" __global__ void k(float* y) {
  unsigned long long p;
  asm volatile("{\n .param .b64 pa; .param .b64 rv;\n st.param.b64 [pa], 64;\n"
               " call.uni (rv), malloc, (pa);\n ld.param.b64 %0, [rv];\n}" : "=l"(p));
  if (p == 1) y[1] = static_cast<float>(reinterpret_cast<size_t>(malloc(8)));
  y[0] = static_cast<float>(p); })";

const char* k_globals = R"(
__device__ int g_counter;
extern "C" __global__ void with_global(int* y) { y[0] = atomicAdd(&g_counter, 1); }
)";

std::vector<std::string> heap_calls_of(const char* source, const char* entry) {
    const compile_result r = compiled(source, entry);
    const std::optional<module_footprint> f = read_module_footprint(r.cubin);
    REQUIRE(f);
    return f->heap_calls;
}

}  // namespace

TEST_CASE(
    "a cubin that calls malloc, new or aligned malloc is seen to use the device heap, "
    "one that only printfs is not") {
    using names = std::vector<std::string>;
    CHECK(heap_calls_of(k_with_malloc, "k") == names{"malloc"});
    CHECK(heap_calls_of(k_with_new, "k") == names{"malloc", "free"});
    CHECK(heap_calls_of(k_with_aligned, "k") == names{"__cuda_syscall_aligned_malloc"});
    CHECK(heap_calls_of(k_with_printf, "k").empty());
    CHECK(heap_calls_of(k_with_ptx_call, "k") == names{"malloc"});
    const compile_result plain = compiled(k_kernels, "three");
    CHECK(worker_retire_reason(plain.cubin).empty());
    CHECK_THAT(worker_retire_reason(compiled(k_with_new, "k").cubin),
               Catch::Contains("device heap (malloc, free)"));
}

TEST_CASE(
    "a module's writable __device__ globals are counted, and an unreadable image retires "
    "a worker as if it used both") {
    const compile_result g = compiled(k_globals, "with_global");
    const std::optional<module_footprint> f = read_module_footprint(g.cubin);
    REQUIRE(f);
    CHECK(f->heap_calls.empty());
    CHECK(f->writable_global_bytes == 4);
    CHECK_THAT(worker_retire_reason(g.cubin), Catch::Contains("4 bytes of writable __device__"));
    CHECK(read_module_footprint(compiled(k_kernels, "three").cubin)->writable_global_bytes == 0);
    CHECK_FALSE(read_module_footprint({}));
    CHECK_THAT(worker_retire_reason({}), Catch::Contains("unknown"));
    // Truncations never read past the end and never invent a heap call.
    const compile_result plain = compiled(k_kernels, "three");
    for (std::size_t cut = 0; cut < plain.cubin.size(); cut += 7) {
        const auto cut_f = read_module_footprint(
            std::vector<char>(plain.cubin.begin(), plain.cubin.begin() + cut));
        if (cut_f) REQUIRE(cut_f->heap_calls.empty());
    }
}
