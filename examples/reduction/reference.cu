// Reviewed reference: per-row sums in fp32, y[r] = x[r][0] + ... + x[r][cols - 1] over a
// row-major rows x cols matrix. One thread per row, accumulated in double and rounded once.
// Slow on purpose and easy to read: its outputs are the oracle every candidate is checked
// against.
extern "C" __global__ void row_sum_f32(const float* x, float* y, int rows, int cols) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float* in = x + static_cast<long long>(row) * cols;
    double sum = 0.0;
    for (int c = 0; c < cols; ++c) sum += in[c];
    y[row] = static_cast<float>(sum);
}
