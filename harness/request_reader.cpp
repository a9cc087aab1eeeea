#include "harness/request_reader.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "harness/upstream_request.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

// "<file>: field cases[0].args[1].count: <what>": the checks the schema cannot make.
[[noreturn]] void fail(const json_field& f, const std::string& what) {
    throw json_error(f.source() + ": field " + f.path() + ": " + what);
}

// `f`'s member `key` for messages, present or not.
json_field member_at(const json_field& f, const std::string& key) {
    return json_field(f.value(), f.source(), f.path().empty() ? key : f.path() + "." + key);
}

// A path the request reads or writes as a file: inside its folder, and not a directory.
fs::path resolve_file(const request& req, const json_field& f) {
    const std::string relative = f.text();
    fs::path path;
    try {
        path = resolve_inside(req.folder, relative);
    } catch (const std::invalid_argument& e) {
        fail(f, e.what());
    }
    std::error_code ec;
    if (fs::is_directory(path, ec))
        fail(f, quote_value(relative) + " is a directory; expected a file");
    return path;
}

generator_spec read_checked_generator(const json_field& g, dtype type, std::uint64_t count) {
    const generator_spec spec = read_generator(g);
    if (const auto problem = check_generator(spec, type, count))
        fail(problem->field.empty() ? g : member_at(g, problem->field), problem->message);
    return spec;
}

// A scalar's value, exact: integer literals stay integers over the whole 64-bit range.
void read_scalar_value(kernel_arg& arg, const json_field& f) {
    const Value& v = f.value();
    if (!is_float(arg.type) && !v.IsInt64() && !v.IsUint64() && !v.IsBool() &&
        std::fabs(v.GetDouble()) > 9007199254740992.0)
        fail(f, "a " + std::string(dtype_name(arg.type)) +
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
        fail(f, e.what());
    }
    const double as_double = std::visit([](auto n) { return static_cast<double>(n); }, arg.scalar);
    if (is_float(arg.type))
        if (std::string why = value_fit_problem(arg.type, as_double); !why.empty()) fail(f, why);
}

void read_input_file(const request& req, kernel_arg& arg, const json_field& f) {
    arg.input_file = resolve_file(req, f);
    std::error_code ec;
    const auto size = fs::file_size(*arg.input_file, ec);
    if (ec)
        fail(f, "cannot read " + quote_value(arg.input_file->string()) + " (" + ec.message() + ")");
    if (size != arg.bytes())
        fail(f, arg.input_file->filename().string() + " holds " + std::to_string(size) +
                    " bytes but count " + std::to_string(arg.count) + " x " +
                    std::string(dtype_name(arg.type)) + " (" +
                    std::to_string(dtype_size(arg.type)) + " bytes) needs " +
                    std::to_string(arg.bytes()));
}

// A file relative to the request's folder, anywhere in the harness's root (what a candidate's
// compile must not read stays out of its folder: the oracle, the inputs key).
fs::path resolve_in_root(const request& req, const json_field& f) {
    const std::string relative = f.text();
    if (fs::path(relative).is_absolute())
        fail(f, quote_value(relative) +
                    " is absolute; expected a path relative to the request's folder");
    std::error_code ec;
    const fs::path root = fs::weakly_canonical(req.root, ec);
    const fs::path file = ec ? fs::path() : fs::weakly_canonical(req.folder / relative, ec);
    if (ec) fail(f, quote_value(relative) + ": " + ec.message());
    if (std::mismatch(root.begin(), root.end(), file.begin(), file.end()).first != root.end())
        fail(f, quote_value(relative) + " leaves " + root.string() +
                    ", the folder tree this harness may read (--root)");
    return file;
}

