#include "orchestrator/contract/manifest.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <variant>

#include "common/dtype.hpp"
#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "common/request.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

struct context {
    std::string source;
    [[noreturn]] void fail(const std::string& field, const std::string& what) const {
        throw json_error(source + ": field " + shortened(field) + ": " + what);
    }
};

// The same wording at a field the file has: "<file>: field args[2].init: <what>".
[[noreturn]] void fail(const json_field& f, const std::string& what) {
    context{f.source()}.fail(f.path(), what);
}

// Inputs nobody described get random values, never zeros: zeros hide unwritten outputs.
input_init default_init(dtype type, std::size_t index) {
    input_init init;
    init.generator.seed = 1000 + index;
    if (is_float(type)) {
        init.generator.kind = generator_kind::uniform;
        init.generator.low = -1.0;
        init.generator.high = 1.0;
    } else {
        init.generator.kind = generator_kind::int_range;
        init.generator.low = is_signed_integer(type) ? -100 : 1;
        init.generator.high = 100;
    }
    return init;
}

input_init read_init(const json_field& v, const fs::path& folder, dtype type) {
    input_init init;
    if (v.text("kind") == "file") {
        const std::optional<json_field> file = v.find("file");
        if (!file) fail(v, "kind 'file' needs 'file'");
        try {
            init.file = resolve_inside(folder, file->text());
        } catch (const std::invalid_argument& e) {
            fail(*file, e.what());
        }
        if (!fs::is_regular_file(*init.file)) fail(*file, "no such file " + init.file->string());
        return init;
    }
    init.generator = read_generator(v);
    if (const auto problem = check_generator(init.generator, type))
        fail(problem->field.empty() ? v : v[problem->field.c_str()], problem->message);
    return init;
}

// A scalar's 'value': an integer expression, or a number literal passed as it is.
void read_scalar(manifest_arg& arg, const json_field& a) {
    if (!a.has("value"))
        fail(a, "a scalar needs 'value' (a number or an expression such as \"m\")");
    for (const char* key : {"count", "init", "tolerance"})
        if (a.has(key)) fail(a[key], "a scalar takes only 'value'");
    const json_field value = a["value"];
    arg.value = json_scalar_text(value.value());
    arg.value_is_number = !value.is_text() && !integer_of(a.value(), "value");  // 0.5, not 2
}

manifest_arg read_arg(const json_field& a, std::size_t index, const fs::path& folder) {
    manifest_arg arg;
    arg.name = a.text("name");
    arg.type = *parse_dtype(a.text("dtype"));  // the schema's enum guarantees it
    const std::string kind = a.text("kind");
    arg.kind = kind == "input"    ? arg_kind::input
               : kind == "output" ? arg_kind::output
               : kind == "inout"  ? arg_kind::inout
                                  : arg_kind::scalar;
    if (!arg.is_buffer()) {
        read_scalar(arg, a);
        return arg;
    }
    if (!a.has("count"))
        fail(a, "a buffer needs 'count' (elements; an expression such as \"m*k\")");
    if (a.has("value")) fail(a["value"], "a buffer takes 'count' and 'init', not 'value'");
    arg.count = json_scalar_text(a["count"].value());
    const std::optional<json_field> init = a.find("init");
    if (init && !arg.has_input())
        fail(*init, "an output is written by the kernel; only input and inout buffers take 'init'");
    arg.init = init ? read_init(*init, folder, arg.type) : default_init(arg.type, index);
    arg.tol = default_tolerance(arg.type);
    if (const auto timing = a.find("timing_inputs")) {
        if (!arg.has_input()) fail(*timing, "only input and inout buffers are fed to launches");
        arg.timing = timing->word(k_timing_inputs);
    }
    if (const auto t = a.find("tolerance")) {
        if (!arg.has_output()) fail(*t, "only output and inout buffers are compared");
        if (!is_float(arg.type))
            fail(*t, std::string(dtype_name(arg.type)) + " outputs are compared exactly");
        arg.tol.atol = t->optional_number("atol").value_or(arg.tol.atol);
        arg.tol.rtol = t->optional_number("rtol").value_or(arg.tol.rtol);
        if (const auto length = t->find("reduction_length")) {
            if (t->has("atol") || t->has("rtol"))
                fail(*length,
                     "give either 'reduction_length' (the rule sets atol and rtol) or "
                     "atol/rtol, not both");
            arg.reduction_length = json_scalar_text(length->value());
        }
    }
    return arg;
}

