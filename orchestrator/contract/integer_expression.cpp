#include "orchestrator/contract/integer_expression.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <numeric>
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

class parser {
  public:
    parser(const std::string& text, const expression_variables* vars,
           std::vector<std::string>* names)
        : m_text(text), m_vars(vars), m_names(names) {}

    rational parse() {
        if (m_text.size() > k_max_expression_length)
            throw expression_error(quote_value(m_text) + ": " + std::to_string(m_text.size()) +
                                   " characters, over the limit of " +
                                   std::to_string(k_max_expression_length) + " for one expression");
        rational v = sum();
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
    rational sum() {
        rational v = product();
        for (;;) {
            if (accept('+')) {
                const rational r = product();
                v = normalised(add(mul(v.p, r.q, m_text), mul(r.p, v.q, m_text), m_text),
                               mul(v.q, r.q, m_text), m_text);
            } else if (accept('-')) {
                const rational r = product();
                v = normalised(add(mul(v.p, r.q, m_text), -mul(r.p, v.q, m_text), m_text),
                               mul(v.q, r.q, m_text), m_text);
            } else {
                return v;
            }
        }
    }
    rational product() {
        rational v = unary();
        for (;;) {
            if (accept('*')) {
                const rational r = unary();
                v = normalised(mul(v.p, r.p, m_text), mul(v.q, r.q, m_text), m_text);
            } else if (accept('/')) {
                const rational r = unary();
                v = normalised(mul(v.p, r.q, m_text), mul(v.q, r.p, m_text), m_text);
            } else if (accept('%')) {
                const rational r = unary();
                if (v.q != 1 || r.q != 1) fail("'%' needs whole numbers");
                if (r.p == 0) fail("modulo by zero");
                v = normalised(v.p % r.p, 1, m_text);
            } else {
                return v;
            }
        }
    }
    rational unary() {
        if (accept('-')) {
            const nesting level(*this);
            rational v = unary();
            v.p = -v.p;
            return v;
        }
        if (accept('+')) {
            const nesting level(*this);
            return unary();
        }
        return primary();
    }
    rational primary() {
        skip_space();
        if (accept('(')) {
            const nesting level(*this);
            rational v = sum();
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
            return {n, 1};
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
        if (m_names) m_names->push_back(name);
        if (!m_vars) return {1, 1};
        const auto it = m_vars->find(name);
        if (it == m_vars->end())
            throw expression_error(quote_value(m_text) + ": unknown name " + quote_value(name) +
                                   " (known: " + known_names() + ")");
        return {it->second, 1};
    }
    // The variables' names for a message: a manifest's own names are short, but a list of
    // many long ones is cut like any quoted value.
    std::string known_names() const {
        std::string known;
        for (const auto& [k, v] : *m_vars) {
            if (known.size() > k_quote_limit)
                return known + ", … (" + std::to_string(m_vars->size()) + " names)";
            known += (known.empty() ? "" : ", ") + (k.size() > 32 ? quote_value(k, 32) : k);
        }
        return known;
    }
    rational call(const std::string& name) {
        static const char* const k_functions[] = {"ceil", "floor", "min", "max", "abs"};
        if (std::find(std::begin(k_functions), std::end(k_functions), name) ==
            std::end(k_functions))
            fail("unknown function " + quote_value(name) + " (known: ceil, floor, min, max, abs)");
        const nesting level(*this);
        std::vector<rational> args;
        if (!accept(')')) {
            do {
                if (args.size() == k_max_call_arguments)
                    fail(name + " has more than " + std::to_string(k_max_call_arguments) +
                         " arguments, over the limit for one call");
                args.push_back(sum());
            } while (accept(','));
            if (!accept(')')) fail("expected ')' after the arguments of " + name);
        }
        auto arity = [&](std::size_t n) {
            if (args.size() != n) fail(name + " takes " + std::to_string(n) + " argument(s)");
        };
        if (name == "ceil") {
            arity(1);
            return {-floor_div(-args[0].p, args[0].q), 1};
        }
        if (name == "floor") {
            arity(1);
            return {floor_div(args[0].p, args[0].q), 1};
        }
        if (name == "abs") {
            arity(1);
            return {args[0].p < 0 ? -args[0].p : args[0].p, args[0].q};
        }
        if (name == "min" || name == "max") {
            if (args.size() < 2) fail(name + " takes at least 2 arguments");
            rational best = args[0];
            for (const rational& r : args) {
                const bool less = mul(r.p, best.q, m_text) < mul(best.p, r.q, m_text);
                if ((name == "min") == less) best = r;
            }
            return best;
        }
        throw std::logic_error("integer expression: function " + name + " has no rule");
    }

    const std::string& m_text;
    const expression_variables* m_vars;
    std::vector<std::string>* m_names;
    std::size_t m_pos = 0;
    int m_depth = 0;
};

}  // namespace

std::int64_t evaluate_integer_expression(const std::string& text,
                                         const expression_variables& variables) {
    const rational v = parser(text, &variables, nullptr).parse();
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
    parser(text, nullptr, &names).parse();
    return names;
}

}  // namespace cuopt
