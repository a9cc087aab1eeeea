#include <rapidjson/pointer.h>

#include <catch2/catch.hpp>
#include <set>

#include "common/generator_spec.hpp"
#include "common/json_document.hpp"
#include "common/response_status.hpp"
#include "orchestrator/contract/candidate.hpp"
#include "orchestrator/evaluation/verdict.hpp"
#include "orchestrator/proposers/stop_reason.hpp"

using namespace cuopt;

namespace {

// The "enum" list of a property in an embedded schema, found by a JSON pointer.
std::set<std::string> schema_enum(const char* schema, const char* pointer) {
    rapidjson::Document d = parse_json(std::string(embedded_schema(schema)), schema);
    const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(d);
    REQUIRE(v);
    std::set<std::string> out;
    for (const auto& e : v->GetArray()) out.insert(e.GetString());
    return out;
}

template <class Table>
std::set<std::string> names_of(const Table& t) {
    std::set<std::string> out;
    for (const auto& e : t.entries) {
        out.insert(e.name);
        CHECK(t.parse(e.name) == e.value);  // both directions agree
    }
    return out;
}

}  // namespace

TEST_CASE("every vocabulary's names are exactly the words its schema allows") {
    CHECK(names_of(k_verdicts) ==
          schema_enum("history", "/properties/attempts/items/properties/verdict/enum"));
    CHECK(names_of(k_case_statuses) ==
          schema_enum("history",
                      "/properties/attempts/items/properties/cases/items/properties/status/enum"));
    CHECK(names_of(k_stop_reasons) == schema_enum("summary", "/properties/stop_reason/enum"));
    CHECK(names_of(k_response_statuses) == schema_enum("response", "/properties/status/enum"));
    CHECK(names_of(k_case_run_statuses) ==
          schema_enum("response", "/properties/cases/items/properties/status/enum"));
    std::set<std::string> generators = names_of(k_generator_kinds);
    generators.insert("file");
    CHECK(generators == schema_enum("manifest", "/definitions/init/properties/kind/enum"));
}

TEST_CASE("an unknown word parses to nothing and every exit code reports one response status") {
    CHECK_FALSE(k_verdicts.parse("fine"));
    CHECK(k_proposer_kinds.parse("llm") == proposer_kind::llm);
    CHECK(status_for(exit_code::case_failed) == response_status::cuda_error);
    CHECK(status_for(exit_code::context_lost) == response_status::cuda_error);
    CHECK(status_for(exit_code::no_device) == response_status::no_device);
    CHECK(status_for(exit_code::internal_error) == response_status::internal_error);
}

TEST_CASE("a generator is checked against its buffer the same way wherever it is read") {
    generator_spec g;
    g.kind = generator_kind::normal;
    const auto kind = check_generator(g, dtype::i32);
    REQUIRE(kind);
    CHECK(kind->field == "kind");
    g.kind = generator_kind::int_range;
    g.low = 0.5;
    g.high = 3;
    REQUIRE(check_generator(g, dtype::i32));
    CHECK_THAT(check_generator(g, dtype::i32)->message,
               Catch::Contains("int_range needs integer low <= high"));
    g.low = -1;
    g.high = 300;
    CHECK_THAT(check_generator(g, dtype::u8)->message, Catch::Contains("range does not fit"));
    CHECK_FALSE(check_generator(g, dtype::i32));
}

TEST_CASE("a refused compile option is quoted in at most 200 characters and its size") {
    CHECK(check_compile_options({"--frobnicate"}, "") ==
          "compile option '--frobnicate' is not on the allow-list");
    const std::string long_option = "--" + std::string(4000, 'x');
    CHECK(check_compile_options({long_option}, "") ==
          "compile option '--" + std::string(198, 'x') +
              "'… (4002 bytes) is not on the allow-list");
    CHECK(check_compile_options({"-I/etc"}, "") ==
          "compile option '-I/etc': include paths must lie in the CUDA toolkit or the run folder");
}
