// The manifest's checks against every case: each expression evaluates to a sane value, each
// scalar fits its dtype, each reduction length is bounded by an input, each file has its size.
#include "orchestrator/contract/manifest_checks.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "common/dtype.hpp"
#include "common/generator_spec.hpp"
#include "common/request.hpp"

namespace cuopt::manifest_reading {

namespace fs = std::filesystem;

namespace {

// A reduction over an input sums at most as many terms as the case's largest input holds: a
// larger length would loosen rtol (it grows with its square root) until a wrong element
// passes. Where no buffer has an input the terms come from scalars (a series, a Monte Carlo
// sum): no buffer bounds them.
void check_reduction_lengths(const manifest& m, const manifest_case& mc, const std::string& field,
                             const context& ctx) {
    std::int64_t bound = 0;
    try {
        for (const manifest_arg& a : m.args)
            if (a.is_buffer() && a.has_input())
                bound = std::max(bound, evaluate_integer_expression(a.count, mc.params));
        if (bound == 0) return;
        for (const manifest_arg& a : m.args) {
            if (a.reduction_length.empty()) continue;
            const std::int64_t length = evaluate_integer_expression(a.reduction_length, mc.params);
            if (length > bound)
                ctx.fail(field + ".tolerance.reduction_length (" + quote_value(a.name) + ")",
                         quote_value(a.reduction_length) + " is " + std::to_string(length) +
                             ", more terms than the case's largest input holds (" +
                             std::to_string(bound) +
                             "); expected the number of terms summed into one element");
        }
    } catch (const expression_error&) {
        // Said by the caller's evaluation of the same expressions, with its field.
    }
}

// A case's flops, vendor sizes (m, n, k or rows, cols) and reduction lengths: over its params
// only, each at least 1.
void check_case_expressions(const manifest& m, const manifest_case& mc, const std::string& field,
                            const context& ctx) {
    std::vector<std::pair<std::string, std::string>> exprs;
    if (!mc.flops.empty()) exprs.emplace_back("flops", mc.flops);
    if (mc.vendor)
        for (const auto& [key, e] : vendor_size_fields(*mc.vendor))
            exprs.emplace_back(std::string("vendor_baseline.") + key, *e);
    for (const manifest_arg& a : m.args)
        if (!a.reduction_length.empty())
            exprs.emplace_back("tolerance.reduction_length (" + quote_value(a.name) + ")",
                               a.reduction_length);
    for (const auto& [key, e] : exprs) {
        try {
            if (evaluate_integer_expression(e, mc.params) < 1)
                ctx.fail(field + "." + key, quote_value(e) + " is below 1");
        } catch (const expression_error& ex) {
            ctx.fail(field + "." + key, ex.what());
        }
    }
    check_reduction_lengths(m, mc, field, ctx);
}

// A scalar's value in this case, encoded in its dtype as the harness will encode it (the same
// functions, on the value the request will carry): what does not fit (an i32 of 2^32, a u8 of
// 300, an f32 of 1e39) throws std::invalid_argument here, at check, not at the reference.
void check_scalar_fits(const manifest_arg& a, const expression_variables& vars) {
    const scalar_number value = a.value_is_number
                                    ? scalar_number(std::strtod(a.value.c_str(), nullptr))
                                    : scalar_number(evaluate_integer_expression(a.value, vars));
    std::visit(
        [&](auto x) {
            if constexpr (std::is_same_v<decltype(x), double>)
                encode_scalar(a.type, x);
            else
                encode_integer_scalar(a.type, x);
            if (is_float(a.type))
                if (std::string why = value_fit_problem(a.type, static_cast<double>(x));
                    !why.empty())
                    throw std::invalid_argument(why);
        },
        value);
}

// The request schema's largest buffer count (2^53 elements).
constexpr std::int64_t k_max_buffer_count = std::int64_t{1} << 53;

}  // namespace

// Every expression must evaluate for every case (under the default tunables) to a sane value;
// `vendor_runs` (the main manifest, not a holdout): the vendor call of every performance case,
// the cases it is timed on, against that case's sizes.
void check_expressions(const manifest& m, const context& ctx, bool vendor_runs) {
    const auto tunables = m.default_tunables();
    for (std::size_t c = 0; c < m.cases.size(); ++c) {
        const manifest_case& mc = m.cases[c];
        const expression_variables vars = m.variables(mc, tunables);
        const std::string field = "cases[" + std::to_string(c) + "] (" + quote_value(mc.name) + ")";
        for (const manifest_arg& a : m.args) {
            try {
                if (a.is_buffer()) {
                    expression_variables params_only =
                        mc.params;  // sizes may not depend on tunables
                    const std::int64_t count = evaluate_integer_expression(a.count, params_only);
                    if (count < 1)
                        ctx.fail(field, "count of " + quote_value(a.name) + " (" + a.count +
                                            ") is below 1");
                    // A request holds at most 2^53 elements a buffer, and count x dtype bytes
                    // must not wrap where a file's size is checked against it.
                    if (count > k_max_buffer_count)
                        ctx.fail(field, "count of " + quote_value(a.name) + " (" + a.count +
                                            ") is " + std::to_string(count) +
                                            "; expected at most 2^53 (" +
                                            std::to_string(k_max_buffer_count) + ") elements");
                    const input_init& init = m.init_for(mc, a);
                    if (a.has_input() && !init.file)
                        if (const auto problem = check_generator(init.generator, a.type,
                                                                 static_cast<std::uint64_t>(count)))
                            ctx.fail(field,
                                     "argument " + quote_value(a.name) + "'s generator" +
                                         (problem->field.empty() ? "" : " " + problem->field) +
                                         ": " + problem->message);
                } else {
                    check_scalar_fits(a, vars);
                }
            } catch (const expression_error& e) {
                ctx.fail(field, "argument " + quote_value(a.name) + ": " + e.what());
            } catch (const std::invalid_argument& e) {  // the value does not fit its dtype
                ctx.fail(field, "argument " + quote_value(a.name) + ": " + e.what());
            }
        }
        try {
            evaluate_launch(mc.launch ? *mc.launch : m.launch, vars);
        } catch (const expression_error& e) {
            ctx.fail(field + ".launch", e.what());
        }
        check_case_expressions(m, mc, field, ctx);
        if (vendor_runs && mc.vendor && mc.kind == case_kind::performance)
            check_vendor_sizes(m, mc, field, ctx);
    }
}

// Files must hold exactly count x dtype bytes for the case that uses them.
void check_file_sizes(const manifest& m, const context& ctx) {
    for (std::size_t c = 0; c < m.cases.size(); ++c) {
        const manifest_case& mc = m.cases[c];
        for (const manifest_arg& a : m.args) {
            if (!a.is_buffer()) continue;
            const std::int64_t count = evaluate_integer_expression(a.count, mc.params);
            std::uint64_t bytes = 0;
            // Checked: a count of 2^61 f64 elements would wrap to 0 bytes, which an empty file
            // "holds" (check_expressions bounds counts first; this rule stands on its own).
            if (count < 0 || __builtin_mul_overflow(static_cast<std::uint64_t>(count),
                                                    dtype_size(a.type), &bytes))
                ctx.fail("cases[" + std::to_string(c) + "] (" + quote_value(mc.name) + ")",
                         "count of " + quote_value(a.name) + " (" + a.count + ") is " +
                             std::to_string(count) + ", whose " + std::string(dtype_name(a.type)) +
                             " bytes overflow 64 bits; expected at most 2^53 elements");
            auto check_size = [&](const fs::path& p, const std::string& field) {
                std::error_code ec;
                const auto size = fs::file_size(p, ec);
                if (ec) ctx.fail(field, "cannot read " + quote_value(p.string()));
                if (size != bytes)
                    ctx.fail(field, p.filename().string() + " holds " + std::to_string(size) +
                                        " bytes but " + quote_value(a.name) + " needs " +
                                        std::to_string(bytes) + " (count " + a.count + " x " +
                                        std::string(dtype_name(a.type)) + ") in case '" + mc.name +
                                        "'");
            };
            if (a.has_input() && m.init_for(mc, a).file)
                check_size(*m.init_for(mc, a).file,
                           "cases[" + std::to_string(c) + "] input " + quote_value(a.name));
            if (const auto it = mc.expected.find(a.name); it != mc.expected.end())
                check_size(it->second, "cases[" + std::to_string(c) + "].expected." + a.name);
        }
    }
}

}  // namespace cuopt::manifest_reading
