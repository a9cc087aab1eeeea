// The manifest's vendor baseline (cuBLAS, cuBLASLt): the call as written, its buffers and scales
// resolved against the arguments, its sizes against each case, one library for the manifest.
#include <tuple>

#include "common/dtype.hpp"
#include "common/request.hpp"
#include "orchestrator/contract/manifest_checks.hpp"

namespace cuopt::manifest_reading {

// A case's vendor call against its sizes (m, n, k and every count evaluated already): each
// of m, n, k suits the op (e4m3_gemm: multiples of 16), and each operand's count is the
// call's shape (A m*k, B k*n or n*k, C m*n), as the harness will check.
void check_vendor_sizes(const manifest& m, const manifest_case& mc, const std::string& field,
                        const context& ctx) {
    const vendor_baseline_spec& v = *mc.vendor;
    const vendor_op op = *k_vendor_ops.parse(v.op);
    const std::int64_t M = evaluate_integer_expression(v.m, mc.params),
                       N = evaluate_integer_expression(v.n, mc.params),
                       K = evaluate_integer_expression(v.k, mc.params);
    for (auto [key, e, value] : {std::tuple{"m", &v.m, M}, {"n", &v.n, N}, {"k", &v.k, K}})
        if (const std::string problem = vendor_dimension_problem(op, value); !problem.empty())
            ctx.fail(field + ".vendor_baseline." + key, "'" + *e + "' = " + problem);
    const bool bt = v.layout == k_matrix_layouts.name(matrix_layout::row_major_bt);
    for (auto [key, name, count, shape] : {std::tuple{"a", &v.a, M * K, "m*k"},
                                           {"b", &v.b, K * N, bt ? "n*k" : "k*n"},
                                           {"c", &v.c, M * N, "m*n"}}) {
        const manifest_arg* a = m.find_arg(*name);  // resolve_vendor_buffers checked it
        const std::int64_t have = evaluate_integer_expression(a->count, mc.params);
        if (have != count)
            ctx.fail(field + ".vendor_baseline." + key,
                     "'" + *name + "' has count " + a->count + " = " + std::to_string(have) +
                         " but " + v.op + " with m=" + std::to_string(M) +
                         ", n=" + std::to_string(N) + ", k=" + std::to_string(K) + " needs " +
                         shape + " = " + std::to_string(count));
    }
}

vendor_baseline_spec read_vendor(const json_field& v) {
    vendor_baseline_spec spec;
    spec.library = v.text("library");
    spec.op = v.text("op");
    spec.layout = v.optional_text("layout").value_or(
        spec.op == k_vendor_ops.name(vendor_op::e4m3_gemm) ? "row_major_bt" : spec.layout);
    spec.m = json_scalar_text(v["m"].value());
    spec.n = json_scalar_text(v["n"].value());
    spec.k = json_scalar_text(v["k"].value());
    for (auto [key, out] : {std::pair{"a", &spec.a},
                            {"b", &spec.b},
                            {"c", &spec.c},
                            {"scale_a", &spec.scale_a},
                            {"scale_b", &spec.scale_b}})
        *out = v.optional_text(key).value_or("");
    return spec;
}

namespace {

// A vendor call's scales: e4m3_gemm's only, each the name of an f32 scalar argument.
void check_vendor_scales(const vendor_baseline_spec& v, vendor_op op, const manifest& m,
                         const context& ctx, const std::string& field) {
    for (auto [key, name] : {std::pair{"scale_a", &v.scale_a}, {"scale_b", &v.scale_b}}) {
        if (name->empty()) continue;
        if (op != vendor_op::e4m3_gemm)
            ctx.fail(field + "." + key,
                     v.op + " takes no scales; only e4m3_gemm scales its product");
        const manifest_arg* a = m.find_arg(*name);
        if (!a || a->is_buffer() || a->type != dtype::f32)
            ctx.fail(field + "." + key,
                     "expected the name of an f32 scalar argument (cuBLASLt's scale type is "
                     "CUDA_R_32F), got '" +
                         *name + "'" +
                         (a ? std::string(" (") + (a->is_buffer() ? "a buffer" : "a scalar") +
                                  " of dtype " + std::string(dtype_name(a->type)) + ")"
                            : std::string(", which names no argument")));
    }
}

}  // namespace

// The buffers a vendor call names (defaults filled in), each checked to exist with the right
// role and the op's dtype; the op checked to pair with the library and layout, its scales.
void resolve_vendor_buffers(vendor_baseline_spec& v, const manifest& m, const context& ctx,
                            const std::string& field) {
    const vendor_op op = *k_vendor_ops.parse(v.op);  // the schema's enums guarantee these
    if (const auto problem = check_vendor_pairing(op, *k_vendor_libraries.parse(v.library),
                                                  *k_matrix_layouts.parse(v.layout)))
        ctx.fail(field + "." + problem->field, problem->message);
    std::vector<const manifest_arg*> inputs, outputs;
    for (const manifest_arg& a : m.args) {
        if (a.kind == arg_kind::input) inputs.push_back(&a);
        if (a.has_output()) outputs.push_back(&a);
    }
    if (v.a.empty() && !inputs.empty()) v.a = inputs[0]->name;
    if (v.b.empty() && inputs.size() > 1) v.b = inputs[1]->name;
    if (v.c.empty() && !outputs.empty()) v.c = outputs[0]->name;
    for (auto [key, name, output] :
         {std::tuple{"a", &v.a, false}, {"b", &v.b, false}, {"c", &v.c, true}}) {
        const manifest_arg* a = m.find_arg(*name);
        if (!a || (output ? !a->has_output() : !a->has_input()))
            ctx.fail(field + "." + key, "expected the name of an " +
                                            std::string(output ? "output" : "input") +
                                            " buffer, got '" + *name + "'");
        const bool dtype_ok =
            output ? vendor_output_dtype_ok(op, a->type) : a->type == vendor_input_dtype(op);
        if (!dtype_ok)
            ctx.fail(field + "." + key,
                     v.op + " needs " +
                         (output ? vendor_output_dtypes(op)
                                 : std::string(dtype_name(vendor_input_dtype(op)))) +
                         (output && op == vendor_op::e4m3_gemm ? " for C" : " buffers") + "; '" +
                         *name + "' is " + std::string(dtype_name(a->type)));
    }
    check_vendor_scales(v, op, m, ctx, field);
}

// A case's vendor call: its own, none (null) or, when it says nothing, the manifest's.
void read_case_vendor(const json_field& jc, const manifest& m, manifest_case& mc) {
    // json_field reads null as absent; here null (no vendor call) differs from absent.
    if (!jc.value().HasMember("vendor_baseline")) {
        mc.vendor = m.vendor_baseline;
    } else if (const auto v = jc.find("vendor_baseline")) {
        mc.vendor = read_vendor(*v);
        resolve_vendor_buffers(*mc.vendor, m, context{v->source()}, v->path());
    }
}

// One vendor request times every case's baseline: the cases that declare one name one library.
void check_vendor_library(const manifest& m, const json_field& cases) {
    const manifest_case* first = nullptr;
    for (std::size_t c = 0; c < m.cases.size(); ++c) {
        const manifest_case& mc = m.cases[c];
        if (!mc.vendor) continue;
        if (!first) first = &mc;
        if (mc.vendor->library != first->vendor->library)
            context{cases.source()}.fail(
                cases[c].path() + ".vendor_baseline.library",
                quote_value(mc.vendor->library) + " but case " + quote_value(first->name) +
                    " calls '" + first->vendor->library +
                    "'; a manifest's vendor baselines share one library (one vendor request)");
    }
}

}  // namespace cuopt::manifest_reading
