#include "harness/request_reader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "harness/upstream_request.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

// Carries the file name and a field path so every message reads
// "<file>: field cases[0].args[1].count: <what was expected>".
struct field_context {
    std::string source;
    std::string field;
    field_context at(const std::string& child) const {
        const bool index = !child.empty() && child[0] == '[';
        return {source, field + (index || field.empty() ? "" : ".") + child};
    }
    [[noreturn]] void fail(const std::string& what) const {
        throw json_error(source + ": field " + field + ": " + what);
    }
};

fs::path resolve(const request& req, const std::string& relative, const field_context& ctx) {
    try {
        return resolve_inside(req.folder, relative);
    } catch (const std::invalid_argument& e) {
        ctx.fail(e.what());
    }
}

// A path the request reads or writes as a file: inside its folder, and not a directory.
fs::path resolve_file(const request& req, const std::string& relative, const field_context& ctx) {
    const fs::path path = resolve(req, relative, ctx);
    std::error_code ec;
    if (fs::is_directory(path, ec)) ctx.fail("'" + relative + "' is a directory; expected a file");
    return path;
}

generator_spec read_checked_generator(const Value& g, dtype type, const field_context& ctx) {
    const generator_spec spec = read_generator(g);
    if (const auto problem = check_generator(spec, type))
        (problem->field.empty() ? ctx : ctx.at(problem->field)).fail(problem->message);
    return spec;
}

// A scalar's value, exact: integer literals stay integers over the whole 64-bit range.
void read_scalar_value(kernel_arg& arg, const Value& v, const field_context& ctx) {
    if (!is_float(arg.type) && !v.IsInt64() && !v.IsUint64() && !v.IsBool() &&
        std::fabs(v.GetDouble()) > 9007199254740992.0)
        ctx.fail("a " + std::string(dtype_name(arg.type)) +
                 " beyond 2^53 must be written as an integer literal to be exact");
    try {
        if (v.IsInt64()) {
            arg.scalar = v.GetInt64();
            arg.scalar_bytes = encode_integer_scalar(arg.type, v.GetInt64());
        } else if (v.IsUint64()) {
            arg.scalar = v.GetUint64();
            arg.scalar_bytes = encode_integer_scalar(arg.type, v.GetUint64());
        } else {
            arg.scalar = v.IsBool() ? (v.GetBool() ? 1.0 : 0.0) : v.GetDouble();
            arg.scalar_bytes = encode_scalar(arg.type, std::get<double>(arg.scalar));
        }
    } catch (const std::invalid_argument& e) {
        ctx.fail(e.what());
    }
}

void read_input_file(const request& req, kernel_arg& arg, const Value& a,
                     const field_context& ctx) {
    arg.input_file = resolve_file(req, a["input_file"].GetString(), ctx);
    std::error_code ec;
    const auto size = fs::file_size(*arg.input_file, ec);
    if (ec) ctx.fail("cannot read " + arg.input_file->string() + " (" + ec.message() + ")");
    if (size != arg.bytes())
        ctx.fail(arg.input_file->filename().string() + " holds " + std::to_string(size) +
                 " bytes but count " + std::to_string(arg.count) + " x " +
                 std::string(dtype_name(arg.type)) + " (" + std::to_string(dtype_size(arg.type)) +
                 " bytes) needs " + std::to_string(arg.bytes()));
}

void read_buffer(const request& req, kernel_arg& arg, const Value& a, const field_context& ctx) {
    if (!a.HasMember("count")) ctx.fail("expected 'count' (a buffer) or 'value' (a scalar)");
    arg.is_buffer = true;
    arg.count = a["count"].GetUint64();
    if (a.HasMember("input_file") && a.HasMember("generator"))
        ctx.fail("has both 'input_file' and 'generator'; expected at most one input source");
    if (a.HasMember("input_file")) read_input_file(req, arg, a, ctx.at("input_file"));
    if (a.HasMember("generator"))
        arg.generator = read_checked_generator(a["generator"], arg.type, ctx.at("generator"));
    if (a.HasMember("output_file"))
        arg.output_file = resolve_file(req, a["output_file"].GetString(), ctx.at("output_file"));
    if (a.HasMember("input_dump_file")) {
        if (!arg.generator)
            ctx.at("input_dump_file").fail("only a buffer with a 'generator' can dump its inputs");
        arg.input_dump_file =
            resolve_file(req, a["input_dump_file"].GetString(), ctx.at("input_dump_file"));
    }
    if (a.HasMember("timing_inputs")) {
        if (!arg.has_input())
            ctx.at("timing_inputs")
                .fail(
                    "only a buffer with an input ('input_file' or 'generator') can say what "
                    "its timed launches see; expected no timing_inputs here");
        arg.timing_inputs_mode = k_timing_inputs.parse(a["timing_inputs"].GetString());
    }
}

