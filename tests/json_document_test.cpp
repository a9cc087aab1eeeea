#include "common/json_document.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;

namespace {

const char* k_schema = R"({
  "type": "object", "required": ["name", "sizes"], "additionalProperties": false,
  "properties": {
    "name": { "type": "string" },
    "kind": { "type": "string", "enum": ["a", "b"] },
    "sizes": { "type": "array", "minItems": 1, "items": { "type": "integer", "minimum": 1 } }
  } })";

std::string failure(const std::string& json) {
    try {
        validate_json(parse_json(json, "f.json"), k_schema, "f.json");
    } catch (const json_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("malformed JSON is reported with the file - line and column") {
    CHECK_THROWS_WITH(parse_json("{\n  \"a\": 1,\n  oops\n}", "req.json"),
                      Catch::StartsWith("req.json: malformed JSON at line 3, column 3"));
}

TEST_CASE("schema violations name the field and what was expected") {
    CHECK(failure(R"({"name": "x", "sizes": [1]})").empty());
    CHECK(failure(R"({"sizes": [1]})") ==
          "f.json: field (top level): missing required field 'name'");
    CHECK(failure(R"({"name": 3, "sizes": [1]})") ==
          "f.json: field name: expected string, got integer");
    CHECK_THAT(
        failure(R"({"name": "x", "kind": "c", "sizes": [1]})"),
        Catch::Contains("field kind: expected one of [\"a\",\"b\"]") && Catch::Contains("\"c\""));
    CHECK_THAT(failure(R"({"name": "x", "sizes": []})"),
               Catch::Contains("field sizes: expected at least this many items: 1"));
    CHECK_THAT(failure(R"({"name": "x", "sizes": [1, 0]})"),
               Catch::Contains("field sizes[1]: expected a number >= 1"));
    CHECK_THAT(failure(R"({"name": "x", "sizes": [1], "extra": true})"),
               Catch::Contains("field extra: unknown field; expected one of: name, kind, sizes"));
}

TEST_CASE("a JSON pointer reads as a field path") {
    CHECK(pointer_to_field("/cases/0/args/2/count") == "cases[0].args[2].count");
    CHECK(pointer_to_field("/kernel") == "kernel");
}

TEST_CASE("the embedded request and response schemas are valid JSON") {
    for (const char* name :
         {"request", "request-v0", "response", "manifest", "history", "summary", "run"}) {
        rapidjson::Document d;
        const auto text = embedded_schema(name);
        d.Parse(text.data(), text.size());
        CHECK_FALSE(d.HasParseError());
    }
}

TEST_CASE("every string the tools write is valid UTF-8, bad bytes replaced and good ones kept") {
    CHECK(valid_utf8("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");
    CHECK(valid_utf8("a\xff"
                     "b") ==
          "a\xef\xbf\xbd"
          "b");
    CHECK(valid_utf8("\xed\xa0\x80") == "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
    CHECK(valid_utf8("\xc0\xaf") == "\xef\xbf\xbd\xef\xbf\xbd");                  // overlong '/'
    CHECK(valid_utf8("cut \xf0\x9f") == "cut \xef\xbf\xbd\xef\xbf\xbd");
    rapidjson::Document d(rapidjson::kObjectType);
    d.AddMember("label", json_text("k\xfe.cu", d.GetAllocator()), d.GetAllocator());
    CHECK_NOTHROW(parse_json(to_pretty_json(d), "written"));
}
