#include "orchestrator/contract/manifest.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

struct context {
    std::string source;
    [[noreturn]] void fail(const std::string& field, const std::string& what) const {
        throw json_error(source + ": field " + field + ": " + what);
    }
};

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

input_init read_init(const Value& v, const fs::path& folder, dtype type, const context& ctx,
                     const std::string& field) {
    input_init init;
    const std::string kind = v["kind"].GetString();
    if (kind == "file") {
        if (!v.HasMember("file")) ctx.fail(field, "kind 'file' needs 'file'");
        try {
            init.file = resolve_inside(folder, v["file"].GetString());
        } catch (const std::invalid_argument& e) {
            ctx.fail(field + ".file", e.what());
        }
        if (!fs::is_regular_file(*init.file))
            ctx.fail(field + ".file", "no such file " + init.file->string());
        return init;
    }
    init.generator = read_generator(v);
    if (const auto problem = check_generator(init.generator, type))
        ctx.fail(problem->field.empty() ? field : field + "." + problem->field, problem->message);
    return init;
}

manifest_arg read_arg(const Value& a, std::size_t index, const fs::path& folder,
                      const context& ctx) {
    const std::string field = "args[" + std::to_string(index) + "]";
    manifest_arg arg;
    arg.name = a["name"].GetString();
    arg.type = *parse_dtype(a["dtype"].GetString());
    const std::string kind = a["kind"].GetString();
    arg.kind = kind == "input"    ? arg_kind::input
               : kind == "output" ? arg_kind::output
               : kind == "inout"  ? arg_kind::inout
                                  : arg_kind::scalar;
    if (!arg.is_buffer()) {
        if (!a.HasMember("value"))
            ctx.fail(field, "a scalar needs 'value' (a number or an expression such as \"m\")");
        for (const char* key : {"count", "init", "tolerance"})
            if (a.HasMember(key)) ctx.fail(field + "." + key, "a scalar takes only 'value'");
        arg.value = json_scalar_text(a["value"]);
        arg.value_is_number = a["value"].IsNumber() && !a["value"].IsInt64();
        return arg;
    }
    if (!a.HasMember("count"))
        ctx.fail(field, "a buffer needs 'count' (elements; an expression such as \"m*k\")");
    if (a.HasMember("value"))
        ctx.fail(field + ".value", "a buffer takes 'count' and 'init', not 'value'");
    arg.count = json_scalar_text(a["count"]);
    if (a.HasMember("init") && !arg.has_input())
        ctx.fail(field + ".init",
                 "an output is written by the kernel; only input and inout buffers take 'init'");
    arg.init = a.HasMember("init") ? read_init(a["init"], folder, arg.type, ctx, field + ".init")
                                   : default_init(arg.type, index);
    arg.tol = default_tolerance(arg.type);
    if (a.HasMember("timing_inputs")) {
        if (!arg.has_input())
            ctx.fail(field + ".timing_inputs", "only input and inout buffers are fed to launches");
        arg.timing = k_timing_inputs.parse(a["timing_inputs"].GetString());
    }
    if (a.HasMember("tolerance")) {
        if (!arg.has_output())
            ctx.fail(field + ".tolerance", "only output and inout buffers are compared");
        if (!is_float(arg.type))
            ctx.fail(field + ".tolerance",
                     std::string(dtype_name(arg.type)) + " outputs are compared exactly");
        const Value& t = a["tolerance"];
        if (t.HasMember("atol")) arg.tol.atol = t["atol"].GetDouble();
        if (t.HasMember("rtol")) arg.tol.rtol = t["rtol"].GetDouble();
    }
    return arg;
}

