#pragma once
/// Text into HTML for the report: every string that comes from a run folder (kernel sources,
/// model replies, reasons, labels, paths) goes through html_escape; numbers, money and
/// durations are formatted in one place; files are embedded as base64 data URIs, so the page
/// needs nothing beside it.

#include <optional>
#include <string>
#include <string_view>

namespace cuopt {

/// `&`, `<`, `>`, `"` and `'` as entities, bytes that are not valid UTF-8 as U+FFFD: safe in
/// element text and in quoted attribute values.
std::string html_escape(std::string_view text);

/// RFC 4648 base64 with padding.
std::string base64(std::string_view bytes);

/// "data:MIME;base64,...".
std::string data_uri(std::string_view mime, std::string_view bytes);

/// `x` with `decimals` digits after the point ("3.1416"), or `none` when absent or not finite.
std::string fixed(std::optional<double> x, int decimals, std::string_view none = "-");

/// A whole number with thousands separators: "1,234,567".
std::string grouped(long long n);

/// "$1,505.25"; "-" when absent.
std::string usd(std::optional<double> dollars);

/// "0.0123 ms" (4 decimals, 3 significant digits below 0.01 ms); "-" when absent.
std::string ms_text(std::optional<double> ms);

/// "1 h 02 min", "3 min 05 s", "12.4 s".
std::string duration_text(double seconds);

}  // namespace cuopt
