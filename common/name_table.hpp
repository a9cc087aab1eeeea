#pragma once
/// One name table per vocabulary (verdicts, statuses, stop reasons, kinds): the enum is
/// what the code compares, the table holds the JSON spelling once, in both directions.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace cuopt {

/// One entry: the enum value and how JSON spells it.
template <class Enum>
struct named {
    Enum value;
    const char* name;
};

template <class Enum, std::size_t N>
struct name_table {
    std::array<named<Enum>, N> entries;

    constexpr const char* name(Enum value) const {
        for (const auto& [e, n] : entries)
            if (e == value) return n;
        return "unknown";
    }
    constexpr std::optional<Enum> parse(std::string_view text) const {
        for (const auto& [e, n] : entries)
            if (text == n) return e;
        return std::nullopt;
    }
};

/// make_name_table<verdict>({{verdict::valid, "valid"}, ...}): the size comes from the list.
template <class Enum, std::size_t N>
constexpr name_table<Enum, N> make_name_table(const named<Enum> (&entries)[N]) {
    name_table<Enum, N> t{};
    for (std::size_t i = 0; i < N; ++i) t.entries[i] = entries[i];
    return t;
}

}  // namespace cuopt
