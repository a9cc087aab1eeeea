#pragma once
/// Integer expressions over named parameters, as a manifest writes element counts and
/// launch shapes: "m*k", "ceil(n/TILE)", "max(1, n/4)". Arithmetic is exact rational
/// for + - * / and integer for %; the final value must be a whole number, so "n/16"
/// with n = 37 is an error that suggests ceil() or floor() instead of a silent floor.

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuopt {

/// A malformed expression, an unknown name, or a value that is not a whole number.
class expression_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

using expression_variables = std::map<std::string, std::int64_t>;

/// Evaluates `text` with the given variables. Functions: ceil, floor, min, max, abs.
std::int64_t evaluate_integer_expression(const std::string& text,
                                         const expression_variables& variables);

/// The variable names an expression uses (for checking a manifest before any case).
std::vector<std::string> expression_names(const std::string& text);

}  // namespace cuopt