// A reduction over an input sums at most as many terms as the case's largest input holds: a
// larger length would loosen rtol (it grows with its square root) until a wrong element
// passes. Where no buffer has an input the terms come from scalars (a series, a Monte Carlo
// sum): no buffer bounds them.
void check_reduction_lengths(const manifest& m, const manifest_case& mc, const std::string& field,
                             const context& ctx) {
    std::int64_t bound = 0;
    try {
        for (const manifest_arg& a : m.args)
            if (a.is_buffer() && a.has_input())
                bound = std::max(bound, evaluate_integer_expression(a.count, mc.params));
        if (bound == 0) return;
        for (const manifest_arg& a : m.args) {
            if (a.reduction_length.empty()) continue;
            const std::int64_t length = evaluate_integer_expression(a.reduction_length, mc.params);
            if (length > bound)
                ctx.fail(field + ".tolerance.reduction_length (" + quote_value(a.name) + ")",
                         quote_value(a.reduction_length) + " is " + std::to_string(length) +
                             ", more terms than the case's largest input holds (" +
                             std::to_string(bound) +
                             "); expected the number of terms summed into one element");
        }
    } catch (const expression_error&) {
        // Said by the caller's evaluation of the same expressions, with its field.
    }
}

// A case's flops, vendor m, n, k and reduction lengths: over its params only, each at least 1.
void check_case_expressions(const manifest& m, const manifest_case& mc, const std::string& field,
                            const context& ctx) {
    std::vector<std::pair<std::string, std::string>> exprs;
    if (!mc.flops.empty()) exprs.emplace_back("flops", mc.flops);
    if (mc.vendor)
        for (auto [key, e] :
             {std::pair{"m", &mc.vendor->m}, {"n", &mc.vendor->n}, {"k", &mc.vendor->k}})
            exprs.emplace_back(std::string("vendor_baseline.") + key, *e);
    for (const manifest_arg& a : m.args)
        if (!a.reduction_length.empty())
            exprs.emplace_back("tolerance.reduction_length (" + quote_value(a.name) + ")",
                               a.reduction_length);
    for (const auto& [key, e] : exprs) {
        try {
            if (evaluate_integer_expression(e, mc.params) < 1)
                ctx.fail(field + "." + key, quote_value(e) + " is below 1");
        } catch (const expression_error& ex) {
            ctx.fail(field + "." + key, ex.what());
        }
    }
    check_reduction_lengths(m, mc, field, ctx);
}

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

// A scalar's value in this case, encoded in its dtype as the harness will encode it (the same
// functions, on the value the request will carry): what does not fit (an i32 of 2^32, a u8 of
// 300, an f32 of 1e39) throws std::invalid_argument here, at check, not at the reference.
void check_scalar_fits(const manifest_arg& a, const expression_variables& vars) {
    const scalar_number value = a.value_is_number
                                    ? scalar_number(std::strtod(a.value.c_str(), nullptr))
                                    : scalar_number(evaluate_integer_expression(a.value, vars));
    std::visit(
        [&](auto x) {
            if constexpr (std::is_same_v<decltype(x), double>)
                encode_scalar(a.type, x);
            else
                encode_integer_scalar(a.type, x);
            if (is_float(a.type))
                if (std::string why = value_fit_problem(a.type, static_cast<double>(x));
                    !why.empty())
                    throw std::invalid_argument(why);
        },
        value);
}

// The request schema's largest buffer count (2^53 elements).
constexpr std::int64_t k_max_buffer_count = std::int64_t{1} << 53;

