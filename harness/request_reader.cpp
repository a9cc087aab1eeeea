#include "harness/request_reader.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "harness/request_fields.hpp"
#include "harness/upstream_request.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace request_fields {

[[noreturn]] void fail(const json_field& f, const std::string& what) {
    throw json_error(f.source() + ": field " + f.path() + ": " + what);
}

json_field member_at(const json_field& f, const std::string& key) {
    return json_field(f.value(), f.source(), f.path().empty() ? key : f.path() + "." + key);
}

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

}  // namespace request_fields

using request_fields::fail;
using request_fields::member_at;
using request_fields::read_arg;
using request_fields::read_vendor_call;
using request_fields::resolve_file;
using request_fields::resolve_in_root;

namespace {

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
            // read_text_file's line starts with the whole path: shown quoted and cut instead.
            std::string why = e.what();
            if (why.rfind(path.string(), 0) == 0)
                why = quote_value(path.string()) + why.substr(path.string().size());
            fail(k["source_file"], why);
        }
        // NVRTC takes a C string: it would compile the source up to a NUL and no further.
        if (const auto nul = spec.source.find('\0'); nul != std::string::npos)
            fail(k["source_file"], quote_value(path.filename().string()) +
                                       " holds a NUL byte at byte " + std::to_string(nul) +
                                       "; expected CUDA source text (NVRTC would stop there)");
        spec.source_name = path.filename().string();
        spec.source_path = path;
    } else {
        spec.source = k.text("source");
        spec.source_name = "inline.cu";
    }
    if (const auto name = k.optional_text("source_name")) spec.display_name = *name;
    spec.compile_options = k.optional_texts("compile_options");
    spec.arch_specific = k.optional_boolean("arch_specific").value_or(false);
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
            throw response_overlap_error("the response " + quote_value(p.string()) + " is " +
                                         it->second + " of " +
                                         quote_value(req.file.filename().string()) +
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
                    fail(root["cases"][c]["args"][i][key],
                         "writes " + quote_value((*p)->filename().string()) + ", which is " +
                             it->second + "; outputs need paths of their own");
            }
        }
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
                fail(a, "writes " + quote_value((*p)->string()) +
                            ", which another argument also writes");
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
    // The path is anyone's text (a worker's stdin line): quoted and cut, and a name the file
    // system refuses (too long, a loop of links) is said in this one line, not as an exception.
    std::error_code ec;
    const fs::file_status status = fs::status(req.file, ec);
    const std::string shown = quote_value(file.string());
    if (fs::is_directory(status))
        throw json_error(shown + ": is a directory; expected a request JSON file");
    if (ec && ec != std::errc::no_such_file_or_directory)
        throw json_error(shown + ": cannot read (" + ec.message() +
                         "); expected a path to a request JSON file");
    if (!fs::is_regular_file(status))
        throw json_error(shown + ": no such request file; expected a path to a request JSON file");
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