// The expected file of a check: in the harness's root, exactly count x dtype.
fs::path read_expected_file(const request& req, const kernel_arg& arg, const json_field& f) {
    const fs::path file = resolve_in_root(req, f);
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec) fail(f, "cannot read " + quote_value(file.string()) + " (" + ec.message() + ")");
    if (size != arg.bytes())
        fail(f, file.filename().string() + " holds " + std::to_string(size) + " bytes but the " +
                    std::to_string(arg.count) + " " + std::string(dtype_name(arg.type)) +
                    " elements of " + quote_value(arg.name) + " need " +
                    std::to_string(arg.bytes()));
    return file;
}

output_check_spec read_output_check(const request& req, const kernel_arg& arg,
                                    const json_field& c) {
    if (!arg.output_file)
        fail(c, "only an output (a buffer with 'output_file') can be checked; expected no check");
    output_check_spec spec;
    spec.expected_file = read_expected_file(req, arg, c["expected_file"]);
    spec.expected_sha256 = c.text("expected_sha256");  // the schema's pattern: 64 hex digits
    for (auto [field, key] : {std::pair{&spec.atol, "atol"}, std::pair{&spec.rtol, "rtol"},
                              std::pair{&spec.rms_atol, "rms_atol"}}) {
        *field = c.optional_number(key).value_or(0);
        if (*field < 0) fail(c[key], "is negative; expected a tolerance >= 0");
        // The check compares integers bit for bit: a tolerance would be ignored, not applied.
        if (*field != 0 && !is_float(arg.type))
            fail(c[key], std::string(dtype_name(arg.type)) +
                             " outputs are compared exactly (equal bits); expected 0 or no " + key);
    }
    return spec;
}

void read_buffer(const request& req, kernel_arg& arg, const json_field& a) {
    if (!a.has("count")) fail(a, "expected 'count' (a buffer) or 'value' (a scalar)");
    arg.is_buffer = true;
    arg.count = a.integer<std::uint64_t>("count");
    if (a.has("input_file") && a.has("generator"))
        fail(a, "has both 'input_file' and 'generator'; expected at most one input source");
    if (a.has("input_file")) read_input_file(req, arg, a["input_file"]);
    if (a.has("generator"))
        arg.generator = read_checked_generator(a["generator"], arg.type, arg.count);
    if (a.has("output_file")) arg.output_file = resolve_file(req, a["output_file"]);
    if (const auto check = a.find("check")) arg.check = read_output_check(req, arg, *check);
    if (const auto dump = a.find("input_dump_file")) {
        if (!arg.generator) fail(*dump, "only a buffer with a 'generator' can dump its inputs");
        arg.input_dump_file = resolve_file(req, *dump);
    }
    if (const auto mode = a.find("timing_inputs")) {
        if (!arg.has_input())
            fail(*mode,
                 "only a buffer with an input ('input_file' or 'generator') can say what "
                 "its timed launches see; expected no timing_inputs here");
        arg.timing_inputs_mode = mode->word(k_timing_inputs);
    }
}

kernel_arg read_arg(const request& req, const json_field& a) {
    kernel_arg arg;
    arg.name = a.text("name");
    arg.type = *parse_dtype(a.text("dtype"));  // the schema's enum guarantees it
    const bool buffer_fields = a.has("count") || a.has("input_file") || a.has("output_file") ||
                               a.has("generator") || a.has("input_dump_file") ||
                               a.has("timing_inputs") || a.has("check");
    if (!a.has("value")) {
        read_buffer(req, arg, a);
        return arg;
    }
    if (buffer_fields)
        fail(a,
             "has 'value' (a scalar) and buffer fields "
             "(count/input_file/output_file/generator/input_dump_file/timing_inputs/check); "
             "expected one or the other");
    read_scalar_value(arg, a["value"]);
    return arg;
}

std::array<unsigned, 3> read_dim3(const json_field& v) {
    std::array<unsigned, 3> out{1, 1, 1};
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[i].integer<unsigned>();
    return out;
}