// Every expression must evaluate for every case (under the default tunables) to a sane value;
// `vendor_runs` (the main manifest, not a holdout): the vendor call of every performance case,
// the cases it is timed on, against that case's sizes.
void check_expressions(const manifest& m, const context& ctx, bool vendor_runs) {
    const auto tunables = m.default_tunables();
    for (std::size_t c = 0; c < m.cases.size(); ++c) {
        const manifest_case& mc = m.cases[c];
        const expression_variables vars = m.variables(mc, tunables);
        const std::string field = "cases[" + std::to_string(c) + "] (" + quote_value(mc.name) + ")";
        for (const manifest_arg& a : m.args) {
            try {
                if (a.is_buffer()) {
                    expression_variables params_only =
                        mc.params;  // sizes may not depend on tunables
                    const std::int64_t count = evaluate_integer_expression(a.count, params_only);
                    if (count < 1)
                        ctx.fail(field, "count of " + quote_value(a.name) + " (" + a.count +
                                            ") is below 1");
                    // A request holds at most 2^53 elements a buffer, and count x dtype bytes
                    // must not wrap where a file's size is checked against it.
                    if (count > k_max_buffer_count)
                        ctx.fail(field, "count of " + quote_value(a.name) + " (" + a.count +
                                            ") is " + std::to_string(count) +
                                            "; expected at most 2^53 (" +
                                            std::to_string(k_max_buffer_count) + ") elements");
                    const input_init& init = m.init_for(mc, a);
                    if (a.has_input() && !init.file)
                        if (const auto problem = check_generator(init.generator, a.type,
                                                                 static_cast<std::uint64_t>(count)))
                            ctx.fail(field,
                                     "argument " + quote_value(a.name) + "'s generator" +
                                         (problem->field.empty() ? "" : " " + problem->field) +
                                         ": " + problem->message);
                } else {
                    check_scalar_fits(a, vars);
                }
            } catch (const expression_error& e) {
                ctx.fail(field, "argument " + quote_value(a.name) + ": " + e.what());
            } catch (const std::invalid_argument& e) {  // the value does not fit its dtype
                ctx.fail(field, "argument " + quote_value(a.name) + ": " + e.what());
            }
        }
        try {
            evaluate_launch(mc.launch ? *mc.launch : m.launch, vars);
        } catch (const expression_error& e) {
            ctx.fail(field + ".launch", e.what());
        }
        check_case_expressions(m, mc, field, ctx);
        if (vendor_runs && mc.vendor && mc.kind == case_kind::performance)
            check_vendor_sizes(m, mc, field, ctx);
    }
}

}  // namespace

std::map<std::string, std::int64_t> manifest::default_tunables() const {
    std::map<std::string, std::int64_t> out;
    for (const auto& [name, values] : tunables) out[name] = values.front();
    return out;
}

expression_variables manifest::variables(const manifest_case& c,
                                         const std::map<std::string, std::int64_t>& t) const {
    expression_variables vars = c.params;
    for (const auto& [name, value] : t) vars[name] = value;
    return vars;
}

tolerance manifest_arg::tolerance_in(const expression_variables& params) const {
    if (reduction_length.empty()) return tol;
    return reduction_tolerance(
        type, static_cast<std::uint64_t>(evaluate_integer_expression(reduction_length, params)));
}

tolerance tolerance_in_case(const manifest& m, const manifest_arg& arg,
                            const std::string& case_name) {
    const manifest_case* c = m.find_case(case_name);
    if (!c) throw std::logic_error("no case " + quote_value(case_name) + " in " + m.file.string());
    return arg.tolerance_in(c->params);
}

const manifest_case* manifest::find_case(const std::string& name) const {
    const auto it = std::find_if(cases.begin(), cases.end(),
                                 [&](const manifest_case& c) { return c.name == name; });
    return it == cases.end() ? nullptr : &*it;
}

const manifest_arg* manifest::find_arg(const std::string& name) const {
    for (const manifest_arg& a : args)
        if (a.name == name) return &a;
    return nullptr;
}

std::string manifest::input_link(const fs::path& file) const {
    std::vector<fs::path> same_name;  // the distinct files of this name, in manifest order
    for (const manifest_case& mc : cases)
        for (const manifest_arg& ma : args)
            if (ma.has_input())
                if (const auto& f = init_for(mc, ma).file;
                    f && f->filename() == file.filename() &&
                    std::find(same_name.begin(), same_name.end(), *f) == same_name.end())
                    same_name.push_back(*f);
    const auto at = std::find(same_name.begin(), same_name.end(), file);
    const std::size_t k = at == same_name.end() ? 0 : at - same_name.begin();
    const std::string name = file.filename().string();
    return k == 0 ? name : std::to_string(k + 1) + "/" + name;
}

const input_init& manifest::init_for(const manifest_case& c, const manifest_arg& a) const {
    const auto it = c.inputs.find(a.name);
    return it != c.inputs.end() ? it->second : a.init;
}

launch_expressions read_launch_expressions(const json_field& v, const launch_expressions& base) {
    launch_expressions l = base;
    for (const char* key : {"grid", "block"}) {
        const std::optional<json_field> given = v.find(key);
        if (!given) continue;
        auto& dims = std::string(key) == "grid" ? l.grid : l.block;
        dims = {"1", "1", "1"};
        for (std::size_t i = 0; i < given->size() && i < 3; ++i)
            dims[i] = json_scalar_text((*given)[i].value());
    }
    if (const auto shared = v.find("dynamic_shared_bytes"))
        l.dynamic_shared_bytes = json_scalar_text(shared->value());
    return l;
}

