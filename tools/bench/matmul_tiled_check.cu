// The matmul-tiled example's kernel on the GPU (issue 50), one configuration per build: its
// tunables come from -D as the optimizer passes them. Checks examples/matmul-tiled's cases and
// holdouts (and 4096^3) against a double-precision reference kernel under the manifest's
// tolerance (|c - r| <= 1e-3 + 1e-4 |r|) with a guard of sentinels past C, then times 4096^3
// (median of 30 launches after 5 warm-ups, CUDA events, L2 warm) beside cuBLAS's sgemm on the
// same data (CUBLAS_DEFAULT_MATH: no TF32), with the largest relative errors of both and of
// cuBLAS with TF32 tensor cores for scale. One line; exit 0 when every shape passes.
//   nvcc -std=c++17 -O3 -arch=sm_90 -DBM=128 -DBN=128 -DBK=8 -DTM=8 -DTN=8 -DSTAGES=3 -DMMA=1 \
//     -o /tmp/mt tools/bench/matmul_tiled_check.cu -lcublas
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../../examples/matmul-tiled/matmul_tiled.cu"

#define CHECK(call)                                                                              \
    do {                                                                                         \
        if (const auto e_ = (call); e_ != 0) {                                                   \
            std::fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #call, int(e_)); \
            std::exit(2);                                                                        \
        }                                                                                        \
    } while (0)

namespace {

__global__ void reference(const float* a, const float* b, double* r, int m, int n, int k) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y,
              col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    double acc = 0.0;
    for (int p = 0; p < k; ++p)
        acc += double(a[static_cast<long long>(row) * k + p]) *
               double(b[static_cast<long long>(p) * n + col]);
    r[static_cast<long long>(row) * n + col] = acc;
}

constexpr int k_guard = 4096;
constexpr size_t k_smem = size_t(STAGES) * BK * (APAD + BN) * sizeof(float);

