// KernelBench level-1 #12: diag(A) @ B is row i of B times A[i], not a 4096^3 matmul;
// hand-written for issue 45's device run (four elements per thread).
extern "C" __global__ void Matmul_with_diagonal_matrices_(const float* A, const float* B,
                                                          float* out, int M, int N) {
    const size_t n = (size_t)N * M;
    const size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (i + 3 < n && M % 4 == 0) {
        const float a = A[i / M];
        const float4 b = *reinterpret_cast<const float4*>(B + i);
        *reinterpret_cast<float4*>(out + i) = make_float4(a * b.x, a * b.y, a * b.z, a * b.w);
    } else {
        for (size_t j = i; j < n && j < i + 4; ++j) out[j] = A[j / M] * B[j];
    }
}