kernel_spec read_kernel(const request& req, const json_field& k) {
    kernel_spec spec;
    spec.entry = k.text("entry");
    const bool has_file = k.has("source_file"), has_inline = k.has("source");
    if (has_file == has_inline) fail(k, "expected exactly one of 'source_file' and 'source'");
    if (has_file) {
        const fs::path path = resolve_file(req, k["source_file"]);
        try {
            spec.source = read_text_file(path);
        } catch (const std::runtime_error& e) {
            fail(k["source_file"], e.what());
        }
        // NVRTC takes a C string: it would compile the source up to a NUL and no further.
        if (const auto nul = spec.source.find('\0'); nul != std::string::npos)
            fail(k["source_file"], path.filename().string() + " holds a NUL byte at byte " +
                                       std::to_string(nul) +
                                       "; expected CUDA source text (NVRTC would stop there)");
        spec.source_name = path.filename().string();
        spec.source_path = path;
    } else {
        spec.source = k.text("source");
        spec.source_name = "inline.cu";
    }
    if (const auto name = k.optional_text("source_name")) spec.display_name = *name;
    spec.compile_options = k.optional_texts("compile_options");
    if (const auto defines = k.find("defines"))
        for (const auto& [name, value] : defines->members()) {
            if (std::string why = identifier_problem(name); !why.empty())
                fail(*defines, "a define's name: " + why);
            std::string text = json_scalar_text(value.value());
            if (text.size() > 4096)
                fail(value, "a define's value of " + std::to_string(text.size()) +
                                " bytes; expected at most 4096");
            spec.defines.emplace_back(name, std::move(text));
        }
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
                                const json_field& root) {
    std::map<fs::path, std::string> read;
    auto add = [&read](const fs::path& p, const std::string& what) {
        read.emplace(fs::weakly_canonical(p), what);
    };
    add(req.file, "the request itself");
    if (!req.kernel.source_path.empty()) add(req.kernel.source_path, "the kernel source");
    for (const run_case& c : req.cases)
        for (const kernel_arg& a : c.args) {
            if (a.input_file) add(*a.input_file, "an input file");
            if (a.check) add(a.check->expected_file, "an expected file");
        }
    // The response is written whatever the request holds: over one of these, a user's file is
    // lost. Said before anything is written, and no response is written for it.
    for (const fs::path& p : also_read)
        if (const auto it = read.find(fs::weakly_canonical(p)); it != read.end())
            throw response_overlap_error("the response " + p.string() + " is " + it->second +
                                         " of " + req.file.filename().string() +
                                         "; expected a response path of its own (--response)");
    for (const fs::path& p : also_read) add(p, "the response");
    for (std::size_t c = 0; c < req.cases.size(); ++c)
        for (std::size_t i = 0; i < req.cases[c].args.size(); ++i) {
            const kernel_arg& a = req.cases[c].args[i];
            for (const auto& [p, key] : {std::pair{&a.output_file, "output_file"},
                                         std::pair{&a.input_dump_file, "input_dump_file"}}) {
                if (!*p) continue;
                const auto it = read.find(fs::weakly_canonical(**p));
                if (it != read.end())
                    fail(root["cases"][c]["args"][i][key], "writes " + (*p)->filename().string() +
                                                               ", which is " + it->second +
                                                               "; outputs need paths of their own");
            }
        }
}

