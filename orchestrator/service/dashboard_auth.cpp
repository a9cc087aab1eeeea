#include "orchestrator/service/dashboard_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cctype>
#include <iterator>
#include <stdexcept>
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

// The credential after `scheme` ("Bearer", "Session"; any case) in an Authorization header,
// or "" when the header names another scheme.
std::string_view credential_of(std::string_view authorization, std::string_view scheme) {
    authorization = trim(authorization);
    if (authorization.size() <= scheme.size() || authorization[scheme.size()] != ' ') return {};
    for (std::size_t i = 0; i < scheme.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(authorization[i])) !=
            std::tolower(static_cast<unsigned char>(scheme[i])))
            return {};
    return trim(authorization.substr(scheme.size() + 1));
}

double seconds_between(dashboard_keys::clock::time_point a, dashboard_keys::clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
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

// The sessions' and the tickets' table before an entry is added: the stale ones dropped, and
// over `cap` the one whose `stamp` is earliest (the least recently used session, the oldest
// ticket).
template <class Table, class Stale, class Stamp>
void make_room(Table& table, std::size_t cap, Stale stale, Stamp stamp) {
    for (auto it = table.begin(); it != table.end();)
        it = stale(it->second) ? table.erase(it) : std::next(it);
    if (table.size() < cap) return;
    auto oldest = table.begin();
    for (auto it = table.begin(); it != table.end(); ++it)
        if (stamp(it->second) < stamp(oldest->second)) oldest = it;
    table.erase(oldest);
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

dashboard_keys::dashboard_keys(std::string token, session_limits limits)
    : m_token(std::move(token)), m_limits(limits) {
    if (RAND_bytes(m_key.data(), static_cast<int>(m_key.size())) != 1)
        throw std::runtime_error("the dashboard found no random bytes for its session key");
}

std::string dashboard_keys::mac(std::string_view purpose, std::string_view data) const {
    // The purpose is part of the message, so a session id never serves as a ticket.
    const std::string message = std::string(purpose) + ":" + std::string(data);
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    HMAC(EVP_sha256(), m_key.data(), static_cast<int>(m_key.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &n);
    return hex(out, n);
}

std::string dashboard_keys::signed_nonce(std::string_view purpose) const {
    unsigned char nonce[16];
    if (RAND_bytes(nonce, sizeof nonce) != 1)
        throw std::runtime_error("the dashboard found no random bytes for a session");
    const std::string id = hex(nonce, sizeof nonce);
    return id + "." + mac(purpose, id);
}

std::string dashboard_keys::verified_nonce(std::string_view purpose, std::string_view value) const {
    const std::size_t dot = value.find('.');
    if (dot != 32 || value.size() != 32 + 1 + 64) return "";
    if (!macs_equal(value.substr(dot + 1), mac(purpose, value.substr(0, dot)))) return "";
    return std::string(value.substr(0, dot));
}

bool dashboard_keys::live(const session_entry& s, clock::time_point now) const {
    return seconds_between(s.used, now) < m_limits.idle_s &&
           seconds_between(s.opened, now) < m_limits.max_s;
}

std::string dashboard_keys::open_session(clock::time_point now) {
    make_room(
        m_sessions, k_max_sessions, [&](const session_entry& e) { return !live(e, now); },
        [](const session_entry& e) { return e.used; });
    const std::string id = signed_nonce("session");
    m_sessions[id.substr(0, 32)] = {now, now};
    return id;
}

bool dashboard_keys::use_session(std::string_view session, clock::time_point now) {
    const std::string nonce = verified_nonce("session", session);
    const auto it = nonce.empty() ? m_sessions.end() : m_sessions.find(nonce);
    if (it == m_sessions.end()) return false;
    if (!live(it->second, now)) {
        end_session(session);
        return false;
    }
    it->second.used = now;
    return true;
}

void dashboard_keys::end_session(std::string_view session) {
    const std::string nonce = verified_nonce("session", session);
    if (nonce.empty()) return;
    m_sessions.erase(nonce);
    for (auto it = m_tickets.begin(); it != m_tickets.end();)
        it = it->second.session == nonce ? m_tickets.erase(it) : std::next(it);
}

std::string dashboard_keys::new_ticket(std::string_view session, const std::string& path,
                                       clock::time_point now) {
    make_room(
        m_tickets, k_max_tickets,
        [&](const ticket_entry& e) { return now - e.made >= k_ticket_life; },
        [](const ticket_entry& e) { return e.made; });
    const std::string ticket = signed_nonce("ticket");
    m_tickets[ticket.substr(0, 32)] = {verified_nonce("session", session), path, now};
    return ticket;
}

bool dashboard_keys::take_ticket(std::string_view ticket, const std::string& path,
                                 clock::time_point now) {
    const std::string nonce = verified_nonce("ticket", ticket);
    const auto it = nonce.empty() ? m_tickets.end() : m_tickets.find(nonce);
    if (it == m_tickets.end()) return false;
    const ticket_entry t = it->second;
    m_tickets.erase(it);  // spent, whatever follows
    const auto s = m_sessions.find(t.session);
    return t.path == path && now - t.made < k_ticket_life && s != m_sessions.end() &&
           live(s->second, now);
}

request_credentials find_credentials(std::string_view authorization, std::string_view target,
                                     std::string_view method, dashboard_keys& keys,
                                     dashboard_keys::clock::time_point now) {
    request_credentials c;
    if (keys.token().empty()) return c;
    if (const std::string_view t = credential_of(authorization, "Bearer"); !t.empty()) {
        if (tokens_equal(t, keys.token())) c.source = token_source::header;
        return c;
    }
    if (const std::string_view s = credential_of(authorization, "Session"); !s.empty()) {
        if (keys.use_session(s, now)) {
            c.source = token_source::session;
            c.session = std::string(s);
        }
        return c;
    }
    // A ticket opens one document by its address; a request that changes state never has one.
    const std::string ticket = query_value(target, "ticket");
    if (method == "GET" && !ticket.empty() && keys.take_ticket(ticket, target_path(target), now))
        c.source = token_source::ticket;
    return c;
}

bool token_in_query(std::string_view target) {
    for (std::string_view pair : split(query_of(target), '&')) {
        const std::string name =
            url_decode(pair.substr(0, std::min(pair.find('='), pair.size())), true);
        if (name == "token") return true;
    }
    return false;
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
