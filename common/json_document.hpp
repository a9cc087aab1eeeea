#pragma once
/// JSON in and out for both programs: parsing with line/column errors, checking
/// against the draft-04 schemas in schemas/ (embedded in the binary) with messages
/// that name the field and what was expected, and pretty serialisation. The schema checks are
/// in json_schema.cpp.

#include <rapidjson/document.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cuopt {

/// A problem with the content of a JSON file; what() names the file and field.
class json_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// Parses text the careful way: iteratively, UTF-8 validated, at most 64 levels deep, no
/// duplicate keys. Throws json_error("<source>: malformed JSON at line L, column C: ...",
/// or "<source>: field a.b: duplicate key 'c'").
rapidjson::Document parse_json(const std::string& text, const std::string& source_name);

/// parse_json for a record these tools wrote (history.json, run.json, summary.json,
/// candidates.json): before 2026-12 they wrote U+0000 as it was (a kernel's stderr, a model's
/// rationale), and such a run folder must still report and resume; each U+0000 in a string or
/// key reads as U+FFFD. Everything else is refused as parse_json refuses it.
rapidjson::Document parse_record_json(const std::string& text, const std::string& source_name);

/// The same without throwing: "" on success, else why (the document is then null). For
/// text from outside (model replies, child processes) where a failure is data.
/// own_record: as parse_record_json reads (U+0000 as U+FFFD).
std::string try_parse_json(rapidjson::Document& doc, std::string_view text,
                           bool own_record = false);

/// The text of a schema embedded from schemas/, e.g. "request" -> request.schema.json.
std::string_view embedded_schema(std::string_view name);

/// Validates doc against a schema; throws json_error("<source>: field /a/0/b: <expected>").
void validate_json(const rapidjson::Value& doc, std::string_view schema_text,
                   const std::string& source_name);

/// A string, boolean (1/0) or number as text, exactly: "32", "-1", "0.10000000000000001".
std::string json_scalar_text(const rapidjson::Value& v);

/// Pretty-printed JSON with a trailing newline.
std::string to_pretty_json(const rapidjson::Value& value);

/// One line, no spaces: what goes over the wire and into messages.
std::string to_compact_json(const rapidjson::Value& value);
/// {"KEY":"VALUE"} as compact JSON, VALUE escaped: a one-member reply ({"job": ID}).
std::string one_member_json(std::string_view key, std::string_view value);

/// A JSON string holding a copy of `s`, made valid UTF-8 first and each U+0000 written as U+FFFD:
/// every string the tools write goes through here, so strict readers can always load the result.
rapidjson::Value json_text(std::string_view s, rapidjson::Document::AllocatorType& a);

/// A JSON number, or null when there is none.
inline rapidjson::Value json_number(const std::optional<double>& v) {
    return v ? rapidjson::Value(*v) : rapidjson::Value();
}

/// `s` with every byte that does not begin a valid UTF-8 sequence replaced by U+FFFD.
std::string valid_utf8(std::string_view s);

/// The members every document the tools write opens with: "schema_version": 1 and
/// "tool": {name, version, commit}.
void add_document_header(rapidjson::Document& doc, const char* tool_name);

/// Human form of a JSON pointer for messages: "/cases/0/args" -> "cases[0].args".
std::string pointer_to_field(std::string_view pointer);

}  // namespace cuopt
