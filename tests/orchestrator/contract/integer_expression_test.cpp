#include "orchestrator/contract/integer_expression.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;

TEST_CASE("counts and launch shapes evaluate over named parameters") {
    const expression_variables v = {{"m", 31}, {"n", 37}, {"k", 29}, {"TILE", 16}};
    CHECK(evaluate_integer_expression("m*k", v) == 899);
    CHECK(evaluate_integer_expression("ceil(n/TILE)", v) == 3);
    CHECK(evaluate_integer_expression("floor(n / TILE)", v) == 2);
    // Division is exact (rational), not C integer division: round explicitly.
    CHECK(evaluate_integer_expression("(m + TILE - 1) / TILE * TILE", v) == 46);
    CHECK(evaluate_integer_expression("ceil(m / TILE) * TILE", v) == 32);
    CHECK(evaluate_integer_expression("max(1, n % 5, 3)", v) == 3);
    CHECK(evaluate_integer_expression("min(m, n) - -2", v) == 33);
    CHECK(evaluate_integer_expression("abs(k - m) * 4096 * 4096", v) == 2LL * 4096 * 4096);
    CHECK(evaluate_integer_expression("ceil(-7/2)", {}) == -3);
    CHECK(evaluate_integer_expression("floor(-7/2)", {}) == -4);
    CHECK(evaluate_integer_expression("4096*4096*4096", {}) == 68719476736LL);
}

TEST_CASE("a fractional result is refused with a hint instead of being floored") {
    CHECK_THROWS_WITH(
        evaluate_integer_expression("n/16", {{"n", 37}}),
        Catch::Contains("'n/16' is 2.312500, not a whole number; wrap it in ceil() or floor()"));
}

TEST_CASE("malformed expressions and unknown names are errors that say where and what") {
    const expression_variables v = {{"m", 2}, {"n", 3}};
    CHECK_THROWS_WITH(evaluate_integer_expression("m*", v),
                      Catch::Contains("expression ends too early"));
    CHECK_THROWS_WITH(evaluate_integer_expression("m + q", v),
                      Catch::Contains("unknown name 'q' (known: m, n)"));
    CHECK_THROWS_WITH(evaluate_integer_expression("sqrt(m)", v),
                      Catch::Contains("unknown function 'sqrt'"));
    CHECK_THROWS_WITH(evaluate_integer_expression("(m", v), Catch::Contains("expected ')'"));
    CHECK_THROWS_WITH(evaluate_integer_expression("m / (n - 3)", v),
                      Catch::Contains("division by zero"));
    CHECK_THROWS_WITH(evaluate_integer_expression("m $ n", v),
                      Catch::Contains("unexpected '$' at position 3"));
    CHECK_THROWS_WITH(evaluate_integer_expression("ceil(m, n)", v),
                      Catch::Contains("ceil takes 1 argument"));
}

TEST_CASE("the names an expression uses are listed without evaluating it") {
    CHECK(expression_names("ceil(n/TILE) * m") == std::vector<std::string>{"n", "TILE", "m"});
    CHECK(expression_names("42").empty());
}

TEST_CASE("an expression that overflows 64 bits is an error, never a wrapped value") {
    const expression_variables v = {{"m", 4}};
    CHECK_THROWS_WITH(
        evaluate_integer_expression("1125899906842624*1125899906842624*1125899906842624+1", v),
        Catch::Contains("value out of range"));
    CHECK_THROWS_WITH(evaluate_integer_expression("9223372036854775807+1", v),
                      Catch::Contains("value out of range"));
    CHECK(evaluate_integer_expression("9223372036854775807", v) == INT64_MAX);
}

namespace {

// The message of the expression_error `text` raises ("" when it evaluates).
std::string error_of(const std::string& text, const expression_variables& v = {{"m", 4}}) {
    try {
        evaluate_integer_expression(text, v);
    } catch (const expression_error& e) {
        return e.what();
    }
    return "";
}

std::string repeated(const std::string& s, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += s;
    return out;
}

}  // namespace

