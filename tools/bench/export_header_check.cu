// The pilot's exported header on the GPU (issue 46's device check): launch_matmul_f32 from the
// generated matmul_f32.cuh on random inputs at each of the pilot's shapes, its output against a
// host matmul, and its median time over 200 launches (CUDA events, warm L2, no flush) printed
// beside the shape, to read against the run's own medians.
//   nvcc -std=c++17 -arch=sm_90 -I EXPORT_DIR tools/bench/export_header_check.cu -o check
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "matmul_f32.cuh"

int check(int m, int n, int k) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> a(size_t(m) * k), b(size_t(k) * n), c(size_t(m) * n), want(c.size());
    for (float& x : a) x = u(rng);
    for (float& x : b) x = u(rng);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0;
            for (int p = 0; p < k; ++p) s += double(a[size_t(i) * k + p]) * b[size_t(p) * n + j];
            want[size_t(i) * n + j] = float(s);
        }
    float *da, *db, *dc;
    cudaMalloc(&da, a.size() * 4);
    cudaMalloc(&db, b.size() * 4);
    cudaMalloc(&dc, c.size() * 4);
    cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cudaError_t e = launch_matmul_f32(da, db, dc, m, n, k, stream);
    cudaStreamSynchronize(stream);
    cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost);
    double worst = 0;
    for (size_t i = 0; i < c.size(); ++i)
        worst = std::max(worst, double(std::fabs(c[i] - want[i])));
    std::vector<float> ms;
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    for (int r = 0; r < 220; ++r) {
        cudaEventRecord(start, stream);
        launch_matmul_f32(da, db, dc, m, n, k, stream);
        cudaEventRecord(stop, stream);
        cudaEventSynchronize(stop);
        float t = 0;
        cudaEventElapsedTime(&t, start, stop);
        if (r >= 20) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%dx%dx%d: launch %s, max |error| %.3g, median %.4f ms over %zu launches\n", m, n,
                k, cudaGetErrorString(e), worst, ms[ms.size() / 2], ms.size());
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return e == cudaSuccess && worst < 1e-3 ? 0 : 1;
}

int main() {
    int bad = check(31, 37, 29) + check(256, 256, 256) + check(384, 256, 320);
    dim3 g, b;
    size_t s;  // a shape the launcher must refuse: no block for m = 0
    std::printf("m=0: %s\n", cudaGetErrorString(matmul_f32_launch_shape(nullptr, nullptr, nullptr,
                                                                        0, 8, 8, &g, &b, &s)));
    return bad;
}
