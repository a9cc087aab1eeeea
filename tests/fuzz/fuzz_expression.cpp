// libFuzzer target: integer expressions (counts and launches), evaluated and listed.
// Invariants: an expression that evaluates keeps the limits (at most 1000 characters, 32
// levels of parentheses), and a refusal's message stays short however long the text.
#include <algorithm>
#include <string>

#include "fuzz_support.hpp"
#include "orchestrator/contract/integer_expression.hpp"

namespace {

// The deepest nesting of parentheses in `text`: a lower bound of the parser's depth, which
// also counts calls and signs.
int parenthesis_depth(const std::string& text) {
    int depth = 0, deepest = 0;
    for (const char c : text) {
        if (c == '(') deepest = std::max(deepest, ++depth);
        if (c == ')') --depth;
    }
    return deepest;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const cuopt::expression_variables vars = {{"m", 31}, {"n", 37}, {"k", INT64_MAX}, {"T", -16}};
    try {
        cuopt::evaluate_integer_expression(text, vars);
        if (text.size() > cuopt::k_max_expression_length)
            cuopt::fuzz::fail("an expression over the length limit evaluates", text);
        if (parenthesis_depth(text) > cuopt::k_max_expression_depth)
            cuopt::fuzz::fail("an expression over the depth limit evaluates", text);
    } catch (const cuopt::expression_error& e) {
        cuopt::fuzz::check_message(e);
    }
    try {
        cuopt::expression_names(text);
    } catch (const cuopt::expression_error& e) {
        cuopt::fuzz::check_message(e);
    }
    return 0;
}
