#include "json_document.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/pointer.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <vector>

#include "common/message_text.hpp"
#include "common/tool_version.hpp"

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

namespace {

constexpr int k_max_json_depth = 64;

std::string child_field(const std::string& parent, std::string_view key) {
    // A key is quoted in a path only when it is long or odd, so a 1 MiB key does not make a
    // 1 MiB message.
    const bool plain = key.size() <= k_quote_limit && text_problem(key).empty() &&
                       key.find_first_of("\n\r\t") == std::string_view::npos;
    const std::string shown = plain ? std::string(key) : quote_value(key);
    return parent.empty() ? shown : parent + "." + shown;
}

// A string (a value or a key) no input may hold: U+0000 (C strings stop there, so
// "perf-\u0000x" would become "perf-" in a request, an output file's name, a summary) or an
// escaped lone surrogate ("\udfff", which RapidJSON writes as bytes that are no UTF-8).
std::string string_problem(const rapidjson::Value& v, const std::string& where, const char* what) {
    const std::string_view text(v.GetString(), v.GetStringLength());
    const std::string why = text_problem(text);
    if (why.empty()) return "";
    return "field " + where + ": " + what + " " + quote_value(text) + " " + why +
           "; expected text without U+0000 and with no lone surrogate (\\ud800 to \\udfff)";
}

// Nesting, duplicate keys and the text of every string, walked without recursion: a hostile
// document can neither overflow the stack here nor later (schema checks and messages recurse
// over it).
std::string check_shape(const rapidjson::Value& root) {
    struct node {
        const rapidjson::Value* v;
        int depth;
        std::string field;
    };
    std::vector<node> stack{{&root, 1, ""}};
    while (!stack.empty()) {
        node n = std::move(stack.back());
        stack.pop_back();
        const std::string where = n.field.empty() ? "(top level)" : n.field;
        if (n.v->IsString()) {
            if (std::string why = string_problem(*n.v, where, "the string"); !why.empty())
                return why;
            continue;
        }
        if (n.depth > k_max_json_depth)
            return "field " + where + ": nested more than " + std::to_string(k_max_json_depth) +
                   " levels deep";
        if (n.v->IsArray()) {
            for (rapidjson::SizeType i = 0; i < n.v->Size(); ++i)
                if (!(*n.v)[i].IsNumber() && !(*n.v)[i].IsBool() && !(*n.v)[i].IsNull())
                    stack.push_back(
                        {&(*n.v)[i], n.depth + 1, n.field + "[" + std::to_string(i) + "]"});
        } else if (n.v->IsObject()) {
            std::set<std::string_view> keys;
            for (const auto& m : n.v->GetObject()) {
                const std::string_view key(m.name.GetString(), m.name.GetStringLength());
                if (std::string why = string_problem(m.name, where, "the key"); !why.empty())
                    return why;
                if (!keys.insert(key).second)
                    return "field " + where + ": duplicate key " + quote_value(key);
                if (!m.value.IsNumber() && !m.value.IsBool() && !m.value.IsNull())
                    stack.push_back({&m.value, n.depth + 1, child_field(n.field, key)});
            }
        }
    }
    return "";
}

// Numbers reach the document through this handler as their text, and each becomes a value here:
// an integer as RapidJSON would store it, anything else through strtod, which is correctly rounded,
// so a double reads back exactly as it was written (history.json is read back by --resume and must
// write again as it was). RapidJSON 1.1.0's own full-precision path reads past its table of powers
// of ten and calls clz(0) on some inputs (found by the fuzzers under UBSan), so it is not used.
class number_reader {
  public:
    explicit number_reader(rapidjson::Document& doc) : m_doc(doc) {}
    bool Null() { return m_doc.Null(); }
    bool Bool(bool b) { return m_doc.Bool(b); }
    bool Int(int i) { return m_doc.Int(i); }
    bool Uint(unsigned u) { return m_doc.Uint(u); }
    bool Int64(std::int64_t i) { return m_doc.Int64(i); }
    bool Uint64(std::uint64_t u) { return m_doc.Uint64(u); }
    bool Double(double d) { return m_doc.Double(d); }
    bool String(const char* s, rapidjson::SizeType n, bool copy) {
        return m_doc.String(s, n, copy);
    }
    bool StartObject() { return m_doc.StartObject(); }
    bool Key(const char* s, rapidjson::SizeType n, bool copy) { return m_doc.Key(s, n, copy); }
    bool EndObject(rapidjson::SizeType n) { return m_doc.EndObject(n); }
    bool StartArray() { return m_doc.StartArray(); }
    bool EndArray(rapidjson::SizeType n) { return m_doc.EndArray(n); }
    bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
        const std::string text(s, n);  // the reader checked the grammar
        if (text.find_first_of(".eE") == std::string::npos) {
            errno = 0;
            char* end = nullptr;
            if (text[0] == '-') {
                const long long v = std::strtoll(text.c_str(), &end, 10);
                if (errno == 0) return m_doc.Int64(v);
            } else {
                const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
                if (errno == 0) return m_doc.Uint64(v);
            }
        }
        errno = 0;
        const double d = std::strtod(text.c_str(), nullptr);
        if (std::isinf(d)) {
            m_too_big = true;
            return false;
        }
        return m_doc.Double(d);
    }
    bool too_big() const { return m_too_big; }