struct problem {
    int m, n, k;
    float *a = nullptr, *b = nullptr, *c = nullptr;
    problem(int m_, int n_, int k_) : m(m_), n(n_), k(k_) {
        std::mt19937 rng(1000003u * m + 1009u * n + k);
        std::uniform_real_distribution<float> uni(-1.5f, 2.5f);
        std::normal_distribution<float> nor(0.25f, 1.0f);
        std::vector<float> ha(size_t(m) * k), hb(size_t(k) * n);
        for (auto& x : ha) x = uni(rng);
        for (auto& x : hb) x = nor(rng);
        CHECK(cudaMalloc(&a, ha.size() * 4));
        CHECK(cudaMalloc(&b, hb.size() * 4));
        CHECK(cudaMalloc(&c, (size_t(m) * n + k_guard) * 4));
        CHECK(cudaMemcpy(a, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(b, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
    }
    ~problem() { cudaFree(a), cudaFree(b), cudaFree(c); }
    void launch() const {
        matmul_f32<<<dim3((n + BN - 1) / BN, (m + BM - 1) / BM), THREADS, k_smem>>>(a, b, c, m, n,
                                                                                    k);
    }
    // A B in fp64, computed on the GPU, copied to the host.
    std::vector<double> exact() const {
        double* r;
        const size_t count = size_t(m) * n;
        CHECK(cudaMalloc(&r, count * 8));
        reference<<<dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16)>>>(a, b, r, m, n, k);
        std::vector<double> want(count);
        CHECK(cudaMemcpy(want.data(), r, count * 8, cudaMemcpyDeviceToHost));
        cudaFree(r);
        return want;
    }
    // The largest |c - r| / (1e-3 + 1e-4 |r|); past 1 fails. Negative: the guard was written.
    double check() const {
        CHECK(cudaMemset(c, 0xff, (size_t(m) * n + k_guard) * 4));  // NaN sentinels
        launch();
        CHECK(cudaGetLastError());
        const size_t count = size_t(m) * n;
        const std::vector<double> want = exact();
        std::vector<float> got(count + k_guard);
        CHECK(cudaMemcpy(got.data(), c, got.size() * 4, cudaMemcpyDeviceToHost));
        for (size_t i = count; i < got.size(); ++i)
            if (!std::isnan(got[i])) return -1.0;
        double worst = 0.0;
        for (size_t i = 0; i < count; ++i) {
            const double err = std::fabs(got[i] - want[i]) / (1e-3 + 1e-4 * std::fabs(want[i]));
            worst = std::isnan(err) ? 1e30 : std::max(worst, err);
        }
        return worst;
    }
};

template <typename F>
double median_ms(F&& f) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < 5; ++i) f();
    std::vector<float> ms(30);
    for (float& t : ms) {
        CHECK(cudaEventRecord(start));
        f();
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        CHECK(cudaEventElapsedTime(&t, start, stop));
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

int main() {
    if (k_smem > 48 * 1024)
        CHECK(cudaFuncSetAttribute(matmul_f32, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   int(k_smem)));
    const int shapes[][3] = {{256, 384, 128}, {333, 190, 77}, {515, 257, 131},   {130, 66, 9},
                             {3, 5, 7},       {1, 1, 1},      {4096, 4096, 4096}};
    bool ok = true;
    double worst = 0.0;
    for (const auto& s : shapes) {
        const double w = problem(s[0], s[1], s[2]).check();
        if (w < 0 || w > 1) {
            std::printf("  FAIL %dx%dx%d: %s %.3g\n", s[0], s[1], s[2],
                        w < 0 ? "guard written" : "error", w);
            ok = false;
        }
        worst = std::max(worst, w);
    }
    const problem p(4096, 4096, 4096);
    const double mine = median_ms([&] { p.launch(); });
    cublasHandle_t h;
    CHECK(cublasCreate(&h));
    CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    const float one = 1.0f, zero = 0.0f;
    // Row-major C = A B as column-major C^T = B^T A^T.
    const auto sgemm = [&] {
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &one, p.b, p.n, p.a, p.k, &zero,
                    p.c, p.n);
    };
    const double vendor = median_ms(sgemm);
    // Accuracy at 4096^3 beside cuBLAS's: the largest |c - r| / |r| against the fp64 reference.
    const std::vector<double> want = p.exact();
    const size_t count = want.size();
    std::vector<float> got(count);
    auto worst_rel = [&] {
        CHECK(cudaMemcpy(got.data(), p.c, count * 4, cudaMemcpyDeviceToHost));
        double w = 0.0;
        for (size_t i = 0; i < count; ++i)
            w = std::max(w, std::fabs(got[i] - want[i]) / std::max(1e-30, std::fabs(want[i])));
        return w;
    };
    const double vendor_err = worst_rel();  // c holds cuBLAS's product
    // For scale: cuBLAS with TF32 tensor cores (one pass, 10-bit mantissas), its time and error.
    CHECK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
    const double tf32 = median_ms(sgemm);
    const double tf32_err = worst_rel();
    p.launch();
    CHECK(cudaDeviceSynchronize());
    const double mine_err = worst_rel();
    cudaFuncAttributes attr{};
    CHECK(cudaFuncGetAttributes(&attr, matmul_f32));
    std::printf(
        "BM=%d BN=%d BK=%d TM=%d TN=%d STAGES=%d MMA=%d  %3d regs  %s (worst %.2f "
        "of tol)  4096^3 %.4f ms "
        "%.1f TFLOP/s  cuBLAS %.4f ms  %.3fx cuBLAS  max rel err %.2e (cuBLAS %.2e)  cuBLAS TF32 "
        "%.4f ms err %.2e\n",
        BM, BN, BK, TM, TN, STAGES, MMA, attr.numRegs, ok ? "pass" : "FAIL", worst, mine,
        2.0 * 4096.0 * 4096 * 4096 / mine / 1e9, vendor, vendor / mine, mine_err, vendor_err, tf32,
        tf32_err);
    return ok ? 0 : 1;
}
