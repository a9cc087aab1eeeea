// A deliberately slower version of the pilot kernel for the regression gate's evidence:
// the dot product twice (forwards and backwards) and their mean: the same values within
// tolerance, about twice the work.
extern "C" __global__ void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    float up = 0.0f, down = 0.0f;
    for (int p = 0; p < k; ++p) up += a[row * k + p] * b[p * n + col];
    for (int p = k - 1; p >= 0; --p) down += a[row * k + p] * b[p * n + col];
    c[row * n + col] = 0.5f * (up + down);
}