  private:
    rapidjson::Document& m_doc;
    bool m_too_big = false;
};

// Parses text into doc with number_reader; returns the parse result (doc holds the value on
// success).
rapidjson::ParseResult parse_numbers_exactly(rapidjson::Document& doc, std::string_view text) {
    constexpr unsigned k_flags = rapidjson::kParseIterativeFlag |
                                 rapidjson::kParseValidateEncodingFlag |
                                 rapidjson::kParseNumbersAsStringsFlag;
    rapidjson::ParseResult result;
    bool too_big = false;
    auto generate = [&](rapidjson::Document& target) {
        number_reader handler(target);
        rapidjson::MemoryStream bytes(text.data(), text.size());
        rapidjson::Reader reader;
        result = reader.Parse<k_flags>(bytes, handler);
        too_big = handler.too_big();
        return !result.IsError();
    };
    doc.SetNull();
    doc.Populate(generate);
    if (too_big) result.Set(rapidjson::kParseErrorNumberTooBig, result.Offset());
    return result;
}

}  // namespace

namespace {

// "line L, column C" of a byte offset, for messages.
std::string line_and_column(std::string_view text, std::size_t offset) {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

}  // namespace

namespace {

// Each U+0000 in `v` (a string or a key) as U+FFFD.
void replace_nul(rapidjson::Value& v, rapidjson::Document::AllocatorType& a) {
    const std::string_view text(v.GetString(), v.GetStringLength());
    if (text.find('\0') == std::string_view::npos) return;
    v = json_text(text, a);  // writes U+0000 as U+FFFD
}

// Every string and key of `root` through replace_nul, without recursion.
void replace_nuls(rapidjson::Document& root) {
    std::vector<rapidjson::Value*> stack{&root};
    while (!stack.empty()) {
        rapidjson::Value* v = stack.back();
        stack.pop_back();
        if (v->IsString()) {
            replace_nul(*v, root.GetAllocator());
        } else if (v->IsArray()) {
            for (auto& e : v->GetArray()) stack.push_back(&e);
        } else if (v->IsObject()) {
            for (auto& m : v->GetObject()) {
                replace_nul(m.name, root.GetAllocator());
                stack.push_back(&m.value);
            }
        }
    }
}

}  // namespace

std::string try_parse_json(rapidjson::Document& doc, std::string_view text, bool own_record) {
    doc.SetNull();
    // RapidJSON reads a NUL byte as the end of the text ("The document is empty." for one at
    // the start); JSON text never holds one, even inside a string, so say what it is.
    if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos)
        return "not JSON text: a NUL byte (0x00) at byte " + std::to_string(nul) + " (" +
               line_and_column(text, nul) + ")";
    const rapidjson::ParseResult parsed = parse_numbers_exactly(doc, text);
    if (parsed.IsError()) {
        const std::string why = "malformed JSON at " + line_and_column(text, parsed.Offset()) +
                                ": " + rapidjson::GetParseError_En(parsed.Code());
        doc.SetNull();
        return why;
    }
    if (own_record) replace_nuls(doc);
    std::string why = check_shape(doc);
    if (!why.empty()) doc.SetNull();
    return why;
}