// The buffer arg a vendor_call field names, checked for its role, dtype and element count.
void check_vendor_operand(const run_case& rc, const vendor_call& v, const char* key,
                          const std::string& name, std::uint64_t count, const char* shape,
                          const json_field& f) {
    const std::string op = k_vendor_ops.name(v.op);
    const bool is_c = std::string(key) == "c";
    const auto it = std::find_if(rc.args.begin(), rc.args.end(),
                                 [&](const kernel_arg& a) { return a.name == name; });
    if (it == rc.args.end())
        fail(f,
             quote_value(name) + " names no argument of this case; expected a buffer arg's name");
    if (!it->is_buffer) fail(f, quote_value(name) + " is a scalar; expected a buffer");
    const bool dtype_ok =
        is_c ? vendor_output_dtype_ok(v.op, it->type) : it->type == vendor_input_dtype(v.op);
    if (!dtype_ok)
        fail(f, quote_value(name) + " is " + std::string(dtype_name(it->type)) + " but " + op +
                    " needs " +
                    (is_c && v.op == vendor_op::e4m3_gemm
                         ? "a C of dtype " + vendor_output_dtypes(v.op)
                         : std::string(dtype_name(vendor_input_dtype(v.op))) + " buffers"));
    if (it->count != count)
        fail(f, quote_value(name) + " has count " + std::to_string(it->count) + " but " + op +
                    " with m=" + std::to_string(v.m) + ", n=" + std::to_string(v.n) + ", k=" +
                    std::to_string(v.k) + " needs " + shape + " = " + std::to_string(count));
    if (!is_c && !it->has_input())
        fail(f,
             quote_value(name) + " has no input; expected a buffer with input_file or generator");
    if (is_c && !it->output_file) fail(f, quote_value(name) + " has no output_file; C is written");
}

// What the library and the op ask of a call beyond its operands: the op is the request's
// library's, and e4m3_gemm takes row_major_bt only with m, n and k multiples of 16.
void check_vendor_op(const json_field& v, const vendor_call& call, vendor_library library) {
    if (const auto problem = check_vendor_pairing(call.op, library, call.layout))
        fail(v[problem->field], problem->message);
    for (const auto& [key, value] : {std::pair{"m", call.m}, {"n", call.n}, {"k", call.k}})
        if (const std::string problem = vendor_dimension_problem(call.op, value); !problem.empty())
            fail(v[key], problem);
}

// A vendor_call's scale_a or scale_b: the name of an f32 scalar arg of the case; "" for none.
std::string read_vendor_scale(const json_field& v, const char* key, const run_case& rc,
                              vendor_op op) {
    const auto f = v.find(key);
    if (!f) return "";
    const std::string name = f->text();
    if (op != vendor_op::e4m3_gemm)
        fail(*f, std::string(k_vendor_ops.name(op)) +
                     " takes no scales; only e4m3_gemm scales its product");
    const auto it = std::find_if(rc.args.begin(), rc.args.end(),
                                 [&](const kernel_arg& a) { return a.name == name; });
    if (it == rc.args.end())
        fail(*f, quote_value(name) +
                     " names no argument of this case; expected an f32 scalar arg's name");
    if (it->is_buffer) fail(*f, quote_value(name) + " is a buffer; expected an f32 scalar arg");
    if (it->type != dtype::f32)
        fail(*f, quote_value(name) + " is " + std::string(dtype_name(it->type)) +
                     "; expected an f32 scalar arg (cuBLASLt's scale type is CUDA_R_32F)");
    return name;
}

vendor_call read_vendor_call(const json_field& v, const run_case& rc, vendor_library library) {
    vendor_call call;
    call.op = v.word("op", k_vendor_ops);
    call.layout = v.word("layout", k_matrix_layouts);
    call.m = v.integer<int>("m");
    call.n = v.integer<int>("n");
    call.k = v.integer<int>("k");
    call.a = v.text("a");
    call.b = v.text("b");
    call.c = v.text("c");
    check_vendor_op(v, call, library);
    const std::uint64_t m = call.m, n = call.n, k = call.k;
    const bool bt = call.layout == matrix_layout::row_major_bt;
    check_vendor_operand(rc, call, "a", call.a, m * k, "m*k", v["a"]);
    check_vendor_operand(rc, call, "b", call.b, k * n, bt ? "n*k" : "k*n", v["b"]);
    check_vendor_operand(rc, call, "c", call.c, m * n, "m*n", v["c"]);
    if (call.c == call.a || call.c == call.b)
        fail(v["c"], quote_value(call.c) + " is also an input; C needs a buffer of its own");
    call.scale_a = read_vendor_scale(v, "scale_a", rc, call.op);
    call.scale_b = read_vendor_scale(v, "scale_b", rc, call.op);
    return call;
}

