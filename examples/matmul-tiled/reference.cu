// Reviewed reference for the pilot: row-major C[m x n] = A[m x k] * B[k x n], fp32,
// accumulated in double and rounded once, one thread per output. Slow on purpose and
// easy to read: its outputs are the oracle every candidate is checked against.
extern "C" __global__ void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    double acc = 0.0;
    for (int p = 0; p < k; ++p) acc += static_cast<double>(a[row * k + p]) * static_cast<double>(b[p * n + col]);
    c[row * n + col] = static_cast<float>(acc);
}
