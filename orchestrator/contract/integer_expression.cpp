#include "orchestrator/contract/integer_expression.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <numeric>
#include <optional>
#include <vector>

#include "common/message_text.hpp"

namespace cuopt {

namespace {

// An exact rational p/q with q > 0, wide enough for shapes and counts.
struct rational {
    __int128 p = 0, q = 1;
};

rational normalised(__int128 p, __int128 q, const std::string& text) {
    if (q == 0) throw expression_error(quote_value(text) + ": division by zero");
    if (q < 0) p = -p, q = -q;
    __int128 a = p < 0 ? -p : p, b = q;
    while (b) {
        const __int128 t = a % b;
        a = b;
        b = t;
    }
    if (a > 1) p /= a, q /= a;
    const __int128 limit = static_cast<__int128>(1) << 100;
    if (p > limit || p < -limit || q > limit)
        throw expression_error(quote_value(text) + ": value out of range");
    return {p, q};
}

// Products and sums of 128-bit intermediates are checked: a wrapped value would launch the
// wrong grid without a word.
__int128 mul(__int128 a, __int128 b, const std::string& text) {
    __int128 r;
    if (__builtin_mul_overflow(a, b, &r))
        throw expression_error(quote_value(text) + ": value out of range");
    return r;
}
__int128 add(__int128 a, __int128 b, const std::string& text) {
    __int128 r;
    if (__builtin_add_overflow(a, b, &r))
        throw expression_error(quote_value(text) + ": value out of range");
    return r;
}

__int128 floor_div(__int128 p, __int128 q) {
    return p >= 0 ? p / q : -((-p + q - 1) / q);
}

// The value rules the parser applies: exact rationals (evaluation), or C++ source that computes
// the same at run time (integer_expression_cpp).
struct rational_rules {
    using value = rational;
    const std::string& text;
    const expression_variables* vars;
    std::vector<std::string>* names;

    value number(__int128 n) const { return {n, 1}; }
    value add(const value& a, const value& b) const {
        return normalised(::cuopt::add(mul(a.p, b.q, text), mul(b.p, a.q, text), text),
                          mul(a.q, b.q, text), text);
    }
    value sub(const value& a, const value& b) const {
        return normalised(::cuopt::add(mul(a.p, b.q, text), -mul(b.p, a.q, text), text),
                          mul(a.q, b.q, text), text);
    }
    value times(const value& a, const value& b) const {
        return normalised(mul(a.p, b.p, text), mul(a.q, b.q, text), text);
    }
    value divide(const value& a, const value& b) const {
        return normalised(mul(a.p, b.q, text), mul(a.q, b.p, text), text);
    }
    // "" or why `a % b` cannot be taken.
    std::string modulo_problem(const value& a, const value& b) const {
        if (a.q != 1 || b.q != 1) return "'%' needs whole numbers";
        return b.p == 0 ? "modulo by zero" : "";
    }
    value modulo(const value& a, const value& b) const { return normalised(a.p % b.p, 1, text); }
    value negate(value v) const {
        v.p = -v.p;
        return v;
    }
    value ceil(const value& v) const { return {-floor_div(-v.p, v.q), 1}; }
    value floor(const value& v) const { return {floor_div(v.p, v.q), 1}; }
    value abs(const value& v) const { return {v.p < 0 ? -v.p : v.p, v.q}; }
    value pick(const std::string& name, const std::vector<value>& args) const {  // min, max
        value best = args[0];
        for (const value& r : args) {
            const bool less = mul(r.p, best.q, text) < mul(best.p, r.q, text);
            if ((name == "min") == less) best = r;
        }
        return best;
    }
    // A name's value; nullopt when it is unknown (names-only mode reads every name as 1).
    std::optional<value> variable(const std::string& name) const {
        if (names) names->push_back(name);
        if (!vars) return value{1, 1};
        const auto it = vars->find(name);
        if (it == vars->end()) return std::nullopt;
        return value{it->second, 1};
    }
    std::string known_names() const {
        std::string known;
        for (const auto& [k, v] : *vars) {
            if (known.size() > k_quote_limit)
                return known + ", … (" + std::to_string(vars->size()) + " names)";
            known += (known.empty() ? "" : ", ") + (k.size() > 32 ? quote_value(k, 32) : k);
        }
        return known;
    }
};

// C++ that computes the expression with cuopt_q, the generated code's exact rational (see
// integer_expression.hpp): each name stands for the C++ the caller gives.
struct cpp_rules {
    using value = std::string;
    const std::map<std::string, std::string>& vars;

