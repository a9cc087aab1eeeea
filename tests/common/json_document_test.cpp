#include "common/json_document.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>

#include "common/message_text.hpp"

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

TEST_CASE("no input string may hold U+0000 or a lone surrogate, in a value or a key") {
    rapidjson::Document doc;
    // A C string stops at the NUL: "perf-\u0000x" became "perf-" in a request and a file name.
    CHECK(try_parse_json(doc, R"({"cases": [{"name": "perf-\u0000x"}]})") ==
          "field cases[0].name: the string 'perf-\\x00x' holds U+0000 (NUL) at byte 5; expected "
          "text without U+0000 and with no lone surrogate (\\ud800 to \\udfff)");
    CHECK(doc.IsNull());
    CHECK_THAT(try_parse_json(doc, R"({"a": {"out\u0000.evil": 1}})"),
               Catch::StartsWith("field a: the key 'out\\x00.evil' holds U+0000 (NUL) at byte 3"));
    // RapidJSON writes an escaped lone low surrogate as the bytes ED BF BF, which are no UTF-8.
    CHECK_THAT(try_parse_json(doc, R"(["ok", "perf-\udfff"])"),
               Catch::StartsWith("field [1]: the string 'perf-\\xED\\xBF\\xBF' is not valid "
                                 "UTF-8 at byte 5"));
    CHECK_THAT(try_parse_json(doc, R"("\ud800x")"), Catch::Contains("surrogate"));
    CHECK_THAT(try_parse_json(doc, "[[\"\\u0000\"]]"), Catch::StartsWith("field [0][0]:"));
    // A pair is a character: kept.
    REQUIRE(try_parse_json(doc, R"({"name": "\ud83d\ude00", "\u00e9": "\u0001"})").empty());
    CHECK(std::string(doc["name"].GetString()) == "\xF0\x9F\x98\x80");
    // A NUL byte in the text itself is said as one, not "The document is empty".
    CHECK(try_parse_json(doc, std::string("\0{}", 3)) ==
          "not JSON text: a NUL byte (0x00) at byte 0 (line 1, column 1)");
    CHECK(try_parse_json(doc, std::string("{\n \"a\": \0}", 10)) ==
          "not JSON text: a NUL byte (0x00) at byte 8 (line 2, column 7)");
}

TEST_CASE("a record an older version wrote with U+0000 in it still reads, U+FFFD for it") {
    // Before 2026-12 json_text kept U+0000 (a kernel's stderr tail, a rationale); report and
    // --resume read those run folders still.
    const rapidjson::Document d =
        parse_record_json(R"({"tail": "a\u0000b", "k\u0000": [" \u0000"]})", "history.json");
    CHECK(std::string(d["tail"].GetString()) ==
          "a\xEF\xBF\xBD"
          "b");
    CHECK(std::string(d["k\xEF\xBF\xBD"][0].GetString()) == " \xEF\xBF\xBD");
    // Nothing else is let through: a lone surrogate, a NUL byte, a bad key.
    CHECK_THROWS_WITH(parse_record_json(R"({"a": "\udfff"})", "h.json"),
                      Catch::Contains("not valid UTF-8"));
    CHECK_THROWS_AS(parse_json(R"({"tail": "a\u0000b"})", "h.json"), json_error);
}