kernel_arg read_arg(const request& req, const Value& a, const field_context& ctx) {
    kernel_arg arg;
    arg.name = a["name"].GetString();
    arg.type = *parse_dtype(a["dtype"].GetString());  // the schema's enum guarantees it
    const bool buffer_fields = a.HasMember("count") || a.HasMember("input_file") ||
                               a.HasMember("output_file") || a.HasMember("generator") ||
                               a.HasMember("input_dump_file") || a.HasMember("timing_inputs");
    if (!a.HasMember("value")) {
        read_buffer(req, arg, a, ctx);
        return arg;
    }
    if (buffer_fields)
        ctx.fail(
            "has 'value' (a scalar) and buffer fields "
            "(count/input_file/output_file/generator/input_dump_file/timing_inputs); "
            "expected one or the other");
    read_scalar_value(arg, a["value"], ctx.at("value"));
    return arg;
}

std::array<unsigned, 3> read_dim3(const Value& v) {
    std::array<unsigned, 3> out{1, 1, 1};
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i)
        out[i] = static_cast<unsigned>(std::min<std::uint64_t>(v[i].GetUint64(), 0xFFFFFFFFull));
    return out;
}

kernel_spec read_kernel(const request& req, const Value& k, const field_context& ctx) {
    kernel_spec spec;
    spec.entry = k["entry"].GetString();
    const bool has_file = k.HasMember("source_file"), has_inline = k.HasMember("source");
    if (has_file == has_inline) ctx.fail("expected exactly one of 'source_file' and 'source'");
    if (has_file) {
        const fs::path path =
            resolve_file(req, k["source_file"].GetString(), ctx.at("source_file"));
        try {
            spec.source = read_text_file(path);
        } catch (const std::runtime_error& e) {
            ctx.at("source_file").fail(e.what());
        }
        spec.source_name = path.filename().string();
        spec.source_path = path;
    } else {
        spec.source = k["source"].GetString();
        spec.source_name = "inline.cu";
    }
    if (k.HasMember("source_name")) spec.display_name = k["source_name"].GetString();
    if (k.HasMember("compile_options"))
        for (const auto& o : k["compile_options"].GetArray())
            spec.compile_options.emplace_back(o.GetString());
    if (k.HasMember("defines"))
        for (const auto& d : k["defines"].GetObject())
            spec.defines.emplace_back(d.name.GetString(), json_scalar_text(d.value));
    std::sort(spec.defines.begin(), spec.defines.end());
    return spec;
}

rapidjson::Document load_native_document(const fs::path& file, bool* upstream) {
    const std::string name = file.filename().string();
    rapidjson::Document doc = parse_json(read_text_file(file), name);
    *upstream = is_upstream_layout(doc);
    if (*upstream) doc = convert_upstream_request(doc, file.parent_path(), name);
    validate_json(doc, embedded_schema("request"), name);
    return doc;
}

// What a request reads (its own file, the kernel source, every input file, and `also_read`:
// the response) is never one of its outputs: an output is written over, and the harness
// never overwrites a file it did not create.
void check_outputs_spare_inputs(const request& req, const std::vector<fs::path>& also_read,
                                const field_context& root) {
    std::map<fs::path, std::string> read;
    auto add = [&read](const fs::path& p, const std::string& what) {
        read.emplace(fs::weakly_canonical(p), what);
    };
    add(req.file, "the request itself");
    if (!req.kernel.source_path.empty()) add(req.kernel.source_path, "the kernel source");
    for (const fs::path& p : also_read) add(p, "the response");
    for (const run_case& c : req.cases)
        for (const kernel_arg& a : c.args)
            if (a.input_file) add(*a.input_file, "an input file");
    for (std::size_t c = 0; c < req.cases.size(); ++c)
        for (std::size_t i = 0; i < req.cases[c].args.size(); ++i) {
            const kernel_arg& a = req.cases[c].args[i];
            for (const auto& [p, key] : {std::pair{&a.output_file, "output_file"},
                                         std::pair{&a.input_dump_file, "input_dump_file"}}) {
                if (!*p) continue;
                const auto it = read.find(fs::weakly_canonical(**p));
                if (it != read.end())
                    root.at("cases[" + std::to_string(c) + "]")
                        .at("args[" + std::to_string(i) + "]")
                        .at(key)
                        .fail("writes " + (*p)->filename().string() + ", which is " + it->second +
                              "; outputs need paths of their own");
            }
        }
}

