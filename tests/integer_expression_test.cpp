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

TEST_CASE(
    "an expression that overflows 64 bits, or nests too deep, is an error, never a wrapped value") {
    const expression_variables v = {{"m", 4}};
    CHECK_THROWS_WITH(
        evaluate_integer_expression("1125899906842624*1125899906842624*1125899906842624+1", v),
        Catch::Contains("value out of range"));
    CHECK_THROWS_WITH(evaluate_integer_expression("9223372036854775807+1", v),
                      Catch::Contains("value out of range"));
    CHECK(evaluate_integer_expression("9223372036854775807", v) == INT64_MAX);
    CHECK_THROWS_WITH(
        evaluate_integer_expression(std::string(10000, '(') + "1" + std::string(10000, ')'), v),
        Catch::Contains("nested more than 64 levels deep"));
    CHECK_THROWS_WITH(evaluate_integer_expression(std::string(10000, '-') + "1", v),
                      Catch::Contains("nested more than 64 levels deep"));
    CHECK(evaluate_integer_expression(std::string(30, '(') + "m" + std::string(30, ')'), v) == 4);
}