run_case read_case(const request& req, const json_field& jc, std::set<fs::path>& written) {
    run_case rc;
    rc.name = jc.text("name");
    if (const auto measure = jc.optional_boolean("measure")) rc.measure = *measure;
    if (const auto base = jc.optional_integer<std::uint64_t>("launch_index_base"))
        rc.launch_index_base = *base;
    const auto launch = jc.find("launch");
    if (req.vendor && launch)
        fail(*launch, "a vendor request's cases have a vendor_call, not a launch");
    if (!req.vendor && jc.has("vendor_call"))
        fail(jc["vendor_call"], "only a request with a 'vendor' can make a vendor_call");
    if (!req.vendor && !launch)
        fail(member_at(jc, "launch"), "missing; a kernel request's cases need grid and block");
    if (req.vendor && !jc.has("vendor_call"))
        fail(member_at(jc, "vendor_call"), "missing; a vendor request's cases say what to call");
    if (launch) {
        rc.launch.grid = read_dim3((*launch)["grid"]);
        rc.launch.block = read_dim3((*launch)["block"]);
        if (const auto bytes = launch->optional_integer<unsigned>("dynamic_shared_bytes"))
            rc.launch.dynamic_shared_bytes = *bytes;
    }
    for (const json_field& a : jc["args"].items()) {
        kernel_arg arg = read_arg(req, a);
        for (const auto* p : {&arg.output_file, &arg.input_dump_file})
            if (*p && !written.insert(**p).second)
                fail(a, "writes " + (*p)->string() + ", which another argument also writes");
        rc.args.push_back(std::move(arg));
    }
    if (req.vendor) rc.vendor = read_vendor_call(jc["vendor_call"], rc, *req.vendor);
    return rc;
}

// The timing block: defaults for what it leaves out, then the limits between its fields.
timing_config read_timing(const json_field& t) {
    timing_config timing;
    timing.warmup = t.optional_integer<int>("warmup").value_or(timing.warmup);
    timing.iterations = t.optional_integer<int>("iterations").value_or(timing.iterations);
    timing.flush_l2 = t.optional_boolean("flush_l2").value_or(timing.flush_l2);
    timing.fresh_inputs = t.optional_boolean("fresh_inputs").value_or(timing.fresh_inputs);
    timing.mode = t.optional_word("mode", k_timing_modes).value_or(timing.mode);
    timing.timer = t.optional_word("timer", k_timer_choices).value_or(timing.timer);
    timing.min_samples = t.optional_integer<int>("min_samples").value_or(timing.min_samples);
    timing.min_time_ms = t.optional_number("min_time_ms").value_or(timing.min_time_ms);
    timing.target_rse = t.optional_number("target_rse").value_or(timing.target_rse);
    const bool adaptive = timing.mode == timing_mode::adaptive;
    if (adaptive && timing.min_samples > timing.iterations)
        fail(member_at(t, "min_samples"),
             std::to_string(timing.min_samples) + " is more than timing.iterations (" +
                 std::to_string(timing.iterations) +
                 "), the most timed launches an adaptive case gets; expected at most that");
    if (const auto checked = t.find("checked_launch")) {
        const int position = checked->integer<int>();
        // Adaptive: only the first min_samples timed launches are sure to happen.
        const int limit = adaptive ? timing.min_samples : timing.iterations;
        if (position < 0 || position >= limit)
            fail(*checked,
                 std::to_string(position) + " is not a timed launch; expected 0 to " +
                     std::to_string(limit - 1) +
                     (adaptive ? " (below timing.min_samples: an adaptive loop may stop after "
                                 "that many timed launches)"
                               : " (below timing.iterations)"));
        timing.checked_launch = position;
    }
    timing.checked_launch_keyed = t.optional_boolean("checked_launch_keyed").value_or(false);
    if (timing.checked_launch_keyed && timing.checked_launch)
        fail(member_at(t, "checked_launch_keyed"),
             "true with a checked_launch as well; expected one of them (keyed: the position is "
             "drawn from inputs_key)");
    return timing;
}

