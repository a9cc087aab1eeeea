#include "harness/upstream_request.hpp"

#include <map>

#include "common/dtype.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"

namespace cuopt {

namespace {

using rapidjson::Value;

// v0.0 spelled types the numpy/ctypes way; map every spelling it used to ours.
std::string native_dtype(const std::string& type, const std::string& field) {
    static const std::map<std::string, std::string> k_aliases = {
        {"float", "f32"},     {"float32", "f32"}, {"half", "f16"},     {"float16", "f16"},
        {"bfloat16", "bf16"}, {"double", "f64"},  {"float64", "f64"},  {"int", "i32"},
        {"int32", "i32"},     {"uint32", "u32"},  {"unsigned", "u32"}, {"int64", "i64"},
        {"long", "i64"},      {"uint64", "u64"},  {"int8", "i8"},      {"uint8", "u8"},
        {"char", "i8"},       {"byte", "u8"},     {"int16", "i16"},    {"uint16", "u16"},
        {"short", "i16"}};
    if (parse_dtype(type)) return type;
    if (auto it = k_aliases.find(type); it != k_aliases.end()) return it->second;
    throw json_error(
        field + ": unknown type '" + type + "'; expected one of " + dtype_names_list() +
        " or float32, float16, bfloat16, float64, int32, uint32, int64, uint64, int8, uint8");
}

// One v0.0 argument in the native layout; `field` names it in messages.
Value convert_argument(const Value& in, const std::string& field, const std::string& default_name,
                       json_allocator& a) {
    const std::string kind = in["kind"].GetString();
    const std::string name =
        in.HasMember("name") && in["name"].IsString() ? in["name"].GetString() : default_name;
    json_object arg(a);
    arg.add("name", name);
    if (kind == "scalar") {
        if (!in.HasMember("type") || !in.HasMember("value"))
            throw json_error(field + ": a scalar needs 'type' and 'value'");
        arg.add("dtype", native_dtype(in["type"].GetString(), field + ".type"))
            .add("value", in["value"]);
        return arg.take();
    }
    const std::string type =
        in.HasMember("type") ? native_dtype(in["type"].GetString(), field + ".type") : "u8";
    if (!in.HasMember("bytes")) throw json_error(field + ": a buffer needs 'bytes'");
    const std::uint64_t bytes = in["bytes"].GetUint64();
    const std::size_t size = dtype_size(*parse_dtype(type));
    if (bytes % size != 0)
        throw json_error(field + ".bytes: " + std::to_string(bytes) + " is not a multiple of the " +
                         type + " element size " + std::to_string(size));
    const std::string direction = in.HasMember("direction") ? in["direction"].GetString() : "in";
    arg.add("dtype", type).add("count", bytes / size);
    if (direction != "out") {
        if (!in.HasMember("input_file"))
            throw json_error(field + ": a buffer with direction '" + direction +
                             "' needs 'input_file'");
        arg.add("input_file", in["input_file"]);
    }
    if (direction != "in")
        arg.add("output_file", in.HasMember("output_file") ? in["output_file"].GetString()
                                                           : "outputs/" + name + ".bin");
    return arg.take();
}

}  // namespace

bool is_upstream_layout(const Value& doc) {
    return doc.IsObject() && !doc.HasMember("schema_version") && doc.HasMember("arguments");
}

rapidjson::Document convert_upstream_request(const Value& doc, const std::filesystem::path& folder,
                                             const std::string& source_name) {
    validate_json(doc, embedded_schema("request-v0"), source_name);
    rapidjson::Document out(rapidjson::kObjectType);
    auto& a = out.GetAllocator();

    const std::string source = doc["source"].GetString();
    const bool looks_inline =
        source.find('\n') != std::string::npos || source.find("__global__") != std::string::npos;
    std::error_code ec;  // a long inline source is no file name: never an error here
    const bool is_file = !looks_inline || std::filesystem::exists(folder / source, ec);
    json_object kernel(a);
    kernel.add(is_file ? "source_file" : "source", source).add("entry", doc["kernel"].GetString());

    json_object timing(a);
    if (doc.HasMember("warmup")) timing.add("warmup", doc["warmup"].GetInt());
    if (doc.HasMember("iterations")) timing.add("iterations", doc["iterations"].GetInt());

    json_object launch(a);
    launch.add("grid", doc["grid"]).add("block", doc["block"]);
    if (doc.HasMember("shared_memory_bytes")) {
        const Value& bytes = doc["shared_memory_bytes"];
        if (!bytes.IsUint())
            throw json_error(
                source_name +
                ": field shared_memory_bytes: expected a whole number of bytes below 2^32");
        launch.add("dynamic_shared_bytes", bytes.GetUint());
    }

    json_array args(a);
    const auto& in_args = doc["arguments"].GetArray();
    for (rapidjson::SizeType i = 0; i < in_args.Size(); ++i)
        args.push(convert_argument(in_args[i],
                                   source_name + ": field arguments[" + std::to_string(i) + "]",
                                   "arg" + std::to_string(i), a));

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