    value number(__int128 n) const {
        if (n > (static_cast<__int128>(1) << 62))  // no C++ literal type holds it
            throw expression_error("a number over 2^62 has no C++ literal: " +
                                   std::to_string(static_cast<double>(n)));
        std::string digits;
        do digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(n % 10)));
        while ((n /= 10) > 0);
        return "cuopt_q{" + digits + ", 1}";
    }
    value add(const value& a, const value& b) const { return "cuopt_add(" + a + ", " + b + ")"; }
    value sub(const value& a, const value& b) const { return "cuopt_sub(" + a + ", " + b + ")"; }
    value times(const value& a, const value& b) const { return "cuopt_mul(" + a + ", " + b + ")"; }
    value divide(const value& a, const value& b) const { return "cuopt_div(" + a + ", " + b + ")"; }
    std::string modulo_problem(const value&, const value&) const { return ""; }
    value modulo(const value& a, const value& b) const { return "cuopt_mod(" + a + ", " + b + ")"; }
    value negate(const value& v) const { return "cuopt_neg(" + v + ")"; }
    value ceil(const value& v) const { return "cuopt_ceil(" + v + ")"; }
    value floor(const value& v) const { return "cuopt_floor(" + v + ")"; }
    value abs(const value& v) const { return "cuopt_abs(" + v + ")"; }
    value pick(const std::string& name, const std::vector<value>& args) const {
        value out = args[0];
        for (std::size_t i = 1; i < args.size(); ++i)
            out = "cuopt_" + name + "(" + out + ", " + args[i] + ")";
        return out;
    }
    std::optional<value> variable(const std::string& name) const {
        const auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    }
    std::string known_names() const {
        std::string known;
        for (const auto& [k, v] : vars) known += (known.empty() ? "" : ", ") + k;
        return known;
    }
};

template <class Rules>
class parser {
  public:
    using value = typename Rules::value;
    parser(const std::string& text, Rules rules) : m_text(text), m_rules(std::move(rules)) {}

    value parse() {
        if (m_text.size() > k_max_expression_length)
            throw expression_error(quote_value(m_text) + ": " + std::to_string(m_text.size()) +
                                   " characters, over the limit of " +
                                   std::to_string(k_max_expression_length) + " for one expression");
        value v = sum();
        skip_space();
        if (m_pos != m_text.size()) fail("unexpected " + quote_value(m_text.substr(m_pos, 1)));
        return v;
    }

