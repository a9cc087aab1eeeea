#include "json_document.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

#include "common/message_text.hpp"
#include "common/tool_version.hpp"

namespace cuopt {

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

std::string json_scalar_text(const rapidjson::Value& v) {
    if (v.IsString()) return v.GetString();
    if (v.IsBool()) return v.GetBool() ? "1" : "0";
    if (v.IsInt64()) return std::to_string(v.GetInt64());
    if (v.IsUint64()) return std::to_string(v.GetUint64());
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v.GetDouble());
    return buf;
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

std::string one_member_json(std::string_view key, std::string_view value) {
    rapidjson::Document d(rapidjson::kObjectType);
    d.AddMember(json_text(key, d.GetAllocator()), json_text(value, d.GetAllocator()),
                d.GetAllocator());
    return to_compact_json(d);
}

}  // namespace cuopt
