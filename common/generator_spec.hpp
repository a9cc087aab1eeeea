#pragma once
/// A declarative input fill, shared by the manifest (what the user asks for), the
/// request (what the harness is told) and the harness's GPU generator: the kind names,
/// reading a generator object, the checks against a buffer's dtype and writing it back,
/// each in one place so both programs accept and reject the same generators.

#include <rapidjson/document.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "common/dtype.hpp"
#include "common/json_fields.hpp"
#include "common/name_table.hpp"

namespace cuopt {

enum class generator_kind { uniform, normal, int_range, sequence, constant };

inline constexpr auto k_generator_kinds =
    make_name_table<generator_kind>({{generator_kind::uniform, "uniform"},
                                     {generator_kind::normal, "normal"},
                                     {generator_kind::int_range, "int_range"},
                                     {generator_kind::sequence, "sequence"},
                                     {generator_kind::constant, "constant"}});

/// A counter-based fill: element i of launch L is a pure function of (seed, L, i).
struct generator_spec {
    generator_kind kind = generator_kind::uniform;
    double low = -1.0, high = 1.0;    // uniform, int_range (inclusive)
    double mean = 0.0, stddev = 1.0;  // normal
    double start = 0.0, step = 1.0;   // sequence: start + step * index (the same every launch)
    double value = 1.0;               // constant
    std::uint64_t seed = 0;
    /// The ChaCha20 key of this generator's stream, derived from the request's inputs_key (its
    /// run's secret and round) and `seed` by the harness's reader; never read from or written to
    /// JSON. Absent: the public, unkeyed stream of (seed, launch, index).
    std::optional<std::array<std::uint32_t, 8>> stream_key;
};

/// Reads {"kind": ..., "low": ..., ...} (schema-checked: kind is a known name, numbers
/// are numbers); missing fields keep their defaults.
generator_spec read_generator(const json_field& v);

/// What is wrong with filling a `type` buffer of `count` elements (0: not known here) from `g`:
/// `field` is "kind" when the kind itself is the problem, "" when its values are, else the
/// value's own field. Every value a generator can write must fit the dtype (value_fit_problem):
/// a constant, a sequence's first and (with a count) last element, int_range's and uniform's
/// bounds. nullopt when it can fill the buffer.
struct generator_problem {
    std::string field;
    std::string message;
};
std::optional<generator_problem> check_generator(const generator_spec& g, dtype type,
                                                 std::uint64_t count = 0);

/// The generator object with its own kind's fields only (uniform and int_range: low, high,
/// seed; normal: mean, stddev, seed; sequence: start, step; constant: value), as
/// read_generator reads it.
rapidjson::Value write_generator(const generator_spec& g, rapidjson::Document::AllocatorType& a);

}  // namespace cuopt