// A case's flops and vendor m, n, k: over its params only, each at least 1.
void check_case_expressions(const manifest_case& mc, const std::string& field, const context& ctx) {
    std::vector<std::pair<std::string, std::string>> exprs;
    if (!mc.flops.empty()) exprs.emplace_back("flops", mc.flops);
    if (mc.vendor)
        for (auto [key, e] :
             {std::pair{"m", &mc.vendor->m}, {"n", &mc.vendor->n}, {"k", &mc.vendor->k}})
            exprs.emplace_back(std::string("vendor_baseline.") + key, *e);
    for (const auto& [key, e] : exprs) {
        try {
            if (evaluate_integer_expression(e, mc.params) < 1)
                ctx.fail(field + "." + key, "'" + e + "' is below 1");
        } catch (const expression_error& ex) {
            ctx.fail(field + "." + key, ex.what());
        }
    }
}

// Every expression must evaluate for every case (under the default tunables) to a sane value.
void check_expressions(const manifest& m, const context& ctx) {
    const auto tunables = m.default_tunables();
    for (std::size_t c = 0; c < m.cases.size(); ++c) {
        const manifest_case& mc = m.cases[c];
        const expression_variables vars = m.variables(mc, tunables);
        const std::string field = "cases[" + std::to_string(c) + "] ('" + mc.name + "')";
        for (const manifest_arg& a : m.args) {
            try {
                if (a.is_buffer()) {
                    expression_variables params_only =
                        mc.params;  // sizes may not depend on tunables
                    if (evaluate_integer_expression(a.count, params_only) < 1)
                        ctx.fail(field, "count of '" + a.name + "' (" + a.count + ") is below 1");
                } else if (!a.value_is_number) {
                    evaluate_integer_expression(a.value, vars);
                }
            } catch (const expression_error& e) {
                ctx.fail(field, "argument '" + a.name + "': " + e.what());
            }
        }
        try {
            evaluate_launch(mc.launch ? *mc.launch : m.launch, vars);
        } catch (const expression_error& e) {
            ctx.fail(field + ".launch", e.what());
        }
        check_case_expressions(mc, field, ctx);
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

const manifest_arg* manifest::find_arg(const std::string& name) const {
    for (const manifest_arg& a : args)
        if (a.name == name) return &a;
    return nullptr;
}

const input_init& manifest::init_for(const manifest_case& c, const manifest_arg& a) const {
    const auto it = c.inputs.find(a.name);
    return it != c.inputs.end() ? it->second : a.init;
}

launch_expressions read_launch_expressions(const rapidjson::Value& v,
                                           const launch_expressions& base) {
    launch_expressions l = base;
    for (const char* key : {"grid", "block"}) {
        if (!v.HasMember(key)) continue;
        auto& dims = std::string(key) == "grid" ? l.grid : l.block;
        dims = {"1", "1", "1"};
        for (rapidjson::SizeType i = 0; i < v[key].Size() && i < 3; ++i)
            dims[i] = json_scalar_text(v[key][i]);
    }
    if (v.HasMember("dynamic_shared_bytes"))
        l.dynamic_shared_bytes = json_scalar_text(v["dynamic_shared_bytes"]);
    return l;
}

launch_config evaluate_launch(const launch_expressions& l, const expression_variables& vars) {
    launch_config out;
    auto dim = [&vars](const std::string& e, const char* what) {
        const std::int64_t v = evaluate_integer_expression(e, vars);
        if (v < 1 || v > 0xFFFFFFFFll)
            throw expression_error(std::string(what) + " '" + e + "' is " + std::to_string(v) +
                                   ", outside 1..2^32-1");
        return static_cast<unsigned>(v);
    };
    for (int i = 0; i < 3; ++i) {
        out.grid[i] = dim(l.grid[i], "grid");
        out.block[i] = dim(l.block[i], "block");
    }
    const std::int64_t shared = evaluate_integer_expression(l.dynamic_shared_bytes, vars);
    if (shared < 0 || shared > 0xFFFFFFFFll)
        throw expression_error("dynamic_shared_bytes '" + l.dynamic_shared_bytes + "' is " +
                               std::to_string(shared));
    out.dynamic_shared_bytes = static_cast<unsigned>(shared);
    return out;
}

namespace {

vendor_baseline_spec read_vendor(const Value& v) {
    vendor_baseline_spec spec;
    spec.library = v["library"].GetString();
    spec.op = v["op"].GetString();
    if (v.HasMember("layout")) spec.layout = v["layout"].GetString();
    spec.m = json_scalar_text(v["m"]);
    spec.n = json_scalar_text(v["n"]);
    spec.k = json_scalar_text(v["k"]);
    for (auto [key, out] : {std::pair{"a", &spec.a}, {"b", &spec.b}, {"c", &spec.c}})
        if (v.HasMember(key)) *out = v[key].GetString();
    return spec;
}

// The buffers a vendor call names (defaults filled in), each checked to exist with the right
// role and the op's dtype.
void resolve_vendor_buffers(vendor_baseline_spec& v, const manifest& m, const context& ctx,
                            const std::string& field) {
    std::vector<const manifest_arg*> inputs, outputs;
    for (const manifest_arg& a : m.args) {
        if (a.kind == arg_kind::input) inputs.push_back(&a);
        if (a.has_output()) outputs.push_back(&a);
    }
    if (v.a.empty() && !inputs.empty()) v.a = inputs[0]->name;
    if (v.b.empty() && inputs.size() > 1) v.b = inputs[1]->name;
    if (v.c.empty() && !outputs.empty()) v.c = outputs[0]->name;
    const dtype want = v.op == "dgemm" ? dtype::f64 : v.op == "hgemm" ? dtype::f16 : dtype::f32;
    for (auto [key, name, output] :
         {std::tuple{"a", &v.a, false}, {"b", &v.b, false}, {"c", &v.c, true}}) {
        const manifest_arg* a = m.find_arg(*name);
        if (!a || (output ? !a->has_output() : !a->has_input()))
            ctx.fail(field + "." + key, "expected the name of an " +
                                            std::string(output ? "output" : "input") +
                                            " buffer, got '" + *name + "'");
        if (a->type != want)
            ctx.fail(field + "." + key, v.op + " needs " + std::string(dtype_name(want)) +
                                            " buffers; '" + *name + "' is " +
                                            std::string(dtype_name(a->type)));
    }
}

manifest_case read_case(const Value& jc, const std::string& field, const manifest& m,
                        const context& ctx) {
    manifest_case mc;
    mc.name = jc["name"].GetString();
    mc.kind = std::string(jc["kind"].GetString()) == "correctness" ? case_kind::correctness
                                                                   : case_kind::performance;
    if (jc.HasMember("params"))
        for (const auto& p : jc["params"].GetObject()) {
            if (m.tunables.count(p.name.GetString()))
                ctx.fail(field + ".params." + p.name.GetString(),
                         "is also a tunable; pick another name");
            if (!p.value.IsInt64())
                ctx.fail(field + ".params." + p.name.GetString(),
                         "expected an integer within a signed 64-bit range");
            mc.params[p.name.GetString()] = p.value.GetInt64();
        }
    if (jc.HasMember("launch")) mc.launch = read_launch_expressions(jc["launch"], m.launch);
    if (jc.HasMember("flops")) mc.flops = json_scalar_text(jc["flops"]);
    if (jc.HasMember("vendor_baseline")) {
        if (!jc["vendor_baseline"].IsNull()) {
            mc.vendor = read_vendor(jc["vendor_baseline"]);
            resolve_vendor_buffers(*mc.vendor, m, ctx, field + ".vendor_baseline");
        }
    } else {
        mc.vendor = m.vendor_baseline;
    }
    if (jc.HasMember("inputs"))
        for (const auto& in : jc["inputs"].GetObject()) {
            const std::string name = in.name.GetString();
            const manifest_arg* a = m.find_arg(name);
            if (!a || !a->has_input())
                ctx.fail(field + ".inputs." + name,
                         "no input or inout argument named '" + name + "'");
            mc.inputs[name] =
                read_init(in.value, m.folder, a->type, ctx, field + ".inputs." + name);
        }
    if (jc.HasMember("expected"))
        for (const auto& ex : jc["expected"].GetObject()) {
            const std::string name = ex.name.GetString();
            const manifest_arg* a = m.find_arg(name);
            if (!a || !a->has_output())
                ctx.fail(field + ".expected." + name,
                         "no output or inout argument named '" + name + "'");
            try {
                mc.expected[name] = resolve_inside(m.folder, ex.value.GetString());
            } catch (const std::invalid_argument& e) {
                ctx.fail(field + ".expected." + name, e.what());
            }
        }
    return mc;
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
                if (ec) ctx.fail(field, "cannot read " + p.string());
                if (size != bytes)
                    ctx.fail(field, p.filename().string() + " holds " + std::to_string(size) +
                                        " bytes but '" + a.name + "' needs " +
                                        std::to_string(bytes) + " (count " + a.count + " x " +
                                        std::string(dtype_name(a.type)) + ") in case '" + mc.name +
                                        "'");
            };
            if (a.has_input() && m.init_for(mc, a).file)
                check_size(*m.init_for(mc, a).file,
                           "cases[" + std::to_string(c) + "] input '" + a.name + "'");
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

void read_header(const rapidjson::Document& doc, manifest& m, const context& ctx) {
    if (doc.HasMember("description")) m.description = doc["description"].GetString();
    if (doc.HasMember("tunables"))
        for (const auto& t : doc["tunables"].GetObject())
            for (const auto& v : t.value.GetArray()) {
                if (!v.IsInt64())
                    ctx.fail(std::string("tunables.") + t.name.GetString(),
                             "expected integers within a signed 64-bit range");
                m.tunables[t.name.GetString()].push_back(v.GetInt64());
            }
    m.launch = read_launch_expressions(doc["launch"], launch_expressions{});
    if (doc.HasMember("reference_launch"))
        m.reference_launch = read_launch_expressions(doc["reference_launch"], m.launch);
    std::set<std::string> names;
    for (rapidjson::SizeType i = 0; i < doc["args"].Size(); ++i) {
        m.args.push_back(read_arg(doc["args"][i], i, m.folder, ctx));
        if (!names.insert(m.args.back().name).second)
            ctx.fail("args[" + std::to_string(i) + "].name",
                     "duplicate argument name '" + m.args.back().name + "'");
    }
    if (std::none_of(m.args.begin(), m.args.end(),
                     [](const manifest_arg& a) { return a.has_output(); }))
        ctx.fail("args", "no output or inout buffer: nothing to check");
    if (doc.HasMember("vendor_baseline")) {
        m.vendor_baseline = read_vendor(doc["vendor_baseline"]);
        resolve_vendor_buffers(*m.vendor_baseline, m, ctx, "vendor_baseline");
    }
}

// The manifest in `doc` (schema-checked here), its relative paths against m.folder (the
// args' against `args_folder` when given: a holdout's inherited args are the main manifest's).
void read_body(const rapidjson::Document& doc, manifest& m, const context& ctx,
               bool need_performance, const fs::path* args_folder = nullptr) {
    validate_json(doc, embedded_schema("manifest"), ctx.source);
    const fs::path own = m.folder;
    if (args_folder) m.folder = *args_folder;
    read_header(doc, m, ctx);
    m.folder = own;
    std::set<std::string> case_names;
    for (rapidjson::SizeType c = 0; c < doc["cases"].Size(); ++c) {
        const std::string field = "cases[" + std::to_string(c) + "]";
        m.cases.push_back(read_case(doc["cases"][c], field, m, ctx));
        if (!case_names.insert(m.cases.back().name).second)
            ctx.fail(field + ".name", "duplicate case name '" + m.cases.back().name + "'");
    }
    if (need_performance &&
        std::none_of(m.cases.begin(), m.cases.end(),
                     [](const manifest_case& c) { return c.kind == case_kind::performance; }))
        ctx.fail("cases",
                 "no performance case: at least one case must be of kind 'performance' to rank "
                 "candidates");
    check_expressions(m, ctx);
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
    if (inherits) {
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