// The request's inputs_key: the key file (in the harness's root) read, and every generator and
// perturbed file input of every case given its stream.
void read_inputs_key_ref(request& req, const json_field& k) {
    inputs_key_ref ref;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(req.folder / k["file"].text(), ec)))
        fail(k["file"], quote_value(k["file"].text()) +
                            " is a symbolic link; expected the key file itself (never followed)");
    ref.file = resolve_in_root(req, k["file"]);
    ref.round = k.optional_integer<std::uint64_t>("round").value_or(0);
    inputs_key_words key{};
    try {
        key = read_inputs_key(ref.file);
    } catch (const std::runtime_error& e) {
        fail(k["file"], e.what());
    }
    req.inputs_key = ref;
    req.inputs_key_id = inputs_key_id(key);
    if (req.timing.checked_launch_keyed) {  // adaptive: among the min_samples always taken
        const bool adaptive = req.timing.mode == timing_mode::adaptive;
        req.timing.checked_launch = keyed_checked_position(
            key, ref.round, adaptive ? req.timing.min_samples : req.timing.iterations);
    }
    const auto rotation = stream_key_of(key, ref.round, 0, 1);  // domain 1: rotations
    for (run_case& rc : req.cases)
        for (kernel_arg& a : rc.args) {
            if (a.generator)
                a.generator->stream_key = stream_key_of(key, ref.round, a.generator->seed);
            if (a.input_file) a.rotation_key = rotation;
        }
}

}  // namespace

request read_request(const fs::path& file, const std::vector<fs::path>& also_read,
                     const fs::path& readable_root) {
    request req;
    req.file = fs::absolute(file);
    req.folder = req.file.parent_path();
    req.root = readable_root.empty() ? req.folder : fs::absolute(readable_root);
    if (fs::is_directory(req.file))
        throw json_error(file.string() + ": is a directory; expected a request JSON file");
    if (!fs::is_regular_file(req.file)) throw json_error(file.string() + ": no such request file");
    const rapidjson::Document doc = load_native_document(req.file, &req.upstream_layout);
    const json_field root(doc, req.file.filename().string());

    const bool has_kernel = root.has("kernel"), has_vendor = root.has("vendor");
    if (has_kernel == has_vendor)
        fail(member_at(root, has_kernel ? "vendor" : "kernel"),
             has_kernel ? "a request has a 'kernel' or a 'vendor', not both"
                        : "missing; expected exactly one of 'kernel' (a kernel to compile) "
                          "and 'vendor' (a library to call)");
    if (has_kernel) req.kernel = read_kernel(req, root["kernel"]);
    if (has_vendor) req.vendor = root["vendor"].word("library", k_vendor_libraries);
    if (const auto device = root.optional_integer<int>("device")) req.device = *device;
    if (root.has("timing")) req.timing = read_timing(root["timing"]);

    std::set<std::string> names;
    std::set<fs::path> written;
    for (const json_field& c : root["cases"].items()) {
        req.cases.push_back(read_case(req, c, written));
        if (!names.insert(req.cases.back().name).second)
            fail(c["name"], "duplicate case name " + quote_value(req.cases.back().name));
    }
    check_outputs_spare_inputs(req, also_read, root);
    if (const auto key = root.find("inputs_key")) read_inputs_key_ref(req, *key);
    if (req.timing.checked_launch_keyed && !req.inputs_key)
        fail(root["timing"]["checked_launch_keyed"],
             "true without an inputs_key; expected the key the position is drawn from");
    return req;
}

}  // namespace cuopt
