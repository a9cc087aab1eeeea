#include "orchestrator/service/dashboard_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cctype>
#include <stdexcept>
#include <vector>

#include "orchestrator/service/multipart.hpp"

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

// The value of cookie `name` ("" when absent; the last one when repeated).
std::string_view cookie_value(std::string_view cookie, std::string_view name) {
    std::string_view found;
    for (std::string_view pair : split(cookie, ';')) {
        pair = trim(pair);
        if (pair.size() > name.size() && pair.substr(0, name.size()) == name &&
            pair[name.size()] == '=')
            found = pair.substr(name.size() + 1);
    }
    return found;
}

std::string hex(const unsigned char* bytes, std::size_t n) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
        out += digits[bytes[i] >> 4];
        out += digits[bytes[i] & 15];
    }
    return out;
}

// Lengths are public (fixed for every MAC); the bytes are compared in constant time.
bool macs_equal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && !a.empty() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
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

dashboard_keys::dashboard_keys(std::string token) : m_token(std::move(token)) {
    if (RAND_bytes(m_key.data(), static_cast<int>(m_key.size())) != 1)
        throw std::runtime_error("the dashboard found no random bytes for its session key");
}

std::string dashboard_keys::mac(std::string_view purpose, std::string_view data) const {
    // The purpose is part of the message, so a session's MAC never serves as its CSRF token.
    const std::string message = std::string(purpose) + ":" + std::string(data);
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    HMAC(EVP_sha256(), m_key.data(), static_cast<int>(m_key.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &n);
    return hex(out, n);
}

std::string dashboard_keys::new_session() const {
    unsigned char nonce[16];
    if (RAND_bytes(nonce, sizeof nonce) != 1)
        throw std::runtime_error("the dashboard found no random bytes for a session");
    const std::string id = hex(nonce, sizeof nonce);
    return id + "." + mac("session", id);
}

bool dashboard_keys::valid_session(std::string_view session) const {
    const std::size_t dot = session.find('.');
    if (dot != 32 || session.size() != 32 + 1 + 64) return false;
    return macs_equal(session.substr(dot + 1), mac("session", session.substr(0, dot)));
}

std::string dashboard_keys::csrf_token(std::string_view session) const {
    return mac("csrf", session);
}

bool dashboard_keys::valid_csrf(std::string_view session, std::string_view csrf) const {
    return valid_session(session) && macs_equal(csrf, csrf_token(session));
}

request_credentials find_credentials(std::string_view authorization, std::string_view cookie,
                                     std::string_view target, std::string_view method,
                                     const dashboard_keys& keys, unsigned short port) {
    request_credentials c;
    if (keys.token().empty()) return c;
    if (header_has_token(authorization, keys.token())) {
        c.source = token_source::header;
        return c;
    }
    // A login link is a GET only: a POST carrying ?token= would need no session, so no CSRF
    // token, and is what a cross-site form could send if the token ever leaked into a page.
    // Before the cookie, so that a signed-in browser given the link still loses it at once.
    for (std::string_view pair : split(query_of(target), '&'))
        if (method == "GET" && pair.substr(0, 6) == "token=" &&
            tokens_equal(url_decode(pair.substr(6), true), keys.token())) {
            c.source = token_source::query;
            return c;
        }
    const std::string_view session = cookie_value(cookie, session_cookie_name(port));
    if (keys.valid_session(session)) {
        c.source = token_source::cookie;
        c.session = std::string(session);
    }
    return c;
}

std::string session_cookie_name(unsigned short port) {
    return "cuopt_session_" + std::to_string(port);
}

std::string session_cookie(unsigned short port, const std::string& session) {
    return session_cookie_name(port) + "=" + session + "; HttpOnly; SameSite=Strict; Path=/";
}

std::string cross_origin_problem(std::string_view origin, std::string_view fetch_site,
                                 std::string_view host) {
    origin = trim(origin);
    if (!origin.empty()) {
        if (!host.empty() && origin == "http://" + std::string(trim(host))) return "";
        return "a request from " + std::string(origin) + " may not change anything here";
    }
    fetch_site = trim(fetch_site);
    if (fetch_site == "same-origin" || fetch_site == "none") return "";
    if (fetch_site.empty())
        return "a browser request that names neither its Origin nor Sec-Fetch-Site may not "
               "change anything here";
    return "a " + std::string(fetch_site) + " request may not change anything here";
}

std::string csrf_field(std::string_view content_type, std::string_view body) {
    std::string type(trim(content_type.substr(0, content_type.find(';'))));
    for (char& ch : type) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (type == "application/x-www-form-urlencoded")
        return query_value("?" + std::string(body), "csrf_token");
    if (type != "multipart/form-data") return "";
    try {
        for (const multipart_part& p : parse_multipart(body, multipart_boundary(content_type)))
            if (p.name == "csrf_token" && !p.filename) return p.data;
    } catch (const multipart_error&) {
    }
    return "";
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
