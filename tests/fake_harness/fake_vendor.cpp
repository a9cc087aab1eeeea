// The vendor path: a request's vendor_calls (cuBLAS sgemm, dgemm, hgemm; cuBLASLt e4m3_gemm; CUB
// segmented_sum) computed on the CPU in double, 0.5 ms per 256^3 products (or summed elements),
// with no kernel to compile.
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

// segmented_sum's y on the CPU in double: row r's sum from j = 0 upwards.
std::vector<double> vendor_row_sums(const vendor_call& v, const std::vector<double>& x) {
    std::vector<double> y(static_cast<std::size_t>(v.rows), 0.0);
    for (std::int64_t r = 0; r < v.rows; ++r)
        for (std::int64_t j = 0; j < v.cols; ++j) y[r] += x[r * v.cols + j];
    return y;
}

// One vendor case on the CPU: C = A x B in double from the inputs as stored (fp8 decoded),
// times e4m3_gemm's two scales, or segmented_sum's row sums, rounded once to the output's
// dtype; 0.5 ms per 256^3 products or summed elements.
case_outcome run_vendor_case(const request& req, const run_case& rc) {
    const vendor_call& v = *rc.vendor;
    auto arg = [&rc](const std::string& name) -> const kernel_arg& {
        return *std::find_if(rc.args.begin(), rc.args.end(),
                             [&](const kernel_arg& a) { return a.name == name; });
    };
    const bool sums = is_row_sum(v.op);
    std::vector<const kernel_arg*> ins =
        sums ? std::vector{&arg(v.x)} : std::vector{&arg(v.a), &arg(v.b)};
    const kernel_arg& out_arg = arg(sums ? v.y : v.c);
    const std::uint64_t checked =
        rc.launch_index_base + (rc.measure ? req.timing.checked_offset() : 0);
    std::vector<std::vector<double>> in_values;
    for (const kernel_arg* in : ins)
        in_values.push_back(values_of(*in, values_launch(*in, req, rc, checked)));
    std::vector<double> c =
        sums ? vendor_row_sums(v, in_values[0]) : vendor_product(v, in_values[0], in_values[1]);
    const double scale = vendor_scale(rc, v.scale_a) * vendor_scale(rc, v.scale_b);
    for (double& x : c) x *= scale;
    case_outcome out;
    out.name = rc.name;
    out.measured = rc.measure;
    out.entry = std::string(k_vendor_libraries.name(*req.vendor)) + ":" + k_vendor_ops.name(v.op);
    out.checked_launch_index = checked;
    out.inputs_changed.emplace();  // a vendor library never writes into its inputs
    out.outputs.push_back(write_values(out_arg, *out_arg.output_file, c, "output"));
    for (std::size_t i = 0; i < ins.size(); ++i)
        if (ins[i]->input_dump_file)
            out.outputs.push_back(
                write_values(*ins[i], *ins[i]->input_dump_file, in_values[i], "input_dump"));
    const double work =
        sums ? static_cast<double>(v.rows) * v.cols : static_cast<double>(v.m) * v.n * v.k;
    if (rc.measure)
        time_case(out, req, "", 0.5 * device_slowdown(req.device) * work / (256.0 * 256.0 * 256.0));
    out.status = case_run_status::ok;
    return out;
}

}  // namespace

// No kernel: the vendor block says which library and math mode, and every case is a
// vendor_call computed on the CPU.
void run_vendor_request(harness_report& report, const request& req) {
    const vendor_library library = *req.vendor;
    const bool lt = library == vendor_library::cublaslt, cub = library == vendor_library::cub;
    report.vendor = vendor_report{
        k_vendor_libraries.name(library), "fake", "0.0.0",
        cub  ? "f32 sums in CUB's own order"
        : lt ? "CUBLAS_COMPUTE_32F, FAST_ACCUM off"
             : "CUBLAS_DEFAULT_MATH",
        cub  ? "fake: y[r] = sum_j x[r][j] on the CPU in double, 0.5 ms per 256^3 elements"
        : lt ? "fake: D = scale_a * scale_b * (A x B) on the CPU in double, 0.5 ms per 256^3"
             : "fake: C = A x B on the CPU, 0.5 ms per 256^3"};
    describe_clocks(report, req, "");
    for (const run_case& rc : req.cases) report.cases.push_back(run_vendor_case(req, rc));
}

}  // namespace cuopt::fake
