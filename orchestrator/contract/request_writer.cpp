#include "orchestrator/contract/request_writer.hpp"

#include <rapidjson/document.h>

#include <cstdlib>
#include <stdexcept>

#include "common/json_document.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;
using allocator = rapidjson::Document::AllocatorType;

namespace {

// A request names files relative to its folder; an absolute path must lie inside it.
Value relative_path(const fs::path& p, const fs::path& folder, allocator& a) {
    if (!p.is_absolute()) return json_text(p.generic_string(), a);
    const fs::path relative = folder.empty() ? fs::path() : p.lexically_relative(folder);
    if (relative.empty() || *relative.begin() == "..")
        throw std::invalid_argument("request writer: " + p.string() +
                                    " is not inside the request's folder '" + folder.string() +
                                    "'");
    return json_text(relative.generic_string(), a);
}

// A define whose text is a plain integer is written as a number, as the proposers give it.
Value define_value(const std::string& text, allocator& a) {
    char* end = nullptr;
    const long long n = text.empty() ? 0 : std::strtoll(text.c_str(), &end, 10);
    if (end && *end == '\0' && std::to_string(n) == text)
        return Value(static_cast<std::int64_t>(n));
    return json_text(text, a);
}

Value kernel_json(const kernel_spec& k, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("source_file", json_text(k.source_name, a), a);
    if (!k.display_name.empty()) v.AddMember("source_name", json_text(k.display_name, a), a);
    v.AddMember("entry", json_text(k.entry, a), a);
    Value options(rapidjson::kArrayType);
    for (const auto& o : k.compile_options) options.PushBack(json_text(o, a), a);
    v.AddMember("compile_options", options, a);
    Value defines(rapidjson::kObjectType);
    for (const auto& [name, text] : k.defines)
        defines.AddMember(json_text(name, a), define_value(text, a), a);
    v.AddMember("defines", defines, a);
    return v;
}

Value dim3_json(const std::array<unsigned, 3>& d, allocator& a) {
    Value v(rapidjson::kArrayType);
    for (unsigned x : d) v.PushBack(x, a);
    return v;
}

Value arg_json(const kernel_arg& arg, const fs::path& folder, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("name", json_text(arg.name, a), a);
    v.AddMember("dtype", json_text(dtype_name(arg.type), a), a);
    if (!arg.is_buffer) {
        std::visit([&](auto x) { v.AddMember("value", x, a); }, arg.scalar);
        return v;
    }
    v.AddMember("count", static_cast<std::uint64_t>(arg.count), a);
    if (arg.input_file) v.AddMember("input_file", relative_path(*arg.input_file, folder, a), a);
    if (arg.generator) v.AddMember("generator", write_generator(*arg.generator, a), a);
    if (arg.input_dump_file)
        v.AddMember("input_dump_file", relative_path(*arg.input_dump_file, folder, a), a);
    if (arg.output_file) v.AddMember("output_file", relative_path(*arg.output_file, folder, a), a);
    if (arg.timing_inputs_mode)
        v.AddMember("timing_inputs",
                    rapidjson::StringRef(k_timing_inputs.name(*arg.timing_inputs_mode)), a);
    return v;
}

Value vendor_call_json(const vendor_call& call, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("op", rapidjson::StringRef(k_vendor_ops.name(call.op)), a);
    v.AddMember("layout", rapidjson::StringRef(k_matrix_layouts.name(call.layout)), a);
    v.AddMember("m", call.m, a);
    v.AddMember("n", call.n, a);
    v.AddMember("k", call.k, a);
    v.AddMember("a", json_text(call.a, a), a);
    v.AddMember("b", json_text(call.b, a), a);
    v.AddMember("c", json_text(call.c, a), a);
    return v;
}

Value case_json(const run_case& c, const fs::path& folder, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("name", json_text(c.name, a), a);
    v.AddMember("measure", c.measure, a);
    if (c.launch_index_base)
        v.AddMember("launch_index_base", static_cast<std::uint64_t>(c.launch_index_base), a);
    if (c.vendor) {
        v.AddMember("vendor_call", vendor_call_json(*c.vendor, a), a);
    } else {
        Value launch(rapidjson::kObjectType);
        launch.AddMember("grid", dim3_json(c.launch.grid, a), a);
        launch.AddMember("block", dim3_json(c.launch.block, a), a);
        launch.AddMember("dynamic_shared_bytes", c.launch.dynamic_shared_bytes, a);
        v.AddMember("launch", launch, a);
    }
    Value args(rapidjson::kArrayType);
    for (const kernel_arg& arg : c.args) args.PushBack(arg_json(arg, folder, a), a);
    v.AddMember("args", args, a);
    return v;
}

// The timing block. mode, timer and the adaptive settings are written only where they differ
// from the harness's defaults (all of the adaptive ones in adaptive mode, so such a request
// says how it stops), so a request of the default kind reads as it did before they existed.
Value timing_json(const timing_config& t, allocator& a) {
    const timing_config defaults;
    Value timing(rapidjson::kObjectType);
    timing.AddMember("warmup", t.warmup, a);
    timing.AddMember("iterations", t.iterations, a);
    timing.AddMember("flush_l2", t.flush_l2, a);
    timing.AddMember("fresh_inputs", t.fresh_inputs, a);
    const bool adaptive = t.mode == timing_mode::adaptive;
    if (adaptive) timing.AddMember("mode", rapidjson::StringRef(k_timing_modes.name(t.mode)), a);
    if (t.timer != defaults.timer)
        timing.AddMember("timer", rapidjson::StringRef(k_timer_choices.name(t.timer)), a);
    if (adaptive || t.min_samples != defaults.min_samples)
        timing.AddMember("min_samples", t.min_samples, a);
    if (adaptive || t.min_time_ms != defaults.min_time_ms)
        timing.AddMember("min_time_ms", t.min_time_ms, a);
    if (adaptive || t.target_rse != defaults.target_rse)
        timing.AddMember("target_rse", t.target_rse, a);
    if (t.checked_launch) timing.AddMember("checked_launch", *t.checked_launch, a);
    return timing;
}

}  // namespace

std::string write_request_json(const request& req) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    doc.AddMember("schema_version", 1, a);
    if (req.vendor) {
        Value vendor(rapidjson::kObjectType);
        vendor.AddMember("library", rapidjson::StringRef(k_vendor_libraries.name(*req.vendor)), a);
        doc.AddMember("vendor", vendor, a);
    } else {
        doc.AddMember("kernel", kernel_json(req.kernel, a), a);
    }
    doc.AddMember("device", req.device, a);
    doc.AddMember("timing", timing_json(req.timing, a), a);
    Value cases(rapidjson::kArrayType);
    for (const run_case& c : req.cases) cases.PushBack(case_json(c, req.folder, a), a);
    doc.AddMember("cases", cases, a);
    return to_pretty_json(doc);
}

}  // namespace cuopt
