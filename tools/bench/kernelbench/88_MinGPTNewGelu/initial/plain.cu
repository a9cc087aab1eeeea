// KernelBench level-1 #88 as a user's first CUDA port might read: one element per thread, the
// formula in double. The "initial_kernel" of issue 45's own-kernel device run: a row beside
// PyTorch eager and the search's starting point, not the baseline.
extern "C" __global__ void MinGPTNewGelu(const float* x, float* out, int batch_size, int dim) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)batch_size * dim) return;
    const double v = x[i];
    out[i] = (float)(0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
}
