// The vendor path: a request's vendor_calls (cuBLAS sgemm, dgemm, hgemm; cuBLASLt e4m3_gemm)
// computed on the CPU in double, 0.5 ms per 256^3, with no kernel to compile.
#include <algorithm>
#include <variant>

#include "fake_harness.hpp"

namespace cuopt::fake {

namespace {

// A vendor call's C on the CPU in double: sum over p from 0 upwards, the innermost loop
// walking memory in order. row_major_bt: B stored n x k, C[i][j] = sum a[i][p] b[j][p].
std::vector<double> vendor_product(const vendor_call& v, const std::vector<double>& a,
                                   const std::vector<double>& b) {
    const std::int64_t m = v.m, n = v.n, k = v.k;
    std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
    if (v.layout == matrix_layout::row_major) {
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t p = 0; p < k; ++p)
                for (std::int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
    } else if (v.layout == matrix_layout::row_major_bt) {
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j)
                for (std::int64_t p = 0; p < k; ++p) c[i * n + j] += a[i * k + p] * b[j * k + p];
    } else {
        for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t p = 0; p < k; ++p)
                for (std::int64_t i = 0; i < m; ++i) c[i + j * m] += a[i + p * m] * b[p + j * k];
    }
    return c;
}

// An e4m3_gemm scale as cuBLASLt sees it (the f32 scalar arg's value); 1 for none.
double vendor_scale(const run_case& rc, const std::string& name) {
    if (name.empty()) return 1.0;
    const auto it = std::find_if(rc.args.begin(), rc.args.end(),
                                 [&](const kernel_arg& a) { return a.name == name; });
    return static_cast<float>(
        std::visit([](auto x) { return static_cast<double>(x); }, it->scalar));
}

// One vendor case on the CPU: C = A x B in double from the inputs as stored (fp8 decoded),
// times e4m3_gemm's two scales, rounded once to C's dtype; 0.5 ms per 256^3.
case_outcome run_vendor_case(const request& req, const run_case& rc) {
    const vendor_call& v = *rc.vendor;
    auto arg = [&rc](const std::string& name) -> const kernel_arg& {
        return *std::find_if(rc.args.begin(), rc.args.end(),
                             [&](const kernel_arg& a) { return a.name == name; });
    };
    const kernel_arg &A = arg(v.a), &B = arg(v.b), &C = arg(v.c);
    const std::uint64_t checked =
        rc.launch_index_base + (rc.measure ? req.timing.checked_offset() : 0);
    const auto a = values_of(A, values_launch(A, req, rc, checked));
    const auto b = values_of(B, values_launch(B, req, rc, checked));
    const std::int64_t m = v.m, n = v.n, k = v.k;
    std::vector<double> c = vendor_product(v, a, b);
    const double scale = vendor_scale(rc, v.scale_a) * vendor_scale(rc, v.scale_b);
    for (double& x : c) x *= scale;
    case_outcome out;
    out.name = rc.name;
    out.measured = rc.measure;
    out.entry = std::string(k_vendor_libraries.name(*req.vendor)) + ":" + k_vendor_ops.name(v.op);
    out.checked_launch_index = checked;
    out.inputs_changed.emplace();  // a vendor library never writes into its inputs
    out.outputs.push_back(write_values(C, *C.output_file, c, "output"));
    for (const kernel_arg* in : {&A, &B})
        if (in->input_dump_file)
            out.outputs.push_back(
                write_values(*in, *in->input_dump_file, in == &A ? a : b, "input_dump"));
    if (rc.measure)
        time_case(out, req, "",
                  0.5 * device_slowdown(req.device) * static_cast<double>(m * n * k) /
                      (256.0 * 256.0 * 256.0));
    out.status = case_run_status::ok;
    return out;
}

}  // namespace

// No kernel: the vendor block says which library and math mode, and every case is a
// vendor_call computed on the CPU.
void run_vendor_request(harness_report& report, const request& req) {
    const bool lt = *req.vendor == vendor_library::cublaslt;
    report.vendor = vendor_report{
        k_vendor_libraries.name(*req.vendor), "fake", "0.0.0",
        lt ? "CUBLAS_COMPUTE_32F, FAST_ACCUM off" : "CUBLAS_DEFAULT_MATH",
        lt ? "fake: D = scale_a * scale_b * (A x B) on the CPU in double, 0.5 ms per 256^3"
           : "fake: C = A x B on the CPU, 0.5 ms per 256^3"};
    describe_clocks(report, req, "");
    for (const run_case& rc : req.cases) report.cases.push_back(run_vendor_case(req, rc));
}

}  // namespace cuopt::fake
