#pragma once
/// Checks of an option's number, with messages a person reads: "expected a number above 0
/// (seconds), got 0", "expected a whole number from 0 to 10000, got 1.5". CLI11's own
/// (PositiveNumber, Range) print a double's 300 digits and call 1.5 a value out of range; the
/// same words reach a --config file's field (cli_config names the file and the field).

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace cuopt {

/// A number above 0; `unit` ("seconds") is said after it, when given.
CLI::Validator positive_number(const std::string& unit = "");

/// A number of at least 0; `unit` as for positive_number.
CLI::Validator non_negative_number(const std::string& unit = "");

/// A whole number from `low` to `high`, both included.
CLI::Validator whole_number_from(std::int64_t low, std::int64_t high);

/// A whole number of at least `low`, with no upper bound.
CLI::Validator whole_number_at_least(std::int64_t low);

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
