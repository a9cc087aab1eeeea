#include "common/cli_value_checks.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "common/exit_codes.hpp"

namespace cuopt {

namespace {

// The whole text as a finite number; nullopt for "", "3x", "nan", "inf".
std::optional<double> as_number(const std::string& text) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(text.c_str(), &end);
    if (*end != '\0' || errno == ERANGE || !std::isfinite(x)) return std::nullopt;
    return x;
}

// The whole text as a whole number (1.5, 1e3 and "" are not).
std::optional<std::int64_t> as_whole_number(const std::string& text) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(text.c_str(), &end, 10);
    if (*end != '\0' || errno == ERANGE) return std::nullopt;
    return static_cast<std::int64_t>(x);
}

std::string with_unit(const std::string& unit) {
    return unit.empty() ? "" : " (" + unit + ")";
}

}  // namespace

std::string number_text(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%.15g", x);
    return text;
}

CLI::Validator positive_number(const std::string& unit) {
    const std::string expected = "a number above 0" + with_unit(unit);
    return CLI::Validator(
        [expected](std::string& text) {
            const auto x = as_number(text);
            return x && *x > 0 ? std::string() : "expected " + expected + ", got " + text;
        },
        "POSITIVE");
}

CLI::Validator non_negative_number(const std::string& unit) {
    const std::string expected = "a number of at least 0" + with_unit(unit);
    return CLI::Validator(
        [expected](std::string& text) {
            const auto x = as_number(text);
            return x && *x >= 0 ? std::string() : "expected " + expected + ", got " + text;
        },
        "NONNEGATIVE");
}

CLI::Validator whole_number_from(std::int64_t low, std::int64_t high) {
    const std::string expected =
        "a whole number from " + std::to_string(low) + " to " + std::to_string(high);
    return CLI::Validator(
        [=](std::string& text) {
            const auto x = as_whole_number(text);
            return x && *x >= low && *x <= high ? std::string()
                                                : "expected " + expected + ", got " + text;
        },
        "INT in [" + std::to_string(low) + " - " + std::to_string(high) + "]");
}

CLI::Validator whole_number_at_least(std::int64_t low) {
    const std::string expected = "a whole number " + std::to_string(low) + " or above";
    return CLI::Validator(
        [=](std::string& text) {
            const auto x = as_whole_number(text);
            return x && *x >= low ? std::string() : "expected " + expected + ", got " + text;
        },
        low == 0 ? "NONNEGATIVE" : "INT >= " + std::to_string(low));
}

CLI::Validator number_from(double low, double high, const std::string& unit) {
    const std::string expected =
        "a number from " + number_text(low) + " to " + number_text(high) + with_unit(unit);
    return CLI::Validator(
        [=](std::string& text) {
            const auto x = as_number(text);
            return x && *x >= low && *x <= high ? std::string()
                                                : "expected " + expected + ", got " + text;
        },
        "FLOAT in [" + number_text(low) + " - " + number_text(high) + "]");
}

CLI::Validator number_above_at_most(double low, double high) {
    const std::string expected =
        "a number above " + number_text(low) + " and at most " + number_text(high);
    return CLI::Validator(
        [=](std::string& text) {
            const auto x = as_number(text);
            return x && *x > low && *x <= high ? std::string()
                                               : "expected " + expected + ", got " + text;
        },
        "(" + number_text(low) + ", " + number_text(high) + "]");
}

std::optional<int> parse_command_line(CLI::App& app, int argc, const char* const* argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return to_int(exit_code::usage);
    }
    return std::nullopt;
}

}  // namespace cuopt
