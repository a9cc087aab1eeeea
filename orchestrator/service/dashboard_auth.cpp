#include "orchestrator/service/dashboard_auth.hpp"

#include <cctype>
#include <vector>

namespace cuopt {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split(std::string_view s, char separator) {
    std::vector<std::string_view> out;
    for (std::size_t start = 0; start <= s.size();) {
        const std::size_t end = std::min(s.find(separator, start), s.size());
        out.push_back(s.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::string_view query_of(std::string_view target) {
    const std::size_t q = target.find('?');
    return q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
}

bool header_has_token(std::string_view authorization, const std::string& token) {
    authorization = trim(authorization);
    if (authorization.size() < 7) return false;
    std::string scheme(authorization.substr(0, 7));
    for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return scheme == "bearer " && tokens_equal(trim(authorization.substr(7)), token);
}

bool cookie_has_token(std::string_view cookie, const std::string& token) {
    bool found = false;
    for (std::string_view pair : split(cookie, ';')) {
        pair = trim(pair);
        if (pair.substr(0, 12) == "cuopt_token=")
            found = tokens_equal(pair.substr(12), token) || found;
    }
    return found;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

bool tokens_equal(std::string_view a, std::string_view b) {
    // Every byte of the longer string is visited whatever differs, so the time taken says
    // nothing about how much of a guess was right.
    const std::size_t n = std::max(a.size(), b.size());
    volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
        const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
        diff = diff | static_cast<unsigned char>(x ^ y);
    }
    return diff == 0 && !b.empty();
}

token_source find_token(std::string_view authorization, std::string_view cookie,
                        std::string_view target, const std::string& token) {
    if (token.empty()) return token_source::none;
    if (header_has_token(authorization, token)) return token_source::header;
    if (cookie_has_token(cookie, token)) return token_source::cookie;
    for (std::string_view pair : split(query_of(target), '&'))
        if (pair.substr(0, 6) == "token=" && tokens_equal(url_decode(pair.substr(6), true), token))
            return token_source::query;
    return token_source::none;
}

std::string target_without_token(std::string_view target) {
    const std::size_t q = target.find('?');
    std::string out(target.substr(0, q));
    if (q == std::string_view::npos) return out;
    std::string kept;
    for (std::string_view pair : split(target.substr(q + 1), '&')) {
        if (pair.empty() || pair == "token" || pair.substr(0, 6) == "token=") continue;
        kept += (kept.empty() ? "" : "&") + std::string(pair);
    }
    return kept.empty() ? out : out + "?" + kept;
}

std::string token_cookie(const std::string& token) {
    return "cuopt_token=" + token + "; HttpOnly; SameSite=Strict; Path=/";
}

std::string url_decode(std::string_view s, bool plus_is_space) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size()) {
            const int a = hex_value(s[i + 1]), b = hex_value(s[i + 2]);
            if (a >= 0 && b >= 0) {
                out += static_cast<char>(a * 16 + b);
                i += 2;
                continue;
            }
        }
        out += plus_is_space && s[i] == '+' ? ' ' : s[i];
    }
    return out;
}

std::string query_value(std::string_view target, std::string_view name) {
    for (std::string_view pair : split(query_of(target), '&')) {
        const std::size_t eq = std::min(pair.find('='), pair.size());
        if (url_decode(pair.substr(0, eq), true) == name)
            return eq < pair.size() ? url_decode(pair.substr(eq + 1), true) : "";
    }
    return "";
}

std::string target_path(std::string_view target) {
    return url_decode(target.substr(0, std::min(target.find('?'), target.size())), false);
}

}  // namespace cuopt