// The buffer arg a vendor_call field names, checked for its role, dtype and element count.
void check_vendor_operand(const run_case& rc, const vendor_call& v, const char* key,
                          const std::string& name, std::uint64_t count, const char* shape,
                          const field_context& ctx) {
    const std::string op = k_vendor_ops.name(v.op);
    const dtype want = vendor_op_dtype(v.op);
    const auto it = std::find_if(rc.args.begin(), rc.args.end(),
                                 [&](const kernel_arg& a) { return a.name == name; });
    if (it == rc.args.end())
        ctx.fail("'" + name + "' names no argument of this case; expected a buffer arg's name");
    if (!it->is_buffer) ctx.fail("'" + name + "' is a scalar; expected a buffer");
    if (it->type != want)
        ctx.fail("'" + name + "' is " + std::string(dtype_name(it->type)) + " but " + op +
                 " needs " + std::string(dtype_name(want)) + " buffers");
    if (it->count != count)
        ctx.fail("'" + name + "' has count " + std::to_string(it->count) + " but " + op +
                 " with m=" + std::to_string(v.m) + ", n=" + std::to_string(v.n) +
                 ", k=" + std::to_string(v.k) + " needs " + shape + " = " + std::to_string(count));
    const bool is_c = std::string(key) == "c";
    if (!is_c && !it->has_input())
        ctx.fail("'" + name + "' has no input; expected a buffer with input_file or generator");
    if (is_c && !it->output_file) ctx.fail("'" + name + "' has no output_file; C is written");
}

vendor_call read_vendor_call(const Value& v, const run_case& rc, const field_context& ctx) {
    vendor_call call;
    call.op = *k_vendor_ops.parse(v["op"].GetString());  // the schema's enums guarantee these
    call.layout = *k_matrix_layouts.parse(v["layout"].GetString());
    call.m = v["m"].GetInt();
    call.n = v["n"].GetInt();
    call.k = v["k"].GetInt();
    call.a = v["a"].GetString();
    call.b = v["b"].GetString();
    call.c = v["c"].GetString();
    const std::uint64_t m = call.m, n = call.n, k = call.k;
    check_vendor_operand(rc, call, "a", call.a, m * k, "m*k", ctx.at("a"));
    check_vendor_operand(rc, call, "b", call.b, k * n, "k*n", ctx.at("b"));
    check_vendor_operand(rc, call, "c", call.c, m * n, "m*n", ctx.at("c"));
    if (call.c == call.a || call.c == call.b)
        ctx.at("c").fail("'" + call.c + "' is also an input; C needs a buffer of its own");
    return call;
}

run_case read_case(const request& req, const Value& jc, const field_context& cctx,
                   std::set<fs::path>& written) {
    run_case rc;
    rc.name = jc["name"].GetString();
    if (jc.HasMember("measure")) rc.measure = jc["measure"].GetBool();
    if (jc.HasMember("launch_index_base"))
        rc.launch_index_base = jc["launch_index_base"].GetUint64();
    if (req.vendor && jc.HasMember("launch"))
        cctx.at("launch").fail("a vendor request's cases have a vendor_call, not a launch");
    if (!req.vendor && jc.HasMember("vendor_call"))
        cctx.at("vendor_call").fail("only a request with a 'vendor' can make a vendor_call");
    if (!req.vendor && !jc.HasMember("launch"))
        cctx.at("launch").fail("missing; a kernel request's cases need grid and block");
    if (req.vendor && !jc.HasMember("vendor_call"))
        cctx.at("vendor_call").fail("missing; a vendor request's cases say what to call");
    if (jc.HasMember("launch")) {
        rc.launch.grid = read_dim3(jc["launch"]["grid"]);
        rc.launch.block = read_dim3(jc["launch"]["block"]);
        if (jc["launch"].HasMember("dynamic_shared_bytes"))
            rc.launch.dynamic_shared_bytes = jc["launch"]["dynamic_shared_bytes"].GetUint();
    }
    const auto& args = jc["args"].GetArray();
    for (rapidjson::SizeType i = 0; i < args.Size(); ++i) {
        const field_context actx = cctx.at("args[" + std::to_string(i) + "]");
        kernel_arg arg = read_arg(req, args[i], actx);
        for (const auto* p : {&arg.output_file, &arg.input_dump_file})
            if (*p && !written.insert(**p).second)
                actx.fail("writes " + (*p)->string() + ", which another argument also writes");
        rc.args.push_back(std::move(arg));
    }
    if (req.vendor) rc.vendor = read_vendor_call(jc["vendor_call"], rc, cctx.at("vendor_call"));
    return rc;
}

