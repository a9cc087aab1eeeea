// The FP8 GEMM example's warpgroup-MMA path on an H100 or H200: examples/gemm-fp8/initial.cu
// built with MMA=3 (its gemm_e4m3 entry), MMA=4 and the MMA=1 mma.sync tile for comparison (the
// templates those entries instantiate), each run on random e4m3 inputs at odd and square shapes
// and checked against a double-precision reference kernel under the manifest's reduction rule
// (bf16 output: |c - r| <= rtol (|r| + rms(r)), rtol = 2^-7 + 8 sqrt(k) 2^-24), the guard past C
// untouched; then 2048^3 and 4096^3 timed with CUDA events (median of 50 launches after 10
// warm-ups, L2 warm) beside cuBLASLt's FP8 GEMM on the same data, called as
// harness/cublaslt_launcher.cpp calls it. One line per configuration and timed size.
//   nvcc -std=c++17 -O3 -arch=sm_90a -o /tmp/fp8w tools/bench/gemm_fp8_wgmma_check.cu -lcublasLt
// Exit 0: every configuration passed every shape and cuBLASLt agreed with the reference; 1: a
// configuration failed; 3: only cuBLASLt disagreed (its timing is then suspect); 2: a CUDA or
// cuBLASLt call failed.
#define MMA 3
#define GEMM_FP8_WGMMA_STUB_OTHER_ARCHS  // -arch=sm_90a's compute_90 PTX: kernels that trap
#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../../examples/gemm-fp8/initial.cu"

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        const cudaError_t e_ = (call);                                         \
        if (e_ != cudaSuccess) {                                               \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                         cudaGetErrorString(e_));                              \
            std::exit(2);                                                      \
        }                                                                      \
    } while (0)
#define LT_CHECK(call)                                                         \
    do {                                                                       \
        const cublasStatus_t s_ = (call);                                      \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                     \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                         cublasLtGetStatusString(s_));                         \
            std::exit(2);                                                      \
        }                                                                      \
    } while (0)

namespace {

using gemm_kernel = void (*)(const __nv_fp8_e4m3*, const __nv_fp8_e4m3*, __nv_bfloat16*, float,
                             float, int, int, int);

// A wgmma tile as gemm_fp8_wgmma::gemm takes it (the entry's is <256, 4, 128, 0, true>).
template <int BN, int STAGES, int PART, int PENDING, bool STAGED, int BLOCKS>
__global__ void __launch_bounds__(gemm_fp8_wgmma::k_threads, BLOCKS)
    wgmma_variant(const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b, __nv_bfloat16* c, float scale_a,
                  float scale_b, int m, int n, int k) {
    gemm_fp8_wgmma::gemm<BN, STAGES, PART, PENDING, STAGED>(a, b, c, scale_a, scale_b, m, n, k);
}

// The MMA=1 entry's body: 8 warps of 64 x 32, mma.sync (on sm_90 through f16).
__global__ void __launch_bounds__(256, 2)
    mma1_variant(const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b, __nv_bfloat16* c, float scale_a,
                 float scale_b, int m, int n, int k) {
    using t = gemm_fp8_mma::tile_config<1>;
    gemm_fp8_mma::gemm<t::bm, t::bn, t::wm, t::wn, t::stages, gemm_fp8_mma::k_route>(
        a, b, c, scale_a, scale_b, m, n, k);
}

// One product in double per output, as examples/gemm-fp8/reference.cu.
__global__ void reference_gemm(const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b, double* r,
                               double scale, int m, int n, int k) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    double acc = 0.0;
    for (int p = 0; p < k; ++p)
        acc += static_cast<double>(static_cast<float>(a[static_cast<long long>(row) * k + p])) *
               static_cast<double>(static_cast<float>(b[static_cast<long long>(col) * k + p]));
    r[static_cast<long long>(row) * n + col] = scale * acc;
}

struct variant {
    std::string name;
    gemm_kernel kernel;
    int bm, bn, threads, shared_bytes;
    bool gating = true;  // false: its result is reported, never the exit code
};