TEST_CASE("a message quotes at most 200 characters of a value, then its size") {
    CHECK(quote_value("perf") == "'perf'");
    CHECK(quote_value("a\nb\tc\x01\\") == "'a\\nb\\tc\\x01\\\\'");
    CHECK(quote_value("caf\xC3\xA9 \xFF") == "'caf\xC3\xA9 \\xFF'");
    const std::string mib(1 << 20, 'k');
    CHECK(quote_value(mib) == "'" + std::string(200, 'k') + "'… (1048576 bytes)");
    // Cut at a character's boundary, never inside one.
    std::string accents;
    for (int i = 0; i < 300; ++i) accents += "\xC3\xA9";
    CHECK(quote_value(accents).rfind("'… (600 bytes)") == 1 + 400);
    CHECK(shortened(mib, 10) == "kkkkkkkkkk… (1048576 bytes)");
    CHECK(shortened("short") == "short");
    // The schema's messages and duplicate keys quote the same way.
    const std::string big_enum = R"({"name": "x", "kind": ")" + mib + R"(", "sizes": [1]})";
    const std::string said = failure(big_enum);
    CHECK_THAT(said, Catch::Contains("field kind: expected one of"));
    CHECK(said.size() < 400);
    rapidjson::Document doc;
    const std::string twice = try_parse_json(doc, "{\"" + mib + "\": 1, \"" + mib + "\": 2}");
    CHECK_THAT(twice, Catch::Contains("duplicate key 'kkkk") && Catch::EndsWith("(1048576 bytes)"));
    CHECK(twice.size() < 400);
    // A long key in a path is shortened too.
    const std::string deep = try_parse_json(doc, "{\"" + mib + "\": [\"\\u0000\"]}");
    CHECK(deep.size() < 700);
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
    // Nor a NUL, which no reader takes.
    d.AddMember("path", json_text(std::string("a\0b", 3), d.GetAllocator()), d.GetAllocator());
    CHECK(parse_json(to_pretty_json(d), "written")["path"].GetString() ==
          std::string("a\xEF\xBF\xBD"
                      "b"));
}

TEST_CASE(
    "numbers read as strtod reads them, integers keep RapidJSON's types, overflow is an error") {
    for (const char* text :
         {"4.9406564584124654e-324", "2.2250738585072011e-308", "2.2250738585072014e-308",
          "1.00000000000000011102230246251565404236316680908203125",
          "123456789012345678901234567890", "0.1e-330", "1e-400", "-1e-400",
          "1.7976931348623157e308", "9007199254740993", "18446744073709551616",
          "-9223372036854775809", "0.30000000000000004", "1e-9999999999",
          "0.000000000000000000000000000000000000000000001e-300", "-0.0", "-0e0"}) {
        rapidjson::Document doc;
        const std::string json = std::string("[") + text + "]";
        INFO(text);
        REQUIRE(try_parse_json(doc, json).empty());
        const double want = std::strtod(text, nullptr);
        const double got = doc[0].GetDouble();
        CHECK(std::memcmp(&want, &got, sizeof want) == 0);
    }
    rapidjson::Document doc;
    REQUIRE(try_parse_json(doc, "[4294967295, -1, -2147483649, 18446744073709551615, -0, 2.0]")
                .empty());
    CHECK(doc[0].IsUint());
    CHECK_FALSE(doc[0].IsInt());
    CHECK(doc[1].IsInt());
    CHECK(doc[2].IsInt64());
    CHECK_FALSE(doc[2].IsInt());
    CHECK(doc[3].IsUint64());
    CHECK(doc[3].GetUint64() == 18446744073709551615ull);
    CHECK(doc[4].IsInt());
    CHECK(doc[5].IsDouble());
    CHECK(try_parse_json(doc, "{\"a\": 1.7976931348623159e308}").find("too big") !=
          std::string::npos);
    CHECK(try_parse_json(doc, "[1e309]").find("too big") != std::string::npos);
    CHECK(doc.IsNull());
}

TEST_CASE("every double written reads back with the same bits") {
    std::mt19937_64 random(20261201);
    rapidjson::Document doc;
    for (int i = 0; i < 20000; ++i) {
        std::uint64_t bits = random();
        if (i % 4 == 1) bits &= 0x800fffffffffffffull;  // subnormals
        double value = 0;
        std::memcpy(&value, &bits, sizeof value);
        if (!std::isfinite(value)) continue;
        rapidjson::Document out;
        out.SetArray().PushBack(value, out.GetAllocator());
        const std::string text = to_compact_json(out);
        INFO(text);
        REQUIRE(try_parse_json(doc, text).empty());
        const double back = doc[0].GetDouble();
        REQUIRE(std::memcmp(&back, &value, sizeof value) == 0);
    }
}