// The timing block: defaults for what it leaves out, then the limits between its fields.
timing_config read_timing(const Value& t, const field_context& root) {
    timing_config timing;
    if (t.HasMember("warmup")) timing.warmup = t["warmup"].GetInt();
    if (t.HasMember("iterations")) timing.iterations = t["iterations"].GetInt();
    if (t.HasMember("flush_l2")) timing.flush_l2 = t["flush_l2"].GetBool();
    if (t.HasMember("fresh_inputs")) timing.fresh_inputs = t["fresh_inputs"].GetBool();
    if (t.HasMember("mode")) timing.mode = *k_timing_modes.parse(t["mode"].GetString());
    if (t.HasMember("timer")) timing.timer = *k_timer_choices.parse(t["timer"].GetString());
    if (t.HasMember("min_samples")) timing.min_samples = t["min_samples"].GetInt();
    if (t.HasMember("min_time_ms")) timing.min_time_ms = t["min_time_ms"].GetDouble();
    if (t.HasMember("target_rse")) timing.target_rse = t["target_rse"].GetDouble();
    const bool adaptive = timing.mode == timing_mode::adaptive;
    if (adaptive && timing.min_samples > timing.iterations)
        root.at("timing.min_samples")
            .fail(std::to_string(timing.min_samples) + " is more than timing.iterations (" +
                  std::to_string(timing.iterations) +
                  "), the most timed launches an adaptive case gets; expected at most that");
    if (t.HasMember("checked_launch")) {
        const int position = t["checked_launch"].GetInt();
        // Adaptive: only the first min_samples timed launches are sure to happen.
        const int limit = adaptive ? timing.min_samples : timing.iterations;
        if (position < 0 || position >= limit)
            root.at("timing.checked_launch")
                .fail(std::to_string(position) + " is not a timed launch; expected 0 to " +
                      std::to_string(limit - 1) +
                      (adaptive ? " (below timing.min_samples: an adaptive loop may stop after "
                                  "that many timed launches)"
                                : " (below timing.iterations)"));
        timing.checked_launch = position;
    }
    return timing;
}

}  // namespace

request read_request(const fs::path& file, const std::vector<fs::path>& also_read) {
    request req;
    req.file = fs::absolute(file);
    req.folder = req.file.parent_path();
    if (fs::is_directory(req.file))
        throw json_error(file.string() + ": is a directory; expected a request JSON file");
    if (!fs::is_regular_file(req.file)) throw json_error(file.string() + ": no such request file");
    const rapidjson::Document doc = load_native_document(req.file, &req.upstream_layout);
    const field_context root{req.file.filename().string(), ""};

    const bool has_kernel = doc.HasMember("kernel"), has_vendor = doc.HasMember("vendor");
    if (has_kernel == has_vendor)
        root.at(has_kernel ? "vendor" : "kernel")
            .fail(has_kernel ? "a request has a 'kernel' or a 'vendor', not both"
                             : "missing; expected exactly one of 'kernel' (a kernel to compile) "
                               "and 'vendor' (a library to call)");
    if (has_kernel) req.kernel = read_kernel(req, doc["kernel"], root.at("kernel"));
    if (has_vendor) req.vendor = k_vendor_libraries.parse(doc["vendor"]["library"].GetString());
    if (doc.HasMember("device")) req.device = doc["device"].GetInt();
    if (doc.HasMember("timing")) req.timing = read_timing(doc["timing"], root);

    std::set<std::string> names;
    std::set<fs::path> written;
    const auto& cases = doc["cases"].GetArray();
    for (rapidjson::SizeType c = 0; c < cases.Size(); ++c) {
        const field_context cctx = root.at("cases[" + std::to_string(c) + "]");
        req.cases.push_back(read_case(req, cases[c], cctx, written));
        if (!names.insert(req.cases.back().name).second)
            cctx.at("name").fail("duplicate case name '" + req.cases.back().name + "'");
    }
    check_outputs_spare_inputs(req, also_read, root);
    return req;
}

}  // namespace cuopt