variant wgmma_tile(const std::string& name, gemm_kernel kernel, int bn, int stages) {
    return {name,
            kernel,
            gemm_fp8_wgmma::k_bm,
            bn,
            gemm_fp8_wgmma::k_threads,
            gemm_fp8_wgmma::shared_bytes(bn, stages)};
}
template <int BN, int STAGES, int PART, int PENDING, bool STAGED, int BLOCKS>
variant make_wgmma(const std::string& name, bool gating = true) {
    variant v =
        wgmma_tile(name, wgmma_variant<BN, STAGES, PART, PENDING, STAGED, BLOCKS>, BN, STAGES);
    v.gating = gating;
    return v;
}

std::vector<variant> variants() {
    using t3 = gemm_fp8_wgmma::tile_config<3>;
    using t4 = gemm_fp8_wgmma::tile_config<4>;
    return {wgmma_tile("MMA=3 (the entry) 128x256 s4 n128", gemm_e4m3, t3::bn, t3::stages),
            make_wgmma<t4::bn, t4::stages, t4::part, t4::pending, true, t4::blocks>(
                "MMA=4 128x128 s3 n64 2/SM"),
            // Other choices of the same template, for the next tuning step: stores straight from
            // the registers, and a 128 x 128 tile with whole-width parts, one block an SM.
            make_wgmma<256, 4, 128, 0, false, 1>("128x256 s4 n128, stores from regs"),
            make_wgmma<128, 3, 64, 0, false, 2>("128x128 s3 n64 2/SM, stores from regs"),
            make_wgmma<128, 4, 128, 0, true, 1>("128x128 s4 n128 1/SM"),
            // Sums left to the tensor cores (cuBLASLt's FAST_ACCUM): faster, but the tensor cores
            // keep about 14 bits, so these report their error without deciding the exit code.
            make_wgmma<256, 4, 0, 1, true, 1>("128x256 s4 no promotion (fast accum)", false),
            make_wgmma<128, 3, 0, 0, true, 2>("128x128 s3 2/SM no promotion (fast accum)", false),
            {"MMA=1 (mma.sync via f16) 128x128", mma1_variant, 128, 128, 256,
             3 * (128 + 128) * gemm_fp8_mma::k_stage_k}};
}

struct shape {
    int m, n, k;
};

