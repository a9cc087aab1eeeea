#include "harness/cublas_launcher.hpp"

#include <algorithm>

namespace cuopt {

namespace {

// One gemm in column-major terms: C (M x N, ld M) = op(first) (M x K) x second (K x N, ld K),
// first stored M x K (ld M) as is, or K x M (ld K) when transposed.
struct column_major_gemm {
    int M = 0, N = 0, K = 0;
    cublasOperation_t first_op = CUBLAS_OP_N;
    CUdeviceptr first{}, second{}, c{};
    int first_ld() const { return first_op == CUBLAS_OP_N ? M : K; }
};

column_major_gemm plan(const vendor_call& v, const std::vector<live_buffer>& buffers) {
    const CUdeviceptr a = buffer_named(buffers, v.a).working.get(),
                      b = buffer_named(buffers, v.b).working.get();
    column_major_gemm g;
    g.K = v.k;
    g.c = buffer_named(buffers, v.c).working.get();
    if (v.layout == matrix_layout::col_major) {
        g.M = v.m, g.N = v.n, g.first = a, g.second = b;
    } else {  // row-major C is column-major C^T (n x m) = B^T (n x k) A^T (k x m)
        g.M = v.n, g.N = v.m, g.first = b, g.second = a;
        // row_major_bt: B is stored n x k row-major, which is B^T column-major (k x n, ld k)
        if (v.layout == matrix_layout::row_major_bt) g.first_op = CUBLAS_OP_T;
    }
    return g;
}

cublasStatus_t call(const cublas_api& api, cublasHandle_t h, vendor_op op,
                    const column_major_gemm& g) {
    const cublasOperation_t t = g.first_op, n = CUBLAS_OP_N;
    const int lda = g.first_ld();
    switch (op) {
        case vendor_op::sgemm: {
            const float one = 1.0f, zero = 0.0f;
            return api.sgemm(h, t, n, g.M, g.N, g.K, &one, reinterpret_cast<const float*>(g.first),
                             lda, reinterpret_cast<const float*>(g.second), g.K, &zero,
                             reinterpret_cast<float*>(g.c), g.M);
        }
        case vendor_op::dgemm: {
            const double one = 1.0, zero = 0.0;
            return api.dgemm(h, t, n, g.M, g.N, g.K, &one, reinterpret_cast<const double*>(g.first),
                             lda, reinterpret_cast<const double*>(g.second), g.K, &zero,
                             reinterpret_cast<double*>(g.c), g.M);
        }
        case vendor_op::hgemm: {
            const float one = 1.0f, zero = 0.0f;  // f32 scalars with f32 compute
            return api.gemm_ex(h, t, n, g.M, g.N, g.K, &one, reinterpret_cast<const void*>(g.first),
                               CUDA_R_16F, lda, reinterpret_cast<const void*>(g.second), CUDA_R_16F,
                               g.K, &zero, reinterpret_cast<void*>(g.c), CUDA_R_16F, g.M,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        }
        case vendor_op::e4m3_gemm:      // cuBLASLt's (cublaslt_launcher); the reader pairs them
        case vendor_op::segmented_sum:  // CUB's (cub_launcher)
            break;
    }
    return CUBLAS_STATUS_INVALID_VALUE;
}

const char* function_of(vendor_op op) {
    return op == vendor_op::sgemm   ? "cublasSgemm"
           : op == vendor_op::dgemm ? "cublasDgemm"
                                    : "cublasGemmEx";
}

}  // namespace

cublas_launcher::cublas_launcher(cublas_api api) : m_api(std::move(api)) {
    const cublasStatus_t made = m_api.create(&m_handle);
    if (made != CUBLAS_STATUS_SUCCESS)
        throw vendor_library_error(m_api.file +
                                   ": cublasCreate failed: " + describe_cublas_status(m_api, made));
    const cublasStatus_t mode = m_api.set_math_mode(m_handle, CUBLAS_DEFAULT_MATH);
    if (mode != CUBLAS_STATUS_SUCCESS)
        throw vendor_library_error(m_api.file +
                                   ": cublasSetMathMode(CUBLAS_DEFAULT_MATH) failed: " +
                                   describe_cublas_status(m_api, mode));
}

cublas_launcher::~cublas_launcher() {
    if (m_handle) m_api.destroy(m_handle);
}

std::function<void()> cublas_launcher::bind(const run_case& c,
                                            const std::vector<live_buffer>& buffers,
                                            CUstream stream) {
    const vendor_call& v = *c.vendor;
    const cublasStatus_t set = m_api.set_stream(m_handle, stream);
    if (set != CUBLAS_STATUS_SUCCESS)
        throw cuda_error(CUDA_ERROR_UNKNOWN,
                         "cublasSetStream failed: " + describe_cublas_status(m_api, set));
    return [this, op = v.op, g = plan(v, buffers)] {
        const cublasStatus_t s = call(m_api, m_handle, op, g);
        if (s != CUBLAS_STATUS_SUCCESS)  // a status, not a CUresult: not sticky by itself
            throw cuda_error(CUDA_ERROR_UNKNOWN, std::string(function_of(op)) + " failed: " +
                                                     describe_cublas_status(m_api, s));
    };
}

std::string cublas_launcher::entry(const run_case& c) const {
    return std::string("cublas:") + k_vendor_ops.name(c.vendor->op);
}

std::string cublas_launcher::notes() {
    return "C = A x B, alpha 1, beta 0; TF32 off: math mode set to CUBLAS_DEFAULT_MATH "
           "explicitly; sgemm = cublasSgemm, dgemm = cublasDgemm, hgemm = cublasGemmEx with f16 "
           "A, B and C and CUBLAS_COMPUTE_32F (f32 accumulation); row_major computed as the "
           "column-major C^T = B^T A^T, row_major_bt (B stored n x k) the same with B transposed "
           "(transa = CUBLAS_OP_T); one launch may run several cuBLAS kernels, all between "
           "the same two events";
}

}  // namespace cuopt
