#include "common/html_text.hpp"

#include <cmath>
#include <cstdio>

#include "common/json_document.hpp"

namespace cuopt {

std::string html_escape(std::string_view text) {
    const std::string clean = valid_utf8(text);
    std::string out;
    out.reserve(clean.size() + clean.size() / 8);
    for (const char c : clean) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string base64(std::string_view bytes) {
    static const char k_alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 |
                           static_cast<unsigned char>(bytes[i + 1]) << 8 |
                           static_cast<unsigned char>(bytes[i + 2]);
        for (int shift = 18; shift >= 0; shift -= 6) out += k_alphabet[(v >> shift) & 63];
    }
    if (const std::size_t left = bytes.size() - i; left > 0) {
        unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
        if (left == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
        out += k_alphabet[(v >> 18) & 63];
        out += k_alphabet[(v >> 12) & 63];
        out += left == 2 ? k_alphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

std::string data_uri(std::string_view mime, std::string_view bytes) {
    return "data:" + std::string(mime) + ";base64," + base64(bytes);
}

std::string fixed(std::optional<double> x, int decimals, std::string_view none) {
    if (!x || !std::isfinite(*x)) return std::string(none);
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, *x);
    return text;
}

std::string grouped(long long n) {
    std::string digits = std::to_string(n < 0 ? -n : n);
    for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(static_cast<std::size_t>(i), ",");
    return (n < 0 ? "-" : "") + digits;
}

std::string usd(std::optional<double> dollars) {
    if (!dollars || !std::isfinite(*dollars)) return "-";
    const double cents = std::round(std::fabs(*dollars) * 100);
    const auto whole = static_cast<long long>(cents / 100);
    char frac[8];
    std::snprintf(frac, sizeof frac, ".%02d", static_cast<int>(cents - 100.0 * whole));
    return (*dollars < 0 && cents > 0 ? "-$" : "$") + grouped(whole) + frac;
}

std::string ms_text(std::optional<double> ms) {
    if (!ms || !std::isfinite(*ms)) return "-";
    char text[64];
    if (std::fabs(*ms) >= 0.01 || *ms == 0)
        std::snprintf(text, sizeof text, "%.4f ms", *ms);
    else
        std::snprintf(text, sizeof text, "%.3g ms", *ms);
    return text;
}

std::string duration_text(double seconds) {
    char text[64];
    const auto whole = static_cast<long long>(std::llround(seconds));
    if (seconds < 60)
        std::snprintf(text, sizeof text, "%.1f s", seconds);
    else if (whole < 3600)
        std::snprintf(text, sizeof text, "%lld min %02lld s", whole / 60, whole % 60);
    else
        std::snprintf(text, sizeof text, "%lld h %02lld min", whole / 3600, whole % 3600 / 60);
    return text;
}

}  // namespace cuopt
