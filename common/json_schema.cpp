// Checking a document against the draft-04 schemas in schemas/ (embedded in the binary), with
// messages that name the field and what was expected.
#include <rapidjson/pointer.h>
#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>

#include <map>

#include "common/json_document.hpp"
#include "common/message_text.hpp"

// The schemas in schemas/, embedded at build time by cmake/embed.cmake.
// clang-format off (an X-macro list: one entry per line)
#define CUOPT_EMBEDDED_SCHEMAS(X)                   \
    X("request", request_schema_json)               \
    X("request-v0", request_v0_schema_json)         \
    X("response", response_schema_json)             \
    X("manifest", manifest_schema_json)             \
    X("history", history_schema_json)               \
    X("summary", summary_schema_json)               \
    X("best", best_schema_json)                     \
    X("run", run_schema_json)                       \
    X("candidate", candidate_schema_json)           \
    X("candidate-file", candidate_file_schema_json) \
    X("gate", gate_schema_json)                     \
    X("gate-baseline", gate_baseline_schema_json)   \
    X("candidates", candidates_schema_json)         \
    X("suite", suite_schema_json)
// clang-format on
#define CUOPT_DECLARE_SCHEMA(name, symbol) \
    extern const unsigned char symbol[];   \
    extern const std::size_t symbol##_size;
CUOPT_EMBEDDED_SCHEMAS(CUOPT_DECLARE_SCHEMA)
#undef CUOPT_DECLARE_SCHEMA

namespace cuopt {

namespace {

std::string type_name_of(const rapidjson::Value& v) {
    switch (v.GetType()) {
        case rapidjson::kNullType:
            return "null";
        case rapidjson::kFalseType:
        case rapidjson::kTrueType:
            return "boolean";
        case rapidjson::kObjectType:
            return "object";
        case rapidjson::kArrayType:
            return "array";
        case rapidjson::kStringType:
            return "string";
        case rapidjson::kNumberType:
            return v.IsInt64() || v.IsUint64() ? "integer" : "number";
    }
    return "unknown";
}

// A value as it appears in a message: compact JSON, cut as quote_value() cuts (a 1 MiB string
// shows its first 200 characters and its size).
std::string compact(const rapidjson::Value& v) {
    return shortened(to_compact_json(v));
}

// Turns the failing keyword into "what was expected", reading the schema node and
// the offending value; RapidJSON 1.1 reports only the keyword and two pointers.
std::string describe(const std::string& keyword, const rapidjson::Value* schema,
                     const rapidjson::Value* value) {
    if (!schema) return "violates " + quote_value(keyword);
    const auto member = [&](const char* name) -> const rapidjson::Value* {
        auto it = schema->FindMember(name);
        return it == schema->MemberEnd() ? nullptr : &it->value;
    };
    std::string got = value ? " (got " + compact(*value) + ")" : "";
    if (keyword == "required" && value && value->IsObject()) {
        if (const auto* req = member("required"))
            for (const auto& r : req->GetArray())
                if (!value->HasMember(r.GetString()))
                    return std::string("missing required field '") + r.GetString() + "'";
    }
    if (keyword == "additionalProperties") {
        // RapidJSON points at the unknown member itself; name what is allowed instead.
        std::string allowed;
        if (const auto* props = member("properties"); props && props->IsObject())
            for (const auto& m : props->GetObject())
                allowed += std::string(allowed.empty() ? "" : ", ") + m.name.GetString();
        return "unknown field; expected one of: " + allowed;
    }
    if (keyword == "type") {
        if (const auto* t = member("type"))
            return "expected " + (t->IsString() ? std::string(t->GetString()) : compact(*t)) +
                   ", got " + (value ? type_name_of(*value) : "nothing");
    }
    if (keyword == "enum") {
        if (const auto* e = member("enum")) return "expected one of " + compact(*e) + got;
    }
    static const std::map<std::string, std::string> k_bounds = {
        {"minimum", "a number >= "},
        {"maximum", "a number <= "},
        {"minItems", "at least this many items: "},
        {"maxItems", "at most this many items: "},
        {"minLength", "a string of length >= "},
        {"maxLength", "a string of length <= "},
        {"maxProperties", "at most this many fields: "},
        {"pattern", "a string matching "},
        {"minProperties", "at least this many fields: "}};
    if (auto it = k_bounds.find(keyword); it != k_bounds.end()) {
        if (const auto* b = member(keyword.c_str()))
            return "expected " + it->second + compact(*b) + got;
    }
    std::string text = "does not match the schema (" + quote_value(keyword) + ")" + got;
    if (const auto* d = member("description"); d && d->IsString())
        text += "; expected " + std::string(d->GetString());
    return text;
}

}  // namespace

std::string_view embedded_schema(std::string_view name) {
#define CUOPT_FIND_SCHEMA(schema_name, symbol) \
    if (name == schema_name) return {reinterpret_cast<const char*>(symbol), symbol##_size};
    CUOPT_EMBEDDED_SCHEMAS(CUOPT_FIND_SCHEMA)
#undef CUOPT_FIND_SCHEMA
    throw std::invalid_argument("no embedded schema named " + std::string(name));
}

void validate_json(const rapidjson::Value& doc, std::string_view schema_text,
                   const std::string& source_name) {
    rapidjson::Document schema_doc;
    schema_doc.Parse(schema_text.data(), schema_text.size());
    if (schema_doc.HasParseError()) throw std::logic_error("embedded schema is not valid JSON");
    rapidjson::SchemaDocument schema(schema_doc);
    rapidjson::SchemaValidator validator(schema);
    if (doc.Accept(validator)) return;

    rapidjson::StringBuffer doc_ptr, schema_ptr;
    // The plain pointer (not a URI fragment): a key's bytes are not percent-encoded three times
    // over in the message.
    validator.GetInvalidDocumentPointer().Stringify(doc_ptr);
    validator.GetInvalidSchemaPointer().Stringify(schema_ptr);
    std::string doc_pointer = doc_ptr.GetString();
    if (!doc_pointer.empty() && doc_pointer[0] == '#') doc_pointer.erase(0, 1);
    const std::string keyword = validator.GetInvalidSchemaKeyword();
    const rapidjson::Value* schema_node =
        rapidjson::Pointer(schema_ptr.GetString()).Get(schema_doc);
    const rapidjson::Value* value = rapidjson::Pointer(doc_pointer.c_str()).Get(doc);
    const std::string field =
        doc_pointer.empty() ? "(top level)" : shortened(pointer_to_field(doc_pointer));
    throw json_error(source_name + ": field " + field + ": " +
                     describe(keyword, schema_node, value));
}

std::string pointer_to_field(std::string_view pointer) {
    std::string out;
    std::size_t i = 0;
    while (i < pointer.size()) {
        if (pointer[i] != '/') break;
        std::size_t next = pointer.find('/', i + 1);
        std::string token(pointer.substr(
            i + 1, next == std::string_view::npos ? std::string_view::npos : next - i - 1));
        const bool numeric =
            !token.empty() && token.find_first_not_of("0123456789") == std::string::npos;
        if (numeric)
            out += "[" + token + "]";
        else
            out += (out.empty() ? "" : ".") + token;
        if (next == std::string_view::npos) break;
        i = next;
    }
    return out;
}

}  // namespace cuopt
