#include "harness/upstream_request.hpp"

#include <map>

#include "common/dtype.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"

namespace cuopt {

namespace {

using rapidjson::Value;

// "<file>: field arguments[1].bytes: <what>": the checks the v0.0 schema cannot make.
[[noreturn]] void fail(const json_field& f, const std::string& what) {
    throw json_error(f.source() + ": field " + f.path() + ": " + what);
}

// v0.0 spelled types the numpy/ctypes way; map every spelling it used to ours (and the fp8
// ones as torch and ml_dtypes spell them).
std::string native_dtype(const json_field& f) {
    const std::string type = f.text();
    static const std::map<std::string, std::string> k_aliases = {
        {"float", "f32"},         {"float32", "f32"},
        {"half", "f16"},          {"float16", "f16"},
        {"bfloat16", "bf16"},     {"double", "f64"},
        {"float64", "f64"},       {"int", "i32"},
        {"int32", "i32"},         {"uint32", "u32"},
        {"unsigned", "u32"},      {"int64", "i64"},
        {"long", "i64"},          {"uint64", "u64"},
        {"int8", "i8"},           {"uint8", "u8"},
        {"char", "i8"},           {"byte", "u8"},
        {"int16", "i16"},         {"uint16", "u16"},
        {"short", "i16"},         {"float8_e4m3fn", "f8e4m3"},
        {"float8_e5m2", "f8e5m2"}};
    if (parse_dtype(type)) return type;
    if (auto it = k_aliases.find(type); it != k_aliases.end()) return it->second;
    fail(f,
         "unknown type " + quote_value(type) + "; expected one of " + dtype_names_list() +
             " or float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, float64, int32, uint32, "
             "int64, uint64, int8, uint8");
}

// One v0.0 argument in the native layout.
Value convert_argument(const json_field& in, const std::string& default_name, json_allocator& a) {
    const std::string name = in.optional_text("name").value_or(default_name);
    json_object arg(a);
    arg.add("name", name);
    if (in.text("kind") == "scalar") {
        if (!in.has("type") || !in.has("value")) fail(in, "a scalar needs 'type' and 'value'");
        arg.add("dtype", native_dtype(in["type"])).add("value", in["value"].value());
        return arg.take();
    }
    const std::string type = in.has("type") ? native_dtype(in["type"]) : "u8";
    if (!in.has("bytes")) fail(in, "a buffer needs 'bytes'");
    const auto bytes = in.integer<std::uint64_t>("bytes");
    const std::size_t size = dtype_size(*parse_dtype(type));
    if (bytes % size != 0)
        fail(in["bytes"], std::to_string(bytes) + " is not a multiple of the " + type +
                              " element size " + std::to_string(size));
    const std::string direction = in.optional_text("direction").value_or("in");
    arg.add("dtype", type).add("count", bytes / size);
    if (direction != "out") {
        if (!in.has("input_file"))
            fail(in, "a buffer with direction '" + direction + "' needs 'input_file'");
        arg.add("input_file", in.text("input_file"));
    }
    if (direction != "in")
        arg.add("output_file",
                in.optional_text("output_file").value_or("outputs/" + name + ".bin"));
    return arg.take();
}

}  // namespace

bool is_upstream_layout(const Value& doc) {
    // By the members present (null too), before either layout's schema is checked.
    return doc.IsObject() && !doc.HasMember("schema_version") && doc.HasMember("arguments");
}

rapidjson::Document convert_upstream_request(const Value& doc, const std::filesystem::path& folder,
                                             const std::string& source_name) {
    validate_json(doc, embedded_schema("request-v0"), source_name);
    const json_field in(doc, source_name);
    rapidjson::Document out(rapidjson::kObjectType);
    auto& a = out.GetAllocator();

    const std::string source = in.text("source");
    const bool looks_inline =
        source.find('\n') != std::string::npos || source.find("__global__") != std::string::npos;
    std::error_code ec;  // a long inline source is no file name: never an error here
    const bool is_file = !looks_inline || std::filesystem::exists(folder / source, ec);
    json_object kernel(a);
    kernel.add(is_file ? "source_file" : "source", source).add("entry", in.text("kernel"));

    json_object timing(a);
    for (const char* key : {"warmup", "iterations"})
        if (const auto n = in.optional_integer<int>(key)) timing.add(key, *n);

    json_object launch(a);
    launch.add("grid", in["grid"].value()).add("block", in["block"].value());
    if (const auto bytes = in.optional_integer<unsigned>("shared_memory_bytes"))
        launch.add("dynamic_shared_bytes", *bytes);

    json_array args(a);
    const json_field in_args = in["arguments"];
    for (std::size_t i = 0; i < in_args.size(); ++i)
        args.push(convert_argument(in_args[i], "arg" + std::to_string(i), a));

    json_object one_case(a);
    one_case.add("name", "main").add("launch", std::move(launch)).add("args", std::move(args));
    json_object(out)
        .add("schema_version", 1)
        .add("kernel", std::move(kernel))
        .add("timing", std::move(timing))
        .add("cases", json_array(a).push(std::move(one_case)));
    return out;
}

}  // namespace cuopt
