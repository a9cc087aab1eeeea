// libFuzzer target: integer expressions (counts and launches), evaluated and listed.
#include <string>

#include "orchestrator/contract/integer_expression.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const cuopt::expression_variables vars = {{"m", 31}, {"n", 37}, {"k", INT64_MAX}, {"T", -16}};
    try {
        cuopt::evaluate_integer_expression(text, vars);
    } catch (const cuopt::expression_error&) {
    }
    try {
        cuopt::expression_names(text);
    } catch (const cuopt::expression_error&) {
    }
    return 0;
}
