// cublas-sgemm: the vendor baseline for matmul-tiled. Times cuBLAS SGEMM (fp32, default
// math mode: no TF32) for row-major C[m x n] = A[m x k] * B[k x n] with CUDA events,
// median of 50 after 10 warm-ups, and prints {"m","n","k","median_ms","tflops"}.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(x)                                                              \
    do {                                                                           \
        cudaError_t e = (x);                                                       \
        if (e != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, \
                         cudaGetErrorString(e));                                   \
            return 1;                                                              \
        }                                                                          \
    } while (0)
#define CHECK_CUBLAS(x)                                                            \
    do {                                                                           \
        cublasStatus_t s = (x);                                                    \
        if (s != CUBLAS_STATUS_SUCCESS) {                                          \
            std::fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, \
                         static_cast<int>(s));                                     \
            return 1;                                                              \
        }                                                                          \
    } while (0)

int main(int argc, char** argv) {
    const int m = argc > 1 ? std::atoi(argv[1]) : 4096, n = argc > 2 ? std::atoi(argv[2]) : 4096,
              k = argc > 3 ? std::atoi(argv[3]) : 4096;
    std::vector<float> ha(static_cast<size_t>(m) * k), hb(static_cast<size_t>(k) * n);
    unsigned state = 12345;
    auto next = [&state] {
        return (state = state * 1664525u + 1013904223u) / 4294967296.0f - 0.5f;
    };
    for (auto& v : ha) v = next();
    for (auto& v : hb) v = next();
    float *a, *b, *c;
    CHECK_CUDA(cudaMalloc(&a, ha.size() * 4));
    CHECK_CUDA(cudaMalloc(&b, hb.size() * 4));
    CHECK_CUDA(cudaMalloc(&c, static_cast<size_t>(m) * n * 4));
    CHECK_CUDA(cudaMemcpy(a, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(b, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
    cublasHandle_t h;
    CHECK_CUBLAS(cublasCreate(&h));
    CHECK_CUBLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    const float one = 1.0f, zero = 0.0f;
    // Row-major C = A B is column-major C^T = B^T A^T.
    auto gemm = [&] {
        return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n);
    };
    for (int i = 0; i < 10; ++i) CHECK_CUBLAS(gemm());
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> ms(50);
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    for (auto& t : ms) {
        CHECK_CUDA(cudaEventRecord(start));
        CHECK_CUBLAS(gemm());
        CHECK_CUDA(cudaEventRecord(stop));
        CHECK_CUDA(cudaEventSynchronize(stop));
        CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
    }
    std::sort(ms.begin(), ms.end());
    const double median = 0.5 * (ms[24] + ms[25]);
    std::printf("{\"m\": %d, \"n\": %d, \"k\": %d, \"median_ms\": %.4f, \"tflops\": %.2f}\n", m, n,
                k, median, 2.0 * m * n * k / (median * 1e-3) / 1e12);
    return 0;
}
