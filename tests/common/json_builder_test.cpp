#include "common/json_builder.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;

TEST_CASE("the object builder keeps the order members were added in") {
    rapidjson::Document doc;
    auto& a = doc.GetAllocator();
    const std::string name = "H200";
    json_object o(a);
    o.add("index", 2)
        .add("name", name)
        .add("sm_clock_max_khz", 1980000u)
        .add_if(false, "simulated", true);
    o.add_if(true, "real", true).add("ratio", 0.25).add("label", "x").add_null("none");
    CHECK(to_compact_json(o.take()) ==
          R"({"index":2,"name":"H200","sm_clock_max_khz":1980000,"real":true,"ratio":0.25,)"
          R"("label":"x","none":null})");
}

TEST_CASE("optionals are values or null - strings are made valid UTF-8") {
    rapidjson::Document doc;
    auto& a = doc.GetAllocator();
    json_object o(a);
    o.add("a", std::optional<double>(1.5)).add("b", std::optional<double>());
    o.add("c", std::optional<std::int64_t>(-7)).add("d", std::optional<int>());
    o.add("e", std::optional<std::string>("s")).add("f", std::string("bad\xff"));
    o.add(std::string("dyn") + "amic", std::string_view("k"));
    CHECK(to_compact_json(o.take()) ==
          "{\"a\":1.5,\"b\":null,\"c\":-7,\"d\":null,\"e\":\"s\",\"f\":\"bad\xef\xbf\xbd\","
          "\"dynamic\":\"k\"}");
}

TEST_CASE("vectors - maps and nested builders become arrays and objects") {
    rapidjson::Document doc;
    auto& a = doc.GetAllocator();
    json_array inner(a);
    inner.push(1).push("two").push(std::vector<double>{3.5});
    json_object nested(a);
    nested.add("k", false);
    rapidjson::Value raw(rapidjson::kArrayType);
    raw.PushBack(9, a);
    const rapidjson::Value kept(7);
    json_object o(a);
    o.add("texts", std::vector<std::string>{"x", "y"}).add("inner", inner).add("nested", nested);
    o.add("map", std::map<std::string, long long>{{"b", 2}, {"a", 1}});
    o.add("grid", std::array<std::string, 2>{"g", "h"})
        .add("raw", std::move(raw))
        .add("kept", kept);
    CHECK(to_compact_json(o.take()) ==
          R"({"texts":["x","y"],"inner":[1,"two",[3.5]],"nested":{"k":false},)"
          R"("map":{"a":1,"b":2},"grid":["g","h"],"raw":[9],"kept":7})");
    CHECK(kept.GetInt() == 7);
}

TEST_CASE("a builder on a document adds after the members it has") {
    rapidjson::Document doc(rapidjson::kObjectType);
    doc.AddMember("schema_version", 1, doc.GetAllocator());
    json_object o(doc);
    o.add("iteration", 4);
    json_object moved(std::move(o));
    moved.add("batch", json_array(doc.GetAllocator()));
    CHECK(to_compact_json(doc) == R"({"schema_version":1,"iteration":4,"batch":[]})");
    json_object own(doc.GetAllocator());
    own.add("a", 1);
    json_object own_moved(std::move(own));
    own_moved.add("b", 2);
    CHECK(to_compact_json(own_moved.take()) == R"({"a":1,"b":2})");
}
