// Reviewed reference: row softmax in fp32, y[r][c] = exp(x[r][c] - m) / sum_j exp(x[r][j] - m)
// over a row-major rows x cols matrix, m being row r's maximum. One thread per row; exp and
// the sum in double, each output rounded once. Slow on purpose and easy to read: its outputs
// are the oracle every candidate is checked against. cols >= 1 (the manifest's counts).
extern "C" __global__ void softmax_f32(const float* x, float* y, int rows, int cols) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float* in = x + static_cast<long long>(row) * cols;
    float* out = y + static_cast<long long>(row) * cols;
    float m = in[0];
    for (int c = 1; c < cols; ++c) m = fmaxf(m, in[c]);
    double sum = 0.0;
    for (int c = 0; c < cols; ++c) sum += exp(static_cast<double>(in[c]) - m);
    for (int c = 0; c < cols; ++c) out[c] = static_cast<float>(exp(static_cast<double>(in[c]) - m) / sum);
}
