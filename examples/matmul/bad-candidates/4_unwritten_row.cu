// Skips the last row of c: the poisoned elements are counted and the attempt rejected.
extern "C" __global__ void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m - 1 || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p < k; ++p) acc += a[row * k + p] * b[p * n + col];
    c[row * n + col] = acc;
}