TEST_CASE("an expression's length is limited, and the refusal quotes only its start") {
    static_assert(k_max_expression_length == 1000);
    // "11+1+1...": 2 + 2 * 499 = 1000 characters.
    const std::string at_limit = "11" + repeated("+1", 499);
    REQUIRE(at_limit.size() == k_max_expression_length);
    CHECK(evaluate_integer_expression(at_limit, {}) == 11 + 499);
    CHECK(expression_names(at_limit).empty());
    const std::string over = at_limit + " ";
    CHECK_THAT(error_of(over), Catch::Contains("1001 characters, over the limit of 1000"));
    CHECK_THROWS_WITH(expression_names(over), Catch::Contains("over the limit of 1000"));
    const std::string huge = "1" + repeated("+m", 512 * 1024);
    const std::string e = error_of(huge);
    CHECK_THAT(e, Catch::Contains("over the limit of 1000") &&
                      Catch::Contains("(" + std::to_string(huge.size()) + " bytes)"));
    CHECK(e.size() < 400);
}

TEST_CASE("a call takes at most 16 arguments, refused at the 17th, not after 100,001") {
    static_assert(k_max_call_arguments == 16);
    CHECK(evaluate_integer_expression("max(" + repeated("m,", 15) + "17)", {{"m", 4}}) == 17);
    CHECK(evaluate_integer_expression("min(" + repeated("m,", 15) + "1)", {{"m", 4}}) == 1);
    CHECK_THAT(error_of("max(" + repeated("m,", 16) + "m)"),
               Catch::Contains("max has more than 16 arguments, over the limit for one call "
                               "at position 37"));
    // 100,001 arguments (the finding) are over the length limit before any is parsed.
    CHECK_THAT(error_of("max(" + repeated("m,", 100000) + "m)"),
               Catch::Contains("over the limit of 1000"));
}

TEST_CASE("nesting is limited to 32 levels of parentheses, calls and signs, never a crash") {
    static_assert(k_max_expression_depth == 32);
    const expression_variables v = {{"m", 4}};
    CHECK(evaluate_integer_expression(repeated("(", 32) + "m" + repeated(")", 32), v) == 4);
    CHECK(evaluate_integer_expression(repeated("-", 32) + "m", v) == 4);
    CHECK(evaluate_integer_expression(repeated("abs(", 32) + "m" + repeated(")", 32), v) == 4);
    CHECK(evaluate_integer_expression(repeated("-(", 16) + "m" + repeated(")", 16), v) == 4);
    const std::string message = "nested more than 32 levels deep (parentheses, calls and signs)";
    CHECK_THAT(error_of(repeated("(", 33) + "m" + repeated(")", 33)), Catch::Contains(message));
    CHECK_THAT(error_of(repeated("+", 33) + "m"), Catch::Contains(message));
    CHECK_THAT(error_of(repeated("abs(", 33) + "m" + repeated(")", 33)), Catch::Contains(message));
    // Deep and long: the message quotes the first 200 characters, not all of it.
    const std::string deep = repeated("(", 499) + "1" + repeated(")", 499);
    const std::string e = error_of(deep);
    CHECK_THAT(e, Catch::Contains(message) && Catch::Contains("(999 bytes)"));
    CHECK(e.size() < 400);
}

TEST_CASE("names and characters from the expression are quoted and cut in messages") {
    const std::string long_name(300, 'q');
    const std::string e = error_of("m + " + long_name);
    CHECK_THAT(e, Catch::Contains("unknown name 'qqqq") && Catch::Contains("(300 bytes)"));
    CHECK(e.size() < 700);
    CHECK_THAT(error_of("m \x01"), Catch::Contains("unexpected '\\x01'"));
    CHECK_THAT(error_of(long_name + "(m)"),
               Catch::Contains("unknown function 'qqqq") && Catch::Contains("(300 bytes)"));
    expression_variables many;
    for (int i = 0; i < 1000; ++i) many["variable_" + std::to_string(i)] = i;
    const std::string known = error_of("q", many);
    CHECK_THAT(known, Catch::Contains("(known: variable_0, variable_1,") &&
                          Catch::Contains("(1000 names)"));
    CHECK(known.size() < 400);
}
