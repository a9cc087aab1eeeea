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

std::optional<generator_problem> check_generator(const generator_spec& g, dtype type) {
    const std::string kind = k_generator_kinds.name(g.kind);
    if ((g.kind == generator_kind::uniform || g.kind == generator_kind::normal) && !is_float(type))
        return generator_problem{"kind", quote_value(kind) + " fills floating-point buffers; for " +
                                             std::string(dtype_name(type)) +
                                             " use 'int_range', 'sequence' or 'constant'"};
    if (g.kind == generator_kind::uniform && !(g.low < g.high))
        return generator_problem{"", "uniform needs low < high " + low_high(g)};
    if (g.kind != generator_kind::int_range) return std::nullopt;
    if (std::floor(g.low) != g.low || std::floor(g.high) != g.high || g.low > g.high)
        return generator_problem{"", "int_range needs integer low <= high " + low_high(g)};
    if (std::fabs(g.low) > 9007199254740992.0 || std::fabs(g.high) > 9007199254740992.0)
        return generator_problem{
            "", "int_range bounds beyond 2^53 are not carried exactly " + low_high(g)};
    if (!is_float(type)) {
        try {
            encode_scalar(type, g.low);
            encode_scalar(type, g.high);
        } catch (const std::invalid_argument& e) {
            return generator_problem{
                "", std::string("range does not fit the buffer's dtype: ") + e.what()};
        }
    }
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
