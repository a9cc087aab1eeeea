#include "harness/cublas_launcher.hpp"

#include <algorithm>

namespace cuopt {

namespace {

CUdeviceptr buffer_named(const std::vector<live_buffer>& buffers, const std::string& name) {
    const auto it = std::find_if(buffers.begin(), buffers.end(),
                                 [&](const live_buffer& b) { return b.arg->name == name; });
    if (it == buffers.end())  // the request reader checked every name
        throw std::logic_error("vendor_call names no buffer '" + name + "'");
    return it->working.get();
}

// One gemm in column-major terms: C (M x N, ld M) = first (M x K, ld M) x second (K x N, ld K).
struct column_major_gemm {
    int M = 0, N = 0, K = 0;
    CUdeviceptr first{}, second{}, c{};
};

column_major_gemm plan(const vendor_call& v, const std::vector<live_buffer>& buffers) {
    const CUdeviceptr a = buffer_named(buffers, v.a), b = buffer_named(buffers, v.b);
    column_major_gemm g;
    g.K = v.k;
    g.c = buffer_named(buffers, v.c);
    if (v.layout == matrix_layout::col_major) {
        g.M = v.m, g.N = v.n, g.first = a, g.second = b;
    } else {  // row-major C is column-major C^T (n x m) = B^T (n x k) A^T (k x m)
        g.M = v.n, g.N = v.m, g.first = b, g.second = a;
    }
    return g;
}

cublasStatus_t call(const cublas_api& api, cublasHandle_t h, vendor_op op,
                    const column_major_gemm& g) {
    const cublasOperation_t n = CUBLAS_OP_N;
    switch (op) {
        case vendor_op::sgemm: {
            const float one = 1.0f, zero = 0.0f;
            return api.sgemm(h, n, n, g.M, g.N, g.K, &one, reinterpret_cast<const float*>(g.first),
                             g.M, reinterpret_cast<const float*>(g.second), g.K, &zero,
                             reinterpret_cast<float*>(g.c), g.M);
        }
        case vendor_op::dgemm: {
            const double one = 1.0, zero = 0.0;
            return api.dgemm(h, n, n, g.M, g.N, g.K, &one, reinterpret_cast<const double*>(g.first),
                             g.M, reinterpret_cast<const double*>(g.second), g.K, &zero,
                             reinterpret_cast<double*>(g.c), g.M);
        }
        case vendor_op::hgemm: {
            const float one = 1.0f, zero = 0.0f;  // f32 scalars with f32 compute
            return api.gemm_ex(h, n, n, g.M, g.N, g.K, &one, reinterpret_cast<const void*>(g.first),
                               CUDA_R_16F, g.M, reinterpret_cast<const void*>(g.second), CUDA_R_16F,
                               g.K, &zero, reinterpret_cast<void*>(g.c), CUDA_R_16F, g.M,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        }
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
           "column-major C^T = B^T A^T; one launch may run several cuBLAS kernels, all between "
           "the same two events";
}

}  // namespace cuopt
