#pragma once
/// Checks of an option's number, with messages a person reads: "expected a number above 0
/// (seconds), got 0", "expected a whole number from 0 to 10000, got 1.5". CLI11's own
/// (PositiveNumber, Range) print a double's 300 digits and call 1.5 a value out of range; the
/// same words reach a --config file's field (cli_config names the file and the field).

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace cuopt {

/// The range a duration or count from a flag or a file must lie in, in a person's units: the
/// one check every such value passes before it is converted (to milliseconds, bytes, an int),
/// so that "--timeout 1e300" is refused with "at most 86400 s" instead of overflowing.
struct value_range {
    double low = 0;
    double high = 0;
    bool above_low = false;  // low itself excluded (a duration above 0)
    bool whole = false;      // a count
    std::string unit;        // "s", "ms", "MiB"; "" for a plain count
};

/// "" when `x` lies in `r`; else what was expected and what came: "expected at most 86400 s
/// (24 h), got 1e+300", "expected a number above 0 (s), got 0", "expected a whole number from
/// 0 to 10000, got 1.5". NaN and infinities are never in range.
std::string range_problem(double x, const value_range& r);
/// The same for a flag's or field's text (which must be the whole number, nothing after it).
std::string range_problem(const std::string& text, const value_range& r);

/// The longest duration a flag or field may give: a day.
inline constexpr double k_max_duration_s = 86400;

/// A duration in seconds above 0 and at most `high` (a day unless said).
CLI::Validator duration_seconds(double high = k_max_duration_s);

/// Seconds as milliseconds, saturated at k_max_duration_s and rounded, a positive duration to
/// at least 1 ms: every timeout's conversion, safe for any double (NaN and
/// anything up to 0 read as 0).
std::chrono::milliseconds milliseconds_of(double seconds);

/// A number above 0 and at most `high`; `unit` ("MiB") is said after it, when given.
CLI::Validator positive_number(const std::string& unit, double high);

/// A number of at least 0 and at most `high`; `unit` as for positive_number.
CLI::Validator non_negative_number(double high, const std::string& unit = "");

/// A whole number from `low` to `high`, both included.
CLI::Validator whole_number_from(std::int64_t low, std::int64_t high);

/// A number from `low` to `high`, both included; `unit` as for positive_number.
CLI::Validator number_from(double low, double high, const std::string& unit = "");

/// A number above `low` and at most `high`.
CLI::Validator number_above_at_most(double low, double high);

/// `x` as a person writes it: 0.5, 10000, 1e+12 (no trailing zeros, no 300 digits).
std::string number_text(double x);

/// Parses a program's command line into `app`: nullopt to go on, else the status to return at
/// once (0 after --help, the usage exit code after an error, which CLI11 has printed).
std::optional<int> parse_command_line(CLI::App& app, int argc, const char* const* argv);

}  // namespace cuopt