  private:
    [[noreturn]] void fail(const std::string& what) const {
        throw expression_error(quote_value(m_text) + ": " + what + " at position " +
                               std::to_string(m_pos + 1));
    }
    void skip_space() {
        while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos])))
            ++m_pos;
    }
    bool accept(char c) {
        skip_space();
        if (m_pos < m_text.size() && m_text[m_pos] == c) {
            ++m_pos;
            return true;
        }
        return false;
    }
    // One level of nesting (a parenthesis, a call or a sign) for its scope; too deep is an
    // error, not a crash. The parser recurses only through these, so they bound its stack.
    struct nesting {
        explicit nesting(parser& p) : m_p(p) {
            if (++m_p.m_depth > k_max_expression_depth)
                m_p.fail("nested more than " + std::to_string(k_max_expression_depth) +
                         " levels deep (parentheses, calls and signs), over the limit");
        }
        ~nesting() { --m_p.m_depth; }
        parser& m_p;
    };
    value sum() {
        value v = product();
        for (;;) {
            if (accept('+'))
                v = m_rules.add(v, product());
            else if (accept('-'))
                v = m_rules.sub(v, product());
            else
                return v;
        }
    }
    value product() {
        value v = unary();
        for (;;) {
            if (accept('*')) {
                v = m_rules.times(v, unary());
            } else if (accept('/')) {
                v = m_rules.divide(v, unary());
            } else if (accept('%')) {
                const value r = unary();
                if (const std::string why = m_rules.modulo_problem(v, r); !why.empty()) fail(why);
                v = m_rules.modulo(v, r);
            } else {
                return v;
            }
        }
    }
    value unary() {
        if (accept('-')) {
            const nesting level(*this);
            return m_rules.negate(unary());
        }
        if (accept('+')) {
            const nesting level(*this);
            return unary();
        }
        return primary();
    }
    value primary() {
        skip_space();
        if (accept('(')) {
            const nesting level(*this);
            value v = sum();
            if (!accept(')')) fail("expected ')'");
            return v;
        }
        if (m_pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos]))) {
            __int128 n = 0;
            while (m_pos < m_text.size() &&
                   std::isdigit(static_cast<unsigned char>(m_text[m_pos]))) {
                n = n * 10 + (m_text[m_pos++] - '0');
                if (n > (static_cast<__int128>(1) << 80)) fail("number too large");
            }
            return m_rules.number(n);
        }
        const std::size_t start = m_pos;
        while (m_pos < m_text.size() &&
               (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_'))
            ++m_pos;
        if (start == m_pos)
            fail(m_pos < m_text.size() ? "unexpected " + quote_value(m_text.substr(m_pos, 1))
                                       : "expression ends too early");
        const std::string name = m_text.substr(start, m_pos - start);
        if (accept('(')) return call(name);
        std::optional<value> v = m_rules.variable(name);
        if (!v)
            throw expression_error(quote_value(m_text) + ": unknown name " + quote_value(name) +
                                   " (known: " + m_rules.known_names() + ")");
        return std::move(*v);
    }
    value call(const std::string& name) {
        static const char* const k_functions[] = {"ceil", "floor", "min", "max", "abs"};
        if (std::find(std::begin(k_functions), std::end(k_functions), name) ==
            std::end(k_functions))
            fail("unknown function " + quote_value(name) + " (known: ceil, floor, min, max, abs)");
        const nesting level(*this);
        std::vector<value> args;
        if (!accept(')')) {
            do {
                if (args.size() == k_max_call_arguments)
                    fail(name + " has more than " + std::to_string(k_max_call_arguments) +
                         " arguments, over the limit for one call");
                args.push_back(sum());
            } while (accept(','));
            if (!accept(')')) fail("expected ')' after the arguments of " + name);
        }
        if (name == "min" || name == "max") {
            if (args.size() < 2) fail(name + " takes at least 2 arguments");
            return m_rules.pick(name, args);
        }
        if (args.size() != 1) fail(name + " takes 1 argument(s)");
        if (name == "ceil") return m_rules.ceil(args[0]);
        if (name == "floor") return m_rules.floor(args[0]);
        return m_rules.abs(args[0]);
    }

    const std::string& m_text;
    Rules m_rules;
    std::size_t m_pos = 0;
    int m_depth = 0;
};

}  // namespace

std::int64_t evaluate_integer_expression(const std::string& text,
                                         const expression_variables& variables) {
    const rational v =
        parser<rational_rules>(text, rational_rules{text, &variables, nullptr}).parse();
    if (v.q != 1) {
        const double approx = static_cast<double>(v.p) / static_cast<double>(v.q);
        throw expression_error(quote_value(text) + " is " + std::to_string(approx) +
                               ", not a whole number; wrap it in ceil() or floor()");
    }
    if (v.p > INT64_MAX || v.p < INT64_MIN)
        throw expression_error(quote_value(text) + ": value out of range");
    return static_cast<std::int64_t>(v.p);
}

std::vector<std::string> expression_names(const std::string& text) {
    std::vector<std::string> names;
    parser<rational_rules>(text, rational_rules{text, nullptr, &names}).parse();
    return names;
}

std::string integer_expression_cpp(const std::string& text,
                                   const std::map<std::string, std::string>& names) {
    return parser<cpp_rules>(text, cpp_rules{names}).parse();
}

}  // namespace cuopt