launch_config evaluate_launch(const launch_expressions& l, const expression_variables& vars) {
    launch_config out;
    auto dim = [&vars](const std::string& e, const char* what) {
        const std::int64_t v = evaluate_integer_expression(e, vars);
        if (v < 1 || v > 0xFFFFFFFFll)
            throw expression_error(std::string(what) + " " + quote_value(e) + " is " +
                                   std::to_string(v) + ", outside 1..2^32-1");
        return static_cast<unsigned>(v);
    };
    for (int i = 0; i < 3; ++i) {
        out.grid[i] = dim(l.grid[i], "grid");
        out.block[i] = dim(l.block[i], "block");
    }
    const std::int64_t shared = evaluate_integer_expression(l.dynamic_shared_bytes, vars);
    if (shared < 0 || shared > 0xFFFFFFFFll)
        throw expression_error("dynamic_shared_bytes " + quote_value(l.dynamic_shared_bytes) +
                               " is " + std::to_string(shared));
    out.dynamic_shared_bytes = static_cast<unsigned>(shared);
    return out;
}

namespace {

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

manifest_case read_case(const json_field& jc, const manifest& m) {
    manifest_case mc;
    mc.name = jc.text("name");
    mc.kind = jc.text("kind") == "correctness" ? case_kind::correctness : case_kind::performance;
    if (const auto params = jc.find("params"))
        for (const auto& [name, p] : params->members()) {
            if (std::string why = identifier_problem(name); !why.empty())
                fail(*params, "a param's name: " + why);
            if (m.tunables.count(name)) fail(p, "is also a tunable; pick another name");
            mc.params[name] = p.integer<std::int64_t>();
        }
    if (const auto launch = jc.find("launch"))
        mc.launch = read_launch_expressions(*launch, m.launch);
    if (const auto flops = jc.find("flops")) mc.flops = json_scalar_text(flops->value());
    read_case_vendor(jc, m, mc);
    if (const auto inputs = jc.find("inputs"))
        for (const auto& [name, in] : inputs->members()) {
            const manifest_arg* a = m.find_arg(name);
            if (!a || !a->has_input())
                fail(in, "no input or inout argument named " + quote_value(name));
            mc.inputs[name] = read_init(in, m.folder, a->type);
        }
    if (const auto expected = jc.find("expected"))
        for (const auto& [name, ex] : expected->members()) {
            const manifest_arg* a = m.find_arg(name);
            if (!a || !a->has_output())
                fail(ex, "no output or inout argument named " + quote_value(name));
            try {
                mc.expected[name] = resolve_inside(m.folder, ex.text());
            } catch (const std::invalid_argument& e) {
                fail(ex, e.what());
            }
        }
    return mc;
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

// Files must hold exactly count x dtype bytes for the case that uses them.
void check_file_sizes(const manifest& m, const context& ctx) {
    for (std::size_t c = 0; c < m.cases.size(); ++c) {
        const manifest_case& mc = m.cases[c];
        for (const manifest_arg& a : m.args) {
            if (!a.is_buffer()) continue;
            const std::uint64_t bytes =
                static_cast<std::uint64_t>(evaluate_integer_expression(a.count, mc.params)) *
                dtype_size(a.type);
            auto check_size = [&](const fs::path& p, const std::string& field) {
                std::error_code ec;
                const auto size = fs::file_size(p, ec);
                if (ec) ctx.fail(field, "cannot read " + quote_value(p.string()));
                if (size != bytes)
                    ctx.fail(field, p.filename().string() + " holds " + std::to_string(size) +
                                        " bytes but " + quote_value(a.name) + " needs " +
                                        std::to_string(bytes) + " (count " + a.count + " x " +
                                        std::string(dtype_name(a.type)) + ") in case '" + mc.name +
                                        "'");
            };
            if (a.has_input() && m.init_for(mc, a).file)
                check_size(*m.init_for(mc, a).file,
                           "cases[" + std::to_string(c) + "] input " + quote_value(a.name));
            if (const auto it = mc.expected.find(a.name); it != mc.expected.end())
                check_size(it->second, "cases[" + std::to_string(c) + "].expected." + a.name);
        }
    }
}

}  // namespace

namespace {

rapidjson::Document load_document(const fs::path& file, const context& ctx) {
    std::string text;
    try {
        text = read_text_file(file);
    } catch (const std::exception& e) {
        throw json_error(e.what());
    }
    return parse_json(text, ctx.source);
}

void read_header(const json_field& doc, manifest& m) {
    m.description = doc.optional_text("description").value_or("");
    if (const auto needs = doc.find("requires"))  // its values are the schema's enum
        m.required_mma = needs->optional_text("mma").value_or("");
    if (const auto tunables = doc.find("tunables"))
        for (const auto& [name, values] : tunables->members()) {
            // A tunable is an NVRTC define (-DNAME=v): a name the compiler takes.
            if (std::string why = identifier_problem(name); !why.empty())
                fail(*tunables, "a tunable's name: " + why);
            for (const json_field& v : values.items())
                m.tunables[name].push_back(v.integer<std::int64_t>());
        }
    m.launch = read_launch_expressions(doc["launch"], launch_expressions{});
    if (const auto reference = doc.find("reference_launch"))
        m.reference_launch = read_launch_expressions(*reference, m.launch);
    std::set<std::string> names;
    const json_field args = doc["args"];
    for (std::size_t i = 0; i < args.size(); ++i) {
        m.args.push_back(read_arg(args[i], i, m.folder));
        if (!names.insert(m.args.back().name).second)
            fail(args[i]["name"], "duplicate argument name " + quote_value(m.args.back().name));
    }
    if (std::none_of(m.args.begin(), m.args.end(),
                     [](const manifest_arg& a) { return a.has_output(); }))
        fail(args, "no output or inout buffer: nothing to check");
    if (const auto vendor = doc.find("vendor_baseline")) {
        m.vendor_baseline = read_vendor(*vendor);
        resolve_vendor_buffers(*m.vendor_baseline, m, context{vendor->source()}, vendor->path());
    }
}

// The manifest in `doc` (schema-checked here), its relative paths against m.folder (the
// args' against `args_folder` when given: a holdout's inherited args are the main manifest's).
void read_body(const rapidjson::Document& doc, manifest& m, const context& ctx,
               bool need_performance, const fs::path* args_folder = nullptr) {
    validate_json(doc, embedded_schema("manifest"), ctx.source);
    const fs::path own = m.folder;
    if (args_folder) m.folder = *args_folder;
    const json_field root(doc, ctx.source);
    read_header(root, m);
    m.folder = own;
    std::set<std::string> case_names;
    const json_field cases = root["cases"];
    for (std::size_t c = 0; c < cases.size(); ++c) {
        m.cases.push_back(read_case(cases[c], m));
        if (!case_names.insert(m.cases.back().name).second)
            fail(cases[c]["name"], "duplicate case name " + quote_value(m.cases.back().name));
    }
    if (need_performance &&
        std::none_of(m.cases.begin(), m.cases.end(),
                     [](const manifest_case& c) { return c.kind == case_kind::performance; }))
        fail(cases,
             "no performance case: at least one case must be of kind 'performance' to rank "
             "candidates");
    check_expressions(m, ctx, need_performance);
    check_vendor_library(m, cases);
    check_file_sizes(m, ctx);
}

}  // namespace

manifest read_manifest(const fs::path& file) {
    manifest m;
    m.file = fs::absolute(file);
    m.folder = m.file.parent_path();
    const context ctx{m.file.filename().string()};
    read_body(load_document(m.file, ctx), m, ctx, true);
    return m;
}

manifest read_holdout_manifest(const fs::path& file, const manifest& main) {
    manifest m;
    m.file = fs::absolute(file);
    m.folder = m.file.parent_path();
    const context ctx{m.file.filename().string()};
    rapidjson::Document doc = load_document(m.file, ctx);
    const bool inherits = doc.IsObject() && !doc.HasMember("args");
    if (inherits) {  // presence, null included: the schema check comes after the merge
        const context main_ctx{main.file.filename().string()};
        const rapidjson::Document base = load_document(main.file, main_ctx);
        for (const char* key :
             {"args", "launch", "tunables", "reference_launch", "vendor_baseline"})
            if (base.HasMember(key) && !doc.HasMember(key)) json_object(doc).add(key, base[key]);
    }
    read_body(doc, m, ctx, false, inherits ? &main.folder : nullptr);
    for (std::size_t i = 0; i < std::max(m.args.size(), main.args.size()); ++i) {
        const manifest_arg* h = i < m.args.size() ? &m.args[i] : nullptr;
        const manifest_arg* a = i < main.args.size() ? &main.args[i] : nullptr;
        if (!h || !a || h->name != a->name || h->type != a->type || h->kind != a->kind)
            ctx.fail("args[" + std::to_string(i) + "]",
                     "differs from " + main.file.filename().string() +
                         "'s arguments (name, dtype and kind must match, in order)");
    }
    return m;
}

}  // namespace cuopt
