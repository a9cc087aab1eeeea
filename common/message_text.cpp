#include "common/message_text.hpp"

#include <algorithm>
#include <cstdio>

namespace cuopt {

std::size_t utf8_sequence(std::string_view s, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80) return 1;
    const std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (n == 0 || c > 0xF4 || c == 0xC0 || c == 0xC1 || i + n > s.size()) return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
    const unsigned char d = byte(i + 1);
    if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d >= 0xA0) || (c == 0xF0 && d < 0x90) ||
        (c == 0xF4 && d >= 0x90))
        return 0;
    return n;
}

std::string text_problem(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        if (s[i] == '\0') return "holds U+0000 (NUL) at byte " + std::to_string(i);
        const std::size_t n = utf8_sequence(s, i);
        if (n == 0)
            return "is not valid UTF-8 at byte " + std::to_string(i) +
                   " (a lone surrogate such as \\udfff, or a stray byte)";
        i += n;
    }
    return "";
}

namespace {

// One character as a message shows it; advances i past it.
void append_shown(std::string& out, std::string_view s, std::size_t& i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_sequence(s, i);
    if (n > 1) {
        out.append(s.substr(i, n));
        i += n;
        return;
    }
    ++i;
    switch (c) {
        case '\n':
            out += "\\n";
            return;
        case '\r':
            out += "\\r";
            return;
        case '\t':
            out += "\\t";
            return;
        case '\\':
            out += "\\\\";
            return;
        default:
            break;
    }
    if (n == 0 || c < 0x20 || c == 0x7F) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02X", c);
        out += hex;
        return;
    }
    out += static_cast<char>(c);
}

}  // namespace

std::string quote_value(std::string_view value, std::size_t limit) {
    std::string out = "'";
    std::size_t i = 0, shown = 0;
    while (i < value.size() && shown < limit) {
        append_shown(out, value, i);
        ++shown;
    }
    out += "'";
    if (i < value.size()) out += "… (" + std::to_string(value.size()) + " bytes)";
    return out;
}

std::string identifier_problem(std::string_view name) {
    const auto word = [](char c, bool first) {
        return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
               (!first && c >= '0' && c <= '9');
    };
    bool ok = !name.empty() && name.size() <= k_max_identifier;
    for (std::size_t i = 0; ok && i < name.size(); ++i) ok = word(name[i], i == 0);
    return ok ? ""
              : "expected a C identifier of at most " + std::to_string(k_max_identifier) +
                    " characters, got " + quote_value(name);
}

std::string last_line(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r'))
        text.remove_suffix(1);
    const std::size_t nl = text.rfind('\n');
    return std::string(nl == std::string_view::npos ? text : text.substr(nl + 1));
}

std::string shortened(std::string_view text, std::size_t limit) {
    std::size_t i = 0, shown = 0;
    while (i < text.size() && shown < limit) {
        i += std::max<std::size_t>(1, utf8_sequence(text, i));
        ++shown;
    }
    if (i >= text.size()) return std::string(text);
    return std::string(text.substr(0, i)) + "… (" + std::to_string(text.size()) + " bytes)";
}

std::string comment_line(std::string text) {
    for (char& ch : text) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7f)
            ch = ' ';
        else if (ch == '\\')
            ch = '/';
    }
    return text;
}

}  // namespace cuopt
