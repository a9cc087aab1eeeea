#include "common/generator_spec.hpp"

#include <cmath>
#include <stdexcept>

#include "common/json_builder.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"

namespace cuopt {

namespace {

std::string format_number(double v) {
    if (std::floor(v) == v && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
    return std::to_string(v);
}

std::string low_high(const generator_spec& g) {
    return "(got low " + format_number(g.low) + ", high " + format_number(g.high) + ")";
}

}  // namespace

generator_spec read_generator(const json_field& f) {
    generator_spec g;
    g.kind = f.word("kind", k_generator_kinds);
    for (auto [key, into] : {std::pair{"low", &g.low},
                             {"high", &g.high},
                             {"mean", &g.mean},
                             {"stddev", &g.stddev},
                             {"start", &g.start},
                             {"step", &g.step},
                             {"value", &g.value}})
        *into = f.optional_number(key).value_or(*into);
    g.seed = f.optional_integer<std::uint64_t>("seed").value_or(g.seed);
    return g;
}

namespace {

// constant and sequence: every element they write fits the dtype; a sequence on an integer
// buffer takes integer start and step (a fraction would be cut differently by each reader).
std::optional<generator_problem> check_exact_values(const generator_spec& g, dtype type,
                                                    std::uint64_t count) {
    if (g.kind == generator_kind::constant) {
        if (std::string why = value_fit_problem(type, g.value); !why.empty())
            return generator_problem{"value", why};
        return std::nullopt;
    }
    if (!is_float(type) && (std::floor(g.start) != g.start || std::floor(g.step) != g.step))
        return generator_problem{"", "a sequence on a " + std::string(dtype_name(type)) +
                                         " buffer needs integer start and step (got start " +
                                         format_number(g.start) + ", step " +
                                         format_number(g.step) + ")"};
    if (std::string why = value_fit_problem(type, g.start); !why.empty())
        return generator_problem{"start", why};
    if (count > 1) {
        const double last = g.start + g.step * static_cast<double>(count - 1);
        if (std::string why = value_fit_problem(type, last); !why.empty())
            return generator_problem{"step", "the last of " + std::to_string(count) +
                                                 " elements, start + step x " +
                                                 std::to_string(count - 1) + ": " + why};
    }
    return std::nullopt;
}

}  // namespace

std::optional<generator_problem> check_generator(const generator_spec& g, dtype type,
                                                 std::uint64_t count) {
    const std::string kind = k_generator_kinds.name(g.kind);
    if (g.kind == generator_kind::constant || g.kind == generator_kind::sequence)
        return check_exact_values(g, type, count);
    if ((g.kind == generator_kind::uniform || g.kind == generator_kind::normal) && !is_float(type))
        return generator_problem{"kind", quote_value(kind) + " fills floating-point buffers; for " +
                                             std::string(dtype_name(type)) +
                                             " use 'int_range', 'sequence' or 'constant'"};
    if (g.kind == generator_kind::uniform && !(g.low < g.high))
        return generator_problem{"", "uniform needs low < high " + low_high(g)};
    if (g.kind == generator_kind::uniform)
        for (auto [key, v] : {std::pair{"low", g.low}, {"high", g.high}})
            if (std::string why = value_fit_problem(type, v); !why.empty())
                return generator_problem{key, why};
    if (g.kind != generator_kind::int_range) return std::nullopt;
    if (std::floor(g.low) != g.low || std::floor(g.high) != g.high || g.low > g.high)
        return generator_problem{"", "int_range needs integer low <= high " + low_high(g)};
    if (std::fabs(g.low) > 9007199254740992.0 || std::fabs(g.high) > 9007199254740992.0)
        return generator_problem{
            "", "int_range bounds beyond 2^53 are not carried exactly " + low_high(g)};
    for (const double v : {g.low, g.high})
        if (std::string why = value_fit_problem(type, v); !why.empty())
            return generator_problem{"", "range does not fit the buffer's dtype: " + why};
    return std::nullopt;
}

rapidjson::Value write_generator(const generator_spec& g, rapidjson::Document::AllocatorType& a) {
    json_object v(a);
    v.add("kind", k_generator_kinds.name(g.kind));
    switch (g.kind) {
        case generator_kind::uniform:
        case generator_kind::int_range:
            v.add("low", g.low).add("high", g.high);
            break;
        case generator_kind::normal:
            v.add("mean", g.mean).add("stddev", g.stddev);
            break;
        case generator_kind::sequence:
            return v.add("start", g.start).add("step", g.step).take();  // the same every launch
        case generator_kind::constant:
            return v.add("value", g.value).take();
    }
    return v.add("seed", static_cast<std::uint64_t>(g.seed)).take();
}

}  // namespace cuopt
