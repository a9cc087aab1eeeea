#include "common/cli_value_checks.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "common/exit_codes.hpp"
#include "common/message_text.hpp"

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

}  // namespace

std::string number_text(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%.15g", x);
    return text;
}

namespace {

// "86400 s (24 h)": a bound with its unit, and hours or days where that reads better.
std::string bound_text(double x, const std::string& unit) {
    std::string out = number_text(x) + (unit.empty() ? "" : " " + unit);
    if (unit == "s" && x >= 7200) out += " (" + number_text(x / 3600) + " h)";
    return out;
}

std::string expected_range(const value_range& r) {
    const std::string what = r.whole ? "a whole number" : "a number";
    if (r.above_low)
        return what + " above " + number_text(r.low) + " and at most " + bound_text(r.high, r.unit);
    return what + " from " + number_text(r.low) + " to " + bound_text(r.high, r.unit);
}

}  // namespace

std::string range_problem(double x, const value_range& r) {
    const bool in = !std::isnan(x) && (!r.whole || x == std::floor(x)) && x <= r.high &&
                    (r.above_low ? x > r.low : x >= r.low);
    return in ? "" : "expected " + expected_range(r) + ", got " + number_text(x);
}

std::string range_problem(const std::string& text, const value_range& r) {
    // A whole number is read as an integer first, so 2^63 + 1 is not rounded into range.
    const auto whole = r.whole ? as_whole_number(text) : std::nullopt;
    const auto x = whole ? std::optional<double>(static_cast<double>(*whole)) : as_number(text);
    const bool in =
        x && range_problem(*x, r).empty() && (!whole || (*whole >= r.low && *whole <= r.high));
    if (in) return "";
    // As typed when short and plain ("got 1e300"); quoted, escaped and cut when not.
    const std::string quoted = quote_value(text, 40);
    return "expected " + expected_range(r) + ", got " +
           (quoted == "'" + text + "'" ? text : quoted);
}

namespace {

CLI::Validator range_validator(const value_range& r, const std::string& name) {
    return CLI::Validator([r](std::string& text) { return range_problem(text, r); }, name);
}

}  // namespace

CLI::Validator duration_seconds(double high) {
    return range_validator({0, high, true, false, "s"}, "SECONDS");
}

std::chrono::milliseconds milliseconds_of(double seconds) {
    if (!(seconds > 0)) return std::chrono::milliseconds(0);  // NaN too
    // Rounded to the nearest, and at least 1: a positive duration never becomes 0 ms, which
    // curl reads as "no limit" and a child's watchdog as "kill at once".
    const double s = std::min(seconds, k_max_duration_s);
    return std::chrono::milliseconds(std::max<long long>(1, std::llround(s * 1000)));
}

CLI::Validator positive_number(const std::string& unit, double high) {
    return range_validator({0, high, true, false, unit}, "POSITIVE");
}

CLI::Validator non_negative_number(double high, const std::string& unit) {
    return range_validator({0, high, false, false, unit}, "NONNEGATIVE");
}

CLI::Validator whole_number_from(std::int64_t low, std::int64_t high) {
    return range_validator({static_cast<double>(low), static_cast<double>(high), false, true, ""},
                           "INT in [" + std::to_string(low) + " - " + std::to_string(high) + "]");
}

CLI::Validator number_from(double low, double high, const std::string& unit) {
    return range_validator({low, high, false, false, unit},
                           "FLOAT in [" + number_text(low) + " - " + number_text(high) + "]");
}

CLI::Validator number_above_at_most(double low, double high) {
    return range_validator({low, high, true, false, ""},
                           "(" + number_text(low) + ", " + number_text(high) + "]");
}

std::optional<int> parse_command_line(CLI::App& app, int argc, const char* const* argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // CLI11's message holds the refused value whole (a 1 MiB --proposer): say its start.
        std::fprintf(stderr, "%s\nRun with --help for more information.\n",
                     shortened(e.what(), 2 * k_quote_limit).c_str());
        return to_int(exit_code::usage);
    }
    return std::nullopt;
}

}  // namespace cuopt
