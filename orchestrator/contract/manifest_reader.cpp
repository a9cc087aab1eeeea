// Reading a manifest file: the schema check, each argument, case and header field into the
// manifest struct, then every check of manifest_checks; and a holdout over its main manifest.
#include <algorithm>
#include <set>
#include <stdexcept>

#include "common/dtype.hpp"
#include "common/file_io.hpp"
#include "common/generator_spec.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/request.hpp"
#include "orchestrator/contract/manifest_checks.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

using manifest_reading::check_expressions;
using manifest_reading::check_file_sizes;
using manifest_reading::check_vendor_library;
using manifest_reading::context;
using manifest_reading::read_case_vendor;
using manifest_reading::read_vendor;
using manifest_reading::resolve_vendor_buffers;

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

// An integer output's tolerance: its values are compared bit for bit, so it takes atol and
// rtol of 0 only (as the harness's check does), and no reduction length.
void check_exact_tolerance(const json_field& t, const manifest_arg& arg) {
    const std::string exactly =
        std::string(dtype_name(arg.type)) + " outputs are compared exactly (equal bits); expected ";
    for (const char* key : {"atol", "rtol"})
        if (t.optional_number(key).value_or(0) != 0) fail(t[key], exactly + "0 or no " + key);
    if (t.has("reduction_length")) fail(t["reduction_length"], exactly + "no reduction_length");
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
        if (!is_float(arg.type)) {
            check_exact_tolerance(*t, arg);
            return arg;
        }
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
    m.arch_specific = doc.optional_boolean("arch_specific").value_or(false);
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
    // The holdout runs the winner compiled as the search compiled it: for sm_90a where the
    // main manifest asks, whether or not the holdout repeats it.
    if (doc.HasMember("arch_specific") && m.arch_specific != main.arch_specific)
        ctx.fail("arch_specific", "differs from " + main.file.filename().string() +
                                      "'s; leave it out: a holdout compiles as the search does");
    m.arch_specific = main.arch_specific;
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
