#include "orchestrator/contract/request_writer.hpp"

#include <rapidjson/document.h>

#include <cstdlib>
#include <stdexcept>

#include "common/json_builder.hpp"
#include "common/json_document.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

// A request names files relative to its folder; an absolute path must lie inside it.
Value relative_path(const fs::path& p, const fs::path& folder, json_allocator& a) {
    if (!p.is_absolute()) return json_text(p.generic_string(), a);
    const fs::path relative = folder.empty() ? fs::path() : p.lexically_relative(folder);
    if (relative.empty() || *relative.begin() == "..")
        throw std::invalid_argument("request writer: " + p.string() +
                                    " is not inside the request's folder '" + folder.string() +
                                    "'");
    return json_text(relative.generic_string(), a);
}

// A define whose text is a plain integer is written as a number, as the proposers give it.
Value define_value(const std::string& text, json_allocator& a) {
    char* end = nullptr;
    const long long n = text.empty() ? 0 : std::strtoll(text.c_str(), &end, 10);
    if (end && *end == '\0' && std::to_string(n) == text)
        return Value(static_cast<std::int64_t>(n));
    return json_text(text, a);
}

Value kernel_json(const kernel_spec& k, json_allocator& a) {
    json_object defines(a);
    for (const auto& [name, text] : k.defines) defines.add(name, define_value(text, a));
    json_object v(a);
    v.add("source_file", k.source_name)
        .add_if(!k.display_name.empty(), "source_name", k.display_name)
        .add("entry", k.entry)
        .add("compile_options", k.compile_options)
        .add("defines", defines)
        .add_if(k.arch_specific, "arch_specific", true);
    return v.take();
}

Value arg_json(const kernel_arg& arg, const fs::path& folder, json_allocator& a) {
    json_object v(a);
    v.add("name", arg.name).add("dtype", dtype_name(arg.type));
    if (!arg.is_buffer) {
        std::visit([&](auto x) { v.add("value", x); }, arg.scalar);
        return v.take();
    }
    v.add("count", arg.count);
    if (arg.input_file) v.add("input_file", relative_path(*arg.input_file, folder, a));
    if (arg.generator) v.add("generator", write_generator(*arg.generator, a));
    if (arg.input_dump_file)
        v.add("input_dump_file", relative_path(*arg.input_dump_file, folder, a));
    if (arg.output_file) v.add("output_file", relative_path(*arg.output_file, folder, a));
    if (arg.check) {
        json_object check(a);
        check.add("expected_file", relative_path(arg.check->expected_file, folder, a));
        check.add("expected_sha256", arg.check->expected_sha256).add("atol", arg.check->atol);
        v.add("check", check.add("rtol", arg.check->rtol).add("rms_atol", arg.check->rms_atol));
    }
    if (arg.timing_inputs_mode)
        v.add("timing_inputs", k_timing_inputs.name(*arg.timing_inputs_mode));
    return v.take();
}

Value vendor_call_json(const vendor_call& call, json_allocator& a) {
    json_object v(a);
    v.add("op", k_vendor_ops.name(call.op)).add("layout", k_matrix_layouts.name(call.layout));
    if (is_row_sum(call.op))
        return v.add("rows", call.rows)
            .add("cols", call.cols)
            .add("x", call.x)
            .add("y", call.y)
            .take();
    v.add("m", call.m)
        .add("n", call.n)
        .add("k", call.k)
        .add("a", call.a)
        .add("b", call.b)
        .add("c", call.c)
        .add_if(!call.scale_a.empty(), "scale_a", call.scale_a)
        .add_if(!call.scale_b.empty(), "scale_b", call.scale_b);
    return v.take();
}

Value case_json(const run_case& c, const fs::path& folder, json_allocator& a) {
    json_object v(a);
    v.add("name", c.name)
        .add("measure", c.measure)
        .add_if(c.launch_index_base != 0, "launch_index_base", c.launch_index_base);
    if (c.vendor) {
        v.add("vendor_call", vendor_call_json(*c.vendor, a));
    } else {
        json_object launch(a);
        launch.add("grid", c.launch.grid)
            .add("block", c.launch.block)
            .add("dynamic_shared_bytes", c.launch.dynamic_shared_bytes);
        v.add("launch", launch);
    }
    json_array args(a);
    for (const kernel_arg& arg : c.args) args.push(arg_json(arg, folder, a));
    v.add("args", args);
    return v.take();
}

// The timing block. mode, timer and the adaptive settings are written only where they differ
// from the harness's defaults (all of the adaptive ones in adaptive mode, so such a request
// says how it stops), so a request of the default kind reads as it did before they existed.
Value timing_json(const timing_config& t, json_allocator& a) {
    const timing_config defaults;
    const bool adaptive = t.mode == timing_mode::adaptive;
    json_object timing(a);
    timing.add("warmup", t.warmup)
        .add("iterations", t.iterations)
        .add("flush_l2", t.flush_l2)
        .add("fresh_inputs", t.fresh_inputs)
        .add_if(adaptive, "mode", k_timing_modes.name(t.mode))
        .add_if(t.timer != defaults.timer, "timer", k_timer_choices.name(t.timer))
        .add_if(adaptive || t.min_samples != defaults.min_samples, "min_samples", t.min_samples)
        .add_if(adaptive || t.min_time_ms != defaults.min_time_ms, "min_time_ms", t.min_time_ms)
        .add_if(adaptive || t.target_rse != defaults.target_rse, "target_rse", t.target_rse);
    if (t.checked_launch_keyed)  // the position is the key's secret: never in the request
        timing.add("checked_launch_keyed", true);
    else if (t.checked_launch)
        timing.add("checked_launch", *t.checked_launch);
    return timing.take();
}

}  // namespace

std::string write_request_json(const request& req) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    json_object d(doc);
    d.add("schema_version", 1);
    if (req.vendor) {
        json_object vendor(a);
        vendor.add("library", k_vendor_libraries.name(*req.vendor));
        d.add("vendor", vendor);
    } else {
        d.add("kernel", kernel_json(req.kernel, a));
    }
    json_array cases(a);
    for (const run_case& c : req.cases) cases.push(case_json(c, req.folder, a));
    d.add("device", req.device);
    if (req.inputs_key) {
        json_object key(a);
        // Relative to the request's folder, usually above it (the run folder): the harness
        // reads it inside its --root, where a candidate's compile cannot.
        const fs::path& file = req.inputs_key->file;
        const fs::path named = !file.is_absolute() ? file
                               : req.folder.empty()
                                   ? fs::path()
                                   : fs::absolute(file).lexically_normal().lexically_relative(
                                         fs::absolute(req.folder).lexically_normal());
        if (named.empty())
            throw std::invalid_argument("request writer: the inputs key " + file.string() +
                                        " cannot be named from the request's folder '" +
                                        req.folder.string() + "'");
        key.add("file", named.generic_string()).add("round", req.inputs_key->round);
        d.add("inputs_key", key);
    }
    d.add("timing", timing_json(req.timing, a)).add("cases", cases);
    return to_pretty_json(doc);
}

}  // namespace cuopt