rapidjson::Document parse_record_json(const std::string& text, const std::string& source_name) {
    rapidjson::Document doc;
    if (const std::string why = try_parse_json(doc, text, true); !why.empty())
        throw json_error(source_name + ": " + why);
    return doc;
}

rapidjson::Document parse_json(const std::string& text, const std::string& source_name) {
    rapidjson::Document doc;
    if (const std::string why = try_parse_json(doc, text); !why.empty())
        throw json_error(source_name + ": " + why);
    return doc;
}

std::string_view embedded_schema(std::string_view name) {
#define CUOPT_FIND_SCHEMA(schema_name, symbol) \
    if (name == schema_name) return {reinterpret_cast<const char*>(symbol), symbol##_size};
    CUOPT_EMBEDDED_SCHEMAS(CUOPT_FIND_SCHEMA)
#undef CUOPT_FIND_SCHEMA
    throw std::invalid_argument("no embedded schema named " + std::string(name));
}

std::string json_scalar_text(const rapidjson::Value& v) {
    if (v.IsString()) return v.GetString();
    if (v.IsBool()) return v.GetBool() ? "1" : "0";
    if (v.IsInt64()) return std::to_string(v.GetInt64());
    if (v.IsUint64()) return std::to_string(v.GetUint64());
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v.GetDouble());
    return buf;
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

std::string to_pretty_json(const rapidjson::Value& value) {
    rapidjson::StringBuffer buf;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
    w.SetIndent(' ', 2);
    w.SetFormatOptions(rapidjson::kFormatSingleLineArray);
    value.Accept(w);
    return std::string(buf.GetString()) + "\n";
}

std::string to_compact_json(const rapidjson::Value& value) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    value.Accept(w);
    return std::string(buf.GetString(), buf.GetSize());
}

std::string valid_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_sequence(s, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

rapidjson::Value json_text(std::string_view s, rapidjson::Document::AllocatorType& a) {
    std::string clean = valid_utf8(s);
    // No reader takes U+0000 (try_parse_json refuses it), so none is written: an echoed path
    // that held one shows U+FFFD there instead.
    for (std::size_t at = clean.find('\0'); at != std::string::npos; at = clean.find('\0', at))
        clean.replace(at, 1, "\xEF\xBF\xBD");
    return rapidjson::Value(clean.data(), static_cast<rapidjson::SizeType>(clean.size()), a);
}

void add_document_header(rapidjson::Document& doc, const char* tool_name) {
    auto& a = doc.GetAllocator();
    doc.AddMember("schema_version", 1, a);
    rapidjson::Value tool(rapidjson::kObjectType);
    tool.AddMember("name", rapidjson::StringRef(tool_name), a);
    tool.AddMember("version", rapidjson::StringRef(tool_version()), a);
    tool.AddMember("commit", rapidjson::StringRef(tool_commit()), a);
    doc.AddMember("tool", tool, a);
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

std::string one_member_json(std::string_view key, std::string_view value) {
    rapidjson::Document d(rapidjson::kObjectType);
    d.AddMember(json_text(key, d.GetAllocator()), json_text(value, d.GetAllocator()),
                d.GetAllocator());
    return to_compact_json(d);
}

}  // namespace cuopt
