#include "common/json_fields.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;

namespace {

enum class colour { red, green, blue };
constexpr auto k_colours = make_name_table<colour>(
    {{colour::red, "red"}, {colour::green, "green"}, {colour::blue, "blue"}});

const char* k_text = R"({
  "name": "run-1", "count": 3, "ratio": 0.5, "big": 9223372036854775808, "ok": true,
  "none": null, "colour": "green", "tags": ["a", "b"], "sizes": [1, 2.5],
  "attempts": [{"cases": [{"status": "passed"}, {"status": "purple", "n": -3}]}]
})";

// The message the reader threw for `read`, or "" when it threw nothing.
template <class F>
std::string failure(F read) {
    const rapidjson::Document doc = parse_json(k_text, "x.json");
    const json_field root(doc, "run/history.json");
    try {
        read(root);
    } catch (const json_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("the field reader reads each kind") {
    const rapidjson::Document doc = parse_json(k_text, "x.json");
    const json_field r(doc, "f.json");
    CHECK(r.text("name") == "run-1");
    CHECK(r.integer("count") == 3);
    CHECK(r.integer<int>("count") == 3);
    CHECK(r["count"].integer_in(0, 3) == 3);
    CHECK(r.number("ratio") == 0.5);
    CHECK(r.number("count") == 3.0);
    CHECK(r.boolean("ok"));
    CHECK(r.word("colour", k_colours) == colour::green);
    CHECK(r.texts("tags") == std::vector<std::string>{"a", "b"});
    CHECK(r.numbers("sizes") == std::vector<double>{1, 2.5});
    CHECK(r["attempts"][0]["cases"][1].text("status") == "purple");
    CHECK(r["attempts"].size() == 1);
    CHECK(r["attempts"][0]["cases"].items().size() == 2);
    CHECK(r["attempts"][0]["cases"].items()[1].path() == "attempts[0].cases[1]");
    const auto members = r["attempts"][0]["cases"][1].members();
    REQUIRE(members.size() == 2);
    CHECK(members[1].first == "n");
    CHECK(members[1].second.path() == "attempts[0].cases[1].n");
}

TEST_CASE("optional members read absent and null as nothing") {
    const rapidjson::Document doc = parse_json(k_text, "x.json");
    const json_field r(doc, "f.json");
    CHECK(!r.find("none"));
    CHECK(!r.find("missing"));
    CHECK(r.has("name"));
    CHECK(!r.has("none"));
    CHECK(r.optional_text("name") == "run-1");
    CHECK(!r.optional_text("none"));
    CHECK(!r.optional_integer("missing"));
    CHECK(r.optional_integer<int>("count") == 3);
    CHECK(!r.optional_number("none"));
    CHECK(r.optional_number("ratio") == 0.5);
    CHECK(r.optional_boolean("ok") == true);
    CHECK(!r.optional_boolean("missing"));
    CHECK(r.optional_word("colour", k_colours) == colour::green);
    CHECK(!r.optional_word("none", k_colours));
    CHECK(r.optional_texts("missing").empty());
    CHECK(r.optional_texts("tags").size() == 2);
}

TEST_CASE("every complaint names the file - the field's path and what was expected") {
    using r_t = const json_field&;
    CHECK(failure([](r_t r) { r["attempts"][0]["cases"][1].word("status", k_colours); }) ==
          "run/history.json: field attempts[0].cases[1].status: expected one of red, green, "
          "blue, found 'purple'");
    CHECK(failure([](r_t r) { r.word("count", k_colours); }) ==
          "run/history.json: field count: expected one of red, green, blue, found an integer");
    CHECK(failure([](r_t r) { r.text("count"); }) ==
          "run/history.json: field count: expected a string, found an integer");
    CHECK(failure([](r_t r) { r["attempts"][0].text("missing"); }) ==
          "run/history.json: field attempts[0].missing: expected a member, found none");
    CHECK(failure([](r_t r) { r["attempts"][0]["cases"][1]["n"].integer_in(0, 10); }) ==
          "run/history.json: field attempts[0].cases[1].n: expected an integer from 0 to 10, "
          "found -3");
    CHECK(failure([](r_t r) { r.integer("ratio"); }) ==
          "run/history.json: field ratio: expected an integer, found a number");
    CHECK(failure([](r_t r) { r.integer("big"); }) ==
          "run/history.json: field big: expected an integer, found 9223372036854775808");
    CHECK(failure([](r_t r) { r.integer<int>("big"); }) ==
          "run/history.json: field big: expected an integer from -2147483648 to 2147483647, "
          "found 9223372036854775808");
    CHECK(failure([](r_t r) { r.number("name"); }) ==
          "run/history.json: field name: expected a number, found a string");
    CHECK(failure([](r_t r) { r.boolean("none"); }) ==
          "run/history.json: field none: expected true or false, found null");
    CHECK(failure([](r_t r) { r.texts("sizes"); }) ==
          "run/history.json: field sizes[0]: expected a string, found an integer");
    CHECK(failure([](r_t r) { r.numbers("tags"); }) ==
          "run/history.json: field tags[0]: expected a number, found a string");
    CHECK(failure([](r_t r) { r.texts("name"); }) ==
          "run/history.json: field name: expected an array, found a string");
    CHECK(failure([](r_t r) { r["tags"][2]; }) ==
          "run/history.json: field tags[2]: expected an element, found an array of 2");
    CHECK(failure([](r_t r) { r["name"]["x"]; }) ==
          "run/history.json: field name: expected an object, found a string");
    CHECK(failure([](r_t r) { r.optional_text("count"); }) ==
          "run/history.json: field count: expected a string, found an integer");
    CHECK(failure([](r_t r) { r["ok"].fail("false when the run failed"); }) ==
          "run/history.json: field ok: expected false when the run failed");
}

TEST_CASE("a complaint about the root names only the file") {
    const rapidjson::Document doc = parse_json("[1]", "x.json");
    CHECK_THROWS_WITH(json_field(doc, "a.json").text("x"),
                      "a.json: expected an object, found an array");
    CHECK_THROWS_WITH(json_field(doc, "").text(), "expected a string, found an array");
}

TEST_CASE("a non-finite number is refused") {
    rapidjson::Value v(std::numeric_limits<double>::infinity());
    CHECK_THROWS_WITH(json_field(v, "a.json", "x").number(),
                      Catch::StartsWith("a.json: field x: expected a finite number"));
}

TEST_CASE("integers up to 2^64 - 1 read as unsigned 64-bit, and a negative one is refused") {
    const rapidjson::Document doc =
        parse_json(R"({"seed": 18446744073709551615, "low": -1, "half": 0.5})", "x.json");
    const json_field r(doc, "g.json");
    CHECK(r.integer<std::uint64_t>("seed") == 18446744073709551615ull);
    CHECK(r.optional_integer<std::uint64_t>("none") == std::nullopt);
    const auto refused = [&r](const char* key) {
        try {
            r.integer<std::uint64_t>(key);
        } catch (const json_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(refused("low") ==
          "g.json: field low: expected an integer from 0 to 18446744073709551615, found -1");
    CHECK(refused("half") ==
          "g.json: field half: expected an integer from 0 to 18446744073709551615, found a "
          "number");
    CHECK_THAT(failure([](const json_field& f) { f.integer<int>("big"); }),
               Catch::Contains("field big: expected an integer from"));
}

TEST_CASE("the lenient readers read what is there and take another kind for absent") {
    const rapidjson::Document doc = parse_json(
        R"({"s": "a\u0001b", "n": 2.5, "i": 7, "b": true, "o": {"k\u0001x": 1}, "a": [1],
            "z": null})",
        "x.json");
    CHECK(string_of(doc, "s") == std::string("a\1b", 3));
    CHECK(text_of(doc, "s") == std::string("a\1b", 3));
    CHECK(string_of(doc, "i") == std::nullopt);  // a number is no string
    CHECK(text_of(doc, "i") == "7");             // but it has a text to show
    CHECK(text_of(doc, "b") == "1");
    CHECK(text_of(doc, "o").empty());
    CHECK(text_of(doc, "z").empty());
    CHECK(number_of(doc, "n") == 2.5);
    CHECK(number_of(doc, "s") == std::nullopt);
    CHECK(integer_of(doc, "n") == std::nullopt);
    CHECK(integer_of(doc, "i") == 7);
    CHECK(bool_of(doc, "b") == true);
    CHECK(bool_of(doc, "i") == std::nullopt);
    CHECK(member(doc, "z") == nullptr);
    CHECK(object_or_empty(doc, "a").ObjectEmpty());
    CHECK(array_or_empty(doc, "o").Empty());
    CHECK(array_or_empty(doc, "a").Size() == 1);
    CHECK(text_of(doc["a"]) == "");  // an array has no text
    CHECK(integer_of(doc["a"][0]) == 1);
    const auto& o = object_or_empty(doc, "o");
    REQUIRE(o.MemberCount() == 1);
    CHECK(name_of(*o.MemberBegin()) == std::string("k\1x", 3));
    const rapidjson::Value not_an_object(5);
    CHECK(text_of(not_an_object, "s").empty());
}
