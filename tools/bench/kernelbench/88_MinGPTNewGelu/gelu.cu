// KernelBench level-1 #88 (the tanh GELU of minGPT, 8 PyTorch ops), fused into one pass with
// four elements per thread; hand-written for issue 45's device run.
__device__ __forceinline__ float new_gelu(float x) {
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * (x * x * x))));
}
extern "C" __global__ void MinGPTNewGelu(const float* x, float* out, int batch_size, int dim) {
    const size_t n = (size_t)batch_size * dim;
    const size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (i + 3 < n) {
        const float4 v = *reinterpret_cast<const float4*>(x + i);
        *reinterpret_cast<float4*>(out + i) =
            make_float4(new_gelu(v.x), new_gelu(v.y), new_gelu(v.z), new_gelu(v.w));
    } else {
        for (size_t j = i; j < n; ++j) out[j] = new_gelu(x[j]);
    }
}