std::string shape_name(const shape& s) {
    return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

// Inputs and the reference of one shape, on the device; C with a guard of sentinels past it.
struct problem {
    shape s;
    __nv_fp8_e4m3 *a = nullptr, *b = nullptr;
    __nv_bfloat16* c = nullptr;
    float* scales = nullptr;  // device: scale_a at [0], scale_b 256 bytes on (cuBLASLt reads them)
    std::vector<double> want;
    static constexpr float scale_a = 0.5f, scale_b = 0.375f;
    static constexpr int guard = 4096;         // bf16 elements past C
    static constexpr int k_scale_stride = 64;  // floats between scale_a and scale_b

    explicit problem(shape shape_) : s(shape_) {
        std::mt19937 rng(1000003u * s.m + 1009u * s.n + s.k);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
        std::vector<__nv_fp8_e4m3> ha(static_cast<size_t>(s.m) * s.k),
            hb(static_cast<size_t>(s.n) * s.k);
        for (auto& x : ha) x = __nv_fp8_e4m3(normal(rng));
        for (auto& x : hb) x = __nv_fp8_e4m3(uniform(rng));
        CUDA_CHECK(cudaMalloc(&a, ha.size()));
        CUDA_CHECK(cudaMalloc(&b, hb.size()));
        CUDA_CHECK(cudaMalloc(&c, (static_cast<size_t>(s.m) * s.n + guard) * 2));
        CUDA_CHECK(cudaMalloc(&scales, 2 * k_scale_stride * sizeof(float)));
        CUDA_CHECK(cudaMemcpy(a, ha.data(), ha.size(), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(b, hb.data(), hb.size(), cudaMemcpyHostToDevice));
        // 256 bytes apart, as the harness places them: 4 bytes apart, cuBLASLt answers "not
        // supported" (H100, CUDA 13).
        CUDA_CHECK(cudaMemcpy(scales, &scale_a, sizeof(float), cudaMemcpyHostToDevice));
        CUDA_CHECK(
            cudaMemcpy(scales + k_scale_stride, &scale_b, sizeof(float), cudaMemcpyHostToDevice));
        double* r;
        want.resize(static_cast<size_t>(s.m) * s.n);
        CUDA_CHECK(cudaMalloc(&r, want.size() * sizeof(double)));
        reference_gemm<<<dim3((s.n + 15) / 16, (s.m + 15) / 16), dim3(16, 16)>>>(
            a, b, r, static_cast<double>(scale_a) * scale_b, s.m, s.n, s.k);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(
            cudaMemcpy(want.data(), r, want.size() * sizeof(double), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaFree(r));
    }
    ~problem() {
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
        cudaFree(scales);
    }
    void launch(const variant& v) const {
        v.kernel<<<dim3((s.n + v.bn - 1) / v.bn, (s.m + v.bm - 1) / v.bm), v.threads,
                   v.shared_bytes>>>(a, b, c, scale_a, scale_b, s.m, s.n, s.k);
    }
};

// cuBLASLt's FP8 GEMM on a problem, as the harness sets it up: column-major D = C^T (n x m, ld
// n) = op_T(B as stored, k x n, ld k) x (A as stored = A^T, k x m, ld k), f32 compute and
// scales, FAST_ACCUM off, cuBLASLt's A scale = our scale_b and its B scale = our scale_a as
// device floats, alpha 1, beta 0, the heuristic's first algorithm within 32 MiB of workspace.
class lt_gemm {
  public:
    static constexpr size_t k_workspace_bytes = size_t{32} << 20;

    explicit lt_gemm(const problem& p) : m_p(p) {
        LT_CHECK(cublasLtCreate(&m_handle));
        LT_CHECK(cublasLtMatmulDescCreate(&m_desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        const int32_t transposed = CUBLAS_OP_T, as_is = CUBLAS_OP_N;
        const int8_t fast_accum = 0;
        const void* first_scale = p.scales + problem::k_scale_stride;  // cuBLASLt's A is our B
        const void* second_scale = p.scales;
        set(CUBLASLT_MATMUL_DESC_TRANSA, transposed);
        set(CUBLASLT_MATMUL_DESC_TRANSB, as_is);
        set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast_accum);
        set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, first_scale);
        set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, second_scale);
        const shape& s = p.s;
        LT_CHECK(cublasLtMatrixLayoutCreate(&m_first, CUDA_R_8F_E4M3, s.k, s.n, s.k));
        LT_CHECK(cublasLtMatrixLayoutCreate(&m_second, CUDA_R_8F_E4M3, s.k, s.m, s.k));
        LT_CHECK(cublasLtMatrixLayoutCreate(&m_out, CUDA_R_16BF, s.n, s.m, s.n));
        CUDA_CHECK(cudaMalloc(&m_workspace, k_workspace_bytes));
        cublasLtMatmulPreference_t pref;
        LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
        const uint64_t bytes = k_workspace_bytes;
        LT_CHECK(cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof bytes));
        cublasLtMatmulHeuristicResult_t result{};
        int found = 0;
        LT_CHECK(cublasLtMatmulAlgoGetHeuristic(m_handle, m_desc, m_first, m_second, m_out, m_out,
                                                pref, 1, &result, &found));
        cublasLtMatmulPreferenceDestroy(pref);
        if (found < 1) {
            std::fprintf(stderr, "cuBLASLt found no algorithm for %s\n", shape_name(s).c_str());
            std::exit(2);
        }
        m_algo = result.algo;
    }
    ~lt_gemm() {
        cudaFree(m_workspace);
        cublasLtMatrixLayoutDestroy(m_out);
        cublasLtMatrixLayoutDestroy(m_second);
        cublasLtMatrixLayoutDestroy(m_first);
        cublasLtMatmulDescDestroy(m_desc);
        cublasLtDestroy(m_handle);
    }
    lt_gemm(const lt_gemm&) = delete;
    lt_gemm& operator=(const lt_gemm&) = delete;

    void launch() const {
        static const float one = 1.0f, zero = 0.0f;
        LT_CHECK(cublasLtMatmul(m_handle, m_desc, &one, m_p.b, m_first, m_p.a, m_second, &zero,
                                m_p.c, m_out, m_p.c, m_out, &m_algo, m_workspace, k_workspace_bytes,
                                0));
    }

  private:
    template <typename T>
    void set(cublasLtMatmulDescAttributes_t attribute, const T& value) {
        LT_CHECK(cublasLtMatmulDescSetAttribute(m_desc, attribute, &value, sizeof value));
    }
    const problem& m_p;
    cublasLtHandle_t m_handle{};
    cublasLtMatmulDesc_t m_desc{};
    cublasLtMatrixLayout_t m_first{}, m_second{}, m_out{};
    cublasLtMatmulAlgo_t m_algo{};
    void* m_workspace = nullptr;
};

struct verdict {
    double max_abs_err = 0, worst_ratio = 0, rel_l2 = 0;
    size_t bad = 0;
    bool pass = true;
    std::string why;
};

// Runs `launch` once on p (C filled with sentinels first) and judges the output.
verdict check(const problem& p, const std::function<void()>& launch) {
    const size_t count = p.want.size();
    CUDA_CHECK(cudaMemset(p.c, 0xff, (count + problem::guard) * 2));  // bf16 0xffff: a NaN
    launch();
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<__nv_bfloat16> got(count + problem::guard);
    CUDA_CHECK(cudaMemcpy(got.data(), p.c, got.size() * 2, cudaMemcpyDeviceToHost));
    double sum_sq = 0, err_sq = 0;
    for (double w : p.want) sum_sq += w * w;
    const double rms = std::sqrt(sum_sq / count);
    const double rtol =
        2 * std::ldexp(1.0, -8) + 8 * std::sqrt(double(p.s.k)) * std::ldexp(1.0, -24);
    verdict out;
    for (size_t i = 0; i < count; ++i) {
        const double x = static_cast<double>(__bfloat162float(got[i]));
        const double err = std::fabs(x - p.want[i]);
        const double allowed = rtol * (std::fabs(p.want[i]) + rms);
        if (!(err <= allowed)) {  // NaN (an unwritten element) fails too
            if (out.pass)
                out.why = "c[" + std::to_string(i / p.s.n) + "][" + std::to_string(i % p.s.n) +
                          "] = " + std::to_string(x) + ", want " + std::to_string(p.want[i]);
            out.pass = false;
            ++out.bad;
        }
        out.max_abs_err = std::max(out.max_abs_err, std::isnan(err) ? INFINITY : err);
        out.worst_ratio = std::max(out.worst_ratio, std::isnan(err) ? INFINITY : err / allowed);
        err_sq += (x - p.want[i]) * (x - p.want[i]);
    }
    out.rel_l2 = std::sqrt(err_sq / std::max(sum_sq, 1e-300));
    if (!out.pass)
        out.why += " (" + std::to_string(out.bad) + " of " + std::to_string(count) + " bad)";
    const unsigned short* tail = reinterpret_cast<const unsigned short*>(got.data() + count);
    if (std::any_of(tail, tail + problem::guard, [](unsigned short h) { return h != 0xffff; })) {
        out.pass = false;
        out.why += " (wrote past C)";
    }
    return out;
}

// Median of 50 timed launches after 10 warm-ups, in ms.
double median_ms(const std::function<void()>& launch) {
    for (int i = 0; i < 10; ++i) launch();
    CUDA_CHECK(cudaGetLastError());
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    std::vector<float> ms(50);
    for (float& t : ms) {
        CUDA_CHECK(cudaEventRecord(start));
        launch();
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    std::sort(ms.begin(), ms.end());
    return 0.5 * (ms[24] + ms[25]);
}

double tflops(const shape& s, double ms) {
    return 2.0 * s.m * s.n * s.k / (ms * 1e-3) / 1e12;
}

// Checks v on every problem; one line with the worst figures over them.
bool check_variant(const variant& v, const std::vector<std::unique_ptr<problem>>& problems) {
    CUDA_CHECK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    v.shared_bytes));
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, v.kernel));
    verdict worst;
    std::string failures;
    for (const auto& p : problems) {
        const verdict r = check(*p, [&] { p->launch(v); });
        worst.max_abs_err = std::max(worst.max_abs_err, r.max_abs_err);
        worst.worst_ratio = std::max(worst.worst_ratio, r.worst_ratio);
        worst.rel_l2 = std::max(worst.rel_l2, r.rel_l2);
        if (!r.pass) {
            worst.pass = false;
            failures += " " + shape_name(p->s) + ": " + r.why + ";";
        }
    }
    std::printf(
        "%-44s %3d regs %3d B local  max|err| %.4g (%.2f of the tolerance, rel L2 %.2g)  "
        "%s%s\n",
        v.name.c_str(), attr.numRegs, static_cast<int>(attr.localSizeBytes), worst.max_abs_err,
        worst.worst_ratio, worst.rel_l2,
        worst.pass ? "pass" : (v.gating ? "FAIL" : "fail (not gating)"), failures.c_str());
    std::fflush(stdout);
    return worst.pass;
}

}  // namespace

