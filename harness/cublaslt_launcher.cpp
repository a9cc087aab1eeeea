#include "harness/cublaslt_launcher.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <variant>

#include "common/message_text.hpp"

namespace cuopt {

namespace {

// The value of the f32 scalar arg `name` (the request reader checked it); 1 for no name.
float scale_named(const run_case& c, const std::string& name) {
    if (name.empty()) return 1.0f;
    const auto it = std::find_if(c.args.begin(), c.args.end(),
                                 [&](const kernel_arg& a) { return a.name == name; });
    if (it == c.args.end() || it->is_buffer)
        throw std::logic_error("vendor_call names no scalar " + quote_value(name));
    return static_cast<float>(
        std::visit([](auto v) { return static_cast<double>(v); }, it->scalar));
}

// A status, not a CUresult: a failed call does not poison the context by itself.
void check(const cublaslt_api& api, cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw cuda_error(CUDA_ERROR_UNKNOWN,
                         std::string(call) + " failed: " + describe_cublaslt_status(api, status));
}

template <typename T>
void set_attribute(const cublaslt_api& api, cublasLtMatmulDesc_t desc,
                   cublasLtMatmulDescAttributes_t attribute, const T& value, const char* name) {
    check(api, api.matmul_desc_set_attribute(desc, attribute, &value, sizeof value), name);
}

cublaslt_layout make_layout(const cublaslt_api& api, cudaDataType type, std::uint64_t rows,
                            std::uint64_t cols, std::int64_t ld) {
    cublasLtMatrixLayout_t layout{};
    check(api, api.matrix_layout_create(&layout, type, rows, cols, ld),
          "cublasLtMatrixLayoutCreate");
    return {layout, api.matrix_layout_destroy};
}

// f32 compute and scales, cuBLASLt's A transposed (the TN form), FAST_ACCUM off, and the
// per-tensor scales read from the device: `scales` holds A's (our B's) then B's (our A's).
cublaslt_matmul_desc make_desc(const cublaslt_api& api, CUdeviceptr scales) {
    cublasLtMatmulDesc_t raw{};
    check(api, api.matmul_desc_create(&raw, CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "cublasLtMatmulDescCreate");
    cublaslt_matmul_desc desc(raw, api.matmul_desc_destroy);
    const std::int32_t transposed = CUBLAS_OP_T, as_is = CUBLAS_OP_N;
    const std::int8_t fast_accum = 0;
    const void* first_scale = reinterpret_cast<const void*>(scales);
    const void* second_scale =
        reinterpret_cast<const void*>(scales + cublaslt_launcher::k_scale_stride_bytes);
    set_attribute(api, raw, CUBLASLT_MATMUL_DESC_TRANSA, transposed, "TRANSA");
    set_attribute(api, raw, CUBLASLT_MATMUL_DESC_TRANSB, as_is, "TRANSB");
    set_attribute(api, raw, CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast_accum, "FAST_ACCUM");
    set_attribute(api, raw, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, first_scale, "A_SCALE_POINTER");
    set_attribute(api, raw, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, second_scale, "B_SCALE_POINTER");
    return desc;
}

// One e4m3_gemm as cuBLASLt computes it, column-major: D = C^T (n x m, ld n) =
// op_T(first: B as stored, k x n, ld k) x (second: A as stored = A^T, k x m, ld k).
struct e4m3_matmul {
    cublaslt_matmul_desc desc;
    cublaslt_layout first, second, out;
    cublasLtMatmulAlgo_t algo{};
    CUdeviceptr b{}, a{}, c{};
};

std::string shape_of(const vendor_call& v, dtype c_type) {
    return "e4m3_gemm with m=" + std::to_string(v.m) + ", n=" + std::to_string(v.n) +
           ", k=" + std::to_string(v.k) + " and C " + std::string(dtype_name(c_type));
}

// cuBLASLt's first heuristic answer within the workspace; none is an error naming the shape.
cublasLtMatmulAlgo_t choose_algo(const cublaslt_api& api, cublasLtHandle_t handle,
                                 const e4m3_matmul& mm, const std::string& shape) {
    cublasLtMatmulPreference_t raw{};
    check(api, api.preference_create(&raw), "cublasLtMatmulPreferenceCreate");
    const cublaslt_preference preference(raw, api.preference_destroy);
    const std::uint64_t bytes = cublaslt_launcher::k_workspace_bytes;
    check(api,
          api.preference_set_attribute(raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes,
                                       sizeof bytes),
          "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t s =
        api.algo_get_heuristic(handle, mm.desc.get(), mm.first.get(), mm.second.get(), mm.out.get(),
                               mm.out.get(), raw, 1, &result, &found);
    if (s != CUBLAS_STATUS_SUCCESS || found < 1)
        throw cuda_error(
            CUDA_ERROR_NOT_SUPPORTED,
            "cublasLtMatmulAlgoGetHeuristic found no algorithm for " + shape + " within a " +
                std::to_string(cublaslt_launcher::k_workspace_bytes >> 20) + " MiB workspace" +
                (s == CUBLAS_STATUS_SUCCESS ? std::string()
                                            : ": " + describe_cublaslt_status(api, s)));
    return result.algo;
}

}  // namespace

cublaslt_launcher::cublaslt_launcher(cublaslt_api api)
    : m_api(std::move(api)), m_workspace(k_workspace_bytes), m_scales(2 * k_scale_stride_bytes) {
    cublasLtHandle_t handle{};
    const cublasStatus_t made = m_api.create(&handle);
    if (made != CUBLAS_STATUS_SUCCESS)
        throw vendor_library_error(
            m_api.file + ": cublasLtCreate failed: " + describe_cublaslt_status(m_api, made));
    m_handle = cublaslt_handle(handle, m_api.destroy);
}

std::function<void()> cublaslt_launcher::bind(const run_case& c,
                                              const std::vector<live_buffer>& buffers,
                                              CUstream stream) {
    const vendor_call& v = *c.vendor;
    // Synchronous: the previous case's launches, the only readers, finished with its stream.
    const float first = scale_named(c, v.scale_b), second = scale_named(c, v.scale_a);
    CU_CALL(cuMemcpyHtoD(m_scales.get(), &first, sizeof first));
    CU_CALL(cuMemcpyHtoD(m_scales.get() + k_scale_stride_bytes, &second, sizeof second));
    const dtype c_type = buffer_named(buffers, v.c).arg->type;
    const cudaDataType out_type = c_type == dtype::bf16 ? CUDA_R_16BF : CUDA_R_32F;
    auto mm = std::make_shared<e4m3_matmul>();
    mm->desc = make_desc(m_api, m_scales.get());
    mm->first = make_layout(m_api, CUDA_R_8F_E4M3, v.k, v.n, v.k);
    mm->second = make_layout(m_api, CUDA_R_8F_E4M3, v.k, v.m, v.k);
    mm->out = make_layout(m_api, out_type, v.n, v.m, v.n);
    mm->algo = choose_algo(m_api, m_handle.get(), *mm, shape_of(v, c_type));
    mm->b = buffer_named(buffers, v.b).working.get();
    mm->a = buffer_named(buffers, v.a).working.get();
    mm->c = buffer_named(buffers, v.c).working.get();
    return [this, mm = std::shared_ptr<const e4m3_matmul>(std::move(mm)), stream] {
        static const float one = 1.0f, zero = 0.0f;  // host scalars, read during the call
        void* c_ptr = reinterpret_cast<void*>(mm->c);
        const cublasStatus_t s =
            m_api.matmul(m_handle.get(), mm->desc.get(), &one, reinterpret_cast<const void*>(mm->b),
                         mm->first.get(), reinterpret_cast<const void*>(mm->a), mm->second.get(),
                         &zero, c_ptr, mm->out.get(), c_ptr, mm->out.get(), &mm->algo,
                         reinterpret_cast<void*>(m_workspace.get()), k_workspace_bytes, stream);
        if (s != CUBLAS_STATUS_SUCCESS)
            throw cuda_error(CUDA_ERROR_UNKNOWN,
                             "cublasLtMatmul failed: " + describe_cublaslt_status(m_api, s));
    };
}

std::string cublaslt_launcher::entry(const run_case& c) const {
    return std::string("cublaslt:") + k_vendor_ops.name(c.vendor->op);
}

std::string cublaslt_launcher::notes() {
    return "e4m3_gemm: D = scale_a * scale_b * (A x B) by cublasLtMatmul, A and B "
           "CUDA_R_8F_E4M3, C = D CUDA_R_16BF or CUDA_R_32F (C's dtype), CUBLAS_COMPUTE_32F, "
           "scale type CUDA_R_32F, alpha 1, beta 0; per-tensor scales as device floats through "
           "CUBLASLT_MATMUL_DESC_A_SCALE_POINTER and B_SCALE_POINTER (1.0 where none is named); "
           "CUBLASLT_MATMUL_DESC_FAST_ACCUM off; row_major_bt computed as the column-major C^T "
           "(n x m, ld n) = op_T(B stored k x n, ld k) x A^T (k x m, ld k), the TN form "
           "cuBLASLt's FP8 needs; the algorithm is cublasLtMatmulAlgoGetHeuristic's first "
           "within a 32 MiB workspace, chosen once per case outside the timed launches; one "
           "launch may run several cuBLASLt kernels, all between the same two events";
}

}  // namespace cuopt
