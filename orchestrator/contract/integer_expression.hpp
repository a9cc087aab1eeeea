#pragma once
/// Integer expressions over named parameters, as a manifest writes element counts and
/// launch shapes: "m*k", "ceil(n/TILE)", "max(1, n/4)". Arithmetic is exact rational
/// for + - * / and integer for %; the final value must be a whole number, so "n/16"
/// with n = 37 is an error that suggests ceil() or floor() instead of a silent floor.
/// Each expression is bounded in length, arguments and depth, so one costs microseconds.

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuopt {

/// A malformed expression, an unknown name, a value that is not a whole number, or one over
/// a limit below.
class expression_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// The limits. Real manifests write short, shallow expressions: the longest in examples/ is
// "ceil(rows*ROW_THREADS/BLOCK_THREADS)" (36 characters), the deepest
// "ceil(m/(BLOCK_Y*ROWS_PER_THREAD))" (2 levels); min/max take 2 or 3 arguments. Each limit is many
// times that, and together they keep one evaluation to a few thousand steps (a manifest evaluates
// every expression for every case and tunable point, so "max(m,m,...)" with 100,001 arguments once
// made a run 22 s slower).

/// The most characters (bytes: a valid expression is ASCII) in one expression; the schemas
/// give int_expr strings the same maxLength.
inline constexpr std::size_t k_max_expression_length = 1000;
/// The most arguments of one function call, e.g. max(a, b, ..., p).
inline constexpr std::size_t k_max_call_arguments = 16;
/// The deepest nesting of parentheses, function calls and signs together: "-(abs(m))" is 3.
inline constexpr int k_max_expression_depth = 32;

using expression_variables = std::map<std::string, std::int64_t>;

/// Evaluates `text` with the given variables. Functions: ceil, floor, min, max, abs.
std::int64_t evaluate_integer_expression(const std::string& text,
                                         const expression_variables& variables);

/// The variable names an expression uses (for checking a manifest before any case).
std::vector<std::string> expression_names(const std::string& text);

/// C++ source computing `text` at run time with the same exact rules: a `cuopt_q` (an exact
/// rational, the p/q pair) built from calls cuopt_add, cuopt_sub, cuopt_mul, cuopt_div,
/// cuopt_mod, cuopt_neg, cuopt_ceil, cuopt_floor, cuopt_abs, cuopt_min and cuopt_max, which the
/// generated code defines (artifacts/kernel_export); each name becomes the C++ `names` gives
/// for it (an unknown one throws expression_error, as evaluation does).
std::string integer_expression_cpp(const std::string& text,
                                   const std::map<std::string, std::string>& names);

}  // namespace cuopt