int main() {
    int device = 0;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    std::printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount);
    const std::vector<shape> shapes = {{61, 45, 83},      {1, 1, 1},          {17, 9, 33},
                                       {333, 190, 77},    {96, 40, 1000},     {200, 130, 70},
                                       {128, 128, 128},   {200, 300, 160},    {257, 129, 256},
                                       {130, 260, 2064},  {1000, 1000, 1000}, {2048, 2048, 2048},
                                       {4096, 4096, 4096}};
    const std::vector<shape> timed = {{2048, 2048, 2048}, {4096, 4096, 4096}};
    std::vector<std::unique_ptr<problem>> problems;
    for (const shape& s : shapes) problems.push_back(std::make_unique<problem>(s));
    std::printf("references done: %zu shapes\n", problems.size());
    std::fflush(stdout);

    // Correctness: every configuration on every shape.
    const std::vector<variant> all = variants();
    bool all_pass = true;
    for (const variant& v : all) all_pass &= check_variant(v, problems) || !v.gating;

    // Timing: each configuration, then cuBLASLt (checked on the same problem) beside them, so a
    // cuBLASLt that refuses still leaves the kernels' times.
    bool vendor_agrees = true;
    for (const shape& s : timed) {
        const problem& p = **std::find_if(problems.begin(), problems.end(), [&](const auto& q) {
            return q->s.m == s.m && q->s.n == s.n && q->s.k == s.k;
        });
        std::vector<double> times;
        for (const variant& v : all) {
            times.push_back(median_ms([&] { p.launch(v); }));
            std::printf("%-44s %s  median %.4f ms  %5.0f TFLOP/s\n", v.name.c_str(),
                        shape_name(s).c_str(), times.back(), tflops(s, times.back()));
            std::fflush(stdout);
        }
        const lt_gemm lt(p);
        const verdict lt_check = check(p, [&] { lt.launch(); });
        vendor_agrees &= lt_check.pass;
        const double lt_ms = median_ms([&] { lt.launch(); });
        std::printf("%-44s %s  median %.4f ms  %5.0f TFLOP/s  (%.2f of the tolerance, %s)\n",
                    "cuBLASLt e4m3 (TN, bf16 out)", shape_name(s).c_str(), lt_ms, tflops(s, lt_ms),
                    lt_check.worst_ratio,
                    lt_check.pass ? "agrees" : ("DISAGREES: " + lt_check.why).c_str());
        for (size_t i = 0; i < all.size(); ++i)
            std::printf("%-44s %s  %.3fx cuBLASLt\n", all[i].name.c_str(), shape_name(s).c_str(),
                        lt_ms / times[i]);
        std::fflush(stdout);
    }
    if (!all_pass) return 1;
    return vendor_agrees ? 0 : 3;
}
