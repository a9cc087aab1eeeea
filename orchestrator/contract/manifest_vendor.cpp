// The manifest's vendor baseline (cuBLAS, cuBLASLt, CUB): the call as written, the fields its op
// takes, its buffers and scales resolved against the arguments, its sizes against each case, one
// library for the manifest.
#include <optional>
#include <tuple>

#include "common/dtype.hpp"
#include "common/request.hpp"
#include "orchestrator/contract/manifest_checks.hpp"

namespace cuopt::manifest_reading {

namespace {

// Whether the call is segmented_sum's (rows, cols, x, y) rather than a gemm's.
bool sums_rows(const vendor_baseline_spec& v) {
    const std::optional<vendor_op> op = k_vendor_ops.parse(v.op);
    return op && is_row_sum(*op);
}

// One operand of a call: its field, the buffer it names, its role and the shape it must have.
struct vendor_operand {
    const char* key;
    std::string* name;
    bool output;
    const char* shape;  // "m*k", "rows*cols"
};

// A call's operands in field order: A, B and C for a gemm (B n*k for row_major_bt), x and y for
// segmented_sum.
std::vector<vendor_operand> operands_of(vendor_baseline_spec& v) {
    if (sums_rows(v)) return {{"x", &v.x, false, "rows*cols"}, {"y", &v.y, true, "rows"}};
    const bool bt = v.layout == k_matrix_layouts.name(matrix_layout::row_major_bt);
    return {{"a", &v.a, false, "m*k"},
            {"b", &v.b, false, bt ? "n*k" : "k*n"},
            {"c", &v.c, true, "m*n"}};
}

// The fields an op needs are there and the other kind of op's are not; each missing or foreign
// field is refused by name.
void check_vendor_fields(const json_field& v, const vendor_baseline_spec& spec) {
    const context ctx{v.source()};
    const bool sums = sums_rows(spec);
    const std::vector<const char*> needed =
        sums ? std::vector<const char*>{"rows", "cols"} : std::vector<const char*>{"m", "n", "k"};
    const std::vector<const char*> foreign =
        sums ? std::vector<const char*>{"m", "n", "k", "a", "b", "c"}
             : std::vector<const char*>{"rows", "cols", "x", "y"};
    for (const char* key : needed)
        if (!v.has(key))
            ctx.fail(v.path() + "." + key,
                     "missing; " + spec.op + (sums ? " needs rows and cols" : " needs m, n and k") +
                         ", expressions over the case's params");
    for (const char* key : foreign)
        if (v.has(key))
            ctx.fail(v.path() + "." + key,
                     spec.op +
                         (sums ? " takes rows, cols, x and y" : " takes m, n, k, a, b and c") +
                         ", not " + key);
}

}  // namespace

std::vector<std::pair<const char*, const std::string*>> vendor_size_fields(
    const vendor_baseline_spec& v) {
    if (sums_rows(v)) return {{"rows", &v.rows}, {"cols", &v.cols}};
    return {{"m", &v.m}, {"n", &v.n}, {"k", &v.k}};
}

// A case's vendor call against its sizes (its size expressions and every count evaluated
// already): each of m, n, k suits the op (e4m3_gemm: multiples of 16), and each operand's count
// is the call's shape (A m*k, B k*n or n*k, C m*n; x rows*cols, y rows), as the harness will check.
void check_vendor_sizes(const manifest& m, const manifest_case& mc, const std::string& field,
                        const context& ctx) {
    vendor_baseline_spec v = *mc.vendor;  // a copy: operands_of hands out writable names
    const vendor_op op = *k_vendor_ops.parse(v.op);
    expression_variables sizes;  // m, n, k or rows, cols: the names the shapes use
    std::string said;            // "m=32, n=16, k=48"
    for (const auto& [key, e] : vendor_size_fields(v)) {
        const std::int64_t value = evaluate_integer_expression(*e, mc.params);
        if (const std::string problem = vendor_dimension_problem(op, value); !problem.empty())
            ctx.fail(field + ".vendor_baseline." + key, "'" + *e + "' = " + problem);
        sizes[key] = value;
        said += (said.empty() ? "" : ", ") + std::string(key) + "=" + std::to_string(value);
    }
    for (const vendor_operand& o : operands_of(v)) {
        const manifest_arg* a = m.find_arg(*o.name);  // resolve_vendor_buffers checked it
        const std::int64_t have = evaluate_integer_expression(a->count, mc.params),
                           need = evaluate_integer_expression(o.shape, sizes);
        if (have != need)
            ctx.fail(field + ".vendor_baseline." + o.key,
                     "'" + *o.name + "' has count " + a->count + " = " + std::to_string(have) +
                         " but " + v.op + " with " + said + " needs " + o.shape + " = " +
                         std::to_string(need));
    }
}

vendor_baseline_spec read_vendor(const json_field& v) {
    vendor_baseline_spec spec;
    spec.library = v.text("library");
    spec.op = v.text("op");
    spec.layout = v.optional_text("layout").value_or(
        spec.op == k_vendor_ops.name(vendor_op::e4m3_gemm) ? "row_major_bt" : spec.layout);
    check_vendor_fields(v, spec);
    for (auto [key, out] : {std::pair{"m", &spec.m},
                            {"n", &spec.n},
                            {"k", &spec.k},
                            {"rows", &spec.rows},
                            {"cols", &spec.cols}})
        if (const auto f = v.find(key)) *out = json_scalar_text(f->value());
    for (auto [key, out] : {std::pair{"a", &spec.a},
                            {"b", &spec.b},
                            {"c", &spec.c},
                            {"scale_a", &spec.scale_a},
                            {"scale_b", &spec.scale_b},
                            {"x", &spec.x},
                            {"y", &spec.y}})
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

// The names a call leaves out: its inputs the first inputs, its output the first output.
void fill_default_buffers(std::vector<vendor_operand>& operands, const manifest& m) {
    std::vector<const manifest_arg*> inputs, outputs;
    for (const manifest_arg& a : m.args) {
        if (a.kind == arg_kind::input) inputs.push_back(&a);
        if (a.has_output()) outputs.push_back(&a);
    }
    std::size_t next_input = 0;
    for (vendor_operand& o : operands) {
        const std::size_t input = o.output ? 0 : next_input++;
        if (!o.name->empty()) continue;
        if (o.output && !outputs.empty()) *o.name = outputs[0]->name;
        if (!o.output && input < inputs.size()) *o.name = inputs[input]->name;
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
    std::vector<vendor_operand> operands = operands_of(v);
    fill_default_buffers(operands, m);
    for (const vendor_operand& o : operands) {
        const manifest_arg* a = m.find_arg(*o.name);
        if (!a || (o.output ? !a->has_output() : !a->has_input()))
            ctx.fail(field + "." + o.key, "expected the name of an " +
                                              std::string(o.output ? "output" : "input") +
                                              " buffer, got '" + *o.name + "'");
        const bool dtype_ok =
            o.output ? vendor_output_dtype_ok(op, a->type) : a->type == vendor_input_dtype(op);
        if (!dtype_ok)
            ctx.fail(field + "." + o.key,
                     v.op + " needs " +
                         (o.output ? vendor_output_dtypes(op)
                                   : std::string(dtype_name(vendor_input_dtype(op)))) +
                         (o.output && op == vendor_op::e4m3_gemm ? " for C" : " buffers") + "; '" +
                         *o.name + "' is " + std::string(dtype_name(a->type)));
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
